// SPDX-License-Identifier: Apache-2.0
// Owns the canonical state hash of a CRDT store and its text form (docs/CRDT.md "Canonical
// state hash"): functions of the store's sorted registers, tombstones and append sets.
#include "scenecrdt/runtime/crdt/state_hash.h"

#include <string>
#include <vector>

#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime::internal {

Sha256::Digest StateHash(const CrdtStore& store) {
  // Canonical form (docs/CRDT.md): a version tag, then registers sorted by (component,
  // entity), tombstones sorted by number, append sets sorted by (component, entity), each
  // section prefixed by its count so sections cannot run into each other.
  Sha256 h;
  static constexpr char kTag[] = "scenecrdt-state-v1";
  h.Update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(kTag), sizeof kTag - 1));
  const std::vector<RegisterView> registers = store.SortedRegisters();
  h.UpdateU64(registers.size());
  for (const RegisterView& r : registers) {
    h.UpdateU32(r.component);
    h.UpdateU32(r.entity);
    h.UpdateU32(r.timestamp);
    const uint8_t has_data = r.has_data ? 1 : 0;
    h.Update(std::span<const uint8_t>(&has_data, 1));
    if (!r.has_data) continue;
    if (r.transform) {
      const protocol::TransformBytes bytes = protocol::StoreTransform(*r.transform);
      h.UpdateU32(static_cast<uint32_t>(bytes.size()));
      h.Update(bytes);
    } else {
      h.UpdateU32(static_cast<uint32_t>(r.data.size()));
      h.Update(r.data);
    }
  }
  const std::vector<CrdtStore::Tombstone> tombstones = store.SortedTombstones();
  h.UpdateU64(tombstones.size());
  for (const CrdtStore::Tombstone& t : tombstones) {
    h.UpdateU32(t.number);
    h.UpdateU32(t.version);
  }
  const std::vector<CrdtStore::AppendSetView> sets = store.SortedAppendSets();
  h.UpdateU64(sets.size());
  for (const CrdtStore::AppendSetView& s : sets) {
    h.UpdateU32(s.component);
    h.UpdateU32(s.entity);
    h.UpdateU64(s.elements.size());
    for (const AppendElement& e : s.elements) {
      h.UpdateU32(e.timestamp);
      h.UpdateU32(static_cast<uint32_t>(e.data.size()));
      h.Update(e.data);
    }
  }
  return h.Finish();
}

std::string CanonicalText(const CrdtStore& store) {
  std::string out;
  const auto field = [&out](const char* prefix, uint64_t value) {
    out += prefix;
    out += std::to_string(value);
  };
  for (const RegisterView& r : store.SortedRegisters()) {
    field("R ", r.component);
    field(" ", r.entity);
    field(" ", r.timestamp);
    out += ' ';
    if (!r.has_data) {
      out += "deleted\n";
      continue;
    }
    out += r.transform ? protocol::ToHex(protocol::StoreTransform(*r.transform))
                       : protocol::ToHex(r.data);
    out += '\n';
  }
  for (const CrdtStore::Tombstone& t : store.SortedTombstones()) {
    field("T ", t.number);
    field(" ", t.version);
    out += '\n';
  }
  for (const CrdtStore::AppendSetView& s : store.SortedAppendSets()) {
    field("A ", s.component);
    field(" ", s.entity);
    for (const AppendElement& e : s.elements) {
      field(" ", e.timestamp);
      out += ':';
      out += protocol::ToHex(e.data);
    }
    out += '\n';
  }
  return out;
}

}  // namespace scenecrdt::runtime::internal
