// SPDX-License-Identifier: Apache-2.0
// Owns the SQLite schema, the checks at open, the group-commit loop and loading scenes back.
#include "scenecrdt/server/storage/persistence.h"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/server/storage/sqlite_statement.h"

namespace scenecrdt::server {

namespace {

using protocol::CrdtMessage;
using protocol::MessageType;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS registers(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  has_data INTEGER NOT NULL, data BLOB,
  PRIMARY KEY(scene, component, entity)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS registers_by_number ON registers(scene, number);
CREATE TABLE IF NOT EXISTS tombstones(
  scene TEXT NOT NULL, number INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY(scene, number)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS appends(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(scene, component, entity, timestamp, data)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS scene_names(scene TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS owners(
  scene TEXT NOT NULL, number INTEGER NOT NULL, principal TEXT NOT NULL,
  PRIMARY KEY(scene, number)) WITHOUT ROWID;
CREATE TRIGGER IF NOT EXISTS scene_names_registers AFTER INSERT ON registers BEGIN
  INSERT INTO scene_names(scene) SELECT NEW.scene
  WHERE NOT EXISTS (SELECT 1 FROM scene_names WHERE scene = NEW.scene); END;
CREATE TRIGGER IF NOT EXISTS scene_names_tombstones AFTER INSERT ON tombstones BEGIN
  INSERT INTO scene_names(scene) SELECT NEW.scene
  WHERE NOT EXISTS (SELECT 1 FROM scene_names WHERE scene = NEW.scene); END;
CREATE TRIGGER IF NOT EXISTS scene_names_appends AFTER INSERT ON appends BEGIN
  INSERT INTO scene_names(scene) SELECT NEW.scene
  WHERE NOT EXISTS (SELECT 1 FROM scene_names WHERE scene = NEW.scene); END;
)sql";

// A database written before scene_names existed gets it filled once, at open (one scan of
// the three tables, as ListScenes does); the meta row says it was done. The triggers keep it
// whoever writes the rows (this server, db-salvage, an older binary on the same file).
constexpr const char* kFillSceneNames = R"sql(
BEGIN IMMEDIATE;
INSERT OR IGNORE INTO scene_names(scene)
  SELECT scene FROM registers UNION SELECT scene FROM tombstones UNION SELECT scene FROM appends;
INSERT OR REPLACE INTO meta(key, value) VALUES('scene_names', 1);
COMMIT;
)sql";

uint32_t ColumnU32(sqlite3_stmt* s, int i) {
  return static_cast<uint32_t>(sqlite3_column_int64(s, i));
}

void Say(std::string* out, const std::string& text) {
  if (out) *out = text;
}

// The error for a failing read or open: kCorruptData when the file itself is damaged.
Error FailureError(const SqliteFailure& f, const char* what_corrupt, const char* what_io) {
  return f.corrupt() ? MakeError(ErrorCode::kCorruptData, what_corrupt)
                     : MakeError(ErrorCode::kIo, what_io);
}

constexpr const char* kSalvageHint =
    "; the server does not start on a damaged database: run 'scenecrdt db-salvage --data DIR' "
    "to copy what still reads into a new file (it names what was lost), or restore a backup";

sqlite3* OpenConnection(const std::string& path, int flags, SqliteFailure* failure) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    *failure = CaptureFailure(db, rc);
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_extended_result_codes(db, 1);
  return db;
}

}  // namespace

Persistence::~Persistence() {
  Stop();
  sqlite3_close(lister_);
  sqlite3_close(reader_);
  sqlite3_close(db_);
}

const char* Persistence::Schema() { return kSchema; }

std::string Persistence::DatabasePath(const std::string& dir) {
  return (std::filesystem::path(dir) / "scenes.sqlite3").string();
}

Result<std::unique_ptr<Persistence>> Persistence::Open(const PersistenceOptions& options,
                                                       Metrics& metrics, std::string* diagnostic) {
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  if (ec) {
    Say(diagnostic, "cannot create " + options.dir + ": " + ec.message());
    return MakeError(ErrorCode::kIo, "cannot create the --data directory");
  }
  const std::string path = DatabasePath(options.dir);
  // An existing file of 0 bytes is a valid empty SQLite database, but this server never leaves
  // one behind (the schema and the incarnation row are written when it is created): it was
  // truncated, and starting empty would silently drop every scene. A WAL file next to it may
  // still hold the pages (SQLite replays it), so only a lone empty file is refused.
  const auto size_of = [](const std::string& file) -> std::uintmax_t {
    std::error_code error;
    const std::uintmax_t n = std::filesystem::file_size(file, error);
    return error ? 0 : n;  // missing: 0
  };
  const bool existed = std::filesystem::exists(path, ec);
  if (existed && size_of(path) == 0 && size_of(path + "-wal") == 0) {
    Say(diagnostic, path + " is 0 bytes (truncated?); a database this server created never is" +
                        std::string(kSalvageHint) +
                        "; delete the file only to start with no scenes at all");
    return MakeError(ErrorCode::kCorruptData, "the database file is empty (truncated)");
  }
  SqliteFailure failure;
  sqlite3* db = OpenConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &failure);
  if (!db) {
    Say(diagnostic, "cannot open " + path + ": " + failure.text);
    return MakeError(ErrorCode::kIo, "cannot open the SQLite database in --data");
  }
  std::unique_ptr<Persistence> p(new Persistence(db, nullptr, metrics, options.log));
  if (existed) {
    // Refuse a damaged file before anything reads or writes it (never a partial load).
    if (const std::string problems = QuickCheck(db); !problems.empty()) {
      Say(diagnostic, path + " failed PRAGMA quick_check: " + problems + kSalvageHint);
      return MakeError(ErrorCode::kCorruptData, "the database is corrupt (quick_check)");
    }
    Statement q(db, "SELECT value FROM meta WHERE key = 'incarnation';");
    if (!q.ok() || q.Step() != SQLITE_ROW) {
      Say(diagnostic, path + " has no incarnation row (" +
                          (q.ok() ? std::string("row missing") : q.failure().text) +
                          "): not a scenecrdt database, or its meta table was lost" + kSalvageHint);
      return MakeError(ErrorCode::kCorruptData, "the database has no incarnation row");
    }
  }
  std::string pragmas = "PRAGMA journal_mode=WAL;";
  pragmas += options.fsync ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;";
  if (options.max_db_bytes > 0) {
    Statement ps(db, "PRAGMA page_size;");
    const int64_t page =
        ps.ok() && ps.Step() == SQLITE_ROW ? sqlite3_column_int64(ps.get(), 0) : 4096;
    pragmas += "PRAGMA max_page_count=" +
               std::to_string(std::max<uint64_t>(2, options.max_db_bytes / page)) + ";";
  }
  if (const SqliteFailure f = ExecSql(db, pragmas.c_str()); f.failed()) {
    Say(diagnostic, "cannot set up " + path + " (WAL, synchronous): " + f.text);
    return FailureError(f, "the database is corrupt", "cannot initialise the SQLite database");
  }
  if (const SqliteFailure f = ExecSql(db, kSchema); f.failed()) {
    Say(diagnostic, "cannot create the schema in " + path + ": " + f.text);
    return FailureError(f, "the database is corrupt", "cannot initialise the SQLite database");
  }
  // The incarnation numbers scene sequences across restarts: a resume position from an
  // earlier run is never mistaken for one of this run.
  if (const SqliteFailure f = ExecSql(db,
                                      "INSERT INTO meta(key, value) VALUES('incarnation', 1) "
                                      "ON CONFLICT(key) DO UPDATE SET value = value + 1;");
      f.failed()) {
    Say(diagnostic, "cannot update the incarnation row in " + path + ": " + f.text);
    return FailureError(f, "the database is corrupt", "cannot update the incarnation row");
  }
  if (Statement filled(db, "SELECT value FROM meta WHERE key = 'scene_names';");
      !filled.ok() || filled.Step() != SQLITE_ROW) {
    if (const SqliteFailure f = ExecSql(db, kFillSceneNames); f.failed()) {
      (void)ExecSql(db, "ROLLBACK;");
      Say(diagnostic, "cannot fill the scene_names table of " + path + ": " + f.text);
      return FailureError(f, "the database is corrupt", "cannot initialise the SQLite database");
    }
  }
  Statement q(db, "SELECT value FROM meta WHERE key = 'incarnation';");
  if (!q.ok() || q.Step() != SQLITE_ROW) {
    Say(diagnostic, "cannot read the incarnation row in " + path + ": " + q.failure().text);
    return FailureError(q.failure(), "the database is corrupt", "cannot read the incarnation row");
  }
  p->incarnation_ = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 0));
  p->reader_ = OpenConnection(path, SQLITE_OPEN_READWRITE, &failure);
  if (p->reader_) p->lister_ = OpenConnection(path, SQLITE_OPEN_READONLY, &failure);
  if (!p->reader_ || !p->lister_) {
    Say(diagnostic, "cannot open a second connection to " + path + ": " + failure.text);
    return MakeError(ErrorCode::kIo, "cannot open the SQLite database in --data");
  }
  return p;
}

