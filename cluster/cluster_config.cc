// SPDX-License-Identifier: Apache-2.0
// Owns the checks on cluster names and the key layout.
#include "scenecrdt/cluster/cluster_config.h"

#include <unistd.h>

#include <cstdio>
#include <random>

namespace scenecrdt::cluster {
namespace {

bool IsIdChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == ':';
}

bool IsValidId(std::string_view id, std::size_t max_bytes) {
  if (id.empty() || id.size() > max_bytes) return false;
  for (const char c : id) {
    if (!IsIdChar(c)) return false;
  }
  return true;
}

}  // namespace

bool IsValidNodeId(std::string_view id) { return IsValidId(id, kMaxNodeIdBytes); }

Result<void> ValidateClusterConfig(const ClusterConfig& config) {
  if (!IsValidId(config.key_prefix, kMaxKeyPrefixBytes)) {
    return MakeError(ErrorCode::kInvalidArgument, "key prefix: 1..64 of [A-Za-z0-9_.:-]");
  }
  if (!IsValidNodeId(config.node_id)) {
    return MakeError(ErrorCode::kInvalidArgument, "node id: 1..64 of [A-Za-z0-9_.:-]");
  }
  if (config.max_entry_bytes == 0 || config.page_entries == 0) {
    return MakeError(ErrorCode::kInvalidArgument, "max_entry_bytes and page_entries must be > 0");
  }
  return {};
}

bool IsValidClusterSceneName(std::string_view scene) {
  if (scene.empty() || scene.size() > kMaxSceneNameBytes) return false;
  for (const char c : scene) {
    if (c <= ' ' || c > '~' || c == '{' || c == '}') return false;
  }
  return true;
}

Result<SceneKeys> MakeSceneKeys(std::string_view key_prefix, std::string_view scene) {
  if (!IsValidClusterSceneName(scene)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "scene name: 1..64 printable ASCII bytes without space, '{' or '}'");
  }
  std::string base;
  base.reserve(key_prefix.size() + scene.size() + 4);
  base.append(key_prefix).append(":{").append(scene).append("}:");
  return SceneKeys{base + "log", base + "snap", base + "lease"};
}

std::string GenerateNodeId() {
  char host[65] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::string id;
  for (const char* p = host; *p != '\0' && id.size() < 24; ++p) {
    id += IsIdChar(*p) ? *p : '_';
  }
  if (id.empty()) id = "node";
  std::random_device random;
  const uint64_t nonce = (uint64_t{random()} << 32) | random();
  char tail[48];
  std::snprintf(tail, sizeof(tail), "-%ld-%016llx", static_cast<long>(getpid()),
                static_cast<unsigned long long>(nonce));
  id += tail;
  return id.substr(0, kMaxNodeIdBytes);
}

}  // namespace scenecrdt::cluster
