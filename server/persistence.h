// SPDX-License-Identifier: Apache-2.0
// Owns Persistence: the embedded SQLite database (WAL) under --data and the persistence
// thread that runs group commits off the fan-out's latency path.
//
// Schema (docs/SERVER.md): one row per register (scene, component, entity), per tombstone
// (scene, number) and per append element; a meta row with the server incarnation. A scene
// hands over "everything that changed since my last durable point" as a DCL stream (its
// CrdtStore's coalesced ExportChangesSince), so a commit writes each changed key once however
// often it changed. Loading turns the rows back into a DCL stream that rebuilds the state.
//
// Threading: Open/LoadAll before Start(); Submit from any thread; `done` callbacks run on the
// persistence thread and must only post. At most one job per scene is in flight (the scene
// waits for `done`), so the queue is bounded by the number of scenes.
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
#include "scenecrdt/server/metrics.h"

struct sqlite3;

namespace scenecrdt::server {

struct PersistedScene {
  std::string name;
  std::vector<uint8_t> dcl;  // rebuilds the scene's state in an empty store
  uint64_t rows = 0;
};

struct CommitJob {
  std::string scene;
  std::vector<uint8_t> dcl;        // changed registers/tombstones/append sets, current values
  std::function<void(bool)> done;  // runs on the persistence thread: post, do not block
};

// Takes a scene's flush and calls its `done` once it is durable (or failed).
class CommitSink {
 public:
  virtual ~CommitSink() = default;
  virtual void Submit(CommitJob job) = 0;
};

class Persistence final : public CommitSink {
 public:
  ~Persistence() override;
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Creates `dir` if needed and opens dir/scenes.sqlite3. fsync: synchronous=FULL, else
  // NORMAL. Bumps and returns the server incarnation (incarnation()).
  static Result<std::unique_ptr<Persistence>> Open(const std::string& dir, bool fsync,
                                                   Metrics& metrics);
  // Every stored scene as a DCL stream. Call before Start().
  Result<std::vector<PersistedScene>> LoadAll();
  uint64_t incarnation() const { return incarnation_; }

  void Start();
  // Thread-safe. Jobs submitted together (while a commit runs) share one transaction.
  void Submit(CommitJob job) override;
  // Commits what is queued, then stops the thread. Idempotent.
  void Stop();

  // The last SQLite error text (for logs).
  std::string last_error() const;

 private:
  Persistence(sqlite3* db, Metrics& metrics) : db_(db), metrics_(metrics) {}
  void Loop();
  bool CommitBatch(std::vector<CommitJob>& jobs, uint64_t* rows);

  sqlite3* db_;
  Metrics& metrics_;
  uint64_t incarnation_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<CommitJob> queue_;  // bounded: one job per scene at most
  bool stop_ = false;
  std::thread thread_;
  std::string last_error_;
};

}  // namespace scenecrdt::server
