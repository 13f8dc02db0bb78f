// SPDX-License-Identifier: Apache-2.0
// Owns the Redis URL parser and printer. Strict by design: a URL that could mean two things
// (a user without a password, a repeated option, a port of 0) is refused, not guessed.
#include "scenecrdt/cluster/redis_url.h"

#include <charconv>
#include <optional>
#include <utility>

#include "scenecrdt/protocol/percent.h"

namespace scenecrdt::cluster {
namespace {

Error Invalid(const char* detail) { return MakeError(ErrorCode::kInvalidArgument, detail); }

bool StartsWithNoCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    char c = text[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `text` by the one rule of protocol/percent.h ('+' is itself); a decoded NUL
// fails too (hiredis takes these as C strings).
bool PercentDecode(std::string_view text, std::string& out) {
  std::optional<std::string> decoded = protocol::PercentDecode(text, protocol::Plus::kLiteral);
  if (!decoded.has_value() || decoded->find('\0') != std::string::npos) return false;
  out = std::move(*decoded);
  return true;
}

// Unsigned decimal without sign or leading zeros, at most `max`.
bool ParseDecimal(std::string_view text, uint64_t max, uint64_t& out) {
  if (text.empty() || text.size() > 10 || (text.size() > 1 && text[0] == '0')) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size() && out <= max;
}

bool IsHostNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_';
}

bool IsIpv6Char(char c) { return HexValue(c) >= 0 || c == ':' || c == '.'; }

constexpr uint64_t kMaxDb = 0x7FFFFFFF;
constexpr std::size_t kMaxHostBytes = 253;

Result<void> CheckCredentialSizes(const RedisEndpoint& e) {
  if (e.user.size() > kMaxRedisUserBytes) return Invalid("user longer than 256 bytes");
  if (e.password.size() > kMaxRedisPasswordBytes) return Invalid("password longer than 512 bytes");
  return {};
}

// user:password (percent-encoded). A user needs a password; ":password" is the default user.
// With an external password, "user@" (no ':') is allowed: the password comes from elsewhere.
Result<void> ParseUserInfo(std::string_view info, bool external_password, RedisEndpoint& e) {
  const std::size_t colon = info.find(':');
  if (colon == std::string_view::npos && !external_password) {
    return Invalid("user info without ':' before '@'");
  }
  if (!PercentDecode(info.substr(0, colon), e.user) ||
      (colon != std::string_view::npos && !PercentDecode(info.substr(colon + 1), e.password))) {
    return Invalid("malformed percent escape in the user info");
  }
  if (!e.user.empty() && e.password.empty() && !external_password) {
    return Invalid("a user without a password");
  }
  return CheckCredentialSizes(e);
}

Result<RedisEndpoint> ParseTcp(std::string_view rest, bool external_password) {
  RedisEndpoint e;
  e.kind = RedisEndpoint::Kind::kTcp;
  const std::size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    uint64_t value = 0;
    if (!db.empty() && !ParseDecimal(db, kMaxDb, value)) {
      return Invalid("database is not a decimal index (redis://host:port/N)");
    }
    e.db = static_cast<uint32_t>(value);
  }
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    if (auto r = ParseUserInfo(authority.substr(0, at), external_password, e); !r.has_value()) {
      return r.error();
    }
    authority = authority.substr(at + 1);
  }
  std::string_view port_text;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) return Invalid("IPv6 host without ']'");
    const std::string_view host = authority.substr(1, close - 1);
    if (host.empty()) return Invalid("empty IPv6 host");
    if (host.size() > kMaxHostBytes) return Invalid("host longer than 253 bytes");
    for (const char c : host) {
      if (!IsIpv6Char(c)) return Invalid("bad character in an IPv6 host");
    }
    e.host = std::string(host);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return Invalid("junk after the IPv6 host");
      port_text = after.substr(1);
      has_port = true;
    }
  } else {
    const std::size_t colon = authority.find(':');
    const std::string_view host = authority.substr(0, colon);
    if (host.empty()) return Invalid("empty host");
    if (host.size() > kMaxHostBytes) return Invalid("host longer than 253 bytes");
    for (const char c : host) {
      if (!IsHostNameChar(c)) return Invalid("bad character in the host");
    }
    e.host = std::string(host);
    if (colon != std::string_view::npos) {
      port_text = authority.substr(colon + 1);
      has_port = true;
    }
  }
  if (has_port) {
    uint64_t port = 0;
    if (!ParseDecimal(port_text, 65535, port) || port == 0) {
      return Invalid("port is not a decimal in 1..65535");
    }
    e.port = static_cast<uint16_t>(port);
  }
  return e;
}

