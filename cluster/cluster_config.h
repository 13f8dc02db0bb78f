// SPDX-License-Identifier: Apache-2.0
// Owns ClusterConfig (what every cluster object of one node shares) and the Redis key layout
// (docs/CLUSTER.md "Keys"): per scene `<prefix>:{<scene>}:log` (the stream), `:snap` (the
// snapshot hash) and `:lease` (the compaction lease). The `{scene}` hash tag keeps a scene's
// keys in one Redis Cluster slot, so the scripts that touch several of them stay legal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

inline constexpr std::size_t kMaxSceneNameBytes = 64;
inline constexpr std::size_t kMaxNodeIdBytes = 64;
inline constexpr std::size_t kMaxKeyPrefixBytes = 64;

struct ClusterConfig {
  std::string key_prefix = "scenecrdt";  // namespace of every key; 1..64 of [A-Za-z0-9_.:-]
  std::string node_id;                   // unique per running node; 1..64 of [A-Za-z0-9_.:-]
  protocol::DecodeOptions decode;        // how entry and snapshot chunks are checked
  uint32_t max_entry_bytes = 1u << 20;   // largest chunk Append accepts (split bigger flushes)
  uint32_t page_entries = 1024;          // XRANGE page size when loading a scene
};

// kInvalidArgument when a field is out of range (a node id is required).
Result<void> ValidateClusterConfig(const ClusterConfig& config);

// 1..64 of [A-Za-z0-9_.:-] (node ids in entries, key prefixes).
bool IsValidNodeId(std::string_view id);

// A scene name is usable in keys: 1..64 bytes, printable ASCII without space, '{' or '}'.
// (Servers accept a narrower set, docs/PROTOCOL.md; this is only the key-safety rule.)
bool IsValidClusterSceneName(std::string_view scene);

struct SceneKeys {
  std::string log;       // the stream of entries
  std::string snapshot;  // hash: id (stream ID covered), data (DCL chunk), by (node), v (1)
  std::string lease;     // string: the compactor's token, with a TTL
};
// kInvalidArgument for a name IsValidClusterSceneName refuses.
Result<SceneKeys> MakeSceneKeys(std::string_view key_prefix, std::string_view scene);

// "<host>-<pid>-<16 random hex digits>", cut to the allowed characters and length: unique per
// process run, so a restarted node does not skip the entries of its previous life.
std::string GenerateNodeId();

}  // namespace scenecrdt::cluster
