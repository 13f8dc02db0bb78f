// SPDX-License-Identifier: Apache-2.0
// Owns the bounded JSON read of JWT parts. Two passes over text the verifier has already capped
// at a few KiB: a SAX pass that only checks depth and duplicate names and stops at the first
// violation, then nlohmann's DOM parse. nlohmann's parser is iterative, so deep input costs no
// stack in either pass; the first pass keeps a too-deep tree from ever being built.
#include "scenecrdt/server/auth/jwt_json.h"

#include <set>
#include <string>
#include <vector>

namespace scenecrdt::server {

namespace {

using Json = nlohmann::json;

class BoundsChecker final : public nlohmann::json_sax<Json> {
 public:
  explicit BoundsChecker(int max_depth) : max_depth_(max_depth) {}

  bool too_deep() const { return too_deep_; }
  bool duplicate_key() const { return duplicate_key_; }

  bool null() override { return true; }
  bool boolean(bool /*val*/) override { return true; }
  bool number_integer(number_integer_t /*val*/) override { return true; }
  bool number_unsigned(number_unsigned_t /*val*/) override { return true; }
  bool number_float(number_float_t /*val*/, const string_t& /*s*/) override { return true; }
  bool string(string_t& /*val*/) override { return true; }
  bool binary(binary_t& /*val*/) override { return true; }

  bool start_object(std::size_t /*elements*/) override {
    if (!Enter()) return false;
    keys_.emplace_back();
    return true;
  }
  bool key(string_t& val) override {
    if (!keys_.back().insert(val).second) {
      duplicate_key_ = true;
      return false;
    }
    return true;
  }
  bool end_object() override {
    keys_.pop_back();
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) override { return Enter(); }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& /*ex*/) override {
    return false;
  }

 private:
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  int max_depth_;
  int depth_ = 0;
  bool too_deep_ = false;
  bool duplicate_key_ = false;
  // Member names seen, one set per open object. A key event always belongs to the innermost
  // open object (arrays hold no names), which is the last set.
  std::vector<std::set<std::string>> keys_;
};

}  // namespace

Result<nlohmann::json> ParseJwtJson(std::string_view text, int max_depth) {
  BoundsChecker checker(max_depth);
  if (!Json::sax_parse(text.begin(), text.end(), &checker)) {
    if (checker.too_deep()) return MakeError(ErrorCode::kParse, "JSON nested too deeply");
    if (checker.duplicate_key()) return MakeError(ErrorCode::kParse, "JSON duplicate member");
    return MakeError(ErrorCode::kParse, "not JSON");
  }
  Json value = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return MakeError(ErrorCode::kParse, "not JSON");
  return value;
}

}  // namespace scenecrdt::server
