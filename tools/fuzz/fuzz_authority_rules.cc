// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the --authority-rules parser (server/scene/authority/authority_rules.h): any
// input parses or fails with kInvalidArgument / kParse and a non-empty reason that names what is
// wrong; a parsed file's bounds hold (ranges lo <= hi <= 65534, at most kMaxComponents and
// kMaxRanges entries) and For / AdminOnly answer for any component and number.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/server/scene/authority/authority_rules.h"

using scenecrdt::ErrorCode;
using scenecrdt::server::AuthorityRules;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  auto rules = AuthorityRules::Parse(text, why);
  if (!rules.has_value()) {
    const ErrorCode code = rules.error().code;
    if ((code != ErrorCode::kInvalidArgument && code != ErrorCode::kParse) || why.empty()) {
      std::abort();
    }
    return 0;
  }
  if (rules->components.size() > AuthorityRules::kMaxComponents ||
      rules->admin_entities.size() > AuthorityRules::kMaxRanges) {
    std::abort();
  }
  for (const auto& [lo, hi] : rules->admin_entities) {
    if (lo > hi || hi > 65534) std::abort();
    if (!rules->AdminOnly(lo) || !rules->AdminOnly(hi)) std::abort();
  }
  for (const auto& [id, who] : rules->components) {
    if (rules->For(id) != who) std::abort();
  }
  (void)rules->For(size > 0 ? data[0] : 0);
  return 0;
}
