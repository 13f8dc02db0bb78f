// SPDX-License-Identifier: Apache-2.0
// Owns the upkeep of the preorder layout: patching it edge by edge, compacting and rebuilding
// it, and checking its invariants (see preorder_layout.h and docs/PROPAGATION.md, "Layout").
#include "scenecrdt/runtime/transform/preorder_layout.h"

#include <algorithm>

#include "scenecrdt/protocol/check.h"
#include "scenecrdt/runtime/internal/prefetch.h"

namespace scenecrdt::runtime::internal {

void PositionArrays::Resize(std::size_t n) {
  world.resize(n);
  local.resize(n);
  parent.resize(n);
  depth.resize(n);
  size.resize(n);
  slot.resize(n);
  record_ref.resize(n);
  world[0] = glm::mat4(1.0f);
  local[0] = kIdentityTrs;
  parent[0] = 0;
  depth[0] = 0;
  size[0] = 0;
  slot[0] = kNoSlot;
  record_ref[0] = 0;
}

void PositionArrays::Swap(PositionArrays& other) {
  world.swap(other.world);
  local.swap(other.local);
  parent.swap(other.parent);
  depth.swap(other.depth);
  size.swap(other.size);
  slot.swap(other.slot);
  record_ref.swap(other.record_ref);
}

PreorderLayout::PreorderLayout() { arrays_.Resize(1); }

void PreorderLayout::EnsureSlots(std::size_t num_slots) {
  if (num_slots <= pos_of_slot_.size()) return;
  pos_of_slot_.resize(std::max(num_slots, pos_of_slot_.size() * 3 / 2), kNoPos);
}

void PreorderLayout::SetLocal(uint32_t slot, const LocalTrs& local) {
  const uint32_t pos = pos_of_slot(slot);
  if (pos != kNoPos) arrays_.local[pos] = local;
}

void PreorderLayout::SetRecord(uint32_t slot, uint32_t record_id) {
  const uint32_t pos = pos_of_slot(slot);
  if (pos == kNoPos) return;
  const uint32_t ref = record_id == kNoSlot ? 0 : record_id + 1;
  uint32_t& old = arrays_.record_ref[pos];
  if (old == 0 && ref != 0) ++num_record_positions_;
  if (old != 0 && ref == 0) --num_record_positions_;
  old = ref;
}

void PreorderLayout::FinishCompute(uint64_t piece_changes) {
  depth_stale_ = false;
  fragment_debt_ += piece_changes;
}

// ---- Patching ----

uint32_t PreorderLayout::AllocPosition(uint32_t slot, uint32_t record_id, const LocalTrs& local) {
  const auto pos = static_cast<uint32_t>(arrays_.world.size());
  arrays_.world.push_back(glm::mat4(1.0f));
  arrays_.local.push_back(local);
  arrays_.parent.push_back(0);
  arrays_.depth.push_back(0);
  depth_stale_ = true;
  arrays_.slot.push_back(slot);
  arrays_.record_ref.push_back(record_id == kNoSlot ? 0 : record_id + 1);
  if (record_id != kNoSlot) ++num_record_positions_;
  arrays_.size.push_back(1);
  pos_of_slot_[slot] = pos;
  ++live_;
  return pos;
}

bool PreorderLayout::AddToAncestors(uint32_t pos, int64_t delta) {
  // budget_left() < 0, with the sequence's share (constant during the walk) read once.
  const auto sequence_spent = static_cast<int64_t>(sequence_.work() - work_at_start_);
  for (uint32_t a = pos; a != 0; a = arrays_.parent[a]) {
    uint32_t& size = arrays_.size[a];
    size = static_cast<uint32_t>(static_cast<int64_t>(size) + delta);
    if (--budget_ < sequence_spent) return false;
  }
  return true;
}

bool PreorderLayout::Detach(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = arrays_.parent[pos];
  if (parent == 0) return true;
  const uint32_t size = arrays_.size[pos];
  if (!AddToAncestors(parent, -static_cast<int64_t>(size))) return false;
  sequence_.MoveToEnd(pos, size);
  arrays_.parent[pos] = 0;
  depth_stale_ = true;
  return budget_left() >= 0;
}

bool PreorderLayout::Attach(uint32_t slot, uint32_t parent_slot) {
  const uint32_t pos = pos_of_slot_[slot];
  const uint32_t parent = pos_of_slot_[parent_slot];
  SCENECRDT_DCHECK(arrays_.parent[pos] == 0, "attach a detached subtree");
  const uint32_t size = arrays_.size[pos];
  sequence_.MoveAfter(pos, size, parent);
  arrays_.parent[pos] = parent;
  depth_stale_ = true;
  return AddToAncestors(parent, size) && budget_left() >= 0;
}

void PreorderLayout::RemoveLeaf(uint32_t slot) {
  const uint32_t pos = pos_of_slot_[slot];
  SCENECRDT_DCHECK(arrays_.size[pos] == 1 && arrays_.parent[pos] == 0, "remove a detached leaf");
  sequence_.Remove(pos);
  if (arrays_.record_ref[pos] != 0) --num_record_positions_;
  arrays_.record_ref[pos] = 0;
  arrays_.slot[pos] = kNoSlot;
  pos_of_slot_[slot] = kNoPos;
  arrays_.size[pos] = 0;
  --live_;
  ++dead_;
}

void PreorderLayout::ApplyStructure(const SceneGraph& graph, std::span<const uint32_t> changes,
                                    std::span<const uint32_t> record_of_slot, DirtySet& dirty) {
  all_changed_ = false;
  last_rebuild_ = false;
  EnsureSlots(graph.num_slots());
  if (changes.empty() && built_) {
    MaybeCompact(dirty.SweepAll(live_));
    return;
  }
  const std::size_t rebuild_at =
      std::max(policy_.min_rebuild_changes, live_ / std::max<uint32_t>(1, policy_.rebuild_divisor));
  if (!built_ || changes.size() > rebuild_at) {
    Rebuild(graph, record_of_slot);
    dirty.MarkAll();
    return;
  }
  budget_ = static_cast<int64_t>(2 * (live_ + changes.size()) + 65536);
  work_at_start_ = sequence_.work();
  bool ok = true;
  auto parent_slot_in_layout = [&](uint32_t pos) {
    return arrays_.parent[pos] == 0 ? kNoSlot : arrays_.slot[arrays_.parent[pos]];
  };
  // 1. Detach every laid-out slot that leaves the tree or changes parent. After this pass the
  //    layout tree agrees with the graph except for detached roots, so attaching them in any
  //    order cannot create a cycle (the graph's effective forest is acyclic).
  for (uint32_t s : changes) {
    const uint32_t pos = pos_of_slot_[s];
    if (pos == kNoPos) continue;
    if (!graph.is_node(s) || parent_slot_in_layout(pos) != graph.effective_parent(s)) {
      ok = ok && Detach(s);
      dirty.Mark(s);
    }
  }
  // 2. Slots that stopped being nodes are leaves now (their children changed parent too).
  for (uint32_t s : changes) {
    if (ok && pos_of_slot_[s] != kNoPos && !graph.is_node(s)) RemoveLeaf(s);
  }
  // 3. New nodes start as top-level singletons at the end of the sequence.
  for (uint32_t s : changes) {
    if (!ok || !graph.is_node(s) || pos_of_slot_[s] != kNoPos) continue;
    const uint32_t pos = AllocPosition(s, record_of_slot[s], ToLocalTrs(graph.transform(s)));
    sequence_.AppendPosition(pos);
    dirty.Mark(s);
  }
  // 4. Attach.
  for (uint32_t s : changes) {
    if (!ok) break;
    if (!graph.is_node(s)) continue;
    const uint32_t pos = pos_of_slot_[s];
    const uint32_t parent = graph.effective_parent(s);
    if (parent != kNoSlot && arrays_.parent[pos] == 0) ok = Attach(s, parent);
  }
  if (!ok) {
    Rebuild(graph, record_of_slot);
    dirty.MarkAll();
    return;
  }
  MaybeCompact(dirty.SweepAll(live_));
}

// ---- Compaction and rebuild ----

void PreorderLayout::MaybeCompact(bool full_sweep_due) {
  if (sequence_.num_pieces() <= 1 && dead_ == 0) return;
  // Hard limits (memory, and the worst case of a sweep).
  const std::size_t max_pieces =
      policy_.min_pieces + live_ / std::max<uint32_t>(1, policy_.min_piece_length);
  if (sequence_.num_pieces() > max_pieces || dead_ > policy_.min_pieces + live_ / 2) {
    Compact();
    return;
  }
  // Rent or buy: fragmentation only costs when computes walk across pieces. Compact once the
  // piece changes walked since the last compaction (plus those of a sweep about to run) would
  // have paid for copying the layout out.
  const uint64_t debt = fragment_debt_ + (full_sweep_due ? sequence_.num_pieces() - 1 : 0);
  if (debt > policy_.min_pieces + live_ / std::max<uint32_t>(1, policy_.compact_debt_divisor)) {
    Compact();
  }
}

void PreorderLayout::Compact() {
  // The sequence is already a valid preorder: copy it out in order (a streaming copy, no
  // search), reusing the previous arrays' memory. World matrices move with their entities,
  // so nothing is recomputed; every index changes (all_changed_, layout_version_).
  // A fragmented sequence has many short pieces at random places, so the copy is a gather
  // with a cache miss per piece and array, and slot -> position is a scatter: three passes keep
  // these misses overlapping instead of serial. 1. The runs in sequence order (only the piece
  // list is chased). 2. The per-position data, run by run, with the lines of run r + kAhead
  // prefetched; old parent positions are copied as they are. 3. In new order: parent
  // positions mapped through new_of_old, and pos_of_slot_, their targets prefetched ahead.
  const auto n = static_cast<uint32_t>(live_);
  PositionArrays& from = arrays_;
  PositionArrays& to = spare_;
  to.Resize(n + 1);
  // The old size array is read once per position in pass 2, right before its entry becomes
  // that position's new index: it holds new_of_old from then on (its line is already cached).
  AlignedVector<uint32_t>& new_of_old = from.size;
  std::vector<std::pair<uint32_t, uint32_t>>& runs = compact_runs_;
  runs.clear();
  sequence_.ForEachRun([&](uint32_t begin, uint32_t end) { runs.emplace_back(begin, end); });
  constexpr std::size_t kAhead = 8;
  auto prefetch_run = [&](uint32_t begin, uint32_t end) {
    const uint32_t stop = std::min(end, begin + 4);
    for (uint32_t i = begin; i < stop; ++i) PrefetchForRead(&from.world[i]);
    PrefetchForRead(&from.local[begin]);
    PrefetchForRead(&from.local[stop - 1]);
    PrefetchForRead(&from.record_ref[begin]);
    PrefetchForRead(&from.depth[begin]);
    PrefetchForWrite(&from.size[begin]);
    PrefetchForRead(&from.slot[begin]);
    PrefetchForRead(&from.parent[begin]);
  };
  for (std::size_t r = 0; r < std::min(kAhead, runs.size()); ++r) {
    prefetch_run(runs[r].first, runs[r].second);
  }
  // Raw pointers: the compiler cannot prove that the element stores leave the vectors' own
  // pointers alone, and would reload every array's address per position.
  glm::mat4* const to_world = to.world.data();
  LocalTrs* const to_local = to.local.data();
  uint32_t* const to_record_ref = to.record_ref.data();
  uint32_t* const to_depth = to.depth.data();
  uint32_t* const to_size = to.size.data();
  uint32_t* const to_slot = to.slot.data();
  uint32_t* const to_parent = to.parent.data();
  const glm::mat4* const from_world = from.world.data();
  const LocalTrs* const from_local = from.local.data();
  const uint32_t* const from_record_ref = from.record_ref.data();
  const uint32_t* const from_depth = from.depth.data();
  const uint32_t* const from_slot = from.slot.data();
  const uint32_t* const from_parent = from.parent.data();
  uint32_t* const from_size = new_of_old.data();
  uint32_t next = 1;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    if (r + kAhead < runs.size()) prefetch_run(runs[r + kAhead].first, runs[r + kAhead].second);
    for (uint32_t old = runs[r].first; old < runs[r].second; ++old, ++next) {
      to_world[next] = from_world[old];
      to_local[next] = from_local[old];
      to_record_ref[next] = from_record_ref[old];
      to_depth[next] = from_depth[old];
      to_size[next] = from_size[old];
      to_slot[next] = from_slot[old];
      to_parent[next] = from_parent[old];
      from_size[old] = next;  // new_of_old from here on
    }
  }
  new_of_old[0] = 0;  // the root stays at 0 (it is nobody's new index)
  constexpr uint32_t kScatterAhead = 32;
  for (uint32_t i = 1; i <= n; ++i) {
    if (i + kScatterAhead <= n) {
      PrefetchForRead(&new_of_old[to.parent[i + kScatterAhead]]);
      PrefetchForWrite(&pos_of_slot_[to.slot[i + kScatterAhead]]);
    }
    to.parent[i] = new_of_old[to.parent[i]];
    pos_of_slot_[to.slot[i]] = i;
  }
  arrays_.Swap(spare_);
  ++compactions_;
  Relaid(n);
}

