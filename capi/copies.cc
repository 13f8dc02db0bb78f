// SPDX-License-Identifier: Apache-2.0
// Owns the bulk copies into caller arrays. Every copy checks its arguments and the capacity
// before writing anything, so a refused copy leaves the caller's arrays untouched.
#include "scenecrdt/capi/internal/copies.h"

#include <cstring>
#include <vector>

#include "scenecrdt/capi/internal/status.h"
#include "scenecrdt/scenecrdt.h"

namespace scenecrdt::capi::internal {
namespace {

static_assert(sizeof(glm::mat4) == 16 * sizeof(float), "a world matrix is 16 packed floats");

void StoreMatrix(const glm::mat4& m, float* out) { std::memcpy(out, &m[0][0], sizeof(glm::mat4)); }

// SC_OK when `needed` elements fit; sets *count to `needed` either way.
int CheckRoom(std::size_t needed, std::size_t capacity, const void* array_a, const void* array_b,
              std::size_t* count, const char* function) {
  if (count == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "count pointer is NULL");
  if (capacity > 0 && (array_a == nullptr || array_b == nullptr)) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "an output array is NULL with capacity %zu (NULL only with capacity 0)", capacity);
  }
  *count = needed;
  if (needed > capacity) {
    return Fail(SC_E_BUFFER_TOO_SMALL, function, "%zu entities, room for %zu (*count = %zu)",
                needed, capacity, needed);
  }
  return SC_OK;
}

// The index of node `entity` in world_matrices(), checked against its size.
int IndexInWorld(const runtime::TransformSystem& ts, protocol::EntityId entity, uint32_t* index,
                 const char* function) {
  const std::optional<uint32_t> found = ts.IndexOf(entity);
  if (!found.has_value()) {
    return Fail(SC_E_NOT_FOUND, function, "entity %u is not in the scene",
                static_cast<unsigned>(entity));
  }
  if (*found >= ts.world_matrices().size()) {
    return Fail(SC_E_INTERNAL, function, "entity %u has index %u past %zu world matrices",
                static_cast<unsigned>(entity), static_cast<unsigned>(*found),
                ts.world_matrices().size());
  }
  *index = *found;
  return SC_OK;
}

}  // namespace

int CopyWorld(const runtime::TransformSystem& ts, uint32_t* entities, float* matrices,
              std::size_t capacity, std::size_t* count, const char* function) {
  const std::vector<runtime::NodeInfo> nodes = ts.Nodes();
  if (const int status = CheckRoom(nodes.size(), capacity, entities, matrices, count, function);
      status != SC_OK) {
    return status;
  }
  const std::span<const glm::mat4> world = ts.world_matrices();
  for (const runtime::NodeInfo& n : nodes) {
    if (n.index >= world.size()) {
      *count = 0;
      return Fail(SC_E_INTERNAL, function, "entity %u has index %u past %zu world matrices",
                  static_cast<unsigned>(n.entity), static_cast<unsigned>(n.index), world.size());
    }
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    entities[i] = nodes[i].entity;
    StoreMatrix(world[nodes[i].index], matrices + 16 * i);
  }
  return SC_OK;
}

int CopyEntities(std::span<const protocol::EntityId> list, uint32_t* entities, std::size_t capacity,
                 std::size_t* count, const char* function) {
  if (const int status = CheckRoom(list.size(), capacity, entities, entities, count, function);
      status != SC_OK) {
    return status;
  }
  if (!list.empty()) std::memcpy(entities, list.data(), list.size_bytes());
  return SC_OK;
}

int CopyEntitiesWorld(const runtime::TransformSystem& ts, std::span<const protocol::EntityId> list,
                      uint32_t* entities, float* matrices, std::size_t capacity, std::size_t* count,
                      const char* function) {
  if (const int status = CheckRoom(list.size(), capacity, entities, matrices, count, function);
      status != SC_OK) {
    return status;
  }
  const std::span<const glm::mat4> world = ts.world_matrices();
  for (std::size_t i = 0; i < list.size(); ++i) {
    uint32_t index = 0;
    if (IndexInWorld(ts, list[i], &index, function) != SC_OK) {
      // The lists name nodes of the last update; anything else is our bug.
      *count = 0;
      return Fail(SC_E_INTERNAL, function, "listed entity %u has no world matrix",
                  static_cast<unsigned>(list[i]));
    }
    entities[i] = list[i];
    StoreMatrix(world[index], matrices + 16 * i);
  }
  return SC_OK;
}

int CopyWorldMatrix(const runtime::TransformSystem& ts, uint32_t entity, float* out,
                    const char* function) {
  if (out == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "out pointer is NULL");
  if (entity == protocol::kRootEntity) {
    StoreMatrix(glm::mat4(1.0f), out);
    return SC_OK;
  }
  uint32_t index = 0;
  if (const int status = IndexInWorld(ts, entity, &index, function); status != SC_OK) {
    return status;
  }
  StoreMatrix(ts.world_matrices()[index], out);
  return SC_OK;
}

}  // namespace scenecrdt::capi::internal
