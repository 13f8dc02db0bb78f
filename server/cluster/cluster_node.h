// SPDX-License-Identifier: Apache-2.0
// Owns ClusterNode: what `scenecrdt serve --redis URL` adds to a server (docs/CLUSTER.md
// "Server integration"). It replaces SQLite as the scenes' commit log (a SharedLog:
// storage/commit_log.h) and runs three threads,
// each with its own Redis connection:
//  - the append thread gathers the flushes of every scene that is ready at that moment into
//    one AppendBatch (one round trip, fsynced together by Redis); a flush is acknowledged
//    (its CommitJob done(true)) only after its XADD returned; an error fails the job, the
//    scene keeps the acks and retries;
//  - the read loop (cluster::StreamReader) follows every hosted scene and posts other nodes'
//    entries to the scene strand, where they merge and fan out like local writes;
//  - the control thread loads a scene (snapshot + tail) before its first member is welcomed,
//    and compacts the hosted scenes periodically (the lease makes one node do the work).
// A fourth connection answers SceneStored (whether Redis holds anything of a scene) for the
// registry, from any thread, one at a time. A fifth, the read loop's only, re-reads a scene's
// owner hash when it merges the snapshot for entries trimmed before it read them (authority
// on; docs/AUTHORITY.md "Cluster"). Every connection re-establishes itself when Redis
// closed it while idle (a Redis restart), before anyone is refused (redis_connection.h).
// Memory: the append queue holds at most one job per scene; entries posted to scene strands
// wait for merging, bounded by kMaxPostedBytes (the read loop pauses above it).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/cluster/cluster_config.h"
#include "scenecrdt/cluster/compactor.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/cluster/scene_log.h"
#include "scenecrdt/cluster/stream_reader.h"
#include "scenecrdt/server/config.h"
#include "scenecrdt/server/observability/metrics.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

struct ClusterCounters {
  uint64_t appends = 0;          // entries appended (acknowledged by Redis)
  uint64_t append_failures = 0;  // flushes not appended (nothing acked)
  uint64_t entries_applied = 0;  // other nodes' entries posted to scenes
  uint64_t loads = 0;            // scenes loaded from Redis
  uint64_t load_failures = 0;
  uint64_t compactions = 0;
  uint64_t owner_rereads = 0;          // owner hashes re-read after a snapshot reload
  uint64_t owner_reread_failures = 0;  // those that failed (the reload is retried)
};

class ClusterNode final : public SharedLog, public cluster::StreamReader::Sink {
 public:
  static constexpr std::size_t kMaxPostedBytes = 64u << 20;
  // Connect and reply timeout of SceneStored's connection (it runs on the I/O threads).
  static constexpr uint32_t kProbeTimeoutMs = 500;

  // Parses the URL (config.redis_url, config.redis_password) and checks that Redis answers.
  // `log`: where the node's Redis connections write their lines (empty: stderr, prefixed
  // "scenecrdt cluster: "; `serve --log-format json` passes the event log's json lines).
  static Result<std::unique_ptr<ClusterNode>> Open(const ServerConfig& config, Metrics& metrics,
                                                   cluster::LogSink log = {});
  ~ClusterNode() override;

  void Start();
  // Stops the threads; jobs still queued fail (done(false)). Idempotent.
  void Stop();

  // ---- CommitLog: a scene's flush, appended to its stream ----
  void Submit(CommitJob job) override;

  // ---- SharedLog, any thread ----
  // Claims of entity numbers (--authority owner|rules): decided by the append thread, in
  // stream order, before the flushes of the same round (cluster_owners.h).
  void Claim(ClaimJob job) override;
  // A scene this node hosts from now on: loaded from Redis, then followed.
  void Follow(LoggedScene& scene) override;
  // The registry evicted `scene` (quiescent): the read loop stops following it and nothing is
  // posted to it any more; its per-scene metrics go. The registry's mutex is held.
  void Unfollow(LoggedScene& scene) override;
  // Loads `scene` again after a failed load (its next join asks).
  void RequestLoad(LoggedScene& scene) override;
  // A posted batch was merged: releases its share of kMaxPostedBytes.
  void Consumed(std::size_t bytes) override;
  // Whether Redis holds anything of `scene` (its stream or its snapshot key: EXISTS), on the
  // probe connection (shorter timeouts: kProbeTimeoutMs). An error when Redis cannot tell now
  // (`why` gets its text). Calls are serialised.
  Result<bool> SceneStored(std::string_view scene, std::string* why) override;

