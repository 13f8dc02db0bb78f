// SPDX-License-Identifier: Apache-2.0
// Owns the reads of ChangeLog.
#include "scenecrdt/runtime/crdt/change_log.h"

namespace scenecrdt::runtime::internal {

std::span<const Change> ChangeLog::After(uint64_t since) const {
  auto first = std::upper_bound(changes_.begin(), changes_.end(), since,
                                [](uint64_t s, const Change& c) { return s < c.sequence; });
  // Pointer and count: the libc++ of emscripten 3.1.6 (preset wasm) lacks span's iterator
  // constructor (docs/WEB.md section 1).
  return std::span<const Change>(changes_.data() + (first - changes_.begin()),
                                 static_cast<std::size_t>(changes_.end() - first));
}

}  // namespace scenecrdt::runtime::internal
