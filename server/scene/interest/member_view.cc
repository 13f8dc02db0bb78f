// SPDX-License-Identifier: Apache-2.0
// Owns an interest member's view computation and the filtering of its deliveries.
#include "scenecrdt/server/scene/interest/member_view.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "scenecrdt/protocol/crdt_codec.h"

namespace scenecrdt::server {

namespace {

bool Finite(float v) { return std::isfinite(v); }

}  // namespace

Result<InterestSpec> ResolveInterest(const session::SetInterest& s, double max_radius,
                                     bool& clamped) {
  clamped = false;
  InterestSpec spec;
  spec.mode = s.mode;
  if (s.mode == session::InterestMode::kNone) return spec;
  if (!Finite(s.radius) || s.radius < 0) {
    return MakeError(ErrorCode::kInvalidInterest, "interest radius must be finite and >= 0");
  }
  if (s.mode == session::InterestMode::kPoint &&
      (!Finite(s.center_x) || !Finite(s.center_y) || !Finite(s.center_z))) {
    return MakeError(ErrorCode::kInvalidInterest, "interest centre must be finite");
  }
  if (s.hysteresis && (!Finite(*s.hysteresis) || *s.hysteresis < 0)) {
    return MakeError(ErrorCode::kInvalidInterest, "interest hysteresis must be finite and >= 0");
  }
  spec.center = glm::vec3(s.center_x, s.center_y, s.center_z);
  spec.follow = s.follow_entity;
  spec.radius = s.radius;
  if (spec.radius > max_radius) {
    spec.radius = max_radius;
    clamped = true;
  }
  spec.hysteresis =
      s.hysteresis ? static_cast<double>(*s.hysteresis) : std::max(1.0, 0.1 * spec.radius);
  spec.hysteresis = std::min(spec.hysteresis, max_radius);
  return spec;
}

template <class Keep>
void MemberView::Filter(std::span<const uint8_t> stream, Keep&& keep, std::vector<uint8_t>& out) {
  std::size_t pos = 0;
  // The store's own export: it decodes (a fault would stop the copy where it is).
  (void)protocol::DecodeStream(stream, {}, [&](const protocol::CrdtMessage& m) {
    const std::size_t size = protocol::EncodedSize(m);
    if (m.type == protocol::MessageType::kDeleteEntity || keep(m.entity)) {
      out.insert(out.end(), stream.begin() + static_cast<std::ptrdiff_t>(pos),
                 stream.begin() + static_cast<std::ptrdiff_t>(pos + size));
    }
    pos += size;
  });
}

void MemberView::Recompute(const InterestIndex& index, View& next) const {
  next.clear();
  std::optional<glm::vec3> center;
  if (spec_.mode == session::InterestMode::kPoint) center = spec_.center;
  if (spec_.mode == session::InterestMode::kFollow) center = index.Position(spec_.follow);
  if (!center) return;  // following an entity without a Transform: an empty view
  const double outer = spec_.radius + spec_.hysteresis;
  std::vector<protocol::EntityId> core;
  index.ForEachNear(*center, outer, [&](protocol::EntityId e, const glm::vec3& p) {
    bool in = WithinRadius(*center, p, spec_.radius);
    if (!in && spec_.hysteresis > 0) {
      in = view_.Get(e) == View::kCore && WithinRadius(*center, p, outer);
    }
    if (in) {
      next.Insert(e, true);
      core.push_back(e);
    }
  });
  AddClosure(index, core, next, nullptr);
}

void ChangeBatch::Build(const runtime::CrdtStore& store, const InterestIndex& index,
                        uint64_t from_seq) {
  from = from_seq;
  to = store.sequence();
  stream.clear();
  msgs.clear();
  store.ExportChangesSince(from, stream);
  std::size_t pos = 0;
  // The store's own export: it decodes (a fault would stop the walk where it is).
  (void)protocol::DecodeStream(stream, {}, [&](const protocol::CrdtMessage& m) {
    const std::size_t size = protocol::EncodedSize(m);
    msgs.push_back({static_cast<uint32_t>(pos), static_cast<uint32_t>(size), m.entity, m.component,
                    m.type == protocol::MessageType::kDeleteEntity});
    pos += size;
  });
  Classify(index);
}

void ChangeBatch::Classify(const InterestIndex& index, bool transform_changes) {
  by_entity.clear();
  by_cell.clear();
  everyone.clear();
  gained.clear();
  lost.clear();
  for (uint32_t at = 0; at < msgs.size(); ++at) {
    const Msg& m = msgs[at];
    const bool has_transform = index.HasTransform(m.entity);
    if (m.tombstone || !has_transform) {
      everyone.push_back(at);
    } else {
      by_entity[m.entity].push_back(at);
    }
    if (!transform_changes || m.component != protocol::kTransformComponentId || m.tombstone) {
      continue;
    }
    if (!has_transform) {
      lost.push_back(m.entity);
    } else if (index.GainedAt(m.entity) > from) {
      gained.push_back(m.entity);
    }
  }
  by_cell.reserve(by_entity.size());
  for (const auto& [e, at] : by_entity) {
    by_cell.push_back({index.CellOf(e).value_or(InterestIndex::kNoCell), e, &at});
  }
  std::sort(by_cell.begin(), by_cell.end(), [](const CellEntity& a, const CellEntity& b) {
    return a.cell != b.cell ? a.cell < b.cell : a.entity < b.entity;
  });
}

void MemberView::Update(const InterestIndex& index, const runtime::CrdtStore& store,
                        const ChangeBatch& changes, bool own_changes, Delivery& out) {
  ViewChange& change = change_;
  change.added.clear();
  change.removed.clear();
  Refresh(index, change);
  const View& next = view_;
  const auto has = [](std::span<const protocol::EntityId> sorted, protocol::EntityId e) {
    return std::binary_search(sorted.begin(), sorted.end(), e);
  };
  // Whether the client held `e` before this update.
  const auto held_before = [&](protocol::EntityId e) {
    if (holds_all_ || has(change.removed, e)) return true;
    return next.contains(e) && !has(change.added, e);
  };
  std::vector<protocol::EntityId>& leaving = leaving_;
  std::vector<protocol::EntityId>& entering = entering_;
  leaving.clear();
  entering.clear();
  // 1. Held with a Transform before, not now (or purged without a tombstone: retired by a
  //    newer version, which the client would not hear of).
  if (holds_all_) {
    index.ForEach([&](protocol::EntityId e) {
      if (!next.contains(e)) leaving.push_back(e);
    });
  } else {
    for (const protocol::EntityId e : change.removed) {
      if (index.HasTransform(e) || !store.HoldsEntity(e)) leaving.push_back(e);
    }
  }
  // 2. Entities whose Transform register changed since the cursor: one that gained a
  //    Transform out of view was held (no Transform) and must go; one that lost it is held
  //    now and is sent whole unless it was in view.
  for (const protocol::EntityId e : changes.gained) {
    if (!held_before(e) && !next.contains(e)) leaving.push_back(e);
  }
  for (const protocol::EntityId e : changes.lost) {
    if (!held_before(e)) entering.push_back(e);
  }
  // 3. The member's own writes of entities it does not hold.
  for (const protocol::EntityId e : written_) {
    if (index.HasTransform(e) && !next.contains(e)) leaving.push_back(e);
  }
  written_.clear();
  std::sort(leaving.begin(), leaving.end());
  leaving.erase(std::unique(leaving.begin(), leaving.end()), leaving.end());
  // 4. New in the view: sent whole.
  entering.insert(entering.end(), change.added.begin(), change.added.end());
  // 5. Deferred entities (a byte budget) out of the view now: leaving, or held by everyone
  //    (their Transform is gone): their whole state goes now.
  for (auto it = deferred_.begin(); it != deferred_.end();) {
    const protocol::EntityId e = it->first;
    if (next.contains(e)) {
      ++it;
      continue;
    }
    if (!has(leaving, e) && store.HoldsEntity(e)) entering.push_back(e);
    it = deferred_.erase(it);
  }
  // Whole states go in entity order (the same bytes whichever way the view was updated).
  std::sort(entering.begin(), entering.end());
  entering.erase(std::unique(entering.begin(), entering.end()), entering.end());
  std::vector<uint32_t>& picked = picked_;
  picked.clear();
  if (!own_changes) {
    // The slice of the batch this member holds, in the batch's order: tombstones and
    // entities without a Transform (unless entering), then the held entities' messages.
    for (const uint32_t i : changes.everyone) {
      const ChangeBatch::Msg& msg = changes.msgs[i];
      // An entering entity without a Transform is sent whole below: not its changes.
      if (msg.tombstone || entering.empty() || !has(entering, msg.entity)) picked.push_back(i);
    }
  }
  std::vector<uint8_t>& whole = whole_;
  whole.clear();
  if (budget_) {
    // Everything to everyone, and entering entities without a Transform, go regardless.
    std::size_t mandatory = 0;
    for (const uint32_t i : picked) mandatory += changes.msgs[i].size;
    for (const protocol::EntityId e : entering) {
      if (!index.HasTransform(e)) store.ExportEntity(e, whole);
    }
    mandatory += whole.size();
    Budgeted(index, store, changes, own_changes, next, entering, mandatory, picked, whole, out);
  } else {
    if (!own_changes) TakeHeld(index, changes, entering, picked);
    for (const protocol::EntityId e : entering) store.ExportEntity(e, whole);
  }
  std::sort(picked.begin(), picked.end());
  for (const uint32_t i : picked) {
    const ChangeBatch::Msg& msg = changes.msgs[i];
    const auto begin = changes.stream.begin() + static_cast<std::ptrdiff_t>(msg.offset);
    out.dcl.insert(out.dcl.end(), begin, begin + static_cast<std::ptrdiff_t>(msg.size));
  }
  out.dcl.insert(out.dcl.end(), whole.begin(), whole.end());
  out.entering = entering.size();
  out.leaving.assign(leaving.begin(), leaving.end());
  holds_all_ = false;
  dirty_ = false;
  // The scratch stays for the next update unless a large delivery grew it: what a member
  // keeps between updates is bounded (docs/INTEREST.md "Server work and bounds").
  constexpr std::size_t kKeepScratch = 256;
  const auto trim = [](auto& v) {
    if (v.capacity() > kKeepScratch) {
      v.clear();
      v.shrink_to_fit();
    }
  };
  trim(picked_);
  trim(whole_);
  trim(leaving_);
  trim(entering_);
  trim(change_.added);
  trim(change_.removed);
  trim(advance_.candidates);
  trim(advance_.enter_core);
  trim(advance_.leave_core);
}

void MemberView::TakeHeld(const InterestIndex& index, const ChangeBatch& changes,
                          std::span<const protocol::EntityId> entering,
                          std::vector<uint32_t>& picked) {
  const auto take = [&](protocol::EntityId e, const std::vector<uint32_t>& at) {
    if (!entering.empty() && std::binary_search(entering.begin(), entering.end(), e)) return;
    picked.insert(picked.end(), at.begin(), at.end());
  };
  if (!incremental_ || !center_) {
    // The reference: every entity of the view or of the batch, whichever is smaller.
    if (view_.size() < changes.by_entity.size()) {
      view_.ForEach([&](protocol::EntityId e, bool) {
        const auto it = changes.by_entity.find(e);
        if (it != changes.by_entity.end()) take(e, it->second);
      });
    } else {
      for (const auto& kv : changes.by_entity) {
        if (view_.contains(kv.first)) take(kv.first, kv.second);
      }
    }
    return;
  }
  if (view_.empty() || changes.by_cell.empty()) return;
  // Every core entity is within the outer radius of the centre, so in a cell of this rect
  // ("Cell rectangle" in docs/INTEREST.md); the view's other entities may be anywhere.
  const InterestIndex::CellRect rect = index.RectNear(*center_, spec_.radius + spec_.hysteresis);
  using CellEntity = ChangeBatch::CellEntity;
  const auto in_rect = [&](const CellEntity& c) {
    if (view_.contains(c.entity)) take(c.entity, *c.msgs);
  };
  const auto columns = static_cast<std::size_t>(rect.x1 - rect.x0 + 1);
  if (columns * 16 >= changes.by_cell.size()) {
    for (const CellEntity& c : changes.by_cell) {
      if (rect.Contains(c.cell)) in_rect(c);
    }
  } else {
    for (int64_t x = rect.x0; x <= rect.x1; ++x) {
      const uint64_t lo = InterestIndex::Key(x, rect.z0);
      const uint64_t hi = InterestIndex::Key(x, rect.z1);
      auto it = std::lower_bound(changes.by_cell.begin(), changes.by_cell.end(), lo,
                                 [](const CellEntity& c, uint64_t key) { return c.cell < key; });
      for (; it != changes.by_cell.end() && it->cell <= hi; ++it) in_rect(*it);
    }
  }
  if (far_ == 0) return;
  for (const protocol::EntityId e : FarList()) {
    const std::optional<uint64_t> cell = index.CellOf(e);
    if (cell && rect.Contains(*cell)) continue;  // taken above
    const auto it = changes.by_entity.find(e);
    if (it != changes.by_entity.end()) take(e, it->second);
  }
}

const std::vector<protocol::EntityId>& MemberView::FarList() {
  if (!far_list_valid_) {
    far_list_.clear();
    view_.ForEach([&](protocol::EntityId e, bool core) {
      if (!core) far_list_.push_back(e);
    });
    far_list_valid_ = true;
  }
  return far_list_;
}

void MemberView::Snapshot(const InterestIndex& index, std::span<const uint8_t> snapshot,
                          std::vector<uint8_t>& out) {
  View& next = next_;
  view_.clear();
  Recompute(index, next);
  Filter(
      snapshot, [&](protocol::EntityId e) { return !index.HasTransform(e) || next.contains(e); },
      out);
  view_.swap(next);
  Settle(index);
  ++full_updates_;
  written_.clear();
  deferred_.clear();
  holds_all_ = false;
  dirty_ = false;
}

std::optional<glm::vec3> MemberView::CenterNow(const InterestIndex& index) const {
  if (spec_.mode == session::InterestMode::kPoint) return spec_.center;
  if (spec_.mode == session::InterestMode::kFollow) return index.Position(spec_.follow);
  return std::nullopt;
}

void MemberView::Budgeted(const InterestIndex& index, const runtime::CrdtStore& store,
                          const ChangeBatch& changes, bool own_changes, const View& next,
                          std::span<const protocol::EntityId> entering, std::size_t mandatory,
                          std::vector<uint32_t>& picked, std::vector<uint8_t>& whole,
                          Delivery& out) {
  struct Pending {
    protocol::EntityId entity = 0;
    uint32_t age = 0;                             // deliveries deferred so far
    double distance2 = 0;                         // from the centre
    const std::vector<uint32_t>* msgs = nullptr;  // its batch messages; null: its whole state
  };
  std::vector<Pending> pending;
  const std::optional<glm::vec3> center = CenterNow(index);
  const auto is_entering = [&](protocol::EntityId e) {
    return std::binary_search(entering.begin(), entering.end(), e);
  };
  const auto add = [&](protocol::EntityId e, const std::vector<uint32_t>* msgs) {
    Pending p{e, 0, 0, msgs};
    if (const auto it = deferred_.find(e); it != deferred_.end()) {
      p.age = it->second;
      p.msgs = nullptr;  // coalesced: its newest whole state
    }
    if (const std::optional<glm::vec3> at = index.Position(e); at && center) {
      const glm::vec3 d = *at - *center;
      p.distance2 = static_cast<double>(d.x) * d.x + static_cast<double>(d.y) * d.y +
                    static_cast<double>(d.z) * d.z;
    }
    pending.push_back(p);
  };
  // Held entities with changes (their own ones are not echoed), entering entities with a
  // Transform, and the deferred ones (in the view: step 5 of Update dropped the others).
  if (!own_changes) {
    for (const auto& [e, at] : changes.by_entity) {
      if (next.contains(e) && !is_entering(e) && deferred_.count(e) == 0) add(e, &at);
    }
  }
  for (const protocol::EntityId e : entering) {
    if (index.HasTransform(e) && deferred_.count(e) == 0) add(e, nullptr);
  }
  for (const auto& kv : deferred_) add(kv.first, nullptr);
  // Entities deferred kMaxDeferrals times first (oldest first), then the nearest first.
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    const bool old_a = a.age >= kMaxDeferrals;
    const bool old_b = b.age >= kMaxDeferrals;
    if (old_a != old_b) return old_a;
    if (old_a && a.age != b.age) return a.age > b.age;
    if (!old_a && a.distance2 != b.distance2) return a.distance2 < b.distance2;
    return a.entity < b.entity;
  });
  // What fits; the first one goes whenever the bucket is positive (a debt of one entity at
  // most, paid back before the next one goes).
  const double room = budget_->available() - static_cast<double>(mandatory);
  double spent = 0;
  for (const Pending& p : pending) {
    std::size_t cost = 0;
    const std::size_t mark = whole.size();
    if (p.msgs) {
      for (const uint32_t i : *p.msgs) cost += changes.msgs[i].size;
    } else {
      store.ExportEntity(p.entity, whole);
      cost = whole.size() - mark;
    }
    const bool fits = spent + static_cast<double>(cost) <= room || (spent == 0 && room > 0);
    if (fits) {
      spent += static_cast<double>(cost);
      if (p.msgs) picked.insert(picked.end(), p.msgs->begin(), p.msgs->end());
      deferred_.erase(p.entity);
      continue;
    }
    whole.resize(mark);
    ++deferred_[p.entity];
    ++out.deferred;
  }
}

void MemberView::Settle(const InterestIndex& index) {
  center_.reset();
  if (spec_.mode == session::InterestMode::kPoint) center_ = spec_.center;
  if (spec_.mode == session::InterestMode::kFollow) center_ = index.Position(spec_.follow);
  far_ = 0;
  view_.ForEach([&](protocol::EntityId, bool core) { far_ += core ? 0 : 1; });
  far_list_valid_ = false;
  seen_version_ = index.version();
  spec_changed_ = false;
}

}  // namespace scenecrdt::server
