// SPDX-License-Identifier: Apache-2.0
// Owns ChangeRing: the newest fan-out batches of a scene with interest members, kept so that a
// member that was busy during some fan-outs catches up from them (docs/INTEREST.md "Server
// work and bounds"): Gather() takes from each kept batch only the messages a member can need
// (tombstones, entities without a Transform, the entities its client holds) and keeps the
// newest message of each register, so a catch-up costs what the member holds times the
// batches it missed, not the scene's changes since its cursor. The gathered batch gives the
// member the same delivery as ChangeBatch::Build from its cursor would (ChangeRingTest).
// Memory: at most kMaxBatches batches and kMaxBytes of exported messages, plus their
// classification (about three times the messages' bytes again); a member behind further than
// the ring reaches rebuilds from the store.
// Used on the scene's strand only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_set>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene/interest/interest_index.h"
#include "scenecrdt/server/scene/interest/member_view.h"

namespace scenecrdt::server {

class ChangeRing {
 public:
  static constexpr std::size_t kMaxBatches = 512;
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 20;

  // Builds the batch of (from, store sequence] against `index` (synced) and keeps it as the
  // newest. Batches not contiguous with it (a gap) are dropped first; the oldest go while the
  // ring is over its bounds.
  const ChangeBatch& Push(const runtime::CrdtStore& store, const InterestIndex& index,
                          uint64_t from);
  // The newest batch, or null.
  const ChangeBatch* newest() const { return batches_.empty() ? nullptr : batches_.back().get(); }
  // The kept batches cover (from, to] exactly: one starts at `from` and the newest ends at `to`.
  bool Covers(uint64_t from, uint64_t to) const;
  // Fills `out` with the batch of (from, newest's to] for a member whose client holds `held`
  // (with Covers(from, ...) true; a client holding everything needs Build instead): every
  // tombstone, the messages of entities without a live Transform now, those of the held
  // entities, each register's newest message only, in the order of the store's export; its
  // gained and lost lists name every entity whose Transform was gained or lost in the range.
  void Gather(uint64_t from, const runtime::CrdtStore& store, const InterestIndex& index,
              const MemberView::View& held, ChangeBatch& out);
  void Clear();
  std::size_t size() const { return batches_.size(); }

 private:
  // The position of the batch starting at `from`, or batches_.size().
  std::size_t Find(uint64_t from) const;

  std::deque<std::unique_ptr<ChangeBatch>> batches_;  // oldest first, contiguous
  std::size_t bytes_ = 0;                             // their streams
  std::unique_ptr<ChangeBatch> spare_;                // an evicted batch, reused by Push
  // Gather's scratch (kept between calls).
  struct Pick {
    uint32_t batch = 0;
    uint32_t msg = 0;
  };
  std::vector<Pick> picks_;
  // Registers (entity << 32 | component) and tombstoned entity numbers seen in a newer batch,
  // and those of the batch being read.
  std::unordered_set<uint64_t> newer_;
  std::unordered_set<uint32_t> newer_tombstones_;
  std::vector<uint64_t> batch_keys_;
  std::vector<uint32_t> batch_tombstones_;
  std::vector<protocol::EntityId> candidates_;
};

}  // namespace scenecrdt::server
