// SPDX-License-Identifier: Apache-2.0
// Owns ScanSceneNames: the scenes that have a stream in Redis (`<prefix>:{<scene>}:log`,
// cluster_config.h), found with SCAN MATCH <prefix>:{*}:log COUNT kScanCount: no KEYS, and
// bounded in names and in SCAN calls, so a listing costs Redis at most kMaxScanCalls short
// steps however many keys it holds. The viewer's scene list in cluster mode (docs/CLUSTER.md
// "Scene list"). Runs on the caller's thread with the caller's connection.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

inline constexpr uint32_t kScanCount = 1000;   // keys Redis examines per SCAN call
inline constexpr uint32_t kMaxScanCalls = 64;  // SCAN calls per listing (64 000 keys)

struct SceneScan {
  std::vector<std::string> names;  // sorted, unique, at most max_names
  // False when the scan stopped early (max_names more names, or kMaxScanCalls calls): other
  // scenes may exist, and which ones were listed depends on SCAN's order.
  bool complete = true;
};

// Scene names (IsValidClusterSceneName) of the streams under `key_prefix`. Fails (the
// connection's error) only when a SCAN call fails; kCorruptData for a reply not SCAN-shaped.
Result<SceneScan> ScanSceneNames(RedisConnection& redis, std::string_view key_prefix,
                                 std::size_t max_names);

}  // namespace scenecrdt::cluster
