// SPDX-License-Identifier: Apache-2.0
// Owns EntityVersions: the entity bookkeeping of a CrdtStore (docs/CRDT.md). The deleted
// versions (DELETE_ENTITY as a per-number max-version grow-only set: the tombstones), the live
// version of each number >= 512 (at most one: newer versions retire older ones), and the count
// of live entities (ids holding any register or append set). The rules that use them live in
// CrdtStore; this class only keeps the books.
#pragma once

#include <cstdint>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/runtime/internal/flat_map.h"

namespace scenecrdt::runtime::internal {

class EntityVersions {
 public:
  struct Deleted {
    uint32_t version;   // every version <= this one of the number is deleted
    uint64_t sequence;  // store sequence of the tombstone's last raise
  };

  // ---- Deleted versions (tombstones), by entity number ----
  const Deleted* FindDeleted(uint32_t number) const { return deleted_.Find(number); }
  // Raises (or creates) the tombstone of `number` to `version`.
  void SetDeleted(uint32_t number, uint32_t version, uint64_t sequence) {
    deleted_.Insert(number, Deleted{version, sequence});
  }
  bool no_deleted() const { return deleted_.empty(); }
  std::size_t num_deleted() const { return deleted_.size(); }
  // f(number, const Deleted&) for every tombstone, in no particular order.
  template <class F>
  void ForEachDeleted(F&& f) const {
    deleted_.ForEach(f);
  }

  // ---- Live entities ----
  // `entity` gained its first register / append set, or lost its last one.
  void NoteGained(protocol::EntityId entity) {
    ++num_live_;
    const uint32_t number = protocol::EntityNumber(entity);
    if (!protocol::IsReservedEntityNumber(number)) {
      live_version_.Insert(number, protocol::EntityVersion(entity));
    }
  }
  void NoteLost(protocol::EntityId entity) {
    --num_live_;
    const uint32_t number = protocol::EntityNumber(entity);
    if (!protocol::IsReservedEntityNumber(number)) live_version_.Erase(number);
  }
  // The live version of `number` (>= 512), or nullptr.
  const uint32_t* LiveVersion(uint32_t number) const { return live_version_.Find(number); }
  std::size_t num_live() const { return num_live_; }

 private:
  FlatMap<uint32_t, Deleted> deleted_;        // number -> max deleted version
  FlatMap<uint32_t, uint32_t> live_version_;  // number (>= 512) -> live version
  std::size_t num_live_ = 0;
};

}  // namespace scenecrdt::runtime::internal
