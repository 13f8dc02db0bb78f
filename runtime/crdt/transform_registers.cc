// SPDX-License-Identifier: Apache-2.0
// Owns the slot bookkeeping of TransformRegisters: adding, swap-removing, and the growth of
// the by-number index.
#include "scenecrdt/runtime/crdt/transform_registers.h"

#include <algorithm>

namespace scenecrdt::runtime::internal {

uint32_t TransformRegisters::Add(EntityId entity) {
  const uint32_t slot = static_cast<uint32_t>(registers_.size());
  SetSlot(entity, slot);
  registers_.push_back(TransformRegister{protocol::kIdentityTransform, entity, 0, 0, 0});
  return slot;
}

bool TransformRegisters::Erase(EntityId entity) {
  const uint32_t slot = Find(entity);
  if (slot == kNone) return false;
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) {
    slot_reserved_.Erase(entity);
  } else {
    slot_by_number_[number] = kNone;
  }
  const uint32_t last = static_cast<uint32_t>(registers_.size() - 1);
  if (slot != last) {
    registers_[slot] = registers_[last];
    SetSlot(registers_[slot].entity, slot);
  }
  registers_.pop_back();
  return true;
}

void TransformRegisters::SetSlot(EntityId entity, uint32_t slot) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (protocol::IsReservedEntityNumber(number)) {
    slot_reserved_.Insert(entity, slot);
    return;
  }
  if (number >= slot_by_number_.size()) {
    // Grows by powers of two up to the 64 Ki numbers, so small scenes stay small.
    std::size_t size = std::max<std::size_t>(slot_by_number_.size(), 1024);
    while (size <= number) size *= 2;
    slot_by_number_.resize(size, kNone);
  }
  slot_by_number_[number] = slot;
}

}  // namespace scenecrdt::runtime::internal