void PreorderLayout::Rebuild(const SceneGraph& graph, std::span<const uint32_t> record_of_slot) {
  const auto num_slots = static_cast<uint32_t>(graph.num_slots());
  // Children lists (CSR) of the effective forest, in slot order.
  std::vector<uint32_t> offset(num_slots + 1, 0);
  std::vector<uint32_t> roots;
  for (uint32_t s = 0; s < num_slots; ++s) {
    if (!graph.is_node(s)) continue;
    const uint32_t p = graph.effective_parent(s);
    if (p == kNoSlot) {
      roots.push_back(s);
    } else {
      ++offset[p + 1];
    }
  }
  for (uint32_t s = 0; s < num_slots; ++s) offset[s + 1] += offset[s];
  std::vector<uint32_t> children(offset[num_slots]);
  {
    std::vector<uint32_t> fill(offset.begin(), offset.end() - 1);
    for (uint32_t s = 0; s < num_slots; ++s) {
      if (!graph.is_node(s)) continue;
      const uint32_t p = graph.effective_parent(s);
      if (p != kNoSlot) children[fill[p]++] = s;
    }
  }
  // Iterative preorder DFS.
  std::vector<uint32_t> order;
  order.reserve(graph.num_nodes());
  std::vector<uint32_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty()) {
    const uint32_t s = stack.back();
    stack.pop_back();
    order.push_back(s);
    for (uint32_t i = offset[s + 1]; i > offset[s]; --i) stack.push_back(children[i - 1]);
  }
  const auto n = static_cast<uint32_t>(order.size());

  // Fresh arrays (the old ones are read while these fill); world matrices and local TRS of
  // nodes already laid out move with them.
  PositionArrays fresh;
  fresh.Resize(n + 1);
  num_record_positions_ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t s = order[i];
    const uint32_t pos = i + 1;
    const uint32_t old = pos_of_slot_[s];
    if (old != kNoPos) {
      fresh.local[pos] = arrays_.local[old];
      fresh.world[pos] = arrays_.world[old];
    } else {
      fresh.local[pos] = ToLocalTrs(graph.transform(s));
      fresh.world[pos] = glm::mat4(1.0f);
    }
    fresh.slot[pos] = s;
    fresh.record_ref[pos] = record_of_slot[s] == kNoSlot ? 0 : record_of_slot[s] + 1;
    if (record_of_slot[s] != kNoSlot) ++num_record_positions_;
  }
  std::fill(pos_of_slot_.begin(), pos_of_slot_.end(), kNoPos);
  for (uint32_t i = 0; i < n; ++i) pos_of_slot_[order[i]] = i + 1;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t p = graph.effective_parent(order[i]);
    fresh.parent[i + 1] = p == kNoSlot ? 0 : pos_of_slot_[p];
    fresh.depth[i + 1] = fresh.depth[fresh.parent[i + 1]] + 1;  // the parent precedes in preorder
    fresh.size[i + 1] = 1;
  }
  for (uint32_t pos = n; pos >= 1; --pos) {
    if (fresh.parent[pos] != 0) fresh.size[fresh.parent[pos]] += fresh.size[pos];
  }
  arrays_ = std::move(fresh);
  depth_stale_ = false;
  live_ = n;
  built_ = true;
  ++rebuilds_;
  last_rebuild_ = true;
  Relaid(n);
}

