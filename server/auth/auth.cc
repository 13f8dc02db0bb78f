// SPDX-License-Identifier: Apache-2.0
// Owns parsing the --auth file and the token check.
#include "scenecrdt/server/auth/auth.h"

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"

namespace scenecrdt::server {

namespace {

constexpr std::size_t kMaxNameBytes = 256;

// Compares without an early exit on the first differing byte, so the time does not tell an
// attacker how much of a token prefix was right.
bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |=
        static_cast<unsigned>(static_cast<unsigned char>(a[i]) ^ static_cast<unsigned char>(b[i]));
  }
  return diff == 0;
}

}  // namespace

Result<AuthTable> AuthTable::Parse(std::string_view json_text) {
  auto doc = json::ReadJson(json_text);
  if (!doc.has_value()) return doc.error();
  const auto bad = [](const char* why) { return MakeError(ErrorCode::kInvalidArgument, why); };
  const json::Json* tokens = json::Member(*doc, "tokens");
  if (!tokens || !tokens->is_array()) return bad("expected {\"tokens\":[...]}");
  AuthTable table;
  table.open_ = false;
  for (const json::Json& t : *tokens) {
    if (!t.is_object()) return bad("each token entry must be an object");
    const json::Json* token = json::Member(t, "token");
    const json::Json* scenes = json::Member(t, "scenes");
    const json::Json* role = json::Member(t, "role");
    if (!token || !token->is_string() || token->get_ref<const std::string&>().empty()) {
      return bad("each token entry needs a non-empty \"token\" string");
    }
    if (!scenes || !scenes->is_array()) return bad("each token entry needs a \"scenes\" array");
    if (!role || (*role != "read" && *role != "write" && *role != "admin")) {
      return bad("each token entry needs \"role\": \"read\", \"write\" or \"admin\"");
    }
    const json::Json* name = json::Member(t, "name");
    if (name && (!name->is_string() || name->get_ref<const std::string&>().empty() ||
                 name->get_ref<const std::string&>().size() > kMaxNameBytes)) {
      return bad("a token entry's \"name\" must be a non-empty string of at most 256 bytes");
    }
    TokenGrant grant;
    grant.token = token->get<std::string>();
    grant.role = *role == "admin" ? Role::kAdmin : (*role == "write" ? Role::kWrite : Role::kRead);
    grant.name = name ? name->get<std::string>() : "token#" + std::to_string(table.grants_.size());
    for (const json::Json& s : *scenes) {
      if (!s.is_string()) return bad("\"scenes\" must hold strings");
      grant.scenes.push_back(s.get<std::string>());
    }
    table.grants_.push_back(std::move(grant));
  }
  return table;
}

bool AuthTable::Knows(std::string_view token) const {
  if (open_) return true;
  bool found = false;
  for (const TokenGrant& g : grants_) found |= ConstantTimeEquals(g.token, token);
  return found;
}

const TokenGrant* AuthTable::Match(std::string_view token) const {
  // Every grant is compared, so the time does not depend on which one matches.
  const TokenGrant* match = nullptr;
  for (const TokenGrant& g : grants_) {
    if (ConstantTimeEquals(g.token, token) && !match) match = &g;
  }
  return match;
}

Result<Role> AuthTable::Check(std::string_view token, std::string_view scene) const {
  if (open_) return Role::kWrite;
  const TokenGrant* match = Match(token);
  if (!match) return MakeError(ErrorCode::kUnauthorized, "unknown token");
  for (const std::string& s : match->scenes) {
    if (s == "*" || s == scene) return match->role;
  }
  return MakeError(ErrorCode::kUnauthorized, "token not granted for this scene");
}

Result<AccessGrant> AuthTable::Check(std::string_view token, std::string_view scene,
                                     std::chrono::sys_seconds /*now*/) const {
  Result<Role> role = Check(token, scene);
  if (!role.has_value()) {
    return MakeError(ErrorCode::kUnauthorized,
                     Knows(token) ? auth_reason::kMissingGrant : auth_reason::kUnknownToken);
  }
  const TokenGrant* match = open_ ? nullptr : Match(token);
  AccessGrant grant;
  grant.role = *role;
  grant.subject = open_ ? "open" : "auth-file";
  if (match) grant.principal = match->name;
  return grant;
}

}  // namespace scenecrdt::server
