// SPDX-License-Identifier: Apache-2.0
// Owns Compactor: folds a scene's stream into its snapshot and trims the stream, by exactly one
// node at a time (docs/CLUSTER.md "Compaction and its lease"). Steps: take the scene's lease;
// load snapshot + tail; merge both into a CrdtStore (tombstones and remove-sets kept); export
// it; in one script, while the lease is still ours, store the snapshot with the ID it covers,
// XTRIM MINID no further than that ID (minus a retention window), and append a trim marker;
// release the lease. Redis then holds the scene's state plus a window, not its history.
#pragma once

#include <atomic>
#include <cstdint>
#include <string_view>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/sha256.h"

namespace scenecrdt::cluster {

struct CompactionOptions {
  uint32_t lease_ttl_ms = 30000;  // how long a crashed compactor blocks the others
  uint32_t retain_ms = 10000;     // keep entries this much older than the newest one folded
  uint32_t min_tail_entries = 1;  // compact only when at least this many entries are new
  runtime::StoreLimits limits;    // the folding store (default: no entity/tombstone limits)
};

struct CompactionResult {
  enum class Outcome : uint8_t {
    kCompacted,    // snapshot written, stream trimmed
    kLeaseHeld,    // another compactor holds the lease: nothing done
    kNothingToDo,  // fewer than min_tail_entries new entries
    kLeaseLost,    // the lease expired while folding: nothing written
    kSuperseded,   // a snapshot covering as much was already stored: nothing written
  };
  Outcome outcome = Outcome::kNothingToDo;
  uint64_t folded_entries = 0;           // data entries merged on top of the previous snapshot
  uint64_t bad_entries = 0;              // entries skipped as kBad
  StreamId covers;                       // the ID the new snapshot covers
  uint64_t trimmed = 0;                  // entries XTRIM removed
  uint64_t stream_length = 0;            // XLEN after the trim (marker included)
  uint64_t snapshot_bytes = 0;           // size of the new snapshot chunk
  runtime::Sha256::Digest state_hash{};  // CrdtStore::StateHash() of the folded state
};

struct CompactorCounters {
  uint64_t compactions = 0;  // kCompacted outcomes
  uint64_t lease_busy = 0;   // kLeaseHeld outcomes
  uint64_t failures = 0;     // errors and kLeaseLost / kSuperseded outcomes
  uint64_t trimmed = 0;      // entries removed, all compactions together
};

class Compactor {
 public:
  // `connection` must outlive the compactor; used on the caller's thread.
  Compactor(RedisConnection& connection, ClusterConfig config, CompactionOptions options = {});

  Result<CompactionResult> CompactScene(std::string_view scene);

  CompactorCounters counters() const;  // thread-safe
  const CompactionOptions& options() const { return options_; }

 private:
  Result<CompactionResult> FoldAndCommit(std::string_view scene, const std::string& token);

  RedisConnection& connection_;
  ClusterConfig config_;
  CompactionOptions options_;
  std::atomic<uint64_t> compactions_{0};
  std::atomic<uint64_t> lease_busy_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> trimmed_{0};
};

}  // namespace scenecrdt::cluster
