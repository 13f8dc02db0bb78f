// SPDX-License-Identifier: Apache-2.0
// Owns CrdtStore's canonical views of its state: the sorted registers, tombstones and append
// sets, the order-independent state hash and its text form (docs/CRDT.md "Canonical state
// hash").
#include <algorithm>
#include <string>

#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime {

std::vector<RegisterView> CrdtStore::SortedRegisters() const {
  std::vector<RegisterView> out;
  out.reserve(num_registers());
  for (std::size_t i = 0; i < tr_.size(); ++i) {
    out.push_back(TransformView(static_cast<uint32_t>(i)));
  }
  for (const OpaqueRegister& r : regs_) {
    out.push_back(
        RegisterView{r.component, r.entity, r.timestamp, r.has_data, r.sequence, r.data, nullptr});
  }
  std::sort(out.begin(), out.end(), [](const RegisterView& a, const RegisterView& b) {
    return Key(a.component, a.entity) < Key(b.component, b.entity);
  });
  return out;
}

std::vector<CrdtStore::AppendSetView> CrdtStore::SortedAppendSets() const {
  std::vector<AppendSetView> out;
  out.reserve(appends_.size());
  for (const AppendSet& s : appends_) out.push_back({s.component, s.entity, s.elements});
  std::sort(out.begin(), out.end(), [](const AppendSetView& a, const AppendSetView& b) {
    return Key(a.component, a.entity) < Key(b.component, b.entity);
  });
  return out;
}

std::vector<CrdtStore::Tombstone> CrdtStore::SortedTombstones() const {
  std::vector<Tombstone> out;
  out.reserve(tombstones_.size());
  tombstones_.ForEach([&](uint32_t number, const TombstoneValue& t) {
    out.push_back(Tombstone{number, t.version});
  });
  std::sort(out.begin(), out.end(),
            [](const Tombstone& a, const Tombstone& b) { return a.number < b.number; });
  return out;
}

Sha256::Digest CrdtStore::StateHash() const {
  // Canonical form (docs/CRDT.md): a version tag, then registers sorted by (component,
  // entity), tombstones sorted by number, append sets sorted by (component, entity), each
  // section prefixed by its count so sections cannot run into each other.
  Sha256 h;
  static constexpr char kTag[] = "scenecrdt-state-v1";
  h.Update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(kTag), sizeof kTag - 1));
  const std::vector<RegisterView> registers = SortedRegisters();
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
  const std::vector<Tombstone> tombstones = SortedTombstones();
  h.UpdateU64(tombstones.size());
  for (const Tombstone& t : tombstones) {
    h.UpdateU32(t.number);
    h.UpdateU32(t.version);
  }
  const std::vector<AppendSetView> sets = SortedAppendSets();
  h.UpdateU64(sets.size());
  for (const AppendSetView& s : sets) {
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

std::string CrdtStore::CanonicalText() const {
  std::string out;
  const auto field = [&out](const char* prefix, uint64_t value) {
    out += prefix;
    out += std::to_string(value);
  };
  for (const RegisterView& r : SortedRegisters()) {
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
  for (const Tombstone& t : SortedTombstones()) {
    field("T ", t.number);
    field(" ", t.version);
    out += '\n';
  }
  for (const AppendSetView& s : SortedAppendSets()) {
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

}  // namespace scenecrdt::runtime
