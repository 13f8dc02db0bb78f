// SPDX-License-Identifier: Apache-2.0
// Owns the names of the CRDT value types (crdt_types.h) for logs, metrics and tools.
#include "scenecrdt/runtime/crdt_types.h"

namespace scenecrdt::runtime {

const char* MergeOutcomeName(MergeOutcome outcome) {
  switch (outcome) {
    case MergeOutcome::kUpdatedTimestamp:
      return "updated_timestamp";
    case MergeOutcome::kOutdatedTimestamp:
      return "outdated_timestamp";
    case MergeOutcome::kNoChange:
      return "no_change";
    case MergeOutcome::kOutdatedData:
      return "outdated_data";
    case MergeOutcome::kUpdatedData:
      return "updated_data";
    case MergeOutcome::kEntityWasDeleted:
      return "entity_was_deleted";
    case MergeOutcome::kEntityDeleted:
      return "entity_deleted";
    case MergeOutcome::kRefused:
      return "refused";
    default:
      return "unknown";
  }
}

const char* EntityStateName(EntityState state) {
  switch (state) {
    case EntityState::kUnknown:
      return "Unknown";
    case EntityState::kUsedEntity:
      return "UsedEntity";
    case EntityState::kRemoved:
      return "Removed";
    case EntityState::kReserved:
      return "Reserved";
    default:
      return "Unknown";
  }
}

}  // namespace scenecrdt::runtime
