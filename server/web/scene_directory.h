// SPDX-License-Identifier: Apache-2.0
// Owns SceneDirectory: the names of the stored scenes for the viewer's scene list (GET /,
// GET /api/scenes; docs/WEB.md), read on a thread of its own, never on a network thread, from
// a bounded source (storage/scene_names.h): SQLite's scene_names table or, in cluster mode, a
// bounded SCAN of the scene streams in Redis (cluster/cluster_scene_list.h). At most
// kMaxListedScenes names. Every listing asked while a read runs shares the next one, and a
// read is reused for kFreshMs, so pollers cost the store at most one read per kFreshMs
// whatever their number. Also holds the per-address rate of listings (kListingsPerSecond,
// kListingBurst). Bounds: docs/SERVER.md "Scene list".
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/server/observability/event_log.h"
#include "scenecrdt/server/observability/log_gate.h"
#include "scenecrdt/server/observability/metrics.h"
#include "scenecrdt/server/storage/scene_names.h"
#include "scenecrdt/server/web/peer_rate_limiter.h"

namespace scenecrdt::server {

inline constexpr int64_t kFreshMs = 1000;        // a read serves listings this long
inline constexpr double kListingsPerSecond = 5;  // per source address
inline constexpr double kListingBurst = 20;
inline constexpr std::size_t kMaxListingPeers = 4096;  // addresses the rate table holds

class SceneDirectory {
 public:
  SceneDirectory(SceneNameSource source, Metrics& metrics, const EventLog& log);
  ~SceneDirectory();
  SceneDirectory(const SceneDirectory&) = delete;
  SceneDirectory& operator=(const SceneDirectory&) = delete;

  void Start();
  // Joins the thread; listings still waiting get an empty, incomplete answer. Idempotent.
  void Stop();

  // `done` runs once, on the directory's thread, with the stored names. Any thread.
  void List(std::function<void(StoredScenesPtr)> done);
  // The per-address rate of listings.
  PeerRateLimiter& rate() { return rate_; }
  // A listing refused by the rate: counted, logged at most once a second. Any thread.
  void NoteLimited(const std::string& peer);
  // Source reads so far (tests: listings share reads).
  uint64_t reads() const;

 private:
  void Loop();

  SceneNameSource source_;
  Metrics& metrics_;
  const EventLog& log_;
  PeerRateLimiter rate_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // One per HTTP request waiting: bounded by the connection caps.
  std::vector<std::function<void(StoredScenesPtr)>> waiting_;
  LogGate limited_log_;  // guarded by mu_
  StoredScenesPtr last_;
  int64_t last_ms_ = 0;
  uint64_t reads_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scenecrdt::server
