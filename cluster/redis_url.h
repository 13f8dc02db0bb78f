// SPDX-License-Identifier: Apache-2.0
// Owns RedisEndpoint and the Redis URL grammar (docs/CLUSTER.md "Connecting"):
//   redis://[[user]:password@]host[:port][/db]      host: name, IPv4, or [IPv6]; port 6379
//   unix:///absolute/socket/path[?db=N&user=U&password=P]
// User, password and path are percent-decoded (user <= 256, password <= 512 bytes decoded, so
// the canonical form of any accepted URL fits the 4096-byte URL limit). TLS (rediss://) is not
// offered: hiredis 0.14 has no TLS. Pure code, no I/O: fuzzed by tools/fuzz/fuzz_redis_url.cc.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

inline constexpr std::size_t kMaxRedisUrlBytes = 4096;
inline constexpr std::size_t kMaxRedisUserBytes = 256;      // decoded
inline constexpr std::size_t kMaxRedisPasswordBytes = 512;  // decoded
inline constexpr uint16_t kDefaultRedisPort = 6379;
inline constexpr std::size_t kMaxUnixSocketPathBytes = 107;  // sun_path minus its NUL

struct RedisEndpoint {
  enum class Kind : uint8_t { kTcp, kUnix };
  Kind kind = Kind::kTcp;
  std::string host;                   // kTcp: name or address (IPv6 without brackets)
  uint16_t port = kDefaultRedisPort;  // kTcp
  std::string path;                   // kUnix: absolute socket path
  std::string user;                   // ACL user; empty: the default user
  std::string password;               // empty: no AUTH
  uint32_t db = 0;                    // logical database (SELECT), 0 needs no SELECT

  friend bool operator==(const RedisEndpoint&, const RedisEndpoint&) = default;
};

// Errors: kInvalidArgument with a static reason naming the faulty part.
Result<RedisEndpoint> ParseRedisUrl(std::string_view url);
// The password option: a non-empty `password` (from a flag or a secret file, kept off the URL)
// replaces the URL's; the URL may then name a user without one ("redis://bob@host").
Result<RedisEndpoint> ParseRedisUrl(std::string_view url, std::string_view password);

// The canonical URL of `endpoint`: ParseRedisUrl(FormatRedisUrl(e, true)) == e for every parsed
// `e`. With include_password false the password is written as "***" (for logs).
std::string FormatRedisUrl(const RedisEndpoint& endpoint, bool include_password);

}  // namespace scenecrdt::cluster
