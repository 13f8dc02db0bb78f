// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the Redis URL grammar (cluster/redis_url.h): any text parses or fails with
// kInvalidArgument and a reason; an accepted URL prints to a canonical form that parses back to
// the same endpoint and prints identically; the redacted form parses too and never shows a
// password other than "***"; the password option replaces the password and nothing else.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/cluster/redis_url.h"

using scenecrdt::ErrorCode;
using scenecrdt::cluster::FormatRedisUrl;
using scenecrdt::cluster::ParseRedisUrl;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = ParseRedisUrl(text);
  if (!parsed.has_value()) {
    if (parsed.error().code != ErrorCode::kInvalidArgument) std::abort();
    if (parsed.error().detail == nullptr || parsed.error().detail[0] == '\0') std::abort();
    return 0;
  }
  const std::string canonical = FormatRedisUrl(*parsed, true);
  auto again = ParseRedisUrl(canonical);
  if (!again.has_value() || !(*again == *parsed)) std::abort();
  if (FormatRedisUrl(*again, true) != canonical) std::abort();
  const std::string redacted = FormatRedisUrl(*parsed, false);
  auto shown = ParseRedisUrl(redacted);
  if (!shown.has_value()) std::abort();
  if (!parsed->password.empty() && shown->password != "***") std::abort();
  if (parsed->password.empty() && !shown->password.empty()) std::abort();
  // The password option replaces the URL's password and nothing else.
  auto with_option = ParseRedisUrl(text, "option");
  if (!with_option.has_value() || with_option->password != "option") std::abort();
  auto expected = *parsed;
  expected.password = "option";
  if (!(*with_option == expected)) std::abort();
  return 0;
}
