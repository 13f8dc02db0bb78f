// SPDX-License-Identifier: Apache-2.0
// Owns the C entry points that read components (docs/COMPONENTS.md): one component's value,
// the values of a grow-only set as length-prefixed records, and the changed / added / removed
// (entity, component) lists of the last update. Every read works on a read-only view too, and
// checks its arguments and the room before writing anything.
#include <cstring>

#include "scenecrdt/capi/internal/runtime_handle.h"

using scenecrdt::capi::internal::Fail;
using scenecrdt::capi::internal::GuardRead;
using scenecrdt::runtime::ComponentKind;
using scenecrdt::runtime::ComponentRef;
using scenecrdt::runtime::ComponentView;
using scenecrdt::runtime::Runtime;

namespace {

// SC_OK when `needed` bytes fit in (buf, cap); sets *len to `needed` either way.
int CheckBytes(std::size_t needed, const uint8_t* buf, std::size_t cap, std::size_t* len,
               const char* function) {
  if (len == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "len pointer is NULL");
  if (cap > 0 && buf == nullptr) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "buf is NULL with cap %zu (NULL only with cap 0: a size query)", cap);
  }
  *len = needed;
  if (needed > cap) {
    return Fail(SC_E_BUFFER_TOO_SMALL, function, "%zu bytes, room for %zu (*len = %zu)", needed,
                cap, needed);
  }
  return SC_OK;
}

void StoreU32(uint32_t v, uint8_t* out) {
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
  out[2] = static_cast<uint8_t>(v >> 16);
  out[3] = static_cast<uint8_t>(v >> 24);
}

int CopyPairs(std::span<const ComponentRef> list, uint32_t* entities, uint32_t* components,
              std::size_t capacity, std::size_t* count, const char* function) {
  if (count == nullptr) return Fail(SC_E_INVALID_ARGUMENT, function, "count pointer is NULL");
  if (capacity > 0 && (entities == nullptr || components == nullptr)) {
    return Fail(SC_E_INVALID_ARGUMENT, function,
                "an output array is NULL with capacity %zu (NULL only with capacity 0)", capacity);
  }
  *count = list.size();
  if (list.size() > capacity) {
    return Fail(SC_E_BUFFER_TOO_SMALL, function, "%zu pairs, room for %zu (*count = %zu)",
                list.size(), capacity, list.size());
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    entities[i] = list[i].entity;
    components[i] = list[i].component;
  }
  return SC_OK;
}

}  // namespace

extern "C" {

int sc_runtime_get_component(const sc_runtime* rt, uint32_t entity, uint32_t component_id,
                             uint8_t* buf, size_t cap, size_t* len) {
  constexpr const char* kFunction = "sc_runtime_get_component";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    if (len == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "len pointer is NULL");
    const ComponentView view = replica.FindComponent(entity, component_id);
    if (view.kind == ComponentKind::kAbsent) {
      return Fail(SC_E_NOT_FOUND, kFunction,
                  "entity %u has no component %u (never set, deleted, or the entity deleted)",
                  static_cast<unsigned>(entity), static_cast<unsigned>(component_id));
    }
    if (view.kind == ComponentKind::kGrowOnly) {
      return Fail(SC_E_GROW_ONLY, kFunction,
                  "component %u of entity %u is a grow-only set (APPEND_VALUE): read it with "
                  "sc_runtime_copy_append_values",
                  static_cast<unsigned>(component_id), static_cast<unsigned>(entity));
    }
    const std::span<const uint8_t> bytes = view.bytes();
    if (const int status = CheckBytes(bytes.size(), buf, cap, len, kFunction); status != SC_OK) {
      return status;
    }
    if (!bytes.empty()) std::memcpy(buf, bytes.data(), bytes.size());
    return SC_OK;
  });
}

int sc_runtime_copy_append_values(const sc_runtime* rt, uint32_t entity, uint32_t component_id,
                                  uint8_t* buf, size_t cap, size_t* len) {
  constexpr const char* kFunction = "sc_runtime_copy_append_values";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    if (len == nullptr) return Fail(SC_E_INVALID_ARGUMENT, kFunction, "len pointer is NULL");
    const std::span<const scenecrdt::runtime::AppendElement> values =
        replica.store().FindAppendSet(component_id, entity);
    if (values.empty()) {
      const bool lww = replica.FindComponent(entity, component_id).kind == ComponentKind::kValue;
      return Fail(SC_E_NOT_FOUND, kFunction, "entity %u has no grow-only set of component %u%s",
                  static_cast<unsigned>(entity), static_cast<unsigned>(component_id),
                  lww ? " (it holds a value: sc_runtime_get_component)" : "");
    }
    std::size_t needed = 0;
    for (const scenecrdt::runtime::AppendElement& e : values) {
      needed += SC_APPEND_RECORD_HEADER_BYTES + e.data.size();
    }
    if (const int status = CheckBytes(needed, buf, cap, len, kFunction); status != SC_OK) {
      return status;
    }
    uint8_t* out = buf;
    for (const scenecrdt::runtime::AppendElement& e : values) {
      StoreU32(e.timestamp, out);
      StoreU32(static_cast<uint32_t>(e.data.size()), out + 4);  // payloads are <= 1 MiB
      out += SC_APPEND_RECORD_HEADER_BYTES;
      if (!e.data.empty()) std::memcpy(out, e.data.data(), e.data.size());
      out += e.data.size();
    }
    return SC_OK;
  });
}

int sc_runtime_copy_changed_components(const sc_runtime* rt, uint32_t* entities,
                                       uint32_t* components, size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_changed_components";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return CopyPairs(replica.changed_components(), entities, components, capacity, count,
                     kFunction);
  });
}

int sc_runtime_copy_added_components(const sc_runtime* rt, uint32_t* entities, uint32_t* components,
                                     size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_added_components";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return CopyPairs(replica.added_components(), entities, components, capacity, count, kFunction);
  });
}

int sc_runtime_copy_removed_components(const sc_runtime* rt, uint32_t* entities,
                                       uint32_t* components, size_t capacity, size_t* count) {
  constexpr const char* kFunction = "sc_runtime_copy_removed_components";
  return GuardRead(rt, kFunction, [&](const Runtime& replica) -> int {
    return CopyPairs(replica.removed_components(), entities, components, capacity, count,
                     kFunction);
  });
}

}  // extern "C"
