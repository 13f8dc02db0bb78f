// SPDX-License-Identifier: Apache-2.0
// Owns the reads of ChangeLog.
#include "scenecrdt/runtime/crdt/change_log.h"

namespace scenecrdt::runtime::internal {

std::span<const Change> ChangeLog::After(uint64_t since) const {
  auto first = std::upper_bound(changes_.begin(), changes_.end(), since,
                                [](uint64_t s, const Change& c) { return s < c.sequence; });
  return std::span<const Change>(first, changes_.end());
}

}  // namespace scenecrdt::runtime::internal
