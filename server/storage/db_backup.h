// SPDX-License-Identifier: Apache-2.0
// Owns copying the scene database with SQLite's online backup API (sqlite3_backup_*): a
// backup of a --data directory while a server runs and keeps serving (the copy is one read
// snapshot; WAL lets the server commit meanwhile), and a restore into a directory no server
// holds (`scenecrdt backup` / `scenecrdt restore`, docs/OPERATIONS.md "Backup and restore").
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

struct BackupProgress {
  uint64_t pages_done = 0;
  uint64_t pages_total = 0;
};
// Called after each step of the copy (at most every kBackupStepPages pages).
using BackupProgressFn = std::function<void(const BackupProgress&)>;
inline constexpr int kBackupStepPages = 1024;

struct BackupReport {
  uint64_t pages = 0;
  uint64_t bytes = 0;
  uint64_t incarnation = 0;  // the copied database's incarnation row
};

// Copies `source_db` (a scenecrdt database, possibly in use) into `out_file` through
// `out_file`.partial, renamed when complete and checked (PRAGMA quick_check). `why` says what
// went wrong and what to do.
Result<BackupReport> BackupDatabase(const std::string& source_db, const std::string& out_file,
                                    const BackupProgressFn& progress, std::string& why);

// Checks `backup_file` (quick_check, the incarnation row) and copies it into `target_db`
// (which must not exist). The restored incarnation is at least `min_incarnation`, so that the
// next start numbers its sequences after every run the directory has seen (a client's resume
// position from the replaced database is never taken for one of the restored database).
Result<BackupReport> RestoreDatabase(const std::string& backup_file, const std::string& target_db,
                                     uint64_t min_incarnation, const BackupProgressFn& progress,
                                     std::string& why);

// The incarnation row of `db_file`; 0 when it cannot be read.
uint64_t DatabaseIncarnation(const std::string& db_file);

}  // namespace scenecrdt::server
