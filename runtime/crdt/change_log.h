// SPDX-License-Identifier: Apache-2.0
// Owns ChangeLog: the store sequence of a CrdtStore (incremented by every state change; not
// part of the CRDT state) and the log of changes in sequence order that ExportChangesSince
// reads. An entry goes stale when its object changes again or vanishes; the store skips stale
// entries on export and compaction drops them, so the log stays within a constant factor of
// the live objects.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::runtime::internal {

enum class ChangeKind : uint8_t { kTransform, kOpaque, kAppend, kTombstone };

struct Change {
  uint64_t sequence;
  protocol::ComponentId component;  // kOpaque, kAppend
  protocol::EntityId entity;        // kTransform, kOpaque, kAppend; the number for kTombstone
  ChangeKind kind;
};

class ChangeLog {
 public:
  uint64_t sequence() const { return sequence_; }
  // Logs a change and returns its sequence (the previous one + 1).
  uint64_t Next(ChangeKind kind, protocol::ComponentId component, protocol::EntityId entity) {
    ++sequence_;
    changes_.push_back(Change{sequence_, component, entity, kind});
    return sequence_;
  }
  // The changes after sequence `since`, in sequence order, stale ones included.
  std::span<const Change> After(uint64_t since) const;

  // True when the log has grown enough since the last compaction to compact it now.
  bool NeedsCompaction() const { return changes_.size() >= compact_at_; }
  // Keeps the changes for which is_latest(change) holds, in order. Call it between merges,
  // when every live object carries its latest sequence.
  template <class IsLatest>
  void Compact(IsLatest&& is_latest) {
    // Filtering in place keeps the order (no sort) and the storage (no reallocation).
    std::size_t kept = 0;
    for (const Change& c : changes_) {
      if (is_latest(c)) changes_[kept++] = c;
    }
    changes_.resize(kept);
    compact_at_ = std::max<std::size_t>(kMinCompact, 4 * (kept + 1));
  }

 private:
  static constexpr std::size_t kMinCompact = 1024;
  uint64_t sequence_ = 0;
  std::vector<Change> changes_;
  std::size_t compact_at_ = kMinCompact;  // compact when the log reaches this size
};

}  // namespace scenecrdt::runtime::internal
