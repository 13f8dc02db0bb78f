// SPDX-License-Identifier: Apache-2.0
// Owns AuthTable: the --auth file ({"tokens":[{"token","scenes":[...],"role","name"}]}) and the
// decision "may this token join this scene, and may it write". Immutable after loading, so
// every session strand reads it without locking.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/auth/authenticator.h"

namespace scenecrdt::server {

struct TokenGrant {
  std::string token;
  std::vector<std::string> scenes;  // scene names; "*" = any scene
  Role role = Role::kRead;
  // The principal the scene's authority sees (docs/AUTHORITY.md); "token#<index>" when the
  // entry has no "name".
  std::string name;
};

class AuthTable : public Authenticator {
 public:
  // Open mode: every token (even empty) may write to every scene.
  static AuthTable Open() { return AuthTable(); }
  // Parses the JSON text of an --auth file. Errors: kParse (JSON), kInvalidArgument (shape).
  static Result<AuthTable> Parse(std::string_view json_text);

  bool open() const { return open_; }
  std::size_t size() const { return grants_.size(); }
  // The role of `token` in `scene`; kUnauthorized when the token is unknown or the scene is
  // not granted. Token comparison takes constant time in the token length.
  Result<Role> Check(std::string_view token, std::string_view scene) const;
  // The matching grant (as Check), for its name.
  const TokenGrant* Match(std::string_view token) const;
  // True when `token` is in the table (open mode: always), whatever scenes it may join. Tells
  // "unknown token" (HTTP 401) from "scene not granted" (403) on the /dcl/ path. Constant time
  // in the token length, like Check.
  bool Knows(std::string_view token) const;
  // Authenticator: Check above as an AccessGrant that never expires (subject "auth-file", or
  // "open" in open mode); refusals are auth_reason::kUnknownToken or kMissingGrant.
  Result<AccessGrant> Check(std::string_view token, std::string_view scene,
                            std::chrono::sys_seconds now) const override;

 private:
  bool open_ = true;
  std::vector<TokenGrant> grants_;
};

}  // namespace scenecrdt::server
