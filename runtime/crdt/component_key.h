// SPDX-License-Identifier: Apache-2.0
// Owns ComponentKey: the 64-bit key of a (component, entity) pair in the CRDT store's hash
// indexes (opaque registers, append sets).
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::runtime::internal {

constexpr uint64_t ComponentKey(protocol::ComponentId c, protocol::EntityId e) {
  return (uint64_t{c} << 32) | e;
}

}  // namespace scenecrdt::runtime::internal
