// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt backup` (an online copy of a --data directory's database, while its server
// runs) and `scenecrdt restore` (into a directory no server holds); the SQLite work is
// server/storage/db_backup.h. docs/OPERATIONS.md "Backup and restore".
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "scenecrdt/server/storage/data_dir_lock.h"
#include "scenecrdt/server/storage/db_backup.h"
#include "scenecrdt/server/storage/persistence.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {

constexpr const char* kBackupAbout =
    R"(Copies the scene database of DIR (DIR/scenes.sqlite3) into FILE with SQLite's online backup
API: a server running on DIR keeps serving and committing meanwhile; FILE holds the state as
of the moment the copy began (one consistent snapshot). FILE is written as FILE.partial and
renamed once complete and checked (PRAGMA quick_check), so a FILE that exists is whole.
Restore it with 'scenecrdt restore'. docs/OPERATIONS.md "Backup and restore".
)";
constexpr const char* kBackupFooter =
    R"(Progress goes to stderr when the copy takes more than a second. Cluster nodes (--redis)
keep their scenes in Redis: back up Redis (its AOF or RDB file) instead.
exit status: 0 done; 2 bad usage or the copy failed (FILE is left as it was).
)";

constexpr const char* kRestoreAbout =
    R"(Puts the backup FILE (from 'scenecrdt backup') in place as DIR/scenes.sqlite3. Stop the
server first: restore refuses while a server holds DIR (its lock file). The database it
replaces is kept beside it as scenes.sqlite3.before-restore-<UTC time>[-wal|-shm]; FILE is
checked first (PRAGMA quick_check, a scenecrdt incarnation row) and nothing in DIR changes
when it fails. A server started on DIR then serves the backed-up state; clients that held a
resume position resynchronise (the restored database starts a new incarnation).
)";
constexpr const char* kRestoreFooter =
    R"(exit status: 0 restored; 2 bad usage, a server holds DIR, or FILE is not a sound backup.
)";

std::string UtcStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

// Progress on stderr once the copy has taken a second, then at most once a second.
server::BackupProgressFn Progress(const char* command) {
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  return [command, start, last](const server::BackupProgress& p) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - start < std::chrono::seconds(1) || now - last < std::chrono::seconds(1)) return;
    last = now;
    std::fprintf(stderr, "scenecrdt %s: %llu of %llu pages (%.0f%%)\n", command,
                 static_cast<unsigned long long>(p.pages_done),
                 static_cast<unsigned long long>(p.pages_total),
                 p.pages_total ? 100.0 * static_cast<double>(p.pages_done) /
                                     static_cast<double>(p.pages_total)
                               : 100.0);
  };
}

}  // namespace

int RunBackup(Args args) {
  CliApp app("backup", kBackupAbout, kBackupFooter);
  std::optional<std::string> data, out;
  app.Value("--data", "DIR", "the server's --data directory", &data);
  app.Value("--out,-o", "FILE", "the backup file (replaced if it exists)", &out);
  if (auto status = app.Parse(args)) return *status;
  if (!data || !out) {
    PrintMessage("backup", "give --data DIR and -o FILE; see 'scenecrdt backup --help'");
    return kExitBadInput;
  }
  const auto start = std::chrono::steady_clock::now();
  std::string why;
  auto report = server::BackupDatabase(server::Persistence::DatabasePath(*data), *out,
                                       Progress("backup"), why);
  if (!report.has_value()) {
    PrintError("backup", "backup failed", report.error());
    PrintMessage("backup", why);
    return kExitBadInput;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "scenecrdt backup: %s: %llu pages, %llu bytes (incarnation %llu) in %.2f s\n",
               out->c_str(), static_cast<unsigned long long>(report->pages),
               static_cast<unsigned long long>(report->bytes),
               static_cast<unsigned long long>(report->incarnation), seconds);
  return kExitOk;
}

int RunRestore(Args args) {
  CliApp app("restore", kRestoreAbout, kRestoreFooter);
  std::optional<std::string> data, in;
  app.Value("--data", "DIR", "the server's --data directory (created if missing)", &data);
  app.Value("--in,-i", "FILE", "the backup file", &in);
  if (auto status = app.Parse(args)) return *status;
  if (!data || !in) {
    PrintMessage("restore", "give --data DIR and -i FILE; see 'scenecrdt restore --help'");
    return kExitBadInput;
  }
  std::string why;
  // The server's own lock: held for the whole restore, so no server starts meanwhile.
  const auto lock = server::DataDirLock::Acquire(*data, why);
  if (!lock) {
    PrintMessage("restore", why +
                                " (restore needs the server stopped: systemctl stop "
                                "scenecrdt, or SIGTERM, then run restore again)");
    return kExitBadInput;
  }
  namespace fs = std::filesystem;
  const std::string target = server::Persistence::DatabasePath(*data);
  // After every incarnation the replaced database has seen.
  const uint64_t replaced_incarnation = server::DatabaseIncarnation(target);
  const std::string staged = target + ".from-backup";
  auto report =
      server::RestoreDatabase(*in, staged, replaced_incarnation + 1, Progress("restore"), why);
  if (!report.has_value()) {
    PrintError("restore", "restore failed (nothing in --data was changed)", report.error());
    PrintMessage("restore", why);
    return kExitBadInput;
  }
  std::error_code ec;
  const std::string aside = target + ".before-restore-" + UtcStamp();
  std::string kept;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    if (!fs::exists(target + suffix, ec)) continue;
    fs::rename(target + suffix, aside + suffix, ec);
    if (ec) {
      PrintMessage("restore", "cannot move " + target + suffix + " aside: " + ec.message() +
                                  "; the restored database is " + staged +
                                  " (rename it to scenes.sqlite3 by hand)");
      return kExitBadInput;
    }
    kept = aside + "*";
  }
  fs::rename(staged, target, ec);
  if (ec) {
    PrintMessage("restore", "cannot move " + staged + " to " + target + ": " + ec.message());
    return kExitBadInput;
  }
  std::fprintf(stderr, "scenecrdt restore: %s restored from %s (%llu bytes)%s%s\n", target.c_str(),
               in->c_str(), static_cast<unsigned long long>(report->bytes),
               kept.empty() ? "" : "; the replaced database is kept as ", kept.c_str());
  return kExitOk;
}

}  // namespace scenecrdt::cli
