// SPDX-License-Identifier: Apache-2.0
// Owns StreamReader: a node's one read loop over the streams of every scene it hosts
// (docs/CLUSTER.md "The read loop"). One XREAD names all healthy scenes with a cursor each; a
// scene whose stream cannot be read (a key of the wrong type, an error reply) is taken out of
// the shared XREAD and retried alone with backoff, so one bad scene never stalls the others.
// Bad entries are reported and skipped; the node's own entries are skipped (it merged them
// when it wrote them); a trim that removed entries this reader never read is repaired by
// reading the snapshot (GapTracker).
// Memory: a round reads at most max_round_bytes of replies. XREAD cannot be bounded in bytes,
// so the connection stops reading past the budget (the reply is dropped with the connection);
// the loop then reads in "sized" rounds until every scene has caught up: a script returns the
// IDs and sizes of each scene's next entries (not their data), and XRANGE reads as many as fit
// the budget, scene by scene in turn. An entry larger than the budget alone is skipped as bad.
//
// Threads: RunOnce() is the loop body, for a caller that drives the loop itself (tests);
// Start() runs it on a thread of its own. Sink callbacks run on that thread, with no lock held.
// AddScene/RemoveScene/Cursors/counters may be called from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
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
  uint32_t block_ms = 500;  // longest XREAD BLOCK wait (Start()'s loop)
  uint32_t count = 64;      // entries per scene per read, at most
  // RESP bytes the replies of one read may take (the shared XREAD, a pipeline of per-scene
  // reads), plus the one 16 KiB socket read that goes past it; 0: unbounded. Peak memory of a
  // round is about twice this (hiredis's reply and our copy of it) plus the entries handed to
  // the Sink.
  std::size_t max_round_bytes = 16u << 20;
  uint32_t retry_initial_ms = 100;  // a failing scene is retried alone after this ...
  uint32_t retry_max_ms = 5000;     // ... doubling up to this
  bool skip_own = true;             // drop entries written by config.node_id (else: kOwn)
  // Data entries reach the Sink decoded (StreamEntry::decoded: this hop's one decode).
  bool keep_decoded = false;
};

// Something wrong with one scene; the others are unaffected.
struct SceneFault {
  StreamId id;         // the bad entry; zero for a stream-level failure
  Error error;         // why (kCorruptData for a bad entry or a wrong-type key, ...)
  bool stream_failed;  // true: the stream could not be read; retried after a backoff
};

struct ReaderCounters {
  uint64_t rounds = 0;              // RunOnce calls that reached Redis
  uint64_t entries = 0;             // data entries delivered
  uint64_t own_skipped = 0;         // own entries skipped
  uint64_t bad_entries = 0;         // kBad entries reported and skipped
  uint64_t stream_failures = 0;     // scene reads that failed (each retry counts)
  uint64_t snapshot_reloads = 0;    // gaps repaired with the snapshot
  uint64_t read_errors = 0;         // rounds failed as a whole (Redis unreachable)
  uint64_t round_overflows = 0;     // reads stopped at max_round_bytes (then sized rounds)
  uint64_t oversized_entries = 0;   // entries larger than max_round_bytes, skipped (also bad)
  uint64_t largest_read_bytes = 0;  // the most RESP bytes one read's replies took
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
    // Data entries of other nodes, in stream order (one call per scene per round), and this
    // node's as kOwn (no chunk) unless skip_own. The Sink may move out of them.
    virtual void OnEntries(std::string_view scene, std::span<StreamEntry> entries) = 0;
    // The scene's snapshot, after a trim removed entries this reader had not read: merge it.
    // An error: the sink could not take it now (nothing of it was merged); the reload (snapshot
    // read included) is retried after a backoff (retry_initial_ms doubling to retry_max_ms),
    // logged; the scene's entries keep coming meanwhile.
    virtual Result<void> OnSnapshot(std::string_view scene, const SceneSnapshot& snapshot) = 0;
    virtual void OnFault(std::string_view scene, const SceneFault& fault) = 0;
  };

  // Opens its own connections (the read loop's, and one to wake it) from `redis`; their command
  // timeout is extended by block_ms. `sink` must outlive the reader.
  StreamReader(RedisOptions redis, ClusterConfig config, ReaderOptions options, Sink& sink);
  ~StreamReader();
  StreamReader(const StreamReader&) = delete;
  StreamReader& operator=(const StreamReader&) = delete;

  // Follows `scene` from `cursor` (LoadedScene::last_id after a load; a scene already followed
  // moves to the new cursor). Takes effect at the next round; a blocked read is woken unless
  // `wake` is false (a caller holding a lock wakes it with Wake() afterwards).
  // kInvalidArgument for a name the key layout refuses. Calls apply in the order made.
  Result<void> AddScene(std::string_view scene, StreamId cursor, bool wake = true);
  // Stops following `scene` from the next round on (a round under way may still deliver it).
  void RemoveScene(std::string_view scene, bool wake = true);
  // Wakes a blocked read (CLIENT UNBLOCK, a Redis round trip): pending changes apply now
  // rather than after block_ms. Best effort.
  void Wake();

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
  // How this reader parses entries: its own are kOwn (never decoded), the rest as asked.
  EntryOptions entry_options() const {
    return EntryOptions{config_.decode, config_.node_id, options_.keep_decoded};
  }
  struct SceneState {
    std::string scene;
    std::string log_key;
    StreamId cursor;
    GapTracker gaps;
    bool failing = false;
    bool reload_pending = false;
    int64_t retry_at_ms = 0;
    uint32_t retry_delay_ms = 0;
    // A reload the sink refused (OnSnapshot's error) waits until reload_at_ms; the wait
    // doubles from retry_initial_ms to retry_max_ms while it keeps refusing.
    int64_t reload_at_ms = 0;
    uint32_t reload_delay_ms = 0;
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
  // Past max_round_bytes: a sized read instead.
  Result<void> ReadEach(std::span<SceneState* const> scenes, ReadRound& round);
  // A round within max_round_bytes (stream_reader_sized.cc): the next entries' sizes first,
  // then XRANGE of what fits, scene by scene; failures isolated per scene. True in `caught_up`
  // when every scene read reached its stream's end.
  Result<void> ReadSized(std::span<SceneState* const> scenes, ReadRound& round, bool& caught_up);
  // The connection's last replies took this many bytes (counters).
  void NoteReadBytes();
  // `caught_up`: the read reached the stream's end (fewer entries than asked for).
  void HandleEntries(SceneState& state, std::vector<StreamEntry>&& entries, ReadRound& round,
                     bool caught_up);
  void MarkFailed(SceneState& state, const Error& error);
  void MarkHealthy(SceneState& state);
  uint32_t CountFailing() const;
  Result<void> ReloadSnapshots();
  void Publish();
  void Loop();

  ClusterConfig config_;
  ReaderOptions options_;
  Sink& sink_;
  RedisConnection connection_;                             // the loop's
  SceneLog log_;                                           // snapshot reads, on connection_
  std::map<std::string, SceneState, std::less<>> scenes_;  // loop thread only
  uint64_t client_id_epoch_ = 0;
  bool shared_read_refused_ = false;  // last round's state, to log changes only
  bool sized_ = false;                // reading in sized rounds (a read went over the budget)
  std::size_t sized_start_ = 0;       // the scene that reads first in the next sized round
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
      stream_failures_{0}, snapshot_reloads_{0}, read_errors_{0}, round_overflows_{0},
      oversized_entries_{0}, largest_read_bytes_{0};
};

}  // namespace scenecrdt::cluster
