// SPDX-License-Identifier: Apache-2.0
// Owns InterestIndex: one scene's world positions and spatial grid for interest management
// (docs/INTEREST.md). It runs the runtime's own transform side (runtime::TransformSystem: the
// effective tree, loops parked at root, placeholders, dirty subtrees only) on the store's
// Transform registers, fed by the store's Transform change feed, and keeps every entity with a
// live Transform in a uniform grid of square cells over x and z (the cell side is
// --interest-cell-m). Per Sync its work grows with the entities whose Transform changed and
// the subtrees under them, not with the members. It also keeps a bounded journal of the
// entities each Sync placed, moved or removed (MemberView's incremental update reads it) and
// the version of the last change to the tree a view's closure depends on. Created when a
// scene's first interest member arrives, dropped with its last one; used on the scene's strand
// only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <glm/vec3.hpp>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::server {

// The documented distance rule, the one the server and every reference use: the squared
// distance of float differences, summed in double, against the squared radius in double.
inline bool WithinRadius(const glm::vec3& center, const glm::vec3& p, double radius) {
  const double dx = static_cast<double>(p.x - center.x);
  const double dy = static_cast<double>(p.y - center.y);
  const double dz = static_cast<double>(p.z - center.z);
  return dx * dx + dy * dy + dz * dz <= radius * radius;
}

// The world position of a node: the translation column of its world matrix.
inline glm::vec3 WorldPosition(const runtime::TransformSystem& ts, protocol::EntityId e) {
  const std::optional<glm::mat4> m = ts.WorldMatrix(e);
  return m ? glm::vec3((*m)[3]) : glm::vec3(0.0f);
}

class InterestIndex {
 public:
  // Builds the index from every live Transform of `store` and turns the store's Transform
  // change feed on (Sync consumes it).
  InterestIndex(runtime::CrdtStore& store, double cell_m);
  // Turns the feed off again.
  ~InterestIndex();
  InterestIndex(const InterestIndex&) = delete;
  InterestIndex& operator=(const InterestIndex&) = delete;

  // Brings world positions and the grid up to the store (the Transforms changed since the
  // last Sync); returns true when anything changed. Cheap when nothing did.
  bool Sync();

  // True when `e` has a live Transform (then it is in the grid).
  bool HasTransform(protocol::EntityId e) const { return entries_.count(e) != 0; }
  // The world position of an entity with a live Transform, or nullopt.
  std::optional<glm::vec3> Position(protocol::EntityId e) const;
  // The store sequence at which `e` last gained a live Transform as seen by Sync (0: before
  // the index was built).
  uint64_t GainedAt(protocol::EntityId e) const;
  const runtime::TransformSystem& transforms() const { return transforms_; }
  // Bumped by every Sync that changed something.
  uint64_t version() const { return version_; }
  std::size_t size() const { return entries_.size(); }

  // The cells Syncs touched since ClearTouched: the old and the new cell of every entity
  // placed, moved (even within its cell) or removed. Bounded by those entities (the scene
  // clears it every fan-out).
  const std::vector<uint64_t>& touched_cells() const { return touched_; }
  void ClearTouched() { touched_.clear(); }
  // The cell of an entity with a live Transform, or nullopt.
  std::optional<uint64_t> CellOf(protocol::EntityId e) const {
    const auto it = entries_.find(e);
    if (it == entries_.end()) return std::nullopt;
    return it->second.cell;
  }
  // The cells ForEachNear(center, radius) walks (a rectangle of cell columns), as keys.
  struct CellRect {
    int64_t x0 = 0, x1 = -1, z0 = 0, z1 = -1;  // empty by default
    bool operator==(const CellRect&) const = default;
    bool Contains(uint64_t key) const {
      const int64_t cx = static_cast<int64_t>(key >> 32) - kMaxCell;
      const int64_t cz = static_cast<int64_t>(key & 0xFFFFFFFFu) - kMaxCell;
      return cx >= x0 && cx <= x1 && cz >= z0 && cz <= z1;
    }
    double count() const {
      return x1 < x0 || z1 < z0
                 ? 0.0
                 : static_cast<double>(x1 - x0 + 1) * static_cast<double>(z1 - z0 + 1);
    }
  };
  // A superset of the cells of every point within `radius` of `center` by WithinRadius: the
  // bounds are widened by 1e-6 x (|centre| + radius), more than the float rounding of p - c
  // and of the bound itself (docs/INTEREST.md "Server work and bounds").
  CellRect RectNear(const glm::vec3& center, double radius) const {
    const double sx = 1e-6 * (std::abs(static_cast<double>(center.x)) + radius);
    const double sz = 1e-6 * (std::abs(static_cast<double>(center.z)) + radius);
    return {CellCoord(static_cast<float>(center.x - radius - sx)),
            CellCoord(static_cast<float>(center.x + radius + sx)),
            CellCoord(static_cast<float>(center.z - radius - sz)),
            CellCoord(static_cast<float>(center.z + radius + sz))};
  }
  static uint64_t Key(int64_t cx, int64_t cz) { return CellKey(cx, cz); }

