// SPDX-License-Identifier: Apache-2.0
// Owns the json form of an event line (--log-format json): the pieces of an event's format
// become members of one object, written by nlohmann-json (its escaping; bytes that are not
// UTF-8 become U+FFFD), never by hand. docs/SERVER.md "Log format and levels".
#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/server/observability/event_log.h"

namespace scenecrdt::server::internal {

namespace {

using Json = nlohmann::ordered_json;

bool IsKeyByte(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

bool IsKey(const std::string& text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (!IsKeyByte(c)) return false;
  }
  return true;
}

// Walks the pieces as the text format reads them: `key=value` tokens separated by spaces
// outside the format's quotes (the quotes themselves are not part of the value); words that
// are no field's (and string conversions that are no value) are gathered in "note".
class FieldCollector {
 public:
  explicit FieldCollector(Json& object) : object_(object) {}

  void Add(const LogPiece& piece) {
    if (piece.kind == LogPiece::Kind::kLiteral) {
      for (const char c : piece.text) AddChar(c);
      return;
    }
    if (piece.kind == LogPiece::Kind::kString && !piece.value) {
      EndToken();
      AddNote(piece.text);
      return;
    }
    if (in_value_) {
      if (value_.empty() && pieces_in_value_ == 0) number_ = &piece;
      ++pieces_in_value_;
      literal_only_ = false;
      value_ += piece.text;
    } else {
      token_ += piece.text;
    }
  }

  void Finish() {
    EndToken();
    if (!note_.empty()) object_["note"] = note_;
  }

 private:
  void AddChar(char c) {
    if (c == '"') {
      in_quotes_ = !in_quotes_;
      ++pieces_in_value_;  // a quoted value is a string, even when it holds one number
      literal_only_ = false;
      return;
    }
    if (c == ' ' && !in_quotes_) {
      EndToken();
      return;
    }
    if (c == '=' && !in_value_ && !in_quotes_ && IsKey(token_)) {
      key_ = std::move(token_);
      token_.clear();
      in_value_ = true;
      value_.clear();
      pieces_in_value_ = 0;
      number_ = nullptr;
      literal_only_ = true;
      return;
    }
    if (in_value_) {
      ++pieces_in_value_;
      value_ += c;
    } else {
      token_ += c;
    }
  }

  void EndToken() {
    if (in_value_) {
      object_[key_] = Value();
    } else if (!token_.empty()) {
      AddNote(token_);
    }
    in_value_ = false;
    in_quotes_ = false;
    token_.clear();
    value_.clear();
    number_ = nullptr;
  }

  Json Value() const {
    if (number_ != nullptr && pieces_in_value_ == 1) {
      switch (number_->kind) {
        case LogPiece::Kind::kSigned:
          return Json(number_->i);
        case LogPiece::Kind::kUnsigned:
          return Json(number_->u);
        case LogPiece::Kind::kFloat:
          if (std::isfinite(number_->d)) return Json(number_->d);
          break;
        default:
          break;
      }
    }
    if (value_ == "-") return Json(nullptr);  // "none" in the text format
    // A number the format wrote itself (messages=0, http=429), as the same key elsewhere.
    if (literal_only_ && !value_.empty() && value_.size() <= 18 &&
        value_.find_first_not_of("0123456789") == std::string::npos) {
      return Json(std::stoull(value_));
    }
    return Json(value_);
  }

  void AddNote(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    if (text.empty()) return;
    if (!note_.empty()) note_ += ' ';
    note_ += text;
  }

  Json& object_;
  bool in_quotes_ = false;
  bool in_value_ = false;
  std::string key_;
  std::string token_;
  std::string value_;
  int pieces_in_value_ = 0;
  bool literal_only_ = true;  // the value is text of the format alone (no conversion, no quotes)
  const LogPiece* number_ = nullptr;
  std::string note_;
};

std::string Dump(const Json& object) {
  return object.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Halves the longest string member until the line fits (and says so with "cut": true).
std::string DumpBounded(Json& object) {
  std::string line = Dump(object);
  for (int round = 0; round < 64 && line.size() + 1 > EventLog::kMaxLineBytes; ++round) {
    Json* longest = nullptr;
    for (auto& [key, value] : object.items()) {
      if (!value.is_string() || key == "ts" || key == "level" || key == "event") continue;
      if (longest == nullptr || value.get_ref<const std::string&>().size() >
                                    longest->get_ref<const std::string&>().size()) {
        longest = &value;
      }
    }
    if (longest == nullptr || longest->get_ref<const std::string&>().size() < 16) break;
    std::string& text = longest->get_ref<std::string&>();
    text.resize(text.size() / 2);
    object["cut"] = true;
    line = Dump(object);
  }
  return line;
}

Json Head(std::string_view ts, LogLevel level, std::string_view event) {
  Json object = Json::object();
  object["ts"] = std::string(ts);
  object["level"] = LogLevelName(level);
  object["event"] = std::string(event);
  return object;
}

}  // namespace

std::string JsonLogLine(std::string_view ts, LogLevel level, std::string_view event,
                        const std::vector<LogPiece>& pieces) {
  try {
    Json object = Head(ts, level, event);
    FieldCollector fields(object);
    for (const LogPiece& piece : pieces) fields.Add(piece);
    fields.Finish();
    return DumpBounded(object) + '\n';
  } catch (const std::exception&) {  // allocation; never crosses the boundary
    return "{\"level\":\"error\",\"event\":\"log_format_failed\"}\n";
  }
}

std::string JsonMessageLine(std::string_view ts, LogLevel level, std::string_view event,
                            std::string_view message) {
  try {
    Json object = Head(ts, level, event);
    object["message"] = std::string(message);
    return DumpBounded(object) + '\n';
  } catch (const std::exception&) {
    return "{\"level\":\"error\",\"event\":\"log_format_failed\"}\n";
  }
}

}  // namespace scenecrdt::server::internal