Result<std::vector<std::string>> Persistence::ListSceneNames(std::size_t limit,
                                                             std::string* diagnostic) {
  std::lock_guard<std::mutex> lock(lister_mu_);
  Statement q(lister_, "SELECT scene FROM scene_names ORDER BY scene LIMIT ?1;");
  std::vector<std::string> names;
  int rc = SQLITE_ERROR;
  if (q.ok()) {
    q.Int(1, static_cast<int64_t>(std::min<std::size_t>(limit, INT64_MAX)));
    while ((rc = q.Step()) == SQLITE_ROW) names.push_back(ColumnText(q.get(), 0));
  }
  if (rc != SQLITE_DONE) {
    Say(diagnostic, "cannot list the stored scene names: " + q.failure().text);
    return FailureError(q.failure(), "the database is corrupt", "cannot read the database");
  }
  return names;
}

Result<std::vector<std::string>> Persistence::ListScenes(std::string* diagnostic) {
  std::lock_guard<std::mutex> lock(reader_mu_);
  Statement q(reader_,
              "SELECT scene FROM registers UNION SELECT scene FROM tombstones "
              "UNION SELECT scene FROM appends ORDER BY 1;");
  std::vector<std::string> names;
  int rc = q.ok() ? SQLITE_ROW : SQLITE_ERROR;
  while (q.ok() && (rc = q.Step()) == SQLITE_ROW) names.push_back(ColumnText(q.get(), 0));
  if (rc != SQLITE_DONE) {
    Say(diagnostic, "cannot list the stored scenes: " + q.failure().text);
    return FailureError(q.failure(), "the database is corrupt", "cannot read the database");
  }
  return names;
}

