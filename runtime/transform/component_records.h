// SPDX-License-Identifier: Apache-2.0
// Owns ComponentRecord, the local (non-replicated) components of one entity as TransformSystem
// keeps them, and ComputeInputs, what an update's compute reads of TransformSystem. Records are
// dense and addressed by a record id; an entity without local components has none.
#pragma once

#include <cstdint>
#include <span>

#include "scenecrdt/runtime/pipeline.h"
#include "scenecrdt/runtime/scene_graph.h"

namespace scenecrdt::runtime::internal {

// The local components of one entity plus the bookkeeping of its Static freeze.
struct ComponentRecord {
  LocalComponents components;
  uint32_t slot = kNoSlot;       // the entity's scene-graph slot (kNoSlot: the record is free)
  bool frozen = false;           // Static and computed since its inputs last changed
  uint64_t computed_update = 0;  // update number of the last computation (Static only)
};

// Read-only inputs of an update's compute (the records are written only to freeze Statics).
struct ComputeInputs {
  const SceneGraph* graph = nullptr;
  std::span<ComponentRecord> records;        // indexed by record id
  std::span<const uint32_t> record_of_slot;  // kNoSlot when none
  uint64_t update_number = 0;
};

}  // namespace scenecrdt::runtime::internal
