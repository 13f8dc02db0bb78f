// SPDX-License-Identifier: Apache-2.0
// Owns the seam between a session and its credentials: Role, AccessGrant, the refusal reasons
// and the Authenticator interface that both the --auth token table (auth.h) and the signed
// access token verifier (jwt_verifier.h) implement. Token model: docs/AUTH.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

// kAdmin writes like kWrite and may write any entity whatever the scene's authority says
// (docs/AUTHORITY.md).
enum class Role : uint8_t { kRead, kWrite, kAdmin };

inline bool CanWrite(Role role) { return role != Role::kRead; }

// What an accepted credential allows in one scene.
struct AccessGrant {
  Role role = Role::kRead;
  // Who holds the credential, for logs only (the JWT `sub`; never the token itself).
  std::string subject;
  // The first instant at which the same credential would be refused as expired (JWT: `exp` plus
  // the leeway); nullopt for credentials that never expire (the --auth table).
  std::optional<std::chrono::sys_seconds> expires_at;
  // Who the scene's authority sees (docs/AUTHORITY.md): the JWT `sub`, the --auth entry's
  // "name" (or "token#<index>"); empty without auth: each session is its own principal.
  std::string principal;
  // JWT `entities` (docs/AUTHORITY.md "Range grants"): entity-number ranges [lo, hi] the
  // principal may create and write (and owns from the start); empty: no range restriction.
  std::vector<std::pair<uint32_t, uint32_t>> entity_ranges;
};

// Every refusal is ErrorCode::kUnauthorized with one of these static details, short enough for
// a client to log and match on (docs/AUTH.md lists what each one means).
namespace auth_reason {
inline constexpr char kUnknownToken[] = "unknown_token";      // not in the --auth table
inline constexpr char kMissingGrant[] = "missing_grant";      // valid, scene not granted
inline constexpr char kTooLarge[] = "too_large";              // over the token size limit
inline constexpr char kMalformed[] = "malformed";             // not three base64url JSON parts
inline constexpr char kWrongAlgorithm[] = "wrong_algorithm";  // `alg` is not a configured one
inline constexpr char kUnsupportedHeader[] = "unsupported_header";  // `crit` present
inline constexpr char kBadSignature[] = "bad_signature";  // wrong length or does not verify
inline constexpr char kExpired[] = "expired";             // now >= exp + leeway
inline constexpr char kNotYetValid[] = "not_yet_valid";   // now < nbf - leeway
inline constexpr char kMissingExp[] = "missing_exp";      // no `exp` claim
inline constexpr char kBadTime[] = "bad_time";            // `exp`/`nbf` not a NumericDate
inline constexpr char kBadSubject[] = "bad_subject";      // `sub` missing or unprintable
inline constexpr char kBadScenes[] = "bad_scenes";        // `scenes` missing or ill-typed
inline constexpr char kBadRole[] = "bad_role";            // `role` not "read"/"write"/"admin"
inline constexpr char kBadEntities[] = "bad_entities";    // `entities` not [[lo, hi], ...] in range
inline constexpr char kWrongIssuer[] = "wrong_issuer";    // `iss` differs from configured
inline constexpr char kWrongAudience[] = "wrong_audience";  // `aud` lacks the configured one
// A session whose grant expired while connected is closed with this (docs/AUTH.md).
inline constexpr char kTokenExpired[] = "token_expired";
}  // namespace auth_reason

// True when `error` says "the credential is good but does not cover this scene" (HTTP 403), as
// opposed to "the credential itself is refused" (HTTP 401).
inline bool IsSceneNotGranted(const Error& error) {
  return error.code == ErrorCode::kUnauthorized &&
         std::string_view(error.detail) == auth_reason::kMissingGrant;
}

// Decides whether a token may join a scene and with which role. Implementations are immutable
// after construction, so any session strand may call Check concurrently without locking.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // The grant of `token` in `scene` at `now` (injected, never read from a clock inside), or
  // ErrorCode::kUnauthorized with an auth_reason detail. Never crashes on any input.
  virtual Result<AccessGrant> Check(std::string_view token, std::string_view scene,
                                    std::chrono::sys_seconds now) const = 0;
};

}  // namespace scenecrdt::server
