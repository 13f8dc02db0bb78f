// SPDX-License-Identifier: Apache-2.0
// Owns the bulk copies from a TransformSystem into caller arrays, shared by the replica and
// the interpolated reads: the size checks (docs/C-ABI.md, "Bulk copies") and the matrix
// layout (16 column-major floats per entity, the bits of world_matrices()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::capi::internal {

// Every node, sorted by entity id, with its world matrix.
int CopyWorld(const runtime::TransformSystem& ts, uint32_t* entities, float* matrices,
              std::size_t capacity, std::size_t* count, const char* function);
// The ids of `list`.
int CopyEntities(std::span<const protocol::EntityId> list, uint32_t* entities, std::size_t capacity,
                 std::size_t* count, const char* function);
// The entities of `list` (nodes of `ts`) with their world matrices.
int CopyEntitiesWorld(const runtime::TransformSystem& ts, std::span<const protocol::EntityId> list,
                      uint32_t* entities, float* matrices, std::size_t capacity, std::size_t* count,
                      const char* function);
// One entity's world matrix; entity 0 is the identity root.
int CopyWorldMatrix(const runtime::TransformSystem& ts, uint32_t entity, float* out,
                    const char* function);

}  // namespace scenecrdt::capi::internal
