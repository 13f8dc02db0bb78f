// SPDX-License-Identifier: Apache-2.0
// Owns Persistence: the embedded SQLite database (WAL) under --data and the persistence
// thread that runs group commits off the fan-out's latency path.
//
// Schema (docs/SERVER.md): one row per register (scene, component, entity), per tombstone
// (scene, number), per append element and per owned entity number (owners: --authority); a meta row
// with the server incarnation; the scene_names table, one row per stored scene, kept by triggers on
// the three row tables (filled once at open for a database that predates it). A scene hands over
// "everything that changed since my last durable point" as a DCL stream (its CrdtStore's coalesced
// ExportChangesSince), so a commit writes each changed key once however often it changed. Loading
// turns the rows back into a DCL stream that rebuilds the state.
//
// Failures (docs/SERVER.md "Persistence"): every SQLite return code is checked; a step loop
// tells SQLITE_DONE from an error. Open runs `PRAGMA quick_check` on an existing file and
// refuses a corrupt one, a 0-byte one and one without the incarnation row (kCorruptData, the
// SQLite text in `diagnostic`): the server exits 2 and `scenecrdt db-salvage` is the explicit
// way out. A failing commit reports to StorageHealth with the error text of that moment.
//
// Erasing a scene (the admin API's DELETE, docs/OPERATIONS.md "Admin API"): SubmitErase
// queues it behind every job submitted before it, and it runs on the persistence thread in
// the next group commit's transaction: the scene's registers, tombstones, appends and its
// scene_names row go together or not at all.
//
// Threading: Open before Start(); Submit and SubmitErase from any thread; `done` callbacks run on
// the persistence thread and must only post. At most one job per scene is in flight (the scene
// waits for `done`), so the queue is bounded by the number of scenes in memory. Reads of one
// scene (LoadScene) and NextIncarnation run on a second connection from any thread (one at a
// time), so they never see a commit half done.
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
#include "scenecrdt/server/observability/metrics.h"
#include "scenecrdt/server/storage/commit_log.h"
#include "scenecrdt/server/storage/storage_health.h"

struct sqlite3;

namespace scenecrdt::server {

struct PersistedScene {
  std::string name;
  std::vector<uint8_t> dcl;  // rebuilds the scene's state in an empty store
  uint64_t rows = 0;
  // The owner rows (entity number, principal; docs/AUTHORITY.md).
  std::vector<std::pair<uint32_t, std::string>> owners;
};

// A scene to erase (SubmitErase): `done(ok, rows)` runs on the persistence thread (post, do not
// block); `rows`: the register, tombstone and append rows removed.
struct EraseJob {
  std::string scene;
  std::function<void(bool, uint64_t)> done;
};

struct PersistenceOptions {
  std::string dir;    // created if needed; the database is dir/scenes.sqlite3
  bool fsync = true;  // synchronous=FULL, else NORMAL
  // 0: no cap. Else the database may not grow past this many bytes (PRAGMA max_page_count):
  // commits beyond fail with SQLITE_FULL exactly as on a full disk (--max-db-bytes).
  uint64_t max_db_bytes = 0;
  const EventLog* log = nullptr;  // storage episodes are logged here
};

// The scenes' commit log without --redis (storage/commit_log.h): written by this server only.
class Persistence final : public CommitLog {
 public:
  ~Persistence() override;
  Persistence(const Persistence&) = delete;
  Persistence& operator=(const Persistence&) = delete;

  // Opens (creating if needed) dir/scenes.sqlite3 and bumps the server incarnation
  // (incarnation()). kCorruptData for a damaged file, kIo otherwise; `diagnostic` gets the
  // SQLite text and what to do next.
  static Result<std::unique_ptr<Persistence>> Open(const PersistenceOptions& options,
                                                   Metrics& metrics,
                                                   std::string* diagnostic = nullptr);
  static std::string DatabasePath(const std::string& dir);
  // The schema's SQL (CREATE ... IF NOT EXISTS), for tools that build a database.
  static const char* Schema();
  // The names of the stored scenes (sorted), read from every row: a scan of the whole
  // database (start-up, tools). Any thread.
  Result<std::vector<std::string>> ListScenes(std::string* diagnostic = nullptr);
  // The first `limit` stored scene names (sorted) from the scene_names table: an index read
  // on a connection of its own, waiting for neither commits nor scene loads. Any thread.
  Result<std::vector<std::string>> ListSceneNames(std::size_t limit,
                                                  std::string* diagnostic = nullptr);
  // One stored scene as a DCL stream (rows == 0: nothing stored). Any thread; reads what is
  // committed. kCorruptData / kIo with `diagnostic` on a failing read: never a partial load.
  Result<PersistedScene> LoadScene(const std::string& name, std::string* diagnostic = nullptr);
  // One stored scene of the database in `dir`, read on a read-only connection of its own (the
  // file is never created or written; a running server may hold it): `scenecrdt inspect
  // --data`. kIo when there is no database there.
  static Result<PersistedScene> ReadStoredScene(const std::string& dir, const std::string& name,
                                                std::string* diagnostic = nullptr);
  // Every stored scene (tests, tools). Any thread.
  Result<std::vector<PersistedScene>> LoadAll(std::string* diagnostic = nullptr);
  uint64_t incarnation() const { return incarnation_; }
  // A fresh incarnation number, persisted (a scene reloaded after eviction numbers its
  // sequences with it, so no resume position of its earlier life is mistaken). Any thread.
  Result<uint64_t> NextIncarnation(std::string* diagnostic = nullptr);
  const StorageHealth& health() const { return health_; }

  void Start();
  // CommitLog: thread-safe. Jobs submitted together (while a commit runs) share one
  // transaction; `done` runs on the persistence thread.
  void Submit(CommitJob job) override;
  uint64_t failure_episode() const override { return health_.episode(); }
  // Removes every row of `job.scene` durably, after the jobs submitted before it. The caller
  // submits nothing more for the scene until `done` (the scene registry holds the name).
  void SubmitErase(EraseJob job);
  // Commits what is queued, then stops the thread. Idempotent.
  void Stop();

  // The SQLite error of the last failed commit (for logs), "" when none failed.
  std::string last_error() const;

 private:
  Persistence(sqlite3* db, sqlite3* reader, Metrics& metrics, const EventLog* log)
      : db_(db), reader_(reader), metrics_(metrics), health_(metrics, log) {}
  void Loop();
  // The failure text ("" when it committed).
  // `erased[i]`: the rows `erases[i]` removed.
  std::string CommitBatch(std::vector<CommitJob>& jobs, std::vector<EraseJob>& erases,
                          uint64_t* rows, std::vector<uint64_t>& erased);

  sqlite3* db_;
  sqlite3* reader_;
  std::mutex reader_mu_;
  sqlite3* lister_ = nullptr;  // ListSceneNames only
  std::mutex lister_mu_;
  Metrics& metrics_;
  StorageHealth health_;
  uint64_t incarnation_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<CommitJob> queue_;  // bounded: one job per scene at most
  std::vector<EraseJob> erases_;  // bounded: one per scene being deleted
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace scenecrdt::server