  // Calls f(entity, position) for every entity with a live Transform whose cell column may
  // hold points within `radius` of `center` (a superset: callers test WithinRadius).
  template <class F>
  void ForEachNear(const glm::vec3& center, double radius, F&& f) const;
  // The journal: an entity a Sync placed, moved (even within its cell) or removed, its cell
  // before and after (kNoCell: none), and that Sync's version. It holds the entries of the
  // newest Syncs, at most kMaxJournal entries plus one Sync's (older Syncs are dropped whole).
  static constexpr uint64_t kNoCell = ~uint64_t{0};
  static constexpr std::size_t kMaxJournal = std::size_t{1} << 16;
  struct Moved {
    uint64_t version = 0;
    protocol::EntityId entity = 0;
    uint64_t from_cell = kNoCell;
    uint64_t to_cell = kNoCell;
  };
  // The journal entries of the Syncs after `version` into `out`; false when some of them were
  // dropped (the caller recomputes from the grid instead).
  bool MovedSince(uint64_t version, std::span<const Moved>& out) const;
  // Calls f(entity) for every journal entry of the Syncs after `version` whose cell before or
  // after is in `rect` (an entity may come several times); false, calling nothing, when some
  // of those entries were dropped. Each Sync's cells are kept sorted: a binary search per
  // cell column of `rect`, not a test per entry.
  template <class F>
  bool MovedNear(uint64_t version, const CellRect& rect, F&& f) const;
  // The version of the last Sync that changed a Transform's parent, or gave or took the
  // Transform of an entity with a parent or with children: the effective tree, parked loops
  // and placeholders change only then.
  uint64_t structure_version() const { return structure_version_; }
  // The entities with a live Transform whose Transform names `e` as its parent.
  uint32_t ChildCount(protocol::EntityId e) const {
    const auto it = children_.find(e);
    return it == children_.end() ? 0 : it->second;
  }

  // Calls f(entity) for every entity with a live Transform.
  template <class F>
  void ForEach(F&& f) const {
    for (const auto& kv : entries_) f(kv.first);
  }

 private:
  struct Entry {
    glm::vec3 position{0.0f};
    uint64_t cell = 0;
    uint32_t slot = 0;  // index in cells_[cell]
    uint64_t gained_at = 0;
  };
  static constexpr int64_t kMaxCell = (int64_t{1} << 30) - 1;

  int64_t CellCoord(float v) const;
  static uint64_t CellKey(int64_t cx, int64_t cz) {
    return (static_cast<uint64_t>(cx + kMaxCell) << 32) | static_cast<uint64_t>(cz + kMaxCell);
  }
  void Place(protocol::EntityId e, Entry& entry, const glm::vec3& p);
  void Unplace(const Entry& entry);
  // Counts `parent`'s children up (+1) or down (-1); the root is not counted.
  void CountChild(protocol::EntityId parent, int delta);
  void TrimJournal();
  // Adds the cells of journal_[first..] (the entries of the Sync `version`) to journal_cells_.
  void IndexJournal(std::size_t first, uint64_t version);

  runtime::CrdtStore& store_;
  const double cell_m_;
  runtime::TransformSystem transforms_;
  std::unordered_map<protocol::EntityId, Entry> entries_;
  std::unordered_map<uint64_t, std::vector<protocol::EntityId>> cells_;
  uint64_t version_ = 0;
  std::vector<uint64_t> touched_;
  std::unordered_map<protocol::EntityId, uint32_t> children_;  // parent -> children (> 0)
  std::vector<Moved> journal_;                                 // by version
  // Per Sync in the journal: its version and where its cells start in journal_cells_, which
  // holds each entry's cells (before and after, kNoCell left out) sorted by (cell, entity)
  // within a Sync.
  struct JournalCell {
    uint64_t cell = 0;
    protocol::EntityId entity = 0;
  };
  struct JournalSync {
    uint64_t version = 0;
    std::size_t cells_begin = 0;
  };
  std::vector<JournalCell> journal_cells_;
  std::vector<JournalSync> journal_syncs_;
  uint64_t journal_base_ = 0;  // every entry after this version is in journal_
  uint64_t structure_version_ = 0;
};

template <class F>
void InterestIndex::ForEachNear(const glm::vec3& center, double radius, F&& f) const {
  const CellRect r = RectNear(center, radius);
  if (r.count() >= static_cast<double>(cells_.size())) {
    // Fewer occupied cells than columns to look at: visit the occupied ones.
    for (const auto& kv : cells_) {
      for (protocol::EntityId e : kv.second) f(e, entries_.at(e).position);
    }
    return;
  }
  for (int64_t x = r.x0; x <= r.x1; ++x) {
    for (int64_t z = r.z0; z <= r.z1; ++z) {
      const auto it = cells_.find(CellKey(x, z));
      if (it == cells_.end()) continue;
      for (protocol::EntityId e : it->second) f(e, entries_.at(e).position);
    }
  }
}

template <class F>
bool InterestIndex::MovedNear(uint64_t version, const CellRect& rect, F&& f) const {
  if (version < journal_base_) return false;
  auto sync = std::upper_bound(journal_syncs_.begin(), journal_syncs_.end(), version,
                               [](uint64_t v, const JournalSync& j) { return v < j.version; });
  const auto columns = static_cast<std::size_t>(std::max<int64_t>(0, rect.x1 - rect.x0 + 1));
  for (; sync != journal_syncs_.end(); ++sync) {
    const auto next = sync + 1;
    const auto begin = journal_cells_.begin() + static_cast<std::ptrdiff_t>(sync->cells_begin);
    const auto end = next == journal_syncs_.end()
                         ? journal_cells_.end()
                         : journal_cells_.begin() + static_cast<std::ptrdiff_t>(next->cells_begin);
    if (static_cast<std::size_t>(end - begin) <= columns * 16) {
      for (auto it = begin; it != end; ++it) {
        if (rect.Contains(it->cell)) f(it->entity);
      }
      continue;
    }
    for (int64_t x = rect.x0; x <= rect.x1; ++x) {
      const uint64_t lo = CellKey(x, rect.z0);
      const uint64_t hi = CellKey(x, rect.z1);
      auto it = std::lower_bound(begin, end, lo,
                                 [](const JournalCell& c, uint64_t key) { return c.cell < key; });
      for (; it != end && it->cell <= hi; ++it) f(it->entity);
    }
  }
  return true;
}

}  // namespace scenecrdt::server
