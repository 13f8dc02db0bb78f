// SPDX-License-Identifier: Apache-2.0
// Owns OpaqueRegisters: the last-write-wins registers of every component other than the
// Transform, keyed by (component, entity), their payloads kept as opaque bytes (a scene server
// relays every component). Dense (swap-remove) with a hash index. The merge rules live in
// CrdtStore; this class only stores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/runtime/crdt/component_key.h"
#include "scenecrdt/runtime/crdt_types.h"
#include "scenecrdt/runtime/internal/flat_map.h"

namespace scenecrdt::runtime::internal {

struct OpaqueRegister {
  ComponentId component;
  EntityId entity;
  uint32_t timestamp;
  bool has_data;      // false: the remove-set (DELETE_COMPONENT won)
  uint64_t sequence;  // store sequence of the last change
  std::vector<uint8_t> data;

  RegisterView View() const {
    return RegisterView{component, entity, timestamp, has_data, sequence, data, nullptr};
  }
};

class OpaqueRegisters {
 public:
  // The register of (component, entity), or nullptr. Invalidated by Add and Erase.
  OpaqueRegister* Find(ComponentId component, EntityId entity) {
    const uint32_t* index = index_.Find(ComponentKey(component, entity));
    return index ? &registers_[*index] : nullptr;
  }
  const OpaqueRegister* Find(ComponentId component, EntityId entity) const {
    const uint32_t* index = index_.Find(ComponentKey(component, entity));
    return index ? &registers_[*index] : nullptr;
  }
  // Adds an empty register stamped 0 for (component, entity), which has none.
  OpaqueRegister& Add(ComponentId component, EntityId entity);
  // Removes the register of (component, entity), which exists (the last one takes its place).
  void Erase(ComponentId component, EntityId entity);

  std::span<const OpaqueRegister> all() const { return registers_; }
  std::size_t size() const { return registers_.size(); }

 private:
  std::vector<OpaqueRegister> registers_;
  FlatMap<uint64_t, uint32_t> index_;  // ComponentKey -> index into registers_
};

}  // namespace scenecrdt::runtime::internal
