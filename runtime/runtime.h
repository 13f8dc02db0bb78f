// SPDX-License-Identifier: Apache-2.0
// Owns Runtime: the facade a renderer or client replica uses. It joins the CRDT store
// (remote messages and local writes) and the TransformSystem (effective tree, pipeline,
// world matrices): merge bytes any time, call Update() once per frame, then read the world
// matrices and what changed. Single-threaded API (Update may use propagation helper threads,
// UpdateOptions); deterministic (no clocks, no sockets; bits independent of thread count).
//
// Optionally (EnableInterpolation, docs/INTERPOLATION.md) it also keeps an interpolated
// presentation: remote batches applied with their receive time are shown a short delay later,
// blended between updates, through a second TransformSystem; the exact replica is unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/interpolation.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::runtime {

namespace internal {
class Presentation;
}  // namespace internal

class Runtime {
 public:
  explicit Runtime(StoreLimits limits = {});
  ~Runtime();
  Runtime(Runtime&&) noexcept;
  Runtime& operator=(Runtime&&) noexcept;

  // ---- Remote CRDT traffic ----
  // Decodes and merges a DCL stream; Transform changes reach the world at the next Update().
  // With interpolation on, they reach the presentation at once (no time: no delay).
  Result<MergeStats> ApplyCrdt(std::span<const uint8_t> bytes,
                               const protocol::DecodeOptions& options = {});
  // Same, reporting every message's outcome.
  template <class OnResult>
  Result<void> ApplyCrdt(std::span<const uint8_t> bytes, const protocol::DecodeOptions& options,
                         OnResult&& on_result) {
    const std::size_t before = store_.transform_changes().size();
    Result<void> result = store_.MergeStream(bytes, options, on_result);
    NoteUntimedChanges(before);
    return result;
  }
  // One batch of live traffic with its arrival time: merged like ApplyCrdt, and shown by the
  // interpolated presentation at its (smoothed) receive time plus the delay. An empty batch is
  // a heartbeat (the stream is alive, nothing moved). kInvalidArgument, with nothing merged,
  // for a time outside kMaxTimeUs.
  Result<MergeStats> ApplyCrdt(std::span<const uint8_t> bytes, const BatchTime& time,
                               const protocol::DecodeOptions& options = {});
  MergeResult ApplyMessage(const protocol::CrdtMessage& m);

  // ---- Local writes: merged here, the message to send appended to `out` ----
  // The presentation shows them at its next update, without delay (the writer's own moves).
  Result<MergeOutcome> WriteTransform(EntityId e, const protocol::Transform& t,
                                      std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteComponent(EntityId e, ComponentId c, std::span<const uint8_t> data,
                                      std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteDeleteComponent(EntityId e, ComponentId c, std::vector<uint8_t>& out);
  Result<MergeOutcome> WriteDeleteEntity(EntityId e, std::vector<uint8_t>& out);

  // ---- Once per frame ----
  // Feeds the Transform changes merged since the last call to the TransformSystem, then
  // recomputes effective parents and dirty world matrices.
  void Update(const UpdateOptions& options = {});

  // ---- Interpolated presentation (docs/INTERPOLATION.md); off by default ----
  // Turns it on (every current Transform shown as it is), or changes the options of a running
  // one (its buffers and timeline kept). kInvalidArgument for options out of range.
  Result<void> EnableInterpolation(const InterpolationOptions& options = {});
  void DisableInterpolation();
  bool interpolation_enabled() const { return presentation_ != nullptr; }
  // Update(), then the presentation at `render_time_us` (the renderer's clock, the one receive
  // times use). Without interpolation: Update() alone. kInvalidArgument, doing nothing, for a
  // time outside kMaxTimeUs.
  Result<void> UpdateInterpolated(int64_t render_time_us, const UpdateOptions& options = {});
  // The presented scene: world matrices, IndexOf, Nodes, changed_entities... of the last
  // UpdateInterpolated. Local components shown in the presentation are attached here. Without
  // interpolation: the replica's TransformSystem.
  TransformSystem& interpolated();
  const TransformSystem& interpolated() const;
  std::span<const glm::mat4> interpolated_world_matrices() const {
    return interpolated().world_matrices();
  }
  std::optional<uint32_t> InterpolatedIndexOf(EntityId e) const {
    return interpolated().IndexOf(e);
  }
  std::span<const EntityId> interpolated_changed_entities() const {
    return interpolated().changed_entities();
  }
  // Entities whose Transform appeared in / left the presentation in the last update (without
  // interpolation: those of the last Update).
  std::span<const EntityId> interpolated_added_entities() const;
  std::span<const EntityId> interpolated_removed_entities() const;
  // Zeroes without interpolation.
  InterpolationStats interpolation_stats() const;

  // ---- Reads ----
  const CrdtStore& store() const { return store_; }
  // Local (non-replicated) components are attached here: transforms().SetRotationPivot(...).
  TransformSystem& transforms() { return transforms_; }
  const TransformSystem& transforms() const { return transforms_; }
  std::span<const glm::mat4> world_matrices() const { return transforms_.world_matrices(); }
  std::optional<uint32_t> IndexOf(EntityId e) const { return transforms_.IndexOf(e); }
  EntityId EffectiveParent(EntityId e) const { return transforms_.EffectiveParent(e); }
  bool IsParked(EntityId e) const { return transforms_.IsParked(e); }
  bool IsPlaceholder(EntityId e) const { return transforms_.IsPlaceholder(e); }
  std::span<const EntityId> changed_entities() const { return transforms_.changed_entities(); }
  // Entities that gained / lost their Transform in the last Update.
  std::span<const EntityId> added_entities() const { return added_; }
  std::span<const EntityId> removed_entities() const { return removed_; }

 private:
  // Hands the Transform changes merged since feed position `before` to the presentation as
  // untimed (shown at once).
  void NoteUntimedChanges(std::size_t before);

  CrdtStore store_;
  TransformSystem transforms_;
  std::vector<EntityId> added_;
  std::vector<EntityId> removed_;
  std::unique_ptr<internal::Presentation> presentation_;
};

}  // namespace scenecrdt::runtime
