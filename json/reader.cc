// SPDX-License-Identifier: Apache-2.0
// Owns the SAX handler that turns nlohmann's parse events into a bounded document, and the
// reader around it. nlohmann's own DOM parser has no depth bound, stores "-0" as the integer 0
// and reports errors by exception; this handler stops at the first value past the depth bound,
// stores "-0" as the float -0.0, and keeps the error's position and reason (docs/JSON.md).
#include "scenecrdt/json/reader.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>

namespace scenecrdt::json {
namespace {

// A char iterator that publishes how far the parser has read, so the handler knows where the
// value it is given starts. nlohmann reads its input one character at a time through
// operator++ (iterator_input_adapter), with at most one character of lookahead after a number.
class CountingIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  CountingIterator(const char* at, const char** consumed) : at_(at), consumed_(consumed) {}
  reference operator*() const { return *at_; }
  CountingIterator& operator++() {
    *consumed_ = ++at_;
    return *this;
  }
  CountingIterator operator++(int) {
    CountingIterator before = *this;
    ++*this;
    return before;
  }
  friend bool operator==(const CountingIterator& a, const CountingIterator& b) {
    return a.at_ == b.at_;
  }

 private:
  const char* at_;
  const char** consumed_;
};

// nlohmann's error messages name the lexer's reason; Error::detail must be a static string,
// so each known reason maps to one of ours. Checked in order ("unexpected end of input" also
// contains "expected end of input").
const char* Reason(const nlohmann::json::exception& ex) {
  static constexpr std::pair<const char*, const char*> kReasons[] = {
      {"number overflow", "number out of the double range"},
      {"unexpected end of input", "unexpected end of JSON input"},
      {"expected end of input", "unexpected text after the JSON value"},
      {"invalid literal", "invalid literal"},
      {"ill-formed UTF-8", "invalid UTF-8 in a string"},
      {"control character", "control character in a string"},
      {"surrogate", "unpaired surrogate"},
      {"'\\u' must be followed", "invalid \\u escape"},
      {"forbidden character after backslash", "invalid escape"},
      {"missing closing quote", "unterminated string"},
      {"invalid number", "invalid number"},
      {"object key", "expected a string key"},
      {"object separator", "expected ':'"},
      {"unexpected", "unexpected token"},
  };
  const std::string_view what = ex.what();
  for (const auto& [needle, reason] : kReasons) {
    if (what.find(needle) != std::string_view::npos) return reason;
  }
  return "invalid JSON";
}

}  // namespace

// Builds the document from nlohmann's SAX events (the interface of nlohmann::json_sax).
class DomBuilder {
 public:
  DomBuilder(std::string_view text, const char** consumed, const ReadLimits& limits,
             ElementOffsets* offsets)
      : text_(text), consumed_(consumed), limits_(limits), offsets_(offsets) {}

  bool null() { return Add(Json(nullptr)) != nullptr; }
  bool boolean(bool v) { return Add(Json(v)) != nullptr; }
  // Only a negative literal reaches number_integer, so 0 here was written "-0": keep its
  // sign as a float (JavaScript reads -0 as the Number -0).
  bool number_integer(Json::number_integer_t v) {
    return Add(v == 0 ? Json(-0.0) : Json(v)) != nullptr;
  }
  bool number_unsigned(Json::number_unsigned_t v) { return Add(Json(v)) != nullptr; }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    return Add(Json(v)) != nullptr;
  }
  bool string(Json::string_t& v) { return Add(Json(std::move(v))) != nullptr; }
  // The JSON parser never produces binary values (only CBOR and friends do).
  bool binary(Json::binary_t& /*v*/) { return Fail("binary value", Position()); }
  bool start_object(std::size_t /*elements*/) { return Open(Json::object()); }
  bool key(Json::string_t& k) {
    key_ = std::move(k);
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(std::size_t /*elements*/) { return Open(Json::array()); }
  bool end_array() { return Close(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::json::exception& ex) {
    // `position` counts the characters read, the one that failed included (1-based).
    return Fail(Reason(ex), position > 0 ? position - 1 : 0);
  }

  const Error& error() const { return error_; }
  Json TakeRoot() && { return std::move(root_); }

 private:
  // Bytes read so far, minus the character just read: where the current value starts for a
  // container, a byte on its line for a scalar.
  uint64_t Position() const {
    const auto read = static_cast<uint64_t>(*consumed_ - text_.data());
    return read > 0 ? read - 1 : 0;
  }

  bool Fail(const char* reason, uint64_t offset) {
    error_ = MakeError(ErrorCode::kParse, reason, std::min<uint64_t>(offset, text_.size()));
    return false;
  }

  // Places `v` in the open container (or as the root); returns where it now lives, or
  // nullptr past the depth bound.
  Json* Add(Json v) {
    if (stack_.size() > limits_.max_depth) {
      Fail("JSON nested too deeply", Position());
      return nullptr;
    }
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& top = *stack_.back();
    if (top.is_array()) {
      if (offsets_ != nullptr) {
        offsets_->offsets_[top.get_ptr<Json::array_t*>()].push_back(Position());
      }
      top.push_back(std::move(v));
      return &top.back();
    }
    if (limits_.refuse_duplicate_members && top.contains(key_)) {
      Fail("JSON duplicate member", Position());
      return nullptr;
    }
    // std::map nodes never move, so the pointer stays valid while the object grows.
    Json& slot = top[key_];
    slot = std::move(v);
    return &slot;
  }
  bool Open(Json container) {
    if (stack_.size() >= limits_.max_nesting) {
      Fail("JSON nested too deeply", Position());
      return false;
    }
    Json* at = Add(std::move(container));
    if (at == nullptr) return false;
    stack_.push_back(at);
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  std::string_view text_;
  const char** consumed_;
  const ReadLimits& limits_;
  ElementOffsets* offsets_;
  Json root_;
  std::vector<Json*> stack_;  // the open containers, outermost first
  std::string key_;
  Error error_ = MakeError(ErrorCode::kParse, "invalid JSON", 0);
};

std::optional<uint64_t> ElementOffsets::Of(const Json& array, std::size_t index) const {
  const Json::array_t* items = array.get_ptr<const Json::array_t*>();
  if (items == nullptr) return std::nullopt;
  const auto it = offsets_.find(items);
  if (it == offsets_.end() || index >= it->second.size()) return std::nullopt;
  return it->second[index];
}

Result<Json> ReadJson(std::string_view text, const ReadLimits& limits, ElementOffsets* offsets) {
  if (text.size() > limits.max_bytes) {
    return MakeError(ErrorCode::kParse, "JSON input above the size limit", 0);
  }
  // nlohmann ends its input at a NUL byte and would accept "[1]\0anything"; JSON has no NUL
  // outside strings (and inside them it must be escaped), so one is refused where it is.
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    return MakeError(ErrorCode::kParse, "NUL byte in JSON text", nul);
  }
  const char* consumed = text.data();
  DomBuilder builder(text, &consumed, limits, offsets);
  const CountingIterator first(text.data(), &consumed);
  const CountingIterator last(text.data() + text.size(), &consumed);
  if (!Json::sax_parse(first, last, &builder)) return builder.error();
  return std::move(builder).TakeRoot();
}

std::size_t LineOf(std::string_view text, uint64_t offset) {
  const std::size_t end = static_cast<std::size_t>(std::min<uint64_t>(offset, text.size()));
  return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + end, '\n'));
}

}  // namespace scenecrdt::json
