// SPDX-License-Identifier: Apache-2.0
// Owns Runtime: the facade a renderer or client replica uses. It joins the CRDT store
// (remote messages and local writes) and the TransformSystem (effective tree, pipeline,
// world matrices): merge bytes any time, call Update() once per frame, then read the world
// matrices and what changed. Single-threaded; deterministic (no clocks, no sockets).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::runtime {

class Runtime {
 public:
  explicit Runtime(StoreLimits limits = {});

  // ---- Remote CRDT traffic ----
  // Decodes and merges a DCL stream; Transform changes reach the world at the next Update().
  Result<MergeStats> ApplyCrdt(std::span<const uint8_t> bytes,
                               const protocol::DecodeOptions& options = {});
  // Same, reporting every message's outcome.
  template <class OnResult>
  Result<void> ApplyCrdt(std::span<const uint8_t> bytes, const protocol::DecodeOptions& options,
                         OnResult&& on_result) {
    return store_.MergeStream(bytes, options, on_result);
  }
  MergeResult ApplyMessage(const protocol::CrdtMessage& m) { return store_.Merge(m); }

  // ---- Local writes: merged here, the message to send appended to `out` ----
  Result<MergeOutcome> WriteTransform(EntityId e, const protocol::Transform& t,
                                      std::vector<uint8_t>& out) {
    return store_.WriteTransform(e, t, out);
  }
  Result<MergeOutcome> WriteComponent(EntityId e, ComponentId c, std::span<const uint8_t> data,
                                      std::vector<uint8_t>& out) {
    return store_.WriteComponent(e, c, data, out);
  }
  Result<MergeOutcome> WriteDeleteComponent(EntityId e, ComponentId c, std::vector<uint8_t>& out) {
    return store_.WriteDeleteComponent(e, c, out);
  }
  Result<MergeOutcome> WriteDeleteEntity(EntityId e, std::vector<uint8_t>& out) {
    return store_.WriteDeleteEntity(e, out);
  }

  // ---- Once per frame ----
  // Feeds the Transform changes merged since the last call to the TransformSystem, then
  // recomputes effective parents and dirty world matrices.
  void Update(const UpdateOptions& options = {});

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

 private:
  CrdtStore store_;
  TransformSystem transforms_;
};

}  // namespace scenecrdt::runtime
