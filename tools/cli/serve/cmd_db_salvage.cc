// SPDX-License-Identifier: Apache-2.0
// Owns `scenecrdt db-salvage`: the explicit recovery of a damaged --data database (the server
// refuses to start on one). Copies what reads cleanly into a new file, names what was lost,
// and (unless --out) swaps the new file in, keeping the damaged one beside it.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>

#include "scenecrdt/server/storage/db_salvage.h"
#include "scenecrdt/server/storage/persistence.h"
#include "tools/cli/cli_app.h"
#include "tools/cli/commands.h"

namespace scenecrdt::cli {

namespace {

constexpr const char* kAbout =
    R"(Recovers the scene database of a server that refuses to start because DIR/scenes.sqlite3 is
damaged (PRAGMA quick_check failed, a 0-byte file, a missing meta table). Stop the server
first. Every row that still reads cleanly is copied into a new database; the scenes whose
rows could not all be read are listed, so nothing is lost silently. See docs/SERVER.md
"Persistence".
)";
constexpr const char* kFooter =
    R"(exit status: 0 every row was copied; 1 salvaged, but rows were lost (listed); 2 bad usage or
the salvage failed (nothing in DIR was changed).
)";

std::string UtcStamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
  return text;
}

}  // namespace

int RunDbSalvage(Args args) {
  CliApp app("db-salvage", kAbout, kFooter);
  std::optional<std::string> data, out;
  app.Value("--data", "DIR", "the server's --data directory", &data);
  app.Value("--out", "FILE",
            "write the salvaged database to FILE and change nothing in DIR. Without it\n"
            "the damaged files are renamed to scenes.sqlite3.damaged-<UTC time>[-wal|-shm]\n"
            "and the salvaged database takes their place: `scenecrdt serve --data DIR`\n"
            "then starts on it.",
            &out);
  if (auto status = app.Parse(args)) return *status;
  if (!data) {
    PrintMessage("db-salvage",
                 "give --data DIR (and nothing else); see 'scenecrdt db-salvage --help'");
    return kExitBadInput;
  }
  namespace fs = std::filesystem;
  const std::string source = server::Persistence::DatabasePath(*data);
  std::error_code ec;
  if (!fs::exists(source, ec)) {
    PrintMessage("db-salvage", source + " does not exist: nothing to salvage");
    return kExitBadInput;
  }
  const std::string destination = out ? *out : source + ".salvaged";
  std::string diagnostic;
  auto report = server::SalvageDatabase(source, destination, &diagnostic);
  if (!report.has_value()) {
    PrintError("db-salvage", "salvage failed", report.error());
    if (!diagnostic.empty()) PrintMessage("db-salvage", diagnostic);
    return kExitBadInput;
  }
  uint64_t copied = 0;
  for (const server::SalvageTable& t : report->tables) {
    copied += t.rows_copied;
    std::fprintf(stderr, "scenecrdt db-salvage: %s: %llu rows copied%s\n", t.table.c_str(),
                 static_cast<unsigned long long>(t.rows_copied),
                 t.complete ? "" : ", SOME ROWS COULD NOT BE READ");
    for (const std::string& d : t.damaged) {
      std::fprintf(stderr, "scenecrdt db-salvage:   incomplete: scene %s\n", d.c_str());
    }
    for (const std::string& e : t.errors) {
      std::fprintf(stderr, "scenecrdt db-salvage:   sqlite: %s\n", e.c_str());
    }
  }
  if (report->old_incarnation == 0) {
    std::fprintf(stderr, "scenecrdt db-salvage: the incarnation row could not be read\n");
  }
  std::fprintf(stderr, "scenecrdt db-salvage: incarnation %llu -> %llu\n",
               static_cast<unsigned long long>(report->old_incarnation),
               static_cast<unsigned long long>(report->new_incarnation));
  if (!out) {
    const std::string aside = source + ".damaged-" + UtcStamp();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      if (!fs::exists(source + suffix, ec)) continue;
      fs::rename(source + suffix, aside + suffix, ec);
      if (ec) {
        PrintMessage("db-salvage", "cannot rename " + source + suffix + ": " + ec.message() +
                                       "; the salvaged database is " + destination);
        return kExitBadInput;
      }
    }
    fs::rename(destination, source, ec);
    if (ec) {
      PrintMessage("db-salvage",
                   "cannot move " + destination + " to " + source + ": " + ec.message());
      return kExitBadInput;
    }
    std::fprintf(stderr,
                 "scenecrdt db-salvage: damaged files kept as %s*; %s is the salvaged "
                 "database (%llu rows)\n",
                 aside.c_str(), source.c_str(), static_cast<unsigned long long>(copied));
  } else {
    std::fprintf(stderr, "scenecrdt db-salvage: salvaged database written to %s (%llu rows)\n",
                 destination.c_str(), static_cast<unsigned long long>(copied));
  }
  return report->complete() ? kExitOk : kExitCheckFailed;
}

}  // namespace scenecrdt::cli
