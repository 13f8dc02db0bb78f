// SPDX-License-Identifier: Apache-2.0
// Owns SceneLog: a node's writes to and full reads of the per-scene logs (docs/CLUSTER.md).
// Append is one XADD of one DCL chunk tagged with the node id; its entry ID is the
// acknowledgement (the entry is in Redis, durable as Redis's AOF setting makes it). LoadScene
// is a late join: the snapshot and every entry after it, consistent even while compaction
// trims concurrently. Uses a caller-owned connection, on the caller's thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

struct LoadedScene {
  SceneSnapshot snapshot;
  std::vector<StreamEntry> tail;  // kData entries after the snapshot, in stream order
  std::vector<StreamEntry> bad;   // kBad entries met on the way (skipped, reported)
  StreamId last_id;               // the last entry read (or the snapshot's): read on from here
  uint32_t attempts = 1;          // loads started (a concurrent trim can force a restart)
};

class SceneLog {
 public:
  // `connection` must outlive the log. `config` is checked with ValidateClusterConfig: an
  // invalid one makes every call fail with its error.
  SceneLog(RedisConnection& connection, ClusterConfig config);

  // XADD `<prefix>:{scene}:log * n <node id> d <chunk>`. The chunk must decode strictly
  // (config.decode) and be 1..max_entry_bytes long. Errors: kInvalidArgument (scene name,
  // size), the decode error, kUnavailable (not appended, or not known to be), Redis errors.
  Result<StreamId> Append(std::string_view scene, std::span<const uint8_t> chunk);

  // Several appends in one round trip (one XADD each, pipelined): Redis fsyncs them together
  // under appendfsync always. One result per chunk, in order; a chunk refused here or by Redis
  // (a wrong-type key) fails alone. The call fails as a whole (kUnavailable) only when the
  // connection does: then no entry is known to be in Redis, none is acknowledged.
  struct SceneChunk {
    std::string_view scene;
    std::span<const uint8_t> chunk;
  };
  Result<std::vector<Result<StreamId>>> AppendBatch(std::span<const SceneChunk> chunks);

  // The snapshot and its tail. Restarts (up to kMaxLoadAttempts) when a trim removed entries
  // between two pages; then fails with kUnavailable.
  static constexpr uint32_t kMaxLoadAttempts = 4;
  Result<LoadedScene> LoadScene(std::string_view scene);

  Result<SceneSnapshot> ReadSnapshot(std::string_view scene);
  // XLEN of the scene's stream (0 when it does not exist).
  Result<uint64_t> StreamLength(std::string_view scene);

  const ClusterConfig& config() const { return config_; }

 private:
  // Checks a chunk before it may be appended; on success fills `log_key`.
  Result<void> CheckAppend(std::string_view scene, std::span<const uint8_t> chunk,
                           std::string& log_key) const;

  RedisConnection& connection_;
  ClusterConfig config_;
  Result<void> valid_;
};

}  // namespace scenecrdt::cluster
