// SPDX-License-Identifier: Apache-2.0
// Owns CorrectionMark: a correction a scene merged, as the commit log carries it next to the
// chunk that holds it (docs/AUTHORITY.md "Cluster"). Standard library only: the log interface
// (commit_log.h) and the stream encoding (server/cluster/owner_rows.h) both name it.
#pragma once

#include <cstdint>

namespace scenecrdt::server {

// A correction's register and timestamp, so that the stream entry carrying it says so (field
// `k`) and the node that admitted an owner's write it beats can re-stamp that write above it.
// `chunk`: in LoggedScene::LogEntries, the index of the chunk that carries it (not encoded).
struct CorrectionMark {
  uint32_t component = 0;
  uint32_t entity = 0;
  uint32_t timestamp = 0;
  uint32_t chunk = 0;
  bool operator==(const CorrectionMark&) const = default;
};

}  // namespace scenecrdt::server
