// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's interest management (docs/INTEREST.md): the index's lifetime and
// per-flush sync, interest members' view snapshots, their deliveries (OutOfView, then the Crdt
// frames of their view) and their interest changes. Members without an interest never come
// here: they keep the shared batches of scene.cc.
#include <algorithm>
#include <chrono>

#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

InterestIndex& Scene::EnsureIndex() {
  if (!index_) {
    const auto started = std::chrono::steady_clock::now();
    index_ = std::make_unique<InterestIndex>(store_, ctx_.config().limits.interest_cell_m);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - started);
    ctx_.log().Write(LogLevel::kInfo, "interest", "scene=%s index=built entities=%zu us=%lld",
                     name_.c_str(), index_->size(), static_cast<long long>(us.count()));
  }
  return *index_;
}

void Scene::DropIndexIfUnused() {
  if (interest_members_ == 0 && index_) {
    index_.reset();
    std::vector<uint8_t>().swap(interest_scratch_);
  }
}

void Scene::SyncIndex() {
  const auto started = std::chrono::steady_clock::now();
  if (index_->Sync()) {
    ctx_.metrics().interest_index.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

std::vector<SharedFrame> Scene::ViewSnapshot(MemberView& view, bool zstd) {
  EnsureIndex();
  SyncIndex();
  const uint64_t seq = store_.sequence();
  std::vector<uint8_t> all;
  store_.ExportSnapshot(all);
  std::vector<uint8_t> dcl;
  view.Snapshot(*index_, all, dcl);
  Metrics::Add(ctx_.metrics().interest_snapshots);
  ctx_.metrics().interest_view_entities.Observe(view.size());
  std::vector<SharedFrame> frames =
      frames_.FromStream(dcl, sequences_.Wire(0), sequences_.Wire(seq), /*is_state=*/true);
  if (zstd) frames = compression_.Records(frames);
  return frames;
}

void Scene::SetInterest(uint64_t member_id, std::optional<InterestSpec> interest) {
  net::asio::post(strand_, [this, member_id, interest] {
    Member* m = FindMember(member_id);
    if (m == nullptr) {
      // A join still held for the shared log's load takes the interest with it.
      for (HeldJoin& j : held_joins_) {
        if (j.member && j.member->id() == member_id) j.interest = interest;
      }
      return;
    }
    if (m->raw) return;  // raw DCL cannot express "out of view" (docs/INTEREST.md)
    if (interest) {
      m->clear_interest = false;
      if (m->view) {
        m->view->SetSpec(*interest);
      } else {
        EnsureIndex();
        // Its client holds everything up to its cursor: the first delivery names what is
        // out of view.
        m->view = std::make_unique<MemberView>(*interest, /*holds_all=*/true);
        ++interest_members_;
      }
    } else if (m->view) {
      m->clear_interest = true;
    }
    Deliver(*m, NowMs());
  });
}

std::size_t Scene::DeliverInterest(Member& m, int64_t now_ms) {
  if (!m.ready) return 0;
  const uint64_t seq = store_.sequence();
  if (m.cursor >= seq && !m.view->dirty() && !m.clear_interest) return 0;
  if (!rate_.Allow(m.next_send_ms, now_ms)) return 0;
  Metrics& metrics = ctx_.metrics();
  std::vector<SharedFrame> frames;
  if (m.clear_interest) {
    // Back to everything: the whole state, merged over the partial replica (LWW makes it the
    // server's state). Then the shared batches again.
    frames = frames_.Envelope(store_, 0, sequences_.Wire(0), sequences_.Wire(seq), false);
    m.view.reset();
    m.clear_interest = false;
    --interest_members_;
    DropIndexIfUnused();
  } else {
    SyncIndex();
    interest_scratch_.clear();
    store_.ExportChangesSince(m.cursor, interest_scratch_);
    MemberView::Delivery d;
    m.view->Update(*index_, store_, interest_scratch_, m.cursor, m.own_changes, d);
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
    Metrics::Add(metrics.interest_leaves, d.leaving.size());
    metrics.interest_view_entities.Observe(m.view->size());
    if (interest_scratch_.capacity() > 4 * std::size_t{ctx_.config().limits.state_chunk_bytes}) {
      std::vector<uint8_t>().swap(interest_scratch_);
    }
  }
  m.cursor = seq;
  if (frames.empty()) return 0;  // nothing of its view changed: nothing in flight
  if (m.zstd) frames = compression_.Records(frames);
  std::size_t bytes = 0;
  for (const SharedFrame& f : frames) bytes += f->size();
  m.member->PostSceneFrames(std::move(frames));
  m.ready = false;
  m.busy_since_ms = now_ms;
  if (const int64_t next = rate_.Next(now_ms); next != 0) m.next_send_ms = next;
  return bytes;
}

}  // namespace scenecrdt::server
