// SPDX-License-Identifier: Apache-2.0
// Owns JwtVerifier: the decision "does this signed access token (compact JWS, RFC 7519) let its
// holder into this scene, with which role, until when". Claims, algorithms, leeway and refusal
// reasons: docs/AUTH.md. Immutable after Create, so every session strand may call it at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/auth/authenticator.h"
#include "scenecrdt/server/auth/jwt_key.h"

namespace scenecrdt::server {

struct JwtOptions {
  std::chrono::seconds leeway{30};     // clock skew allowed on `exp` and `nbf`; 0..600 s
  std::size_t max_token_bytes = 4096;  // longer tokens are refused before decoding; 128..65536
  int max_json_depth = 8;              // header/claims nesting ({"scenes":[..]} is 2); 2..64
  std::string issuer;                  // when non-empty, `iss` must equal it
  std::string audience;                // when non-empty, `aud` must equal it or hold it
};

// The claims of an accepted token.
struct JwtClaims {
  static constexpr std::size_t kMaxSubjectBytes = 256;

  std::string subject;                                 // `sub`: the client id, for logs
  std::vector<std::string> scenes;                     // `scenes`; "*" grants every scene
  Role role = Role::kRead;                             // `role`
  std::chrono::sys_seconds expires_at;                 // `exp`, rounded down to a second
  std::optional<std::chrono::sys_seconds> not_before;  // `nbf`, rounded up to a second
  // `entities`: [[lo, hi], ...] entity-number ranges (docs/AUTHORITY.md "Range grants"), each
  // kMinRangeNumber <= lo <= hi <= kMaxRangeNumber, at most kMaxRanges of them.
  std::vector<std::pair<uint32_t, uint32_t>> entities;
  static constexpr uint32_t kMinRangeNumber = 512;    // below: reserved numbers, nobody's
  static constexpr uint32_t kMaxRangeNumber = 65534;  // protocol::kMaxEntityNumber
  static constexpr std::size_t kMaxRanges = 64;

  bool Allows(std::string_view scene) const;
};

class JwtVerifier final : public Authenticator {
 public:
  // Keys one algorithm may have at once (key rotation: the old and the new key side by side);
  // a token is checked against each key of its algorithm, so a bad signature costs at most
  // this many signature checks.
  static constexpr std::size_t kMaxKeysPerAlgorithm = 4;

  // A verifier that accepts tokens signed by any of `keys`, each with its own algorithm only.
  // Errors (kInvalidArgument): no key, more than kMaxKeysPerAlgorithm keys for one algorithm,
  // options out of range.
  static Result<JwtVerifier> Create(std::vector<JwtKey> keys, JwtOptions options = {});

  // The claims of `token` if it is accepted at `now`: at most max_token_bytes, exactly three
  // strict base64url parts, header `alg` naming a configured key (never "none"), no `crit`,
  // a signature that verifies with one of the keys of that algorithm, then `exp` (required) and
  // `nbf` within the leeway, `iss`/`aud` when configured, and well-formed `sub`, `scenes`, `role`.
  // Otherwise kUnauthorized with an auth_reason detail. Nothing from the claims is read before the
  // signature verifies.
  Result<JwtClaims> Verify(std::string_view token, std::chrono::sys_seconds now) const;

  // Authenticator: Verify, then the scene must be granted (else kMissingGrant). The grant
  // expires at `exp` + leeway, the first instant Verify would say kExpired.
  Result<AccessGrant> Check(std::string_view token, std::string_view scene,
                            std::chrono::sys_seconds now) const override;

  const JwtOptions& options() const { return options_; }

 private:
  JwtVerifier(std::vector<JwtKey> keys, JwtOptions options);
  bool HasKeyFor(JwtAlgorithm algorithm) const;
  // Whether any key of `algorithm` verifies `signature` over `signing_input`.
  bool VerifiedByAnyKey(JwtAlgorithm algorithm, std::string_view signing_input,
                        std::span<const uint8_t> signature) const;

  std::vector<JwtKey> keys_;
  JwtOptions options_;
};

}  // namespace scenecrdt::server
