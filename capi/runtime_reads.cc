// SPDX-License-Identifier: Apache-2.0
// Owns the C entry points that read the replica of an sc_runtime after its last update:
// entity count, world matrices (one or in bulk), the changed / added / removed lists, an
// entity's Transform and place in the effective tree, and the state hash. Every read works on
// a read-only view too.
#include <cstring>
#include <string>

#include "scenecrdt/capi/internal/copies.h"
#include "scenecrdt/capi/internal/runtime_handle.h"

using scenecrdt::capi::internal::Fail;
using scenecrdt::capi::internal::GuardRead;
using scenecrdt::runtime::Runtime;

extern "C" {

size_t sc_runtime_entity_count(const sc_runtime* rt) {
  std::size_t count = 0;
  GuardRead(rt, "sc_runtime_entity_count", [&](const Runtime& replica) -> int {
    count = replica.transforms().num_nodes();
    return SC_OK;
  });
  return count;
}

int sc_runtime_world_matrix(const sc_runtime* rt, uint32_t entity, float out[16]) {
  constexpr const char* kFunction = "sc_runtime_world_matrix";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyWorldMatrix(replica.transforms(), entity, out, kFunction);
  });
}

int sc_runtime_copy_world(const sc_runtime* rt, uint32_t* entities, float* matrices,
                          size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_world";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyWorld(replica.transforms(), entities, matrices, capacity,
                                                count, kFunction);
  });
}

int sc_runtime_copy_changed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                            size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_changed";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.changed_entities(), entities, capacity,
                                                   count, kFunction);
  });
}

int sc_runtime_copy_changed_world(const sc_runtime* rt, uint32_t* entities, float* matrices,
                                  size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_changed_world";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntitiesWorld(replica.transforms(),
                                                        replica.changed_entities(), entities,
                                                        matrices, capacity, count, kFunction);
  });
}

int sc_runtime_copy_added(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                          size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_added";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.added_entities(), entities, capacity,
                                                   count, kFunction);
  });
}

int sc_runtime_copy_removed(const sc_runtime* rt, uint32_t* entities, size_t capacity,
                            size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_removed";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return scenecrdt::capi::internal::CopyEntities(replica.removed_entities(), entities, capacity,
                                                   count, kFunction);
  });
}

int sc_runtime_get_transform(const sc_runtime* rt, uint32_t entity, sc_transform* out) {
  constexpr const char* kFunction = "sc_runtime_get_transform";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    if (out == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "out is NULL");
    const scenecrdt::protocol::Transform* t = replica.store().FindTransform(entity);
    if (t == nullptr) {
      return Fail(SC_E_NOT_FOUND, kFunction, "entity %u has no Transform",
                  static_cast<unsigned>(entity));
    }
    *out = sc_transform{{t->position.x, t->position.y, t->position.z},
                        {t->rotation.x, t->rotation.y, t->rotation.z, t->rotation.w},
                        {t->scale.x, t->scale.y, t->scale.z},
                        t->parent};
    return SC_OK;
  });
}

int sc_runtime_node_info(const sc_runtime* rt, uint32_t entity, sc_node_info* out) {
  constexpr const char* kFunction = "sc_runtime_node_info";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    const scenecrdt::runtime::TransformSystem& ts = replica.transforms();
    if (out == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "out is NULL");
    if (entity == scenecrdt::protocol::kRootEntity || !ts.IsNode(entity)) {
      return Fail(SC_E_NOT_FOUND, kFunction, "entity %u is not in the scene%s",
                  static_cast<unsigned>(entity),
                  entity == scenecrdt::protocol::kRootEntity ? " (0 is the root)" : "");
    }
    const scenecrdt::protocol::Transform* t = ts.GetTransform(entity);
    sc_node_info info{};
    info.effective_parent = ts.EffectiveParent(entity);
    info.declared_parent = t != nullptr ? t->parent : scenecrdt::protocol::kRootEntity;
    info.parked = ts.IsParked(entity) ? 1 : 0;
    info.placeholder = ts.IsPlaceholder(entity) ? 1 : 0;
    return scenecrdt::capi::internal::WriteOutput(info, out, sizeof(sc_node_info), "sc_node_info",
                                                  kFunction);
  });
}

int sc_runtime_state_hash(const sc_runtime* rt, char* out_hex, size_t capacity) {
  constexpr const char* kFunction = "sc_runtime_state_hash";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    if (out_hex == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "out_hex is NULL");
    if (capacity < SC_STATE_HASH_CHARS) {
      return Fail(SC_E_BUFFER_TOO_SMALL, kFunction, "needs %d chars (SC_STATE_HASH_CHARS), got %zu",
                  SC_STATE_HASH_CHARS, capacity);
    }
    const std::string hex = replica.store().StateHashHex();
    if (hex.size() + 1 != SC_STATE_HASH_CHARS) {
      return Fail(SC_E_INTERNAL, kFunction, "a %zu-digit hash", hex.size());
    }
    std::memcpy(out_hex, hex.c_str(), SC_STATE_HASH_CHARS);
    return SC_OK;
  });
}

}  // extern "C"
