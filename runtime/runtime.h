// SPDX-License-Identifier: Apache-2.0
// Owns Runtime: the facade a renderer or client replica uses. It joins the CRDT store
// (remote messages and local writes) and the TransformSystem (effective tree, pipeline,
// world matrices): merge bytes any time, call Update() once per frame, then read the world
// matrices and what changed. Single-threaded API (Update may use propagation helper threads,
// UpdateOptions); deterministic (no clocks, no sockets; bits independent of thread count).
//
// Beyond the Transform, it reads every other component's current value (the LWW payload, or
// the values of an APPEND_VALUE set) and lists the (entity, component) pairs each Update found
// changed, added or removed (docs/COMPONENTS.md).
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

// One (entity, component) pair of the component change lists.
struct ComponentRef {
  EntityId entity = 0;
  ComponentId component = 0;
  friend bool operator==(const ComponentRef&, const ComponentRef&) = default;
};

// What (entity, component) holds (docs/COMPONENTS.md).
enum class ComponentKind : uint8_t {
  kAbsent = 0,    // never set, DELETE_COMPONENT won, or the entity was deleted
  kValue = 1,     // a last-write-wins value: bytes()
  kGrowOnly = 2,  // an APPEND_VALUE set (and no LWW value): values
};

// A read of one component. Views into the store: valid until the next merge or local write.
struct ComponentView {
  ComponentKind kind = ComponentKind::kAbsent;
  // kGrowOnly: the set's values, ascending by (timestamp, bytes).
  std::span<const AppendElement> values;
  // kValue: the payload as the last winning PUT carried it (for the Transform, component 1,
  // its 44 wire bytes, re-encoded from the decoded register: the same bytes).
  std::span<const uint8_t> bytes() const {
    return is_transform ? std::span<const uint8_t>(transform_bytes) : data;
  }

  std::span<const uint8_t> data;  // kValue of a component other than the Transform
  bool is_transform = false;
  protocol::TransformBytes transform_bytes{};
};

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
  // Drops these entities from the replica without a tombstone (they left a partial replica's
  // view: docs/INTEREST.md); the next Update lists them as removed. Returns how many were held.
  std::size_t ForgetEntities(std::span<const EntityId> entities);

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

  // ---- Components (docs/COMPONENTS.md) ----
  // The current value of (entity, component), merged at once (before any Update), the
  // Transform included. An LWW value wins over an APPEND_VALUE set of the same key.
  ComponentView FindComponent(EntityId e, ComponentId c) const;
  // The LWW payload copied into `out` (replaced); false, `out` emptied, when there is none
  // (absent, or only a grow-only set).
  bool CopyComponent(EntityId e, ComponentId c, std::vector<uint8_t>& out) const;
  // Pairs whose component (other than the Transform: the entity lists above cover it) had a
  // state change between the previous Update and the last one, sorted by (entity, component),
  // each once. changed: has a value after the last Update (a new value, a grown set, or a
  // value that is new to it: added ones included). added: had no value at the previous Update,
  // has one now. removed: had one at the previous Update, has none now (DELETE_COMPONENT,
  // DELETE_ENTITY, a newer version of the entity).
  std::span<const ComponentRef> changed_components() const { return changed_components_; }
  std::span<const ComponentRef> added_components() const { return added_components_; }
  std::span<const ComponentRef> removed_components() const { return removed_components_; }

 private:
  // Hands the Transform changes merged since feed position `before` to the presentation as
  // untimed (shown at once).
  void NoteUntimedChanges(std::size_t before);
  // Turns the store's component feed into the three component lists (runtime_components.cc).
  void UpdateComponentLists();

  CrdtStore store_;
  TransformSystem transforms_;
  std::vector<EntityId> added_;
  std::vector<EntityId> removed_;
  std::vector<ComponentRef> changed_components_;
  std::vector<ComponentRef> added_components_;
  std::vector<ComponentRef> removed_components_;
  std::vector<ComponentChange> component_feed_;  // scratch of UpdateComponentLists
  std::unique_ptr<internal::Presentation> presentation_;
};

}  // namespace scenecrdt::runtime
