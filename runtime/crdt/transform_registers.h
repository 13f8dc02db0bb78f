// SPDX-License-Identifier: Apache-2.0
// Owns TransformRegisters: the Transform registers of a CrdtStore, decoded, densely packed
// (swap-remove keeps them dense), and the slot lookup by entity. Numbers >= 512 have at most
// one live version (newer versions retire older ones), so a 64 Ki array indexed by number
// finds the slot in one access; reserved numbers may hold several versions and use a hash map
// keyed by the full id. The merge rules live in CrdtStore; this class only stores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/crdt_types.h"
#include "scenecrdt/runtime/internal/flat_map.h"
#include "scenecrdt/runtime/internal/prefetch.h"

namespace scenecrdt::runtime::internal {

class TransformRegisters {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  // The slot of `entity`'s register, or kNone.
  uint32_t Find(EntityId entity) const {
    const uint32_t number = protocol::EntityNumber(entity);
    if (protocol::IsReservedEntityNumber(number)) {
      const uint32_t* slot = slot_reserved_.Find(entity);
      return slot ? *slot : kNone;
    }
    if (number >= slot_by_number_.size()) return kNone;
    const uint32_t slot = slot_by_number_[number];
    return slot != kNone && registers_[slot].entity == entity ? slot : kNone;
  }
  TransformRegister& operator[](uint32_t slot) { return registers_[slot]; }
  const TransformRegister& operator[](uint32_t slot) const { return registers_[slot]; }
  // Adds an identity register stamped 0 for `entity` (which has none) and returns its slot.
  uint32_t Add(EntityId entity);
  // Removes `entity`'s register (the last one takes its slot); false when it has none.
  bool Erase(EntityId entity);

  std::span<const TransformRegister> all() const { return registers_; }
  std::size_t size() const { return registers_.size(); }

  // Hints for a merge pipeline: first the slot index entry of `entity`, some messages later
  // (when that entry has arrived) its register's cache line.
  void PrefetchSlot(EntityId entity) const {
    const uint32_t number = protocol::EntityNumber(entity);
    if (number < slot_by_number_.size()) PrefetchForRead(&slot_by_number_[number]);
  }
  void PrefetchRegister(EntityId entity) const {
    const uint32_t number = protocol::EntityNumber(entity);
    if (number >= slot_by_number_.size() || protocol::IsReservedEntityNumber(number)) return;
    const uint32_t slot = slot_by_number_[number];
    if (slot < registers_.size()) PrefetchForWrite(&registers_[slot]);
  }

 private:
  void SetSlot(EntityId entity, uint32_t slot);

  std::vector<TransformRegister> registers_;
  std::vector<uint32_t> slot_by_number_;       // number -> slot (numbers >= 512)
  FlatMap<uint32_t, uint32_t> slot_reserved_;  // entity -> slot (numbers < 512)
};

}  // namespace scenecrdt::runtime::internal
