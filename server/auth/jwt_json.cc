// SPDX-License-Identifier: Apache-2.0
// Owns the bounded JSON read of JWT parts: json/'s reader (the one bounded JSON reader) with
// the JWT's bounds, and its errors folded to the three reasons the verifier's tests name.
#include "scenecrdt/server/auth/jwt_json.h"

#include <cstring>
#include <utility>

#include "scenecrdt/json/reader.h"

namespace scenecrdt::server {

Result<nlohmann::json> ParseJwtJson(std::string_view text, int max_depth) {
  json::ReadLimits limits;
  limits.max_nesting = max_depth < 0 ? 0 : static_cast<std::size_t>(max_depth);
  limits.refuse_duplicate_members = true;
  auto value = json::ReadJson(text, limits);
  if (value.has_value()) return std::move(*value);
  const char* detail = value.error().detail;
  if (std::strcmp(detail, "JSON nested too deeply") == 0 ||
      std::strcmp(detail, "JSON duplicate member") == 0) {
    return MakeError(ErrorCode::kParse, detail);
  }
  return MakeError(ErrorCode::kParse, "not JSON");
}

}  // namespace scenecrdt::server
