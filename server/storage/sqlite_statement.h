// SPDX-License-Identifier: Apache-2.0
// Owns the thin SQLite helpers persistence and salvage share: a prepared statement owned by a
// scope, statements run with their return code kept, and the SQLite error text captured at
// the moment of the failure (never read later, after a ROLLBACK has replaced it).
// docs/SERVER.md "Persistence" says how every return code is handled.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace scenecrdt::server {

// A failed SQLite call: the primary and extended result codes and the text of that moment.
struct SqliteFailure {
  int code = SQLITE_OK;  // primary result code (SQLITE_FULL, SQLITE_CORRUPT, ...)
  int extended = SQLITE_OK;
  std::string text;  // sqlite3_errmsg at the failure, with the code's name

  bool failed() const { return code != SQLITE_OK; }
  // Corruption of the file itself (not a full disk or a lock): the database must be salvaged.
  bool corrupt() const { return code == SQLITE_CORRUPT || code == SQLITE_NOTADB; }
};

// Fills `out` from the connection's current error (call right after the failing call).
inline SqliteFailure CaptureFailure(sqlite3* db, int rc) {
  SqliteFailure f;
  f.code = rc & 0xff;
  f.extended = db ? sqlite3_extended_errcode(db) : rc;
  const std::string kind = sqlite3_errstr(rc);
  const std::string message = db ? sqlite3_errmsg(db) : "no connection";
  f.text = message == kind ? kind : kind + ": " + message;
  return f;
}

// Runs `sql` (one or more statements without results); the failure, if any.
inline SqliteFailure ExecSql(sqlite3* db, const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  SqliteFailure f;
  if (rc != SQLITE_OK) {
    f.code = rc & 0xff;
    f.extended = sqlite3_extended_errcode(db);
    const std::string kind = sqlite3_errstr(rc);
    const std::string detail = message ? message : sqlite3_errmsg(db);
    f.text = detail == kind ? kind : kind + ": " + detail;
  }
  sqlite3_free(message);
  return f;
}

// A prepared statement owned for the duration of one scope.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) : db_(db) {
    const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
    if (rc != SQLITE_OK) failure_ = CaptureFailure(db, rc);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return stmt_ != nullptr; }
  sqlite3_stmt* get() const { return stmt_; }
  // The preparation's failure, or the last Run/Step failure.
  const SqliteFailure& failure() const { return failure_; }

  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Text(int i, const std::string& s) {
    sqlite3_bind_text(stmt_, i, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
  }
  void Int(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  void Blob(int i, std::span<const uint8_t> b) {
    // A zero-length blob must still be a blob (not NULL): SQLite wants a non-null pointer.
    static const uint8_t kEmpty = 0;
    sqlite3_bind_blob(stmt_, i, b.empty() ? &kEmpty : b.data(), static_cast<int>(b.size()),
                      SQLITE_TRANSIENT);
  }
  // One step of a statement without results; true on SQLITE_DONE (failure() otherwise).
  bool Run() {
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_DONE) failure_ = CaptureFailure(db_, rc);
    Reset();
    return rc == SQLITE_DONE;
  }
  // One step of a query: SQLITE_ROW (a row is there), SQLITE_DONE (the end) or an error code
  // (failure() has the text). Loops must stop on anything but SQLITE_ROW and then tell
  // SQLITE_DONE from an error.
  int Step() {
    const int rc = sqlite3_step(stmt_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) failure_ = CaptureFailure(db_, rc);
    return rc;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  SqliteFailure failure_;
};

inline std::span<const uint8_t> ColumnBlob(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  const int n = sqlite3_column_bytes(s, i);
  if (!p || n <= 0) return {};
  return {static_cast<const uint8_t*>(p), static_cast<std::size_t>(n)};
}

inline std::string ColumnText(sqlite3_stmt* s, int i) {
  const auto* text = sqlite3_column_text(s, i);
  if (!text) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(s, i)));
}

// `PRAGMA quick_check(8)`: "" when the file is sound, else what SQLite reported ("; "
// between problems). A "NULL value in T.C" line is kept only when a query finds such a row:
// SQLite 3.40 (Debian 12) reports it for every row of a WITHOUT ROWID table whose NOT NULL
// column follows a primary key ending in a BLOB (our `appends`) although the row holds a value,
// which refused every restart after an append value was stored (docs/SERVER.md "Persistence").
inline std::string QuickCheck(sqlite3* db) {
  Statement q(db, "PRAGMA quick_check(8);");
  if (!q.ok()) return q.failure().text;
  std::string problems;
  int rc;
  while ((rc = q.Step()) == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(q.get(), 0);
    const std::string line = text ? reinterpret_cast<const char*>(text) : "";
    if (line == "ok") continue;
    constexpr std::string_view kNull = "NULL value in ";
    if (line.rfind(kNull, 0) == 0) {
      const std::string column = line.substr(kNull.size());
      const auto dot = column.find('.');
      const bool plain =
          dot != std::string::npos &&
          column.find_first_not_of("abcdefghijklmnopqrstuvwxyz_.") == std::string::npos;
      if (plain) {
        const std::string sql = "SELECT count(*) FROM " + column.substr(0, dot) + " WHERE " +
                                column.substr(dot + 1) + " IS NULL;";
        Statement nulls(db, sql.c_str());
        if (nulls.ok() && nulls.Step() == SQLITE_ROW && sqlite3_column_int64(nulls.get(), 0) == 0) {
          continue;  // the false report: no row holds a NULL there
        }
      }
    }
    if (!problems.empty()) problems += "; ";
    problems += line;
  }
  if (rc != SQLITE_DONE) return q.failure().text;
  return problems;
}

}  // namespace scenecrdt::server
