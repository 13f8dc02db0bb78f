// SPDX-License-Identifier: Apache-2.0
// Owns copying the readable rows of a damaged database into a new one.
#include "scenecrdt/server/storage/db_salvage.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>

#include "scenecrdt/server/storage/persistence.h"
#include "scenecrdt/server/storage/sqlite_statement.h"

namespace scenecrdt::server {

namespace {

struct TableShape {
  const char* name;
  const char* columns;  // scene first
  int column_count;
  const char* order;       // the primary key
  const char* order_desc;  // the same, backwards
  bool may_be_absent;      // newer than the first schema: a database may predate it
};

constexpr TableShape kTables[] = {
    {"tombstones", "scene, number, version", 3, "scene, number", "scene DESC, number DESC", false},
    {"registers", "scene, component, entity, number, version, timestamp, has_data, data", 8,
     "scene, component, entity", "scene DESC, component DESC, entity DESC", false},
    {"appends", "scene, component, entity, number, version, timestamp, data", 7,
     "scene, component, entity, timestamp, data",
     "scene DESC, component DESC, entity DESC, timestamp DESC, data DESC", false},
    // The entity owners of --authority owner|rules (docs/AUTHORITY.md "Durability").
    {"owners", "scene, number, principal", 3, "scene, number", "scene DESC, number DESC", true},
};

// True when `src` says for sure that it has no table `name` (an unreadable schema: false, and
// the scan reports what it meets).
bool TableAbsent(sqlite3* src, const char* name) {
  Statement q(src, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1;");
  if (!q.ok()) return false;
  q.Text(1, name);
  return q.Step() == SQLITE_DONE;
}

struct Closer {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, Closer>;

Db OpenDb(const std::string& path, int flags, std::string* error) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    *error = CaptureFailure(db, rc).text;
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_busy_timeout(db, 5000);
  return Db(db);
}

// Copies the current row of `from` (the table's columns) through `insert`.
bool CopyRow(sqlite3_stmt* from, Statement& insert, int columns) {
  for (int i = 0; i < columns; ++i) {
    const int c = i + 1;
    switch (sqlite3_column_type(from, i)) {
      case SQLITE_INTEGER:
        insert.Int(c, sqlite3_column_int64(from, i));
        break;
      case SQLITE_TEXT:
        insert.Text(c, ColumnText(from, i));
        break;
      case SQLITE_BLOB:
        insert.Blob(c, ColumnBlob(from, i));
        break;
      case SQLITE_NULL:
        break;  // bindings were cleared: NULL
      default:
        insert.Int(c, sqlite3_column_int64(from, i));
        break;
    }
  }
  return insert.Run();
}

// One scan: rows of `shape` with scene > `after` (all when !has_after), in `direction`. The
// scenes of the first and last rows read; false when it ended on an error (text in `error`).
struct Scan {
  uint64_t rows = 0;
  std::string first_scene;
  std::string last_scene;
  bool done = false;
  std::string error;
};

Scan RunScan(sqlite3* src, const TableShape& shape, const std::string* after, bool descending,
             Statement& insert, std::string* write_error) {
  Scan scan;
  std::string sql = std::string("SELECT ") + shape.columns + " FROM " + shape.name;
  if (after) sql += " WHERE scene > ?1";
  sql += std::string(" ORDER BY ") + (descending ? shape.order_desc : shape.order) + ";";
  Statement q(src, sql.c_str());
  if (!q.ok()) {
    scan.error = q.failure().text;
    return scan;
  }
  if (after) q.Text(1, *after);
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const std::string scene = ColumnText(q.get(), 0);
    if (scan.rows == 0) scan.first_scene = scene;
    scan.last_scene = scene;
    if (!CopyRow(q.get(), insert, shape.column_count)) {
      *write_error = insert.failure().text;
      return scan;
    }
    ++scan.rows;
  }
  scan.done = rc == SQLITE_DONE;
  if (!scan.done) scan.error = q.failure().text;
  return scan;
}

}  // namespace

bool SalvageReport::complete() const {
  for (const SalvageTable& t : tables) {
    if (!t.complete) return false;
  }
  return old_incarnation != 0;
}

Result<SalvageReport> SalvageDatabase(const std::string& source, const std::string& destination,
                                      std::string* diagnostic) {
  std::string error;
  const auto say = [&](const std::string& text) {
    if (diagnostic) *diagnostic = text;
  };
  std::error_code ec;
  if (std::filesystem::exists(destination, ec)) {
    say(destination + " exists; remove it or name another --out");
    return MakeError(ErrorCode::kInvalidArgument, "the salvage destination exists");
  }
  Db src = OpenDb(source, SQLITE_OPEN_READONLY, &error);
  if (!src) {
    say("cannot open " + source + ": " + error);
    return MakeError(ErrorCode::kIo, "cannot open the damaged database");
  }
  Db dst = OpenDb(destination, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &error);
  if (!dst) {
    say("cannot create " + destination + ": " + error);
    return MakeError(ErrorCode::kIo, "cannot create the salvage destination");
  }
  if (const SqliteFailure f =
          ExecSql(dst.get(),
                  (std::string(Persistence::Schema()) + "PRAGMA journal_mode=WAL; BEGIN;").c_str());
      f.failed()) {
    say("cannot write " + destination + ": " + f.text);
    return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
  }
  SalvageReport report;
  {
    Statement q(src.get(), "SELECT value FROM meta WHERE key = 'incarnation';");
    if (q.ok() && q.Step() == SQLITE_ROW) {
      report.old_incarnation = static_cast<uint64_t>(sqlite3_column_int64(q.get(), 0));
    }
  }
  const auto hours = std::chrono::duration_cast<std::chrono::hours>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  report.new_incarnation =
      report.old_incarnation != 0 ? report.old_incarnation + 1 : static_cast<uint64_t>(hours);
  for (const TableShape& shape : kTables) {
    SalvageTable table;
    table.table = shape.name;
    if (shape.may_be_absent && TableAbsent(src.get(), shape.name)) {
      table.complete = true;  // nothing to copy: the database predates the table
      report.tables.push_back(std::move(table));
      continue;
    }
    const std::string insert_sql = std::string("INSERT OR IGNORE INTO ") + shape.name + "(" +
                                   shape.columns + ") VALUES(" +
                                   (shape.column_count == 3   ? "?1,?2,?3"
                                    : shape.column_count == 7 ? "?1,?2,?3,?4,?5,?6,?7"
                                                              : "?1,?2,?3,?4,?5,?6,?7,?8") +
                                   ");";
    Statement insert(dst.get(), insert_sql.c_str());
    if (!insert.ok()) {
      say("cannot write " + destination + ": " + insert.failure().text);
      return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
    }
    std::string write_error;
    std::optional<std::string> after;
    bool forward_stuck = false;
    for (;;) {
      Scan scan = RunScan(src.get(), shape, after ? &*after : nullptr, false, insert, &write_error);
      if (!write_error.empty()) break;
      table.rows_copied += scan.rows;
      if (scan.done) {
        table.complete = !after.has_value() || table.damaged.empty();
        break;
      }
      table.errors.push_back(scan.error);
      if (scan.rows == 0) {
        forward_stuck = true;
        break;
      }
      // Lost: the rest of the scene the scan was in. Go on after it.
      table.damaged.push_back(scan.last_scene);
      after = scan.last_scene;
    }
    if (!write_error.empty()) {
      say("cannot write " + destination + ": " + write_error);
      return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
    }
    if (forward_stuck) {
      Scan back = RunScan(src.get(), shape, after ? &*after : nullptr, true, insert, &write_error);
      if (!write_error.empty()) {
        say("cannot write " + destination + ": " + write_error);
        return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
      }
      table.rows_copied += back.rows;
      if (!back.done) table.errors.push_back(back.error);
      const std::string from = after ? "after '" + *after + "'" : "from the first scene";
      if (back.done) {
        // The backward scan reached the start of the range: only the failing seek was lost,
        // but which rows that hid cannot be known: the scene where the seek failed.
        table.damaged.push_back(from + " up to '" + back.last_scene + "'");
      } else {
        table.damaged.push_back(from + " up to '" +
                                (back.rows > 0 ? back.last_scene : std::string("the end")) + "'");
      }
    }
    report.tables.push_back(std::move(table));
  }
  const std::string meta = "INSERT INTO meta(key, value) VALUES('incarnation', " +
                           std::to_string(report.new_incarnation) + "); COMMIT;";
  if (const SqliteFailure f = ExecSql(dst.get(), meta.c_str()); f.failed()) {
    say("cannot write " + destination + ": " + f.text);
    return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
  }
  if (const SqliteFailure f = ExecSql(dst.get(), "PRAGMA wal_checkpoint(TRUNCATE);"); f.failed()) {
    say("cannot checkpoint " + destination + ": " + f.text);
    return MakeError(ErrorCode::kIo, "cannot write the salvage destination");
  }
  return report;
}

}  // namespace scenecrdt::server
