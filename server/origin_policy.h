// SPDX-License-Identifier: Apache-2.0
// Owns OriginPolicy: which browser pages may use this server (--allowed-origins). A request
// without an Origin header (native clients, plain navigation) and a same-origin one (the
// Origin's host[:port] equals the Host header) are allowed; another Origin only when listed
// ("*" allows every one). Refused requests get 403 before any upgrade (docs/SERVER.md
// "Browser origins"). Immutable after Parse.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

class OriginPolicy {
 public:
  static constexpr std::size_t kMaxOrigins = 64;

  // `list`: comma-separated origins ("https://game.example,http://localhost:8080"), "*", or
  // empty (same-origin only). Errors (kInvalidArgument): an entry that is not
  // scheme://host[:port], or more than kMaxOrigins entries.
  static Result<OriginPolicy> Parse(std::string_view list);

  // `origin`: the Origin header, nullopt when absent; `host`: the Host header.
  bool Allows(std::optional<std::string_view> origin, std::string_view host) const;

 private:
  bool any_ = false;
  std::vector<std::string> origins_;  // lower case, without a trailing '/'
};

}  // namespace scenecrdt::server