Result<RedisEndpoint> ParseUnix(std::string_view rest, bool external_password) {
  RedisEndpoint e;
  e.kind = RedisEndpoint::Kind::kUnix;
  e.port = kDefaultRedisPort;
  const std::size_t question = rest.find('?');
  if (!PercentDecode(rest.substr(0, question), e.path)) {
    return Invalid("malformed percent escape in the socket path");
  }
  if (e.path.empty() || e.path[0] != '/') return Invalid("unix socket path must be absolute");
  if (e.path.size() > kMaxUnixSocketPathBytes) return Invalid("unix socket path too long");
  if (question == std::string_view::npos) return e;
  std::string_view query = rest.substr(question + 1);
  bool seen_db = false, seen_user = false, seen_password = false;
  while (true) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) return Invalid("query option without '='");
    const std::string_view key = pair.substr(0, eq);
    const std::string_view value = pair.substr(eq + 1);
    if (key == "db") {
      uint64_t db = 0;
      if (seen_db || !ParseDecimal(value, kMaxDb, db)) return Invalid("bad or repeated db option");
      e.db = static_cast<uint32_t>(db);
      seen_db = true;
    } else if (key == "user") {
      if (seen_user || !PercentDecode(value, e.user)) return Invalid("bad or repeated user option");
      seen_user = true;
    } else if (key == "password") {
      if (seen_password || !PercentDecode(value, e.password)) {
        return Invalid("bad or repeated password option");
      }
      seen_password = true;
    } else {
      return Invalid("unknown query option (db, user, password)");
    }
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
  if (!e.user.empty() && e.password.empty() && !external_password) {
    return Invalid("a user without a password");
  }
  if (auto sizes = CheckCredentialSizes(e); !sizes.has_value()) return sizes.error();
  return e;
}

}  // namespace

namespace {

Result<RedisEndpoint> Parse(std::string_view url, bool external_password) {
  if (url.size() > kMaxRedisUrlBytes) return Invalid("URL longer than 4096 bytes");
  for (const char c : url) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte <= 0x20 || byte >= 0x7F)
      return Invalid("URL holds a space, control or non-ASCII byte");
  }
  if (StartsWithNoCase(url, "redis://")) return ParseTcp(url.substr(8), external_password);
  if (StartsWithNoCase(url, "unix://")) return ParseUnix(url.substr(7), external_password);
  if (StartsWithNoCase(url, "rediss://")) {
    return Invalid("rediss:// (TLS) is not supported: hiredis 0.14 has no TLS");
  }
  return Invalid("URL scheme is not redis:// or unix://");
}

}  // namespace

Result<RedisEndpoint> ParseRedisUrl(std::string_view url) { return Parse(url, false); }

Result<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string_view password) {
  if (password.empty()) return Parse(url, false);
  if (password.size() > kMaxRedisPasswordBytes) return Invalid("password longer than 512 bytes");
  for (const char c : password) {
    if (c == '\0') return Invalid("password holds a NUL byte");
  }
  auto e = Parse(url, true);
  if (!e.has_value()) return e;
  e->password = std::string(password);
  return e;
}

std::string FormatRedisUrl(const RedisEndpoint& endpoint, bool include_password) {
  std::string out;
  auto append_password = [&] {
    if (include_password) {
      protocol::AppendPercentEncoded(endpoint.password, out);
    } else {
      out += "***";
    }
  };
  if (endpoint.kind == RedisEndpoint::Kind::kUnix) {
    out += "unix://";
    protocol::AppendPercentEncoded(endpoint.path, out, protocol::Slash::kKeep);
    char sep = '?';
    if (endpoint.db != 0) {
      out += sep;
      out += "db=" + std::to_string(endpoint.db);
      sep = '&';
    }
    if (!endpoint.password.empty()) {
      if (!endpoint.user.empty()) {
        out += sep;
        out += "user=";
        protocol::AppendPercentEncoded(endpoint.user, out);
        sep = '&';
      }
      out += sep;
      out += "password=";
      append_password();
    }
    return out;
  }
  out += "redis://";
  if (!endpoint.password.empty()) {
    protocol::AppendPercentEncoded(endpoint.user, out);
    out += ':';
    append_password();
    out += '@';
  }
  if (endpoint.host.find(':') != std::string::npos) {
    out += '[' + endpoint.host + ']';
  } else {
    out += endpoint.host;
  }
  out += ':' + std::to_string(endpoint.port);
  if (endpoint.db != 0) out += '/' + std::to_string(endpoint.db);
  return out;
}

}  // namespace scenecrdt::cluster
