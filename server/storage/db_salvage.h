// SPDX-License-Identifier: Apache-2.0
// Owns SalvageDatabase: the explicit recovery path for a damaged scenes.sqlite3 (the server
// refuses to start on one; `scenecrdt db-salvage` calls this). It copies every row that still
// reads cleanly into a new database with the same schema and names what could not be read:
// never a silent partial load (docs/SERVER.md "Persistence").
//
// Per table, rows are read in primary-key order (scene first). When a read fails, the scan
// restarts after the scene it was in (SQLite can often seek past a damaged page); when even
// that fails at once, the rest is read backwards from the end until the damage. The scenes
// whose rows may be incomplete are the scene a scan failed in and every scene in a range no
// scan could reach (reported as a range). The new database's incarnation is above the old one
// (or, when that is unreadable, the hours since 1970: above any plausible restart count), so
// no client resume position from before is mistaken.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenecrdt/protocol/result.h"

namespace scenecrdt::server {

struct SalvageTable {
  std::string table;
  uint64_t rows_copied = 0;
  bool complete = false;  // every row read
  // Scenes whose rows in this table may be incomplete, and unreadable ranges
  // ("after 'a' up to 'b'").
  std::vector<std::string> damaged;
  std::vector<std::string> errors;  // the SQLite texts met
};

struct SalvageReport {
  std::vector<SalvageTable> tables;
  uint64_t old_incarnation = 0;  // 0: unreadable
  uint64_t new_incarnation = 0;
  bool complete() const;
};

// Reads `source` (never written) and writes `destination` (must not exist). Errors: kIo
// (cannot open or write), kInvalidArgument (destination exists); `diagnostic` says more.
Result<SalvageReport> SalvageDatabase(const std::string& source, const std::string& destination,
                                      std::string* diagnostic = nullptr);

}  // namespace scenecrdt::server
