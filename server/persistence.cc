// SPDX-License-Identifier: Apache-2.0
// Owns the SQLite schema, the group-commit loop and loading scenes back.
#include "scenecrdt/server/persistence.h"

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <map>

#include "scenecrdt/protocol/crdt_codec.h"

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
)sql";

// A prepared statement owned for the duration of one scope.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr); }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Text(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_STATIC);
  }
  void Int(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Blob(int i, std::span<const uint8_t> b) {
    // A zero-length blob must still be a blob (not NULL): SQLite wants a non-null pointer.
    static const uint8_t kEmpty = 0;
    sqlite3_bind_blob(stmt_, i, b.empty() ? &kEmpty : b.data(), static_cast<int>(b.size()),
                      SQLITE_STATIC);
  }
  bool Run() {
    const int rc = sqlite3_step(stmt_);
    Reset();
    return rc == SQLITE_DONE;
  }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

bool Exec(sqlite3* db, const char* sql) {
  return sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

std::span<const uint8_t> ColumnBlob(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  const int n = sqlite3_column_bytes(s, i);
  if (!p || n <= 0) return {};
  return {static_cast<const uint8_t*>(p), static_cast<std::size_t>(n)};
}

uint32_t ColumnU32(sqlite3_stmt* s, int i) {
  return static_cast<uint32_t>(sqlite3_column_int64(s, i));
}

}  // namespace

Persistence::~Persistence() {
  Stop();
  sqlite3_close(db_);
}

Result<std::unique_ptr<Persistence>> Persistence::Open(const std::string& dir, bool fsync,
                                                       Metrics& metrics) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return MakeError(ErrorCode::kIo, "cannot create the --data directory");
  const std::string path = (std::filesystem::path(dir) / "scenes.sqlite3").string();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(db);
    return MakeError(ErrorCode::kIo, "cannot open the SQLite database in --data");
  }
  std::unique_ptr<Persistence> p(new Persistence(db, metrics));
  sqlite3_busy_timeout(db, 5000);
  if (!Exec(db, "PRAGMA journal_mode=WAL;") ||
      !Exec(db, fsync ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;") ||
      !Exec(db, kSchema)) {
    return MakeError(ErrorCode::kIo, "cannot initialise the SQLite database (WAL, schema)");
  }
  // The incarnation numbers scene sequences across restarts: a resume position from an
  // earlier run is never mistaken for one of this run.
  if (!Exec(db,
            "INSERT INTO meta(key, value) VALUES('incarnation', 1) "
            "ON CONFLICT(key) DO UPDATE SET value = value + 1;")) {
    return MakeError(ErrorCode::kIo, "cannot update the incarnation row");
  }
  Statement q(db, "SELECT value FROM meta WHERE key = 'incarnation';");
  if (!q.ok() || sqlite3_step(q.get()) != SQLITE_ROW) {
    return MakeError(ErrorCode::kIo, "cannot read the incarnation row");
  }
  p->incarnation_ = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 0));
  return p;
}

Result<std::vector<PersistedScene>> Persistence::LoadAll() {
  std::map<std::string, PersistedScene> scenes;
  const auto scene_of = [&](sqlite3_stmt* s) -> PersistedScene& {
    const auto* text = sqlite3_column_text(s, 0);
    std::string name(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(s, 0)));
    PersistedScene& scene = scenes[name];
    scene.name = name;
    ++scene.rows;
    return scene;
  };
  // Tombstones first, so stale rows (if any) are dropped by the merge rather than revived.
  Statement t(db_, "SELECT scene, number, version FROM tombstones;");
  Statement r(db_, "SELECT scene, component, entity, timestamp, has_data, data FROM registers;");
  Statement a(db_, "SELECT scene, component, entity, timestamp, data FROM appends;");
  if (!t.ok() || !r.ok() || !a.ok()) return MakeError(ErrorCode::kIo, "cannot read the database");
  while (sqlite3_step(t.get()) == SQLITE_ROW) {
    CrdtMessage m;
    m.type = MessageType::kDeleteEntity;
    m.entity = protocol::MakeEntityId(ColumnU32(t.get(), 1), ColumnU32(t.get(), 2));
    protocol::AppendMessage(m, scene_of(t.get()).dcl);
  }
  while (sqlite3_step(r.get()) == SQLITE_ROW) {
    CrdtMessage m;
    const bool has_data = sqlite3_column_int(r.get(), 4) != 0;
    m.type = has_data ? MessageType::kPutComponent : MessageType::kDeleteComponent;
    m.component = ColumnU32(r.get(), 1);
    m.entity = ColumnU32(r.get(), 2);
    m.timestamp = ColumnU32(r.get(), 3);
    if (has_data) m.data = ColumnBlob(r.get(), 5);
    protocol::AppendMessage(m, scene_of(r.get()).dcl);
  }
  while (sqlite3_step(a.get()) == SQLITE_ROW) {
    CrdtMessage m;
    m.type = MessageType::kAppendValue;
    m.component = ColumnU32(a.get(), 1);
    m.entity = ColumnU32(a.get(), 2);
    m.timestamp = ColumnU32(a.get(), 3);
    m.data = ColumnBlob(a.get(), 4);
    protocol::AppendMessage(m, scene_of(a.get()).dcl);
  }
  std::vector<PersistedScene> out;
  for (auto& [name, scene] : scenes) out.push_back(std::move(scene));
  return out;
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

void Persistence::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

std::string Persistence::last_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_error_;
}

void Persistence::Loop() {
  std::vector<CommitJob> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty() && stop_) return;
      batch.swap(queue_);
      Metrics::Add(metrics_.persistence_queue, -static_cast<int64_t>(batch.size()));
    }
    const auto start = std::chrono::steady_clock::now();
    uint64_t rows = 0;
    const bool ok = CommitBatch(batch, &rows);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    if (ok) {
      metrics_.ObserveCommit(took.count(), rows);
    } else {
      Metrics::Add(metrics_.commit_failures);
      std::lock_guard<std::mutex> lock(mu_);
      last_error_ = sqlite3_errmsg(db_);
    }
    for (CommitJob& job : batch) job.done(ok);
    batch.clear();
  }
}

bool Persistence::CommitBatch(std::vector<CommitJob>& jobs, uint64_t* rows) {
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
  if (!put.ok() || !tomb.ok() || !purge_registers.ok() || !purge_appends.ok() || !append.ok()) {
    return false;
  }
  if (!Exec(db_, "BEGIN IMMEDIATE;")) return false;
  bool ok = true;
  for (const CommitJob& job : jobs) {
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
          ok = tomb.Run();
          for (Statement* purge : {&purge_registers, &purge_appends}) {
            purge->Text(1, job.scene);
            purge->Int(2, number);
            purge->Int(3, version);
            ok = ok && purge->Run();
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
          ok = put.Run();
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
          ok = append.Run();
          break;
        }
        default:
          break;  // exports hold only the types above
      }
    });
    if (!decoded.has_value()) ok = false;
    if (!ok) break;
  }
  if (!ok) {
    Exec(db_, "ROLLBACK;");
    return false;
  }
  return Exec(db_, "COMMIT;");
}

}  // namespace scenecrdt::server