void PreorderLayout::Relaid(uint32_t n) {
  sequence_.Reset(n);
  dead_ = 0;
  fragment_debt_ = 0;
  all_changed_ = true;
  ++layout_version_;
}

// ---- Checks ----

bool PreorderLayout::Check(const SceneGraph& graph) const {
  const std::size_t positions = arrays_.world.size();
  std::vector<uint32_t> seq_index(positions, kNoPos);
  const int64_t in_sequence = sequence_.Check(seq_index);
  if (in_sequence < 0 || static_cast<std::size_t>(in_sequence) != live_) return false;
  if (live_ != graph.num_nodes()) return false;
  std::vector<uint32_t> child_sum(positions, 0);
  std::size_t with_record = 0;
  for (uint32_t pos = 1; pos < positions; ++pos) {
    const uint32_t s = arrays_.slot[pos];
    if (s == kNoSlot) continue;
    if (arrays_.record_ref[pos] != 0) ++with_record;
    if (seq_index[pos] == kNoPos || !graph.is_node(s) || pos_of_slot_[s] != pos) return false;
    const uint32_t parent = arrays_.parent[pos];
    if (!depth_stale_ && arrays_.depth[pos] != arrays_.depth[parent] + 1) return false;
    const uint32_t eff = graph.effective_parent(s);
    if ((eff == kNoSlot) != (parent == 0)) return false;
    if (parent != 0) {
      if (arrays_.slot[parent] != eff) return false;
      // Preorder and contiguity: parent index < index < parent index + parent size.
      if (seq_index[parent] >= seq_index[pos]) return false;
      if (seq_index[pos] >= seq_index[parent] + arrays_.size[parent]) return false;
      child_sum[parent] += arrays_.size[pos];
    }
  }
  for (uint32_t pos = 1; pos < positions; ++pos) {
    if (arrays_.slot[pos] != kNoSlot && arrays_.size[pos] != 1 + child_sum[pos]) return false;
  }
  return with_record == num_record_positions_;
}

}  // namespace scenecrdt::runtime::internal
