// SPDX-License-Identifier: Apache-2.0
// Owns AccessControl: the one Authenticator a server's sessions ask, built from the serve
// flags: the --auth token table, signed access tokens (--jwt-secret / --jwt-public-key,
// JwtVerifier), both, or neither (open mode: loopback only, every session may write). With
// both, a token shaped like a JWT (three dot-separated parts) goes to the verifier and any
// other to the table. Replace swaps in freshly loaded credentials (SIGHUP) while sessions
// check tokens on other threads: each check reads one consistent pair. Token model:
// docs/AUTH.md.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/auth/auth.h"
#include "scenecrdt/server/auth/authenticator.h"
#include "scenecrdt/server/auth/jwt_verifier.h"

namespace scenecrdt::server {

struct AccessConfig {
  std::string auth_file;  // --auth
  // --jwt-secret (HS256) and --jwt-public-key (EdDSA / ES256 PEM), each repeatable (key
  // rotation: a token verifies if any key of its algorithm verifies it; docs/AUTH.md).
  std::vector<std::string> jwt_secret_files;
  std::vector<std::string> jwt_public_keys;
  std::chrono::seconds jwt_leeway{30};  // --jwt-leeway-s
};

class AccessControl final : public Authenticator {
 public:
  // Open mode.
  AccessControl() = default;
  AccessControl(AccessControl&& other) noexcept;
  AccessControl& operator=(AccessControl&& other) noexcept;
  // Reads the files. On failure the error, and `why` names the file and what to do.
  static Result<AccessControl> Load(const AccessConfig& config, std::string& why);
  // Takes `fresh`'s credentials (a reload); checks running on other threads see either the
  // old pair or the new one, never a mix.
  void Replace(AccessControl&& fresh);

  // True when neither tokens nor keys are configured.
  bool open() const;
  bool has_jwt() const;

  Result<AccessGrant> Check(std::string_view token, std::string_view scene,
                            std::chrono::sys_seconds now) const override;
  // Check at the wall clock (what sessions use).
  Result<AccessGrant> CheckNow(std::string_view token, std::string_view scene) const;
  // Whether `token` is a credential at all, whatever scene it names (the viewer's scene list):
  // open mode, a token of the --auth table, or a signed token that verifies now.
  bool Knows(std::string_view token) const;

 private:
  struct Credentials {
    std::shared_ptr<const AuthTable> table;
    std::shared_ptr<const JwtVerifier> jwt;
  };
  Credentials Current() const;

  mutable std::mutex mu_;
  Credentials credentials_;  // guarded by mu_
};

// The wall clock, to the second, as verifiers expect it.
inline std::chrono::sys_seconds WallSeconds() {
  return std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
}

}  // namespace scenecrdt::server