namespace {

// One stored scene read on `reader` in one read transaction (LoadScene, ReadStoredScene).
Result<PersistedScene> ReadScene(sqlite3* reader, const std::string& name,
                                 std::string* diagnostic) {
  PersistedScene scene;
  scene.name = name;
  // One read transaction: the three tables as of one commit.
  if (const SqliteFailure f = ExecSql(reader, "BEGIN;"); f.failed()) {
    Say(diagnostic, "cannot read scene " + name + ": " + f.text);
    return FailureError(f, "the database is corrupt", "cannot read the database");
  }
  // Tombstones first, so stale rows (if any) are dropped by the merge rather than revived.
  Statement t(reader, "SELECT number, version FROM tombstones WHERE scene = ?1;");
  Statement r(reader,
              "SELECT component, entity, timestamp, has_data, data FROM registers "
              "WHERE scene = ?1;");
  Statement a(reader, "SELECT component, entity, timestamp, data FROM appends WHERE scene = ?1;");
  Statement o(reader, "SELECT number, principal FROM owners WHERE scene = ?1;");
  const auto read = [&](Statement& q, const auto& row) {
    if (!q.ok()) return false;
    q.Text(1, name);
    int rc;
    while ((rc = q.Step()) == SQLITE_ROW) {
      row(q.get());
      ++scene.rows;
    }
    return rc == SQLITE_DONE;
  };
  Statement* failed = nullptr;
  if (!read(t, [&](sqlite3_stmt* s) {
        CrdtMessage m;
        m.type = MessageType::kDeleteEntity;
        m.entity = protocol::MakeEntityId(ColumnU32(s, 0), ColumnU32(s, 1));
        protocol::AppendMessage(m, scene.dcl);
      })) {
    failed = &t;
  } else if (!read(r, [&](sqlite3_stmt* s) {
               CrdtMessage m;
               const bool has_data = sqlite3_column_int(s, 3) != 0;
               m.type = has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent;
               m.component = ColumnU32(s, 0);
               m.entity = ColumnU32(s, 1);
               m.timestamp = ColumnU32(s, 2);
               if (has_data) m.data = ColumnBlob(s, 4);
               protocol::AppendMessage(m, scene.dcl);
             })) {
    failed = &r;
  } else if (!read(a, [&](sqlite3_stmt* s) {
               CrdtMessage m;
               m.type = MessageType::kAppendValue;
               m.component = ColumnU32(s, 0);
               m.entity = ColumnU32(s, 1);
               m.timestamp = ColumnU32(s, 2);
               m.data = ColumnBlob(s, 3);
               protocol::AppendMessage(m, scene.dcl);
             })) {
    failed = &a;
  } else if (!read(o, [&](sqlite3_stmt* s) {
               scene.owners.emplace_back(ColumnU32(s, 0), ColumnText(s, 1));
             })) {
    failed = &o;
  }
  (void)ExecSql(reader, "COMMIT;");
  if (failed) {
    const SqliteFailure& f = failed->failure();
    Say(diagnostic, "cannot read scene " + name + " (" + f.text + "): not loaded" +
                        (f.corrupt() ? kSalvageHint : ""));
    return FailureError(f, "the database is corrupt", "cannot read the database");
  }
  return scene;
}

}  // namespace

