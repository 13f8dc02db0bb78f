// SPDX-License-Identifier: Apache-2.0
// Owns StorageHealth: whether group commits currently succeed. A failing commit (a full disk,
// SQLITE_FULL under --max-db-bytes, an I/O error) starts an "episode": one log line with the
// real SQLite error, the metrics gauge at 1, /healthz answering 503, and scenes telling their
// writers `storage_unavailable` (non-fatal: nothing is acked meanwhile, clients keep their
// frames). The first commit that succeeds again ends it with one more line. docs/SERVER.md
// "Storage failures".
//
// Threading: the persistence thread reports; any thread reads (atomics and a mutex for text).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "scenecrdt/server/observability/event_log.h"
#include "scenecrdt/server/observability/metrics.h"

namespace scenecrdt::server {

class StorageHealth {
 public:
  StorageHealth(Metrics& metrics, const EventLog* log) : metrics_(metrics), log_(log) {}

  // ---- The persistence thread ----
  // A group commit of `scenes` scene jobs failed with `error` (the SQLite text of the moment).
  void OnCommitFailed(const std::string& error, std::size_t scenes);
  void OnCommitSucceeded();

  // ---- Any thread ----
  bool ok() const { return !failing_.load(std::memory_order_acquire); }
  // Numbers the failure episodes (1, 2, ...); 0 before the first. A scene tells each writer
  // once per episode.
  uint64_t episode() const { return episode_.load(std::memory_order_acquire); }
  // The SQLite error of the current (or last) episode; "" before the first.
  std::string last_error() const;

 private:
  Metrics& metrics_;
  const EventLog* log_;
  std::atomic<bool> failing_{false};
  std::atomic<uint64_t> episode_{0};
  mutable std::mutex mu_;
  std::string last_error_;
  int64_t failing_since_ms_ = 0;  // persistence thread only
  uint64_t failed_commits_ = 0;   // in the current episode; persistence thread only
};

}  // namespace scenecrdt::server
