// SPDX-License-Identifier: Apache-2.0
// Owns OriginPolicy: which browser pages may use this server. The Host header first
// (--allowed-hosts, the DNS-rebinding guard): localhost, *.localhost, IP literals and listed
// names only, since a page whose name an attacker rebinds to this machine sends that name.
// Then the Origin (--allowed-origins): a request without one (native clients, plain
// navigation) and a same-origin one (the Origin's host[:port] equals the, now checked, Host
// header) are allowed; another Origin only when listed ("*" allows every one). Refused
// requests get 403 before any upgrade (docs/SERVER.md "Browser origins"). Immutable after
// Parse.
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
  static constexpr std::size_t kMaxHosts = 64;

  // `list`: comma-separated origins ("https://game.example,http://localhost:8080"), "*", or
  // empty (same-origin only). `hosts`: comma-separated host names ("scenes.example"; a
  // leading dot, ".example.com", also allows every subdomain), "*" (no Host check), or empty
  // (loopback names and IP literals only). Errors (kInvalidArgument): an origin that is not
  // scheme://host[:port], a host that is not a DNS name, more than 64 entries in a list.
  static Result<OriginPolicy> Parse(std::string_view list, std::string_view hosts = {});

  // `host`: the Host header ("name[:port]", "[v6][:port]"); empty (absent) is allowed, as
  // no browser sends a request without one.
  bool AllowsHost(std::string_view host) const;
  // `origin`: the Origin header, nullopt when absent; `host`: the Host header.
  bool Allows(std::optional<std::string_view> origin, std::string_view host) const;

 private:
  bool any_ = false;
  bool any_host_ = false;
  std::vector<std::string> origins_;  // lower case, without a trailing '/'
  std::vector<std::string> hosts_;    // lower case; ".suffix" entries match subdomains
};

}  // namespace scenecrdt::server
