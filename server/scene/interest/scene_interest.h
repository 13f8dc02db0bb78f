// SPDX-License-Identifier: Apache-2.0
// Owns SceneInterest: a scene's interest management (docs/INTEREST.md) on its strand: the
// InterestIndex while the scene has interest members, the cell map that lets a fan-out visit
// only the members whose cells saw a change, the fan-out's changes decoded once and sliced for
// every interest member, and each interest member's frames (its view's snapshot at the join,
// then OutOfView notices and the Crdt frames of its view). Members without an interest never
// come here: they keep the scene's shared batches (scene.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/fan_out/frame_builder.h"
#include "scenecrdt/server/scene/fan_out/shared_compression.h"
#include "scenecrdt/server/scene/interest/change_ring.h"
#include "scenecrdt/server/scene/interest/interest_index.h"
#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/scene/rate_limit.h"
#include "scenecrdt/server/scene/scene_member_state.h"
#include "scenecrdt/server/scene/scene_sequences.h"

namespace scenecrdt::server {

class SceneInterest {
 public:
  // Everything referenced belongs to the scene `scene` names and outlives this object.
  SceneInterest(ServerContext& ctx, const std::string& scene, runtime::CrdtStore& store,
                const SceneSequences& sequences, FrameBuilder& frames,
                SharedCompression& compression, RateLimit& rate)
      : ctx_(ctx),
        scene_(scene),
        store_(store),
        sequences_(sequences),
        frames_(frames),
        compression_(compression),
        rate_(rate) {}
  SceneInterest(const SceneInterest&) = delete;
  SceneInterest& operator=(const SceneInterest&) = delete;

  // The index exists (the scene has interest members).
  bool active() const { return index_ != nullptr; }

  // The state frames of an interest member's join: the snapshot of `view` (the member is not
  // in the scene yet: Joined registers it).
  std::vector<SharedFrame> JoinSnapshot(MemberView& view, bool zstd);
  // `m`, holding a view, is a member of the scene now / is about to leave it.
  void Joined(MemberState& m);
  void Leaving(MemberState& m);
  // A joined, non-raw member's new interest (nullopt: none); the scene delivers next.
  void SetInterest(MemberState& m, const std::optional<InterestSpec>& interest);

  // Before a fan-out of (from, store sequence]: builds the shared changes and fills `visit`
  // with the ids of the interest members whose view or delivery may change, sorted and
  // unique (no allocation per member: the vector is the caller's to keep); false when every
  // one must be visited. Only while active().
  bool Visits(uint64_t from, std::vector<uint64_t>& visit);
  // Sends an interest member (m.view set) its view's changes, entering and leaving entities
  // if allowed; the bytes handed over (0: nothing sent).
  std::size_t Deliver(MemberState& m, int64_t now_ms);

 private:
  InterestIndex& EnsureIndex();
  void DropIndexIfUnused();
  // The index is brought up to the store (metrics: interest_index).
  void SyncIndex();
  // Keeps m's entry in cells_ at its view's current centre; `drop`: removes it.
  void RegisterCells(MemberState& m, bool drop = false);

  ServerContext& ctx_;
  const std::string& scene_;
  runtime::CrdtStore& store_;
  const SceneSequences& sequences_;
  FrameBuilder& frames_;
  SharedCompression& compression_;
  RateLimit& rate_;

  std::unique_ptr<InterestIndex> index_;
  std::size_t members_ = 0;  // interest members
  // The changes of the newest fan-outs, each decoded once: the newest is sliced for every
  // interest member at its `from` (while the store is still at its `to`), the others give a
  // member busy during them its catch-up (Gather into scratch_; else Build from the store).
  ChangeRing ring_;
  ChangeBatch scratch_;
  // One member's delivery, reused (dropped when a large one grew it).
  MemberView::Delivery delivery_;
  // Grid cell -> the interest members whose enter radius (R + hysteresis) overlaps it:
  // a fan-out visits only the members of the cells its changes touched (docs/INTEREST.md).
  std::unordered_map<uint64_t, std::vector<uint64_t>> cells_;
};

}  // namespace scenecrdt::server
