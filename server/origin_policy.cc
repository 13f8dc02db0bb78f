// SPDX-License-Identifier: Apache-2.0
// Owns parsing --allowed-origins and the same-origin comparison.
#include "scenecrdt/server/origin_policy.h"

#include <algorithm>
#include <cctype>

namespace scenecrdt::server {

namespace {

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// The host[:port] of "scheme://host[:port]" (nullopt when it is not that shape).
std::optional<std::string_view> Authority(std::string_view origin) {
  const auto sep = origin.find("://");
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  const std::string_view rest = origin.substr(sep + 3);
  if (rest.empty() || rest.find_first_of("/?#@ ") != std::string_view::npos) return std::nullopt;
  return rest;
}

}  // namespace

Result<OriginPolicy> OriginPolicy::Parse(std::string_view list) {
  OriginPolicy policy;
  while (!list.empty()) {
    const auto comma = list.find(',');
    std::string_view entry = Trim(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (entry.empty()) continue;
    if (entry == "*") {
      policy.any_ = true;
      continue;
    }
    while (entry.size() > 1 && entry.back() == '/') entry.remove_suffix(1);
    if (!Authority(entry)) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--allowed-origins: each entry is scheme://host[:port] or *");
    }
    if (policy.origins_.size() >= kMaxOrigins) {
      return MakeError(ErrorCode::kInvalidArgument, "--allowed-origins: at most 64 entries");
    }
    policy.origins_.push_back(Lower(entry));
  }
  return policy;
}

bool OriginPolicy::Allows(std::optional<std::string_view> origin, std::string_view host) const {
  if (!origin) return true;
  if (any_) return true;
  const std::string lower = Lower(*origin);
  if (std::find(origins_.begin(), origins_.end(), lower) != origins_.end()) return true;
  // Same origin: the page was served by the address the request is sent to. ("null", the
  // origin of sandboxed and file:// pages, has no authority and is refused unless listed.)
  const auto authority = Authority(lower);
  return authority && !host.empty() && *authority == Lower(host);
}

}  // namespace scenecrdt::server
