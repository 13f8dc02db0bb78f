// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the Origin check (server/auth/origin_policy.h): the input is split at its first
// newline into an --allowed-origins list and an Origin header (the rest, split again into
// Origin and Host). Any list parses or fails with kInvalidArgument; Allows never crashes; no
// Origin is always allowed; an Origin equal to a listed entry is allowed; with "*" every
// Origin is.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "scenecrdt/server/auth/origin_policy.h"

using scenecrdt::ErrorCode;
using scenecrdt::server::OriginPolicy;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto nl = text.find('\n');
  const std::string_view list = text.substr(0, nl);
  const std::string_view rest =
      nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  const auto nl2 = rest.find('\n');
  const std::string_view origin = rest.substr(0, nl2);
  const std::string_view host =
      nl2 == std::string_view::npos ? std::string_view() : rest.substr(nl2 + 1);
  auto policy = OriginPolicy::Parse(list);
  if (!policy.has_value()) {
    if (policy.error().code != ErrorCode::kInvalidArgument) std::abort();
    return 0;
  }
  if (!policy->Allows(std::nullopt, host)) std::abort();
  const bool allowed = policy->Allows(origin, host);
  if (list == "*" && !allowed) std::abort();
  if (!origin.empty() && list == origin && origin.find(',') == std::string_view::npos &&
      origin.find_first_of(" \t") == std::string_view::npos && origin.back() != '/' && !allowed) {
    std::abort();
  }
  return 0;
}
