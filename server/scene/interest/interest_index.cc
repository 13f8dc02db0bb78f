// SPDX-License-Identifier: Apache-2.0
// Owns the interest index's upkeep: the Transform feed into the TransformSystem, world
// positions of the entities it recomputed, their grid cells, the journal of those changes and
// the child counts that say when a change touches the effective tree.
#include "scenecrdt/server/scene/interest/interest_index.h"

#include <algorithm>

namespace scenecrdt::server {

InterestIndex::InterestIndex(runtime::CrdtStore& store, double cell_m)
    : store_(store), cell_m_(cell_m) {
  for (const runtime::TransformRegister& r : store_.transform_registers()) {
    if (r.has_data && r.entity != protocol::kRootEntity) {
      transforms_.SetTransform(r.entity, r.value);
      CountChild(r.value.parent, 1);
    }
  }
  store_.ClearTransformChanges();
  store_.set_track_transform_changes(true);
  transforms_.Update(runtime::UpdateOptions{1});
  for (const runtime::TransformRegister& r : store_.transform_registers()) {
    if (!r.has_data || r.entity == protocol::kRootEntity) continue;
    Entry& entry = entries_[r.entity];
    Place(r.entity, entry, WorldPosition(transforms_, r.entity));
  }
}

InterestIndex::~InterestIndex() {
  store_.set_track_transform_changes(false);
  store_.ClearTransformChanges();
}

int64_t InterestIndex::CellCoord(float v) const {
  const double c = std::floor(static_cast<double>(v) / cell_m_);
  // NaN never reaches here (the store refuses non-finite Transforms); huge values share the
  // outermost cells.
  if (!(c > static_cast<double>(-kMaxCell))) return -kMaxCell;
  if (c > static_cast<double>(kMaxCell)) return kMaxCell;
  return static_cast<int64_t>(c);
}

void InterestIndex::Place(protocol::EntityId e, Entry& entry, const glm::vec3& p) {
  entry.position = p;
  entry.cell = CellKey(CellCoord(p.x), CellCoord(p.z));
  std::vector<protocol::EntityId>& list = cells_[entry.cell];
  entry.slot = static_cast<uint32_t>(list.size());
  list.push_back(e);
}

void InterestIndex::Unplace(const Entry& entry) {
  const auto it = cells_.find(entry.cell);
  std::vector<protocol::EntityId>& list = it->second;
  const protocol::EntityId moved = list.back();
  list[entry.slot] = moved;
  entries_[moved].slot = entry.slot;
  list.pop_back();
  if (list.empty()) cells_.erase(it);
}

std::optional<glm::vec3> InterestIndex::Position(protocol::EntityId e) const {
  const auto it = entries_.find(e);
  if (it == entries_.end()) return std::nullopt;
  return it->second.position;
}

void InterestIndex::CountChild(protocol::EntityId parent, int delta) {
  if (parent == protocol::kRootEntity) return;
  if (delta > 0) {
    ++children_[parent];
    return;
  }
  const auto it = children_.find(parent);
  if (it != children_.end() && --it->second == 0) children_.erase(it);
}

bool InterestIndex::MovedSince(uint64_t version, std::span<const Moved>& out) const {
  if (version < journal_base_) return false;
  const auto first = std::upper_bound(journal_.begin(), journal_.end(), version,
                                      [](uint64_t v, const Moved& m) { return v < m.version; });
  const auto at = static_cast<std::size_t>(first - journal_.begin());
  out = std::span<const Moved>(journal_.data() + at, journal_.size() - at);
  return true;
}

void InterestIndex::TrimJournal() {
  if (journal_.size() <= kMaxJournal) return;
  // Drops the oldest Syncs, whole, until at most half the bound is left.
  std::size_t cut = journal_.size() - kMaxJournal / 2;
  const uint64_t v = journal_[cut].version;
  while (cut < journal_.size() && journal_[cut].version == v) ++cut;
  journal_base_ = v;
  journal_.erase(journal_.begin(), journal_.begin() + static_cast<std::ptrdiff_t>(cut));
  // The same Syncs' cells.
  const auto keep =
      std::upper_bound(journal_syncs_.begin(), journal_syncs_.end(), v,
                       [](uint64_t x, const JournalSync& j) { return x < j.version; });
  const std::size_t cells_cut =
      keep == journal_syncs_.end() ? journal_cells_.size() : keep->cells_begin;
  journal_syncs_.erase(journal_syncs_.begin(), keep);
  for (JournalSync& j : journal_syncs_) j.cells_begin -= cells_cut;
  journal_cells_.erase(journal_cells_.begin(),
                       journal_cells_.begin() + static_cast<std::ptrdiff_t>(cells_cut));
}

void InterestIndex::IndexJournal(std::size_t first, uint64_t version) {
  if (first == journal_.size()) return;
  const std::size_t begin = journal_cells_.size();
  journal_syncs_.push_back({version, begin});
  for (std::size_t i = first; i < journal_.size(); ++i) {
    const Moved& m = journal_[i];
    if (m.from_cell != kNoCell) journal_cells_.push_back({m.from_cell, m.entity});
    if (m.to_cell != kNoCell && m.to_cell != m.from_cell) {
      journal_cells_.push_back({m.to_cell, m.entity});
    }
  }
  std::sort(journal_cells_.begin() + static_cast<std::ptrdiff_t>(begin), journal_cells_.end(),
            [](const JournalCell& a, const JournalCell& b) {
              return a.cell != b.cell ? a.cell < b.cell : a.entity < b.entity;
            });
}

uint64_t InterestIndex::GainedAt(protocol::EntityId e) const {
  const auto it = entries_.find(e);
  return it == entries_.end() ? 0 : it->second.gained_at;
}

bool InterestIndex::Sync() {
  const std::span<const protocol::EntityId> changes = store_.transform_changes();
  if (changes.empty()) return false;
  const uint64_t seq = store_.sequence();
  const uint64_t version = version_ + 1;
  const std::size_t journal_first = journal_.size();
  // The feed may name an entity several times: its current register is what counts.
  std::vector<protocol::EntityId> gained;
  for (const protocol::EntityId e : changes) {
    if (e == protocol::kRootEntity) continue;
    const protocol::Transform* before = transforms_.GetTransform(e);
    const bool had = before != nullptr;
    const protocol::EntityId old_parent = had ? before->parent : protocol::kRootEntity;
    const protocol::Transform* t = store_.FindTransform(e);
    const protocol::EntityId new_parent = t ? t->parent : protocol::kRootEntity;
    if (old_parent != new_parent ||
        (had != (t != nullptr) && (old_parent != protocol::kRootEntity || ChildCount(e) != 0))) {
      structure_version_ = version;
    }
    if (had) CountChild(old_parent, -1);
    if (t) CountChild(new_parent, 1);
    if (t) {
      transforms_.SetTransform(e, *t);
      if (entries_.count(e) == 0) {
        Entry& entry = entries_[e];
        entry.gained_at = seq;
        Place(e, entry, glm::vec3(0.0f));  // placed for real below, once computed
        gained.push_back(e);
      }
    } else {
      transforms_.RemoveTransform(e);
      const auto it = entries_.find(e);
      if (it != entries_.end()) {
        touched_.push_back(it->second.cell);
        journal_.push_back({version, e, it->second.cell, kNoCell});
        Unplace(it->second);
        entries_.erase(it);
      }
    }
  }
  store_.ClearTransformChanges();
  transforms_.Update(runtime::UpdateOptions{1});
  const auto reposition = [&](protocol::EntityId e) {
    const auto it = entries_.find(e);
    if (it == entries_.end()) return;  // a placeholder: no Transform, not in the grid
    const glm::vec3 p = WorldPosition(transforms_, e);
    Entry& entry = it->second;
    const uint64_t cell = CellKey(CellCoord(p.x), CellCoord(p.z));
    touched_.push_back(entry.cell);
    if (cell != entry.cell) touched_.push_back(cell);
    journal_.push_back({version, e, entry.cell, cell});
    if (cell == entry.cell) {
      entry.position = p;
      return;
    }
    Unplace(entry);
    Place(e, entry, p);
  };
  for (const protocol::EntityId e : transforms_.changed_entities()) reposition(e);
  for (const protocol::EntityId e : gained) reposition(e);
  version_ = version;
  IndexJournal(journal_first, version);
  TrimJournal();
  return true;
}

}  // namespace scenecrdt::server