Result<PersistedScene> Persistence::LoadScene(const std::string& name, std::string* diagnostic) {
  std::lock_guard<std::mutex> lock(reader_mu_);
  return ReadScene(reader_, name, diagnostic);
}

Result<PersistedScene> Persistence::ReadStoredScene(const std::string& dir, const std::string& name,
                                                    std::string* diagnostic) {
  const std::string path = DatabasePath(dir);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    Say(diagnostic, "no database " + path + " (a --data directory of 'scenecrdt serve')");
    return MakeError(ErrorCode::kIo, "no database in the directory");
  }
  SqliteFailure failure;
  sqlite3* reader = OpenConnection(path, SQLITE_OPEN_READONLY, &failure);
  if (!reader) {
    Say(diagnostic, "cannot open " + path + " read-only: " + failure.text);
    return FailureError(failure, "the database is corrupt", "cannot open the database");
  }
  auto scene = ReadScene(reader, name, diagnostic);
  sqlite3_close(reader);
  return scene;
}

Result<std::vector<PersistedScene>> Persistence::LoadAll(std::string* diagnostic) {
  auto names = ListScenes(diagnostic);
  if (!names.has_value()) return names.error();
  std::vector<PersistedScene> out;
  for (const std::string& name : names.value()) {
    auto scene = LoadScene(name, diagnostic);
    if (!scene.has_value()) return scene.error();
    out.push_back(std::move(scene.value()));
  }
  return out;
}

