// SPDX-License-Identifier: Apache-2.0
// A from-scratch reference for the CRDT store, written independently of it: the final state
// is computed in closed form from the message multiset (no sequential merge at all):
//   tombstone[n] = max(DELETE_ENTITY versions of n, (v - 1) for every message on (n, v > 0))
//   a message on (n, v) survives iff n < 512 or tombstone[n] < v
//   register(c, e) = the greatest surviving PUT/DELETE under the LWW order
//                    (timestamp, then PUT over DELETE, then longer payload, then bytes)
//   append set(c, e) = the `max_append` greatest distinct surviving (timestamp, bytes)
// It produces the same text as CrdtStore::CanonicalText().
#pragma once

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::runtime::testing {

// An owning message (CrdtMessage only views its payload).
struct OwnedMessage {
  protocol::MessageType type = protocol::MessageType::kPutComponent;
  protocol::EntityId entity = 0;
  protocol::ComponentId component = 0;
  uint32_t timestamp = 0;
  std::vector<uint8_t> data;

  protocol::CrdtMessage View() const {
    return protocol::CrdtMessage{type, entity, component, timestamp, 0, data};
  }
};

// Text dump of a store's canonical content (the format ReferenceDump produces).
inline std::string DumpStore(const CrdtStore& store) { return store.CanonicalText(); }

inline std::string ReferenceDump(const std::vector<OwnedMessage>& messages,
                                 std::size_t max_append = 100) {
  using protocol::MessageType;
  auto is_put = [](MessageType t) {
    return t == MessageType::kPutComponent || t == MessageType::kPutComponentNetwork;
  };
  auto is_delete_entity = [](MessageType t) {
    return t == MessageType::kDeleteEntity || t == MessageType::kDeleteEntityNetwork;
  };
  // Messages the store refuses outright never count (Transform payloads must be 44 bytes).
  auto refused = [&](const OwnedMessage& m) {
    if (!protocol::IsKnownType(m.type)) return true;
    if (is_delete_entity(m.type)) return protocol::IsReservedEntity(m.entity);
    if (is_put(m.type) && m.component == protocol::kTransformComponentId) {
      return m.data.size() != protocol::Transform::kSize;
    }
    return false;
  };
  std::map<uint32_t, uint32_t> tomb;
  auto raise = [&](uint32_t n, uint32_t v) {
    auto it = tomb.find(n);
    if (it == tomb.end() || it->second < v) tomb[n] = v;
  };
  for (const OwnedMessage& m : messages) {
    if (refused(m)) continue;
    const uint32_t n = protocol::EntityNumber(m.entity);
    const uint32_t v = protocol::EntityVersion(m.entity);
    if (protocol::IsReservedEntityNumber(n)) continue;
    if (is_delete_entity(m.type)) {
      raise(n, v);
    } else if (v > 0) {
      raise(n, v - 1);
    }
  }
  auto survives = [&](const OwnedMessage& m) {
    const uint32_t n = protocol::EntityNumber(m.entity);
    if (protocol::IsReservedEntityNumber(n)) return true;
    auto it = tomb.find(n);
    return it == tomb.end() || it->second < protocol::EntityVersion(m.entity);
  };
  // LWW order key: (timestamp, is_put, payload length, payload bytes).
  using Order = std::tuple<uint32_t, int, std::size_t, std::vector<uint8_t>>;
  std::map<std::pair<uint32_t, uint32_t>, Order> registers;
  std::map<std::pair<uint32_t, uint32_t>, std::set<std::pair<uint32_t, std::vector<uint8_t>>>>
      appends;
  for (const OwnedMessage& m : messages) {
    if (refused(m) || is_delete_entity(m.type) || !survives(m)) continue;
    const auto key = std::make_pair(m.component, m.entity);
    if (m.type == MessageType::kAppendValue) {
      appends[key].insert({m.timestamp, m.data});
      continue;
    }
    const Order order = is_put(m.type) ? Order{m.timestamp, 1, m.data.size(), m.data}
                                       : Order{m.timestamp, 0, 0, {}};
    auto it = registers.find(key);
    if (it == registers.end() || it->second < order) registers[key] = order;
  }
  std::string out;
  for (const auto& [key, order] : registers) {
    out += "R " + std::to_string(key.first) + " " + std::to_string(key.second) + " " +
           std::to_string(std::get<0>(order)) + " ";
    out += std::get<1>(order) ? protocol::ToHex(std::get<3>(order)) : std::string("deleted");
    out += "\n";
  }
  for (const auto& [n, v] : tomb) {
    out += "T " + std::to_string(n) + " " + std::to_string(v) + "\n";
  }
  for (const auto& [key, elements] : appends) {
    if (max_append == 0) continue;
    out += "A " + std::to_string(key.first) + " " + std::to_string(key.second);
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> kept(elements.begin(), elements.end());
    if (kept.size() > max_append)
      kept.erase(kept.begin(), kept.end() - static_cast<long>(max_append));
    for (const auto& e : kept)
      out += " " + std::to_string(e.first) + ":" + protocol::ToHex(e.second);
    out += "\n";
  }
  return out;
}

}  // namespace scenecrdt::runtime::testing
