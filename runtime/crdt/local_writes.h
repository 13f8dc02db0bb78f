// SPDX-License-Identifier: Apache-2.0
// Owns the Lamport stamping of local writes (docs/CRDT.md "Local writes"): from the store's
// current state, the message a local write merges and sends. Per key, timestamp = stored + 1
// (1 for a new key); unchanged data is not echoed (as @dcl/ecs compares with the last sent
// bytes). Pure functions of a const store: CrdtStore::Write* merge what they return.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/result.h"

namespace scenecrdt::runtime {
class CrdtStore;
}  // namespace scenecrdt::runtime

namespace scenecrdt::runtime::internal {

// The stamped message, or nullopt when the write would change nothing (nothing to merge or
// send). A message's `data` views the caller's `data`.
using Stamped = std::optional<protocol::CrdtMessage>;

// PUT_COMPONENT. Errors: kInvalidArgument (entity deleted, timestamp exhausted).
Result<Stamped> StampPut(const CrdtStore& store, protocol::EntityId entity,
                         protocol::ComponentId component, std::span<const uint8_t> data);
// DELETE_COMPONENT; nullopt when the register is absent or already deleted. Errors:
// kInvalidArgument (timestamp exhausted).
Result<Stamped> StampDeleteComponent(const CrdtStore& store, protocol::EntityId entity,
                                     protocol::ComponentId component);
// DELETE_ENTITY. Errors: kReservedEntity (a number < 512).
Result<protocol::CrdtMessage> StampDeleteEntity(protocol::EntityId entity);
// APPEND_VALUE, stamped above every element already in the set. Errors: kInvalidArgument
// (entity deleted, timestamp exhausted).
Result<protocol::CrdtMessage> StampAppend(const CrdtStore& store, protocol::EntityId entity,
                                          protocol::ComponentId component,
                                          std::span<const uint8_t> data);

}  // namespace scenecrdt::runtime::internal