Result<uint64_t> Persistence::NextIncarnation(std::string* diagnostic) {
  std::lock_guard<std::mutex> lock(reader_mu_);
  Statement q(reader_,
              "UPDATE meta SET value = value + 1 WHERE key = 'incarnation' RETURNING value;");
  if (!q.ok() || q.Step() != SQLITE_ROW) {
    Say(diagnostic, "cannot bump the incarnation row: " + q.failure().text);
    return FailureError(q.failure(), "the database is corrupt", "cannot write the database");
  }
  const auto value = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 0));
  if (q.Step() != SQLITE_DONE) {
    Say(diagnostic, "cannot bump the incarnation row: " + q.failure().text);
    return FailureError(q.failure(), "the database is corrupt", "cannot write the database");
  }
  return value;
}

void Persistence::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void Persistence::Submit(CommitJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    Metrics::Add(metrics_.persistence_queue, 1);
  }
  cv_.notify_one();
}

void Persistence::SubmitErase(EraseJob job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    erases_.push_back(std::move(job));
    Metrics::Add(metrics_.persistence_queue, 1);
  }
  cv_.notify_one();
}

void Persistence::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::string Persistence::last_error() const { return health_.last_error(); }

void Persistence::Loop() {
  std::vector<CommitJob> batch;
  std::vector<EraseJob> erases;
  std::vector<uint64_t> erased;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty() || !erases_.empty(); });
      if (queue_.empty() && erases_.empty() && stop_) return;
      batch.swap(queue_);
      erases.swap(erases_);
      Metrics::Add(metrics_.persistence_queue, -static_cast<int64_t>(batch.size() + erases.size()));
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t rows = 0;
    erased.assign(erases.size(), 0);
    const std::string failure = CommitBatch(batch, erases, &rows, erased);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const bool ok = failure.empty();
    if (ok) {
      metrics_.ObserveCommit(took.count(), rows);
      health_.OnCommitSucceeded();
    } else {
      Metrics::Add(metrics_.commit_failures);
      health_.OnCommitFailed(failure, batch.size());
    }
    for (CommitJob& job : batch) job.done(ok);
    for (std::size_t i = 0; i < erases.size(); ++i) erases[i].done(ok, erased[i]);
    batch.clear();
    erases.clear();
  }
}

