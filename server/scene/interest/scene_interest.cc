// SPDX-License-Identifier: Apache-2.0
// Owns SceneInterest's work on the scene strand (docs/INTEREST.md): the index's lifetime and
// per-flush sync, interest members' view snapshots, their deliveries (OutOfView, then the Crdt
// frames of their view) and their interest changes.
#include "scenecrdt/server/scene/interest/scene_interest.h"

#include <algorithm>
#include <chrono>

namespace scenecrdt::server {

InterestIndex& SceneInterest::EnsureIndex() {
  if (!index_) {
    const auto started = std::chrono::steady_clock::now();
    index_ = std::make_unique<InterestIndex>(store_, ctx_.config().limits.interest_cell_m);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started);
    ctx_.log().Write(LogLevel::kInfo, "interest", "scene=%s index=built entities=%zu us=%lld",
                     scene_.c_str(), index_->size(), static_cast<long long>(us.count()));
  }
  return *index_;
}

void SceneInterest::DropIndexIfUnused() {
  if (members_ == 0 && index_) {
    index_.reset();
    ring_ = ChangeRing();
    scratch_ = ChangeBatch();
    cells_.clear();
  }
}

void SceneInterest::SyncIndex() {
  const auto started = std::chrono::steady_clock::now();
  if (index_->Sync()) {
    ctx_.metrics().interest_index.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

std::vector<SharedFrame> SceneInterest::JoinSnapshot(MemberView& view, bool zstd) {
  EnsureIndex();
  SyncIndex();
  const uint64_t seq = store_.sequence();
  std::vector<uint8_t> all;
  store_.ExportSnapshot(all);
  std::vector<uint8_t> dcl;
  view.Snapshot(*index_, all, dcl);
  // The member is not in the scene yet: Joined registers its cells.
  Metrics::Add(ctx_.metrics().interest_snapshots);
  ctx_.metrics().interest_view_entities.Observe(view.size());
  std::vector<SharedFrame> frames =
      frames_.FromStream(dcl, sequences_.Wire(0), sequences_.Wire(seq), /*is_state=*/true);
  if (zstd) frames = compression_.Records(frames);
  return frames;
}

void SceneInterest::Joined(MemberState& m) {
  ++members_;
  RegisterCells(m);
}

void SceneInterest::Leaving(MemberState& m) {
  RegisterCells(m, /*drop=*/true);
  --members_;
  DropIndexIfUnused();
}

void SceneInterest::SetInterest(MemberState& m, const std::optional<InterestSpec>& interest) {
  if (interest) {
    m.clear_interest = false;
    if (m.view) {
      m.view->SetSpec(*interest);
    } else {
      EnsureIndex();
      // Its client holds everything up to its cursor: the first delivery names what is
      // out of view.
      m.view = std::make_unique<MemberView>(*interest, /*holds_all=*/true);
      ++members_;
    }
  } else if (m.view) {
    m.clear_interest = true;
  }
}

std::size_t SceneInterest::Deliver(MemberState& m, int64_t now_ms) {
  if (!m.ready) return 0;
  const uint64_t seq = store_.sequence();
  ByteBudget* budget = m.view->budget();
  if (const double kbps = ctx_.config().limits.client_budget_kbps; kbps > 0 && !budget) {
    m.view->SetBudget(ByteBudget(kbps, now_ms));
    budget = m.view->budget();
  }
  if (budget) budget->Refill(now_ms);
  if (m.cursor >= seq && !m.view->dirty() && !m.clear_interest) return 0;
  if (!rate_.Allow(m.next_send_ms, now_ms)) return 0;
  // Deferred changes alone wait until the bucket holds half a burst (docs/INTEREST.md "Byte
  // budget"); the rate timer wakes the scene then.
  if (budget && m.cursor >= seq && m.view->only_deferred() && !m.clear_interest &&
      !budget->Ready()) {
    rate_.WakeAt(budget->ReadyAt(now_ms));
    return 0;
  }
  Metrics& metrics = ctx_.metrics();
  std::vector<SharedFrame> frames;
  if (m.clear_interest) {
    // Back to everything: the whole state, merged over the partial replica (LWW makes it the
    // server's state). Then the shared batches again.
    frames = frames_.Envelope(store_, 0, sequences_.Wire(0), sequences_.Wire(seq), false);
    RegisterCells(m, /*drop=*/true);
    m.view.reset();
    m.clear_interest = false;
    --members_;
    DropIndexIfUnused();
  } else {
    SyncIndex();
    // Up to date with the last fan-out: its slice of the shared batch. Busy during the last
    // fan-outs: a catch-up gathered from their batches (what its client holds). Further
    // behind, or under a byte budget (it slices the whole batch): its own from the store.
    const ChangeBatch* changes = ring_.newest();
    if (!changes || changes->from != m.cursor || changes->to != seq) {
      if (!budget && !m.view->holds_all() && ring_.Covers(m.cursor, seq)) {
        ring_.Gather(m.cursor, store_, *index_, m.view->view(), scratch_);
        Metrics::Add(metrics.interest_catchups_gathered);
      } else {
        scratch_.Build(store_, *index_, m.cursor);
        Metrics::Add(metrics.interest_catchups_rebuilt);
      }
      changes = &scratch_;
    }
    MemberView::Delivery& d = delivery_;  // its vectors kept between deliveries
    d.dcl.clear();
    d.leaving.clear();
    d.entering = 0;
    d.deferred = 0;
    m.view->Update(*index_, store_, *changes, m.own_changes, d);
    RegisterCells(m);
    for (std::size_t at = 0; at < d.leaving.size(); at += session::kMaxOutOfViewEntities) {
      session::OutOfView notice;
      notice.scene_sequence = sequences_.Wire(seq);
      const std::size_t end = std::min(d.leaving.size(), at + session::kMaxOutOfViewEntities);
      notice.entities.assign(d.leaving.begin() + static_cast<std::ptrdiff_t>(at),
                             d.leaving.begin() + static_cast<std::ptrdiff_t>(end));
      frames.push_back(MakeShared(session::BuildFrame(notice)));
      Metrics::Add(metrics.interest_notices);
    }
    if (!d.dcl.empty()) {
      std::vector<SharedFrame> crdt =
          frames_.FromStream(d.dcl, sequences_.Wire(m.cursor), sequences_.Wire(seq), false);
      frames.insert(frames.end(), crdt.begin(), crdt.end());
    }
    Metrics::Add(metrics.interest_enters, d.entering);
    Metrics::Add(metrics.interest_deferred, d.deferred);
    Metrics::Add(metrics.interest_leaves, d.leaving.size());
    metrics.interest_view_entities.Observe(m.view->size());
    if (scratch_.stream.capacity() > 4 * std::size_t{ctx_.config().limits.state_chunk_bytes}) {
      scratch_ = ChangeBatch();
    }
    if (d.dcl.capacity() > 4 * std::size_t{ctx_.config().limits.state_chunk_bytes}) {
      d = MemberView::Delivery();
    }
  }
  m.cursor = seq;
  if (m.zstd && !frames.empty()) frames = compression_.Records(frames);
  std::size_t bytes = 0;
  for (const SharedFrame& f : frames) bytes += f->size();
  if (budget && m.view) {
    budget->Spend(bytes);
    if (m.view->deferred() != 0) rate_.WakeAt(budget->ReadyAt(now_ms));
  }
  if (frames.empty()) return 0;  // nothing of its view changed: nothing in flight
  m.member->PostSceneFrames(std::move(frames));
  m.ready = false;
  m.busy_since_ms = now_ms;
  if (const int64_t next = rate_.Next(now_ms); next != 0) m.next_send_ms = next;
  return bytes;
}

void SceneInterest::RegisterCells(MemberState& m, bool drop) {
  // A member registered under more cells than this is visited every fan-out instead (a
  // radius far above the cell size): the map stays bounded by members x this.
  constexpr double kMaxRegisteredCells = 4096;
  MemberView& v = *m.view;
  InterestIndex::CellRect rect;
  bool all = false;
  if (!drop && index_ && v.center()) {
    rect = index_->RectNear(*v.center(), v.spec().radius + v.spec().hysteresis);
    if (rect.count() > kMaxRegisteredCells) {
      rect = InterestIndex::CellRect();
      all = true;
    }
  }
  v.registered_all = all;
  if (rect == v.registered) return;
  const auto each = [](const InterestIndex::CellRect& r, auto&& f) {
    for (int64_t x = r.x0; x <= r.x1; ++x) {
      for (int64_t z = r.z0; z <= r.z1; ++z) f(InterestIndex::Key(x, z));
    }
  };
  each(v.registered, [&](uint64_t key) {
    const auto it = cells_.find(key);
    if (it == cells_.end()) return;
    std::erase(it->second, m.id);
    if (it->second.empty()) cells_.erase(it);
  });
  each(rect, [&](uint64_t key) { cells_[key].push_back(m.id); });
  v.registered = rect;
}

bool SceneInterest::Visits(uint64_t from, std::vector<uint64_t>& visit) {
  visit.clear();
  SyncIndex();
  const ChangeBatch& shared = ring_.Push(store_, *index_, from);
  // Entities placed, moved or removed (old and new cells), and every entity with a message:
  // each cell once, however many of its entities changed.
  std::vector<uint64_t> touched(index_->touched_cells().begin(), index_->touched_cells().end());
  index_->ClearTouched();
  for (const auto& kv : shared.by_entity) {
    if (const std::optional<uint64_t> cell = index_->CellOf(kv.first)) touched.push_back(*cell);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  const auto compact = [&visit] {
    std::sort(visit.begin(), visit.end());
    visit.erase(std::unique(visit.begin(), visit.end()), visit.end());
  };
  for (const uint64_t cell : touched) {
    const auto it = cells_.find(cell);
    if (it == cells_.end()) continue;
    visit.insert(visit.end(), it->second.begin(), it->second.end());
    // A member registered under many touched cells is listed once per cell: compacted as it
    // goes, the list stays within about twice the interest members.
    if (visit.size() > 2 * members_ + 64) compact();
  }
  compact();
  return !shared.TouchesAll();
}

}  // namespace scenecrdt::server
