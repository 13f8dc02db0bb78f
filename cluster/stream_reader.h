// SPDX-License-Identifier: Apache-2.0
// Owns StreamReader: a node's one read loop over the streams of every scene it hosts
// (docs/CLUSTER.md "The read loop"). One XREAD names all healthy scenes with a cursor each; a
// scene whose stream cannot be read (a key of the wrong type, an error reply) is taken out of
// the shared XREAD and retried alone with backoff, so one bad scene never stalls the others.
// Bad entries are reported and skipped; the node's own entries are skipped (it merged them
// when it wrote them); a trim that removed entries this reader never read is repaired by
// reading the snapshot (GapTracker).
//
// Threads: RunOnce() is the loop body, for a caller that drives the loop itself (tests);
// Start() runs it on a thread of its own. Sink callbacks run on that thread, with no lock held.
// AddScene/RemoveScene/Cursors/counters may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/gap_tracker.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/cluster/scene_log.h"
#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::cluster {

struct ReaderOptions {
  uint32_t block_ms = 500;          // longest XREAD BLOCK wait (Start()'s loop)
  uint32_t count = 64;              // entries per scene per read (memory: x max_entry_bytes)
  uint32_t retry_initial_ms = 100;  // a failing scene is retried alone after this ...
  uint32_t retry_max_ms = 5000;     // ... doubling up to this
  bool skip_own = true;             // drop entries written by config.node_id
};

// Something wrong with one scene; the others are unaffected.
struct SceneFault {
  StreamId id;         // the bad entry; zero for a stream-level failure
  Error error;         // why (kCorruptData for a bad entry or a wrong-type key, ...)
  bool stream_failed;  // true: the stream could not be read; retried after a backoff
};

struct ReaderCounters {
  uint64_t rounds = 0;            // RunOnce calls that reached Redis
  uint64_t entries = 0;           // data entries delivered
  uint64_t own_skipped = 0;       // own entries skipped
  uint64_t bad_entries = 0;       // kBad entries reported and skipped
  uint64_t stream_failures = 0;   // scene reads that failed (each retry counts)
  uint64_t snapshot_reloads = 0;  // gaps repaired with the snapshot
  uint64_t read_errors = 0;       // rounds failed as a whole (Redis unreachable)
};

struct ReadRound {
  uint32_t scenes = 0;            // scenes read this round
  uint64_t entries = 0;           // data entries delivered
  uint32_t failing_scenes = 0;    // scenes out of the shared read, waiting for a retry
  int64_t next_retry_in_ms = -1;  // until the next failing scene's retry (-1: none)
  // Redis refused the shared read though every scene reads alone (a sharded Redis refusing
  // keys of several slots): the round fell back to one read per scene, without blocking.
  bool shared_read_refused = false;
};

class StreamReader {
 public:
  class Sink {
   public:
    virtual ~Sink() = default;
    // Data entries of other nodes, in stream order (one call per scene per round).
    virtual void OnEntries(std::string_view scene, std::span<const StreamEntry> entries) = 0;
    // The scene's snapshot, after a trim removed entries this reader had not read: merge it.
    virtual void OnSnapshot(std::string_view scene, const SceneSnapshot& snapshot) = 0;
    virtual void OnFault(std::string_view scene, const SceneFault& fault) = 0;
  };

  // Opens its own connections (the read loop's, and one to wake it) from `redis`; their command
  // timeout is extended by block_ms. `sink` must outlive the reader.
  StreamReader(RedisOptions redis, ClusterConfig config, ReaderOptions options, Sink& sink);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Follows `scene` from `cursor` (LoadedScene::last_id after a load; a scene already followed
  // moves to the new cursor). Takes effect at the next round; a blocked read is woken.
  // kInvalidArgument for a name the key layout refuses.
  Result<void> AddScene(std::string_view scene, StreamId cursor);
  // Stops following `scene` from the next round on (a round under way may still deliver it).
  void RemoveScene(std::string_view scene);

  // One round: apply AddScene/RemoveScene, retry failing scenes that are due, read the healthy
  // ones (XREAD BLOCK block_ms when block_ms > 0 and nothing else is ready), deliver.
  // kUnavailable when Redis cannot be reached: cursors stay, nothing is lost.
  Result<ReadRound> RunOnce(uint32_t block_ms);

  // Runs RunOnce on a thread until Stop(); waits out Redis outages with the connection's backoff.
  void Start();
  void Stop();

  struct SceneCursor {
    std::string scene;
    StreamId cursor;  // last entry handled (its scene sequence is the node's resume point)
    bool failing = false;
  };
  std::vector<SceneCursor> Cursors() const;
  ReaderCounters counters() const;
  RedisCounters redis_counters() const { return connection_.counters(); }

 private:
  struct SceneState {
    std::string scene;
    std::string log_key;
    StreamId cursor;
    GapTracker gaps;
    bool failing = false;
    bool reload_pending = false;
    int64_t retry_at_ms = 0;
    uint32_t retry_delay_ms = 0;
  };
  struct PendingChange {
    std::string scene;
    StreamId cursor;
    bool remove = false;
  };

  int64_t Now() const;
  void ApplyPending();
  Result<void> EnsureClientId();
  RedisArgs ReadArgs(std::span<SceneState* const> scenes, uint32_t block_ms,
                     std::vector<std::string>& storage) const;
  // Individual, non-blocking reads of `scenes` (pipelined): failures are isolated per scene.
  Result<void> ReadEach(std::span<SceneState* const> scenes, ReadRound& round);
  void HandleEntries(SceneState& state, std::vector<StreamEntry>&& entries, ReadRound& round);
  void MarkFailed(SceneState& state, const Error& error);
  void MarkHealthy(SceneState& state);
  uint32_t CountFailing() const;
  Result<void> ReloadSnapshots();
  void Publish();
  void Wake();
  void Loop();

  ClusterConfig config_;
  ReaderOptions options_;
  Sink& sink_;
  RedisConnection connection_;                             // the loop's
  SceneLog log_;                                           // snapshot reads, on connection_
  std::map<std::string, SceneState, std::less<>> scenes_;  // loop thread only
  uint64_t client_id_epoch_ = 0;
  bool shared_read_refused_ = false;  // last round's state, to log changes only
  std::atomic<int64_t> client_id_{-1};
  std::atomic<bool> blocked_{false};

  mutable std::mutex mutex_;  // guards pending_, published_, stop_
  std::condition_variable wake_;
  std::vector<PendingChange> pending_;
  std::vector<SceneCursor> published_;
  bool stop_ = false;
  std::thread thread_;

  std::mutex control_mutex_;  // guards control_
  RedisConnection control_;   // CLIENT UNBLOCK for the loop's connection

  std::atomic<uint64_t> rounds_{0}, entries_{0}, own_skipped_{0}, bad_entries_{0},
      stream_failures_{0}, snapshot_reloads_{0}, read_errors_{0};
};

}  // namespace scenecrdt::cluster