std::string Persistence::CommitBatch(std::vector<CommitJob>& jobs, std::vector<EraseJob>& erases,
                                     uint64_t* rows, std::vector<uint64_t>& erased) {
  Statement put(db_,
                "INSERT INTO registers(scene, component, entity, number, version, timestamp, "
                "has_data, data) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
                "ON CONFLICT(scene, component, entity) DO UPDATE SET timestamp = "
                "excluded.timestamp, has_data = excluded.has_data, data = excluded.data;");
  Statement tomb(db_,
                 "INSERT INTO tombstones(scene, number, version) VALUES(?1, ?2, ?3) "
                 "ON CONFLICT(scene, number) DO UPDATE SET version = "
                 "max(version, excluded.version);");
  Statement purge_registers(
      db_, "DELETE FROM registers WHERE scene = ?1 AND number = ?2 AND version <= ?3;");
  Statement purge_appends(
      db_, "DELETE FROM appends WHERE scene = ?1 AND number = ?2 AND version <= ?3;");
  Statement append(db_,
                   "INSERT OR IGNORE INTO appends(scene, component, entity, number, version, "
                   "timestamp, data) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7);");
  Statement own(db_,
                "INSERT INTO owners(scene, number, principal) VALUES(?1, ?2, ?3) "
                "ON CONFLICT(scene, number) DO UPDATE SET principal = excluded.principal;");
  Statement disown(db_, "DELETE FROM owners WHERE scene = ?1 AND number = ?2;");
  Statement erase_registers(db_, "DELETE FROM registers WHERE scene = ?1;");
  Statement erase_tombstones(db_, "DELETE FROM tombstones WHERE scene = ?1;");
  Statement erase_appends(db_, "DELETE FROM appends WHERE scene = ?1;");
  Statement erase_owners(db_, "DELETE FROM owners WHERE scene = ?1;");
  Statement erase_name(db_, "DELETE FROM scene_names WHERE scene = ?1;");
  for (const Statement* s :
       {&put, &tomb, &purge_registers, &purge_appends, &append, &own, &disown, &erase_registers,
        &erase_tombstones, &erase_appends, &erase_owners, &erase_name}) {
    if (!s->ok()) return "cannot prepare a statement: " + s->failure().text;
  }
  if (const SqliteFailure f = ExecSql(db_, "BEGIN IMMEDIATE;"); f.failed()) return f.text;
  bool ok = true;
  // The text of the first failing statement, taken at once (a ROLLBACK replaces SQLite's).
  std::string failure;
  const auto check = [&](Statement& s) {
    if (ok && !s.Run()) {
      ok = false;
      failure = s.failure().text;
    }
  };
  for (const CommitJob& job : jobs) {
    // Owner rows (docs/AUTHORITY.md): in the same transaction as the state they go with.
    for (const auto& [number, principal] : job.owners) {
      Statement& s = principal.empty() ? disown : own;
      s.Text(1, job.scene);
      s.Int(2, number);
      if (!principal.empty()) s.Text(3, principal);
      check(s);
      ++*rows;
    }
    auto decoded = protocol::DecodeStream(job.dcl, {}, [&](const CrdtMessage& m) {
      if (!ok) return;
      const auto number = static_cast<int64_t>(protocol::EntityNumber(m.entity));
      const auto version = static_cast<int64_t>(protocol::EntityVersion(m.entity));
      ++*rows;
      switch (m.type) {
        case MessageType::kDeleteEntity: {
          tomb.Text(1, job.scene);
          tomb.Int(2, number);
          tomb.Int(3, version);
          check(tomb);
          for (Statement* purge : {&purge_registers, &purge_appends}) {
            purge->Text(1, job.scene);
            purge->Int(2, number);
            purge->Int(3, version);
            check(*purge);
          }
          break;
        }
        case MessageType::kPutComponent:
        case MessageType::kDeleteComponent: {
          put.Text(1, job.scene);
          put.Int(2, m.component);
          put.Int(3, m.entity);
          put.Int(4, number);
          put.Int(5, version);
          put.Int(6, m.timestamp);
          const bool has_data = m.type == MessageType::kPutComponent;
          put.Int(7, has_data ? 1 : 0);
          if (has_data) put.Blob(8, m.data);
          check(put);
          break;
        }
        case MessageType::kAppendValue: {
          append.Text(1, job.scene);
          append.Int(2, m.component);
          append.Int(3, m.entity);
          append.Int(4, number);
          append.Int(5, version);
          append.Int(6, m.timestamp);
          append.Blob(7, m.data);
          check(append);
          break;
        }
        default:
          break;  // exports hold only the types above
      }
    });
    if (ok && !decoded.has_value()) {
      ok = false;
      failure = std::string("a commit job does not decode: ") + decoded.error().detail;
    }
    if (!ok) break;
  }
  // Erases after the commits: a scene's last commit was submitted before its erase.
  for (std::size_t i = 0; ok && i < erases.size(); ++i) {
    for (Statement* s :
         {&erase_registers, &erase_tombstones, &erase_appends, &erase_owners, &erase_name}) {
      s->Text(1, erases[i].scene);
      check(*s);
      if (!ok) break;
      if (s != &erase_name && s != &erase_owners)
        erased[i] += static_cast<uint64_t>(sqlite3_changes(db_));
    }
  }
  if (!ok) {
    (void)ExecSql(db_, "ROLLBACK;");
    return failure;
  }
  if (const SqliteFailure f = ExecSql(db_, "COMMIT;"); f.failed()) {
    (void)ExecSql(db_, "ROLLBACK;");
    return f.text;
  }
  return {};
}

}  // namespace scenecrdt::server
