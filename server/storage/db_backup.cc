// SPDX-License-Identifier: Apache-2.0
// Owns the online backup and the restore of the scene database (db_backup.h).
#include "scenecrdt/server/storage/db_backup.h"

#include <chrono>
#include <filesystem>
#include <thread>

#include "scenecrdt/server/storage/sqlite_statement.h"

namespace scenecrdt::server {

namespace {

// A connection closed with its scope.
struct Connection {
  sqlite3* db = nullptr;
  ~Connection() { sqlite3_close(db); }
};

bool Open(Connection& c, const std::string& path, int flags, std::string& why) {
  const int rc = sqlite3_open_v2(path.c_str(), &c.db, flags, nullptr);
  if (rc != SQLITE_OK) {
    why = "cannot open " + path + ": " + CaptureFailure(c.db, rc).text;
    return false;
  }
  sqlite3_busy_timeout(c.db, 5000);
  sqlite3_extended_result_codes(c.db, 1);
  return true;
}

uint64_t Incarnation(sqlite3* db) {
  Statement q(db, "SELECT value FROM meta WHERE key = 'incarnation';");
  if (!q.ok() || q.Step() != SQLITE_ROW) return 0;
  return static_cast<uint64_t>(sqlite3_column_int64(q.get(), 0));
}

// Copies `from` into `to` with sqlite3_backup_*, kBackupStepPages at a time. The caller holds
// a read transaction on `from` (one snapshot for the whole copy: a writer elsewhere commits to
// the WAL meanwhile and the copy does not restart). Busy or locked steps are retried for at
// most 30 s.
bool Copy(sqlite3* from, sqlite3* to, const BackupProgressFn& progress, BackupReport& report,
          std::string& why) {
  sqlite3_backup* b = sqlite3_backup_init(to, "main", from, "main");
  if (b == nullptr) {
    why = "cannot start the copy: " + CaptureFailure(to, sqlite3_errcode(to)).text;
    return false;
  }
  int rc = SQLITE_OK;
  int waits = 0;
  while (true) {
    rc = sqlite3_backup_step(b, kBackupStepPages);
    const BackupProgress p{
        static_cast<uint64_t>(sqlite3_backup_pagecount(b) - sqlite3_backup_remaining(b)),
        static_cast<uint64_t>(sqlite3_backup_pagecount(b))};
    if (progress) progress(p);
    report.pages = p.pages_total;
    if (rc == SQLITE_DONE) break;
    if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
      if (++waits > 600) break;  // 30 s of 50 ms
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (rc != SQLITE_OK) break;
  }
  sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    why =
        "the copy failed: " + std::string(sqlite3_errstr(rc)) +
        (rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? " (the database stayed locked for 30 s)" : "");
    return false;
  }
  return true;
}

void RemoveQuietly(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path + suffix, ec);
  }
}

}  // namespace

uint64_t DatabaseIncarnation(const std::string& db_file) {
  std::error_code ec;
  if (!std::filesystem::exists(db_file, ec)) return 0;
  Connection c;
  std::string why;
  if (!Open(c, db_file, SQLITE_OPEN_READONLY, why)) return 0;
  return Incarnation(c.db);
}