  // ---- StreamReader::Sink (read loop thread) ----
  void OnEntries(std::string_view scene, std::span<cluster::StreamEntry> entries) override;
  // Authority on: the scene's owner hash is read again first and replaces its owner table
  // after the merge (LoggedScene::LogOwners); when that read fails nothing is posted and the
  // error makes the read loop retry the whole reload after the scene's backoff.
  Result<void> OnSnapshot(std::string_view scene, const cluster::SceneSnapshot& snapshot) override;
  void OnFault(std::string_view scene, const cluster::SceneFault& fault) override;

  // Tests only: while held, the read loop delivers nothing to the scenes (it waits with the
  // entries it read), so a test can widen the window between two nodes' views of a stream.
  void HoldEntriesForTest(bool hold);
  // Tests only: whether the read loop waits at the hold with entries it read.
  bool EntriesHeldForTest() const;

  const std::string& node_id() const { return config_.node_id; }
  const std::string& key_prefix() const { return config_.key_prefix; }
  std::string redis_url_for_logs() const;
  ClusterCounters counters() const;
  // The node's Prometheus series (docs/CLUSTER.md "Metrics"), appended to `out`.
  void RenderPrometheus(PrometheusText& out) const;

 private:
  ClusterNode(const ServerConfig& server, cluster::RedisOptions redis, Metrics& metrics);
  void AppendLoop();
  // The claims, and the flushes of `jobs` that carry owner rows (removed from `jobs`), each
  // through its script (cluster_owners.cc); the append thread's.
  void AppendOwned(std::vector<CommitJob>& jobs, std::vector<ClaimJob>& claims);
  // The owner hash of scene `name` (control thread).
  Result<OwnerRows> ReadSceneOwners(const std::string& name);
  void ControlLoop();
  void Load(LoggedScene* scene);
  void CompactAll();
  void Log(const std::string& line) const;
  void ObserveAppend(double seconds);
  // Waits while too many bytes are posted and not merged yet (read loop thread).
  void Reserve(std::size_t bytes);

  cluster::RedisOptions redis_;
  cluster::ClusterConfig config_;
  uint32_t compact_interval_ms_;
  bool authority_;  // --authority owner|rules: owner rows travel in the stream
  Metrics& metrics_;

  cluster::RedisConnection append_connection_;
  cluster::SceneLog append_log_;
  cluster::RedisConnection control_connection_;
  cluster::SceneLog control_log_;
  cluster::Compactor compactor_;
  std::unique_ptr<cluster::StreamReader> reader_;
  std::mutex probe_mu_;  // guards probe_connection_
  cluster::RedisConnection probe_connection_;
  cluster::RedisConnection owners_connection_;  // the read loop's (OnSnapshot) only
  // Per-scene series (scene names) on GET /metrics only in open mode: /metrics carries no
  // token, and under --auth/JWT a scene is named only to callers who may read it.
  bool scene_labels_ = true;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable append_cv_, control_cv_, posted_cv_;
  std::deque<CommitJob> jobs_;
  std::deque<ClaimJob> claims_;
  std::deque<LoggedScene*> loads_;
  std::map<std::string, LoggedScene*, std::less<>> scenes_;
  std::map<std::string, int64_t, std::less<>> read_lag_ms_;     // per scene, last delivery
  std::map<std::string, uint64_t, std::less<>> stream_length_;  // per scene, after compaction
  std::size_t posted_bytes_ = 0;
  bool stop_ = false;
  bool started_ = false;
  bool hold_entries_ = false;  // HoldEntriesForTest
  bool entries_held_ = false;  // EntriesHeldForTest
  std::thread append_thread_, control_thread_;

  static constexpr std::size_t kAppendBuckets = 10;
  std::array<std::atomic<uint64_t>, kAppendBuckets + 1> append_buckets_{};
  std::atomic<uint64_t> append_micros_{0}, append_batches_{0};
  std::atomic<uint64_t> appends_{0}, append_failures_{0}, entries_applied_{0}, loads_done_{0},
      load_failures_{0}, compactions_{0}, compaction_failures_{0}, owner_rereads_{0},
      owner_reread_failures_{0};
};

}  // namespace scenecrdt::server
