// SPDX-License-Identifier: Apache-2.0
// Owns parsing --allowed-origins and --allowed-hosts, the Host check and the same-origin
// comparison.
#include "scenecrdt/server/auth/origin_policy.h"

#include <arpa/inet.h>

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

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_';
}

// A DNS name as --allowed-hosts takes it: 1..253 of [A-Za-z0-9._-].
bool IsHostName(std::string_view name) {
  return !name.empty() && name.size() <= 253 && std::all_of(name.begin(), name.end(), IsNameChar);
}

// The host of a Host header value ("name[:port]", "[v6][:port]") in lower case, without the
// port and a trailing dot ("localhost." names localhost); nullopt when it is not that shape.
std::optional<std::string> HostOf(std::string_view host) {
  std::string_view name = host;
  std::string_view port;
  if (host.front() == '[') {
    const auto close = host.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    name = host.substr(0, close + 1);
    port = host.substr(close + 1);
    if (!port.empty() && port.front() != ':') return std::nullopt;
  } else if (const auto colon = host.find(':'); colon != std::string_view::npos) {
    name = host.substr(0, colon);
    port = host.substr(colon);
  }
  if (!port.empty()) {
    port.remove_prefix(1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
  }
  if (name.size() > 1 && name.back() == '.') name.remove_suffix(1);
  if (name.empty()) return std::nullopt;
  return Lower(name);
}

// An IPv4 dotted quad or a bracketed IPv6 literal: a browser sends one only for a page whose
// URL names that address, which no DNS answer can change.
bool IsIpLiteral(const std::string& name) {
  unsigned char bytes[16];
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    return inet_pton(AF_INET6, name.substr(1, name.size() - 2).c_str(), bytes) == 1;
  }
  return inet_pton(AF_INET, name.c_str(), bytes) == 1;
}

}  // namespace

Result<OriginPolicy> OriginPolicy::Parse(std::string_view list, std::string_view hosts) {
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
  while (!hosts.empty()) {
    const auto comma = hosts.find(',');
    std::string_view entry = Trim(hosts.substr(0, comma));
    hosts = comma == std::string_view::npos ? std::string_view() : hosts.substr(comma + 1);
    if (entry.empty()) continue;
    if (entry == "*") {
      policy.any_host_ = true;
      continue;
    }
    if (entry.size() > 1 && entry.back() == '.') entry.remove_suffix(1);
    if (!IsHostName(entry) || entry == ".") {
      return MakeError(ErrorCode::kInvalidArgument,
                       "--allowed-hosts: each entry is a host name (scenes.example), a domain "
                       "with a leading dot (.example.com) or *");
    }
    if (policy.hosts_.size() >= kMaxHosts) {
      return MakeError(ErrorCode::kInvalidArgument, "--allowed-hosts: at most 64 entries");
    }
    policy.hosts_.push_back(Lower(entry));
  }
  return policy;
}

bool OriginPolicy::AllowsHost(std::string_view host) const {
  if (host.empty() || any_host_) return true;
  const std::optional<std::string> name = HostOf(host);
  if (!name) return false;
  if (IsIpLiteral(*name)) return true;
  if (!IsHostName(*name)) return false;
  const auto ends_with = [&](std::string_view suffix) { return name->ends_with(suffix); };
  // RFC 6761: localhost and every name under it resolve to loopback, never elsewhere.
  if (*name == "localhost" || ends_with(".localhost")) return true;
  return std::any_of(hosts_.begin(), hosts_.end(), [&](const std::string& entry) {
    if (entry.front() != '.') return *name == entry;
    return ends_with(entry) || std::string_view(*name) == std::string_view(entry).substr(1);
  });
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
