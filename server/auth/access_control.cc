// SPDX-License-Identifier: Apache-2.0
// Owns loading the credential files of `serve` and routing a token to the table or the
// verifier.
#include "scenecrdt/server/auth/access_control.h"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace scenecrdt::server {

namespace {

bool LooksLikeJwt(std::string_view token) {
  return std::count(token.begin(), token.end(), '.') == 2;
}

}  // namespace

Result<AccessControl> AccessControl::Load(const AccessConfig& config, std::string& why) {
  AccessControl out;
  if (!config.auth_file.empty()) {
    std::ifstream in(config.auth_file, std::ios::binary);
    if (!in) {
      why = "cannot read the --auth file " + config.auth_file;
      return MakeError(ErrorCode::kIo, "cannot read the --auth file");
    }
    std::stringstream text;
    text << in.rdbuf();
    auto table = AuthTable::Parse(text.str());
    if (!table.has_value()) {
      why = "the --auth file " + config.auth_file + " is not a token table (docs/AUTH.md)";
      return table.error();
    }
    out.credentials_.table = std::make_shared<const AuthTable>(std::move(table.value()));
  }
  std::vector<JwtKey> keys;
  for (const std::string& path : config.jwt_secret_files) {
    auto key = JwtKey::FromSecretFile(path);
    if (!key.has_value()) {
      why = "--jwt-secret " + path + ": " + key.error().detail;
      return key.error();
    }
    keys.push_back(std::move(key.value()));
  }
  for (const std::string& path : config.jwt_public_keys) {
    auto key = JwtKey::FromPublicKeyPemFile(path);
    if (!key.has_value()) {
      why = "--jwt-public-key " + path + ": " + key.error().detail;
      return key.error();
    }
    keys.push_back(std::move(key.value()));
  }
  if (!keys.empty()) {
    JwtOptions options;
    options.leeway = config.jwt_leeway;
    auto verifier = JwtVerifier::Create(std::move(keys), options);
    if (!verifier.has_value()) {
      why = std::string("the --jwt-* keys: ") + verifier.error().detail;
      return verifier.error();
    }
    out.credentials_.jwt = std::make_shared<const JwtVerifier>(std::move(verifier.value()));
  }
  return out;
}

AccessControl::AccessControl(AccessControl&& other) noexcept : credentials_(other.Current()) {}

AccessControl& AccessControl::operator=(AccessControl&& other) noexcept {
  if (this != &other) Replace(std::move(other));
  return *this;
}

void AccessControl::Replace(AccessControl&& fresh) {
  Credentials taken = fresh.Current();
  std::lock_guard lock(mu_);
  credentials_ = std::move(taken);
}

AccessControl::Credentials AccessControl::Current() const {
  std::lock_guard lock(mu_);
  return credentials_;
}

bool AccessControl::open() const {
  const Credentials c = Current();
  return !c.table && !c.jwt;
}

bool AccessControl::has_jwt() const { return Current().jwt != nullptr; }

Result<AccessGrant> AccessControl::Check(std::string_view token, std::string_view scene,
                                         std::chrono::sys_seconds now) const {
  const Credentials c = Current();
  if (!c.table && !c.jwt) return AuthTable::Open().Check(token, scene, now);
  if (c.jwt && (!c.table || LooksLikeJwt(token))) return c.jwt->Check(token, scene, now);
  return c.table->Check(token, scene, now);
}

Result<AccessGrant> AccessControl::CheckNow(std::string_view token, std::string_view scene) const {
  return Check(token, scene, WallSeconds());
}

bool AccessControl::Knows(std::string_view token) const {
  const Credentials c = Current();
  if (!c.table && !c.jwt) return true;
  if (c.table && c.table->Knows(token)) return true;
  return c.jwt && c.jwt->Verify(token, WallSeconds()).has_value();
}

}  // namespace scenecrdt::server