Result<BackupReport> BackupDatabase(const std::string& source_db, const std::string& out_file,
                                    const BackupProgressFn& progress, std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(source_db, ec)) {
    why = source_db + " does not exist: is --data the server's data directory?";
    return MakeError(ErrorCode::kIo, "no database to back up");
  }
  Connection src;
  // Read-write without create: a WAL database needs its -shm; nothing is written.
  if (!Open(src, source_db, SQLITE_OPEN_READWRITE, why)) {
    return MakeError(ErrorCode::kIo, "cannot open the database");
  }
  // One read snapshot for the whole copy (WAL: the server keeps committing).
  if (const SqliteFailure f = ExecSql(src.db, "BEGIN; SELECT count(*) FROM meta;"); f.failed()) {
    why = source_db + " is not a scenecrdt database, or cannot be read: " + f.text;
    return MakeError(ErrorCode::kIo, "cannot read the database");
  }
  BackupReport report;
  report.incarnation = Incarnation(src.db);
  const std::string partial = out_file + ".partial";
  RemoveQuietly(partial);
  {
    Connection dst;
    if (!Open(dst, partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, why)) {
      return MakeError(ErrorCode::kIo, "cannot create the backup file");
    }
    if (!Copy(src.db, dst.db, progress, report, why)) {
      sqlite3_close(dst.db);
      dst.db = nullptr;
      RemoveQuietly(partial);
      return MakeError(ErrorCode::kIo, "the backup failed");
    }
    (void)ExecSql(src.db, "COMMIT;");
    // The copy is a plain file on its own (no -wal beside it) and checked before it counts.
    (void)ExecSql(dst.db, "PRAGMA journal_mode=DELETE;");
    if (const std::string problems = QuickCheck(dst.db); !problems.empty()) {
      sqlite3_close(dst.db);
      dst.db = nullptr;
      RemoveQuietly(partial);
      why = "the copy failed PRAGMA quick_check: " + problems;
      return MakeError(ErrorCode::kCorruptData, "the backup is damaged");
    }
  }
  std::filesystem::rename(partial, out_file, ec);
  if (ec) {
    why = "cannot rename " + partial + " to " + out_file + ": " + ec.message();
    return MakeError(ErrorCode::kIo, "cannot write the backup file");
  }
  report.bytes = std::filesystem::file_size(out_file, ec);
  return report;
}

Result<BackupReport> RestoreDatabase(const std::string& backup_file, const std::string& target_db,
                                     uint64_t min_incarnation, const BackupProgressFn& progress,
                                     std::string& why) {
  std::error_code ec;
  if (!std::filesystem::exists(backup_file, ec)) {
    why = backup_file + " does not exist";
    return MakeError(ErrorCode::kIo, "no backup file");
  }
  Connection src;
  if (!Open(src, backup_file, SQLITE_OPEN_READONLY, why)) {
    return MakeError(ErrorCode::kIo, "cannot open the backup file");
  }
  if (const std::string problems = QuickCheck(src.db); !problems.empty()) {
    why = backup_file + " is not a sound SQLite database (quick_check: " + problems + ")";
    return MakeError(ErrorCode::kCorruptData, "the backup file is damaged");
  }
  BackupReport report;
  report.incarnation = Incarnation(src.db);
  if (report.incarnation == 0) {
    why = backup_file + " has no incarnation row: not a backup of a scenecrdt data directory";
    return MakeError(ErrorCode::kCorruptData, "not a scenecrdt backup");
  }
  const std::string partial = target_db + ".restoring";
  RemoveQuietly(partial);
  {
    Connection dst;
    if (!Open(dst, partial, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, why)) {
      return MakeError(ErrorCode::kIo, "cannot create the restored database");
    }
    if (!Copy(src.db, dst.db, progress, report, why)) {
      sqlite3_close(dst.db);
      dst.db = nullptr;
      RemoveQuietly(partial);
      return MakeError(ErrorCode::kIo, "the restore failed");
    }
    const std::string bump = "UPDATE meta SET value = max(value, " +
                             std::to_string(min_incarnation) + ") WHERE key = 'incarnation';";
    if (const SqliteFailure f = ExecSql(dst.db, bump.c_str()); f.failed()) {
      sqlite3_close(dst.db);
      dst.db = nullptr;
      RemoveQuietly(partial);
      why = "cannot update the incarnation row: " + f.text;
      return MakeError(ErrorCode::kIo, "the restore failed");
    }
  }
  std::filesystem::rename(partial, target_db, ec);
  if (ec) {
    why = "cannot rename " + partial + " to " + target_db + ": " + ec.message();
    return MakeError(ErrorCode::kIo, "cannot put the restored database in place");
  }
  report.bytes = std::filesystem::file_size(target_db, ec);
  return report;
}

}  // namespace scenecrdt::server
