// SPDX-License-Identifier: Apache-2.0
// Owns the insertion and swap-removal of OpaqueRegisters.
#include "scenecrdt/runtime/crdt/opaque_registers.h"

#include "scenecrdt/protocol/check.h"

namespace scenecrdt::runtime::internal {

OpaqueRegister& OpaqueRegisters::Add(ComponentId component, EntityId entity) {
  index_.Insert(ComponentKey(component, entity), static_cast<uint32_t>(registers_.size()));
  registers_.push_back(OpaqueRegister{component, entity, 0, false, 0, {}});
  return registers_.back();
}

void OpaqueRegisters::Erase(ComponentId component, EntityId entity) {
  const uint64_t key = ComponentKey(component, entity);
  const uint32_t* found = index_.Find(key);
  SCENECRDT_CHECK(found != nullptr, "OpaqueRegisters::Erase of a register that does not exist");
  const uint32_t at = *found;
  index_.Erase(key);
  const uint32_t last = static_cast<uint32_t>(registers_.size() - 1);
  if (at != last) {
    registers_[at] = std::move(registers_[last]);
    index_.Insert(ComponentKey(registers_[at].component, registers_[at].entity), at);
  }
  registers_.pop_back();
}

}  // namespace scenecrdt::runtime::internal
