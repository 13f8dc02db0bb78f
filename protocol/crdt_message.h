// SPDX-License-Identifier: Apache-2.0
// Owns the DCL SDK7 CRDT message model: the seven message types, which fields each carries,
// their exact wire sizes, the flat CrdtMessage view used on hot paths, and typed structs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <variant>

#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::protocol {

// Wire values of CrdtMessageType (@dcl/ecs serialization/crdt/types.ts). Other values may
// appear on the wire; they are "unknown" and skipped by length unless the caller rejects them.
enum class MessageType : uint32_t {
  kPutComponent = 1,
  kDeleteComponent = 2,
  kDeleteEntity = 3,
  kAppendValue = 4,
  kPutComponentNetwork = 5,
  kDeleteComponentNetwork = 6,
  kDeleteEntityNetwork = 7,
};

inline constexpr uint32_t kHeaderSize = 8;  // length u32 + type u32
// Fixed wire sizes (whole message, header included). Types with data add dataLength.
inline constexpr uint32_t kPutComponentBaseSize = 24;
inline constexpr uint32_t kDeleteComponentSize = 20;
inline constexpr uint32_t kDeleteEntitySize = 12;
inline constexpr uint32_t kAppendValueBaseSize = 24;
inline constexpr uint32_t kPutComponentNetworkBaseSize = 28;
inline constexpr uint32_t kDeleteComponentNetworkSize = 24;
inline constexpr uint32_t kDeleteEntityNetworkSize = 16;
// @dcl/ecs before 7.28 declared 12 for DELETE_ENTITY_NETWORK while writing 16 bytes.
inline constexpr uint32_t kLegacyDeleteEntityNetworkDeclaredSize = 12;

constexpr bool IsKnownType(MessageType t) {
  const auto v = static_cast<uint32_t>(t);
  return v >= 1 && v <= 7;
}
constexpr bool HasComponent(MessageType t) {
  return IsKnownType(t) && t != MessageType::kDeleteEntity &&
         t != MessageType::kDeleteEntityNetwork;
}
constexpr bool HasTimestamp(MessageType t) { return HasComponent(t); }
constexpr bool HasData(MessageType t) {
  return t == MessageType::kPutComponent || t == MessageType::kAppendValue ||
         t == MessageType::kPutComponentNetwork;
}
constexpr bool HasNetworkId(MessageType t) {
  return t == MessageType::kPutComponentNetwork || t == MessageType::kDeleteComponentNetwork ||
         t == MessageType::kDeleteEntityNetwork;
}
// Size of everything but the payload (types with data) or the whole size (the others).
constexpr uint32_t BaseSize(MessageType t) {
  switch (t) {
    case MessageType::kPutComponent:
      return kPutComponentBaseSize;
    case MessageType::kDeleteComponent:
      return kDeleteComponentSize;
    case MessageType::kDeleteEntity:
      return kDeleteEntitySize;
    case MessageType::kAppendValue:
      return kAppendValueBaseSize;
    case MessageType::kPutComponentNetwork:
      return kPutComponentNetworkBaseSize;
    case MessageType::kDeleteComponentNetwork:
      return kDeleteComponentNetworkSize;
    case MessageType::kDeleteEntityNetwork:
      return kDeleteEntityNetworkSize;
    default:
      return kHeaderSize;
  }
}

// Short JSON name: "put", "delete", "delete_entity", "append", "put_network",
// "delete_network", "delete_entity_network"; "unknown" otherwise.
const char* MessageTypeName(MessageType t);

// One decoded message, flat. Fields the type does not carry are 0 / empty (see Has*()).
// `data` points into the decoded buffer (no copy); for unknown types it is the body after
// the 8-byte header. Keep the buffer alive while the view is used.
struct CrdtMessage {
  MessageType type = MessageType::kPutComponent;
  EntityId entity = 0;
  ComponentId component = 0;
  uint32_t timestamp = 0;
  uint32_t network_id = 0;
  std::span<const uint8_t> data;
  // DELETE_ENTITY_NETWORK read with the legacy declared length 12 (16 bytes on the wire). The
  // encoder reproduces the legacy length so a decode/encode round trip is byte-exact.
  bool legacy_length = false;
};

// Exact encoded size of `m`.
constexpr std::size_t EncodedSize(const CrdtMessage& m) {
  if (!IsKnownType(m.type)) return kHeaderSize + m.data.size();
  return BaseSize(m.type) + (HasData(m.type) ? m.data.size() : 0);
}

// Typed forms, for code that builds or inspects messages by kind. They convert losslessly to
// and from CrdtMessage (the codec's currency).
struct PutComponent {
  EntityId entity;
  ComponentId component;
  uint32_t timestamp;
  std::span<const uint8_t> data;
};
struct DeleteComponent {
  EntityId entity;
  ComponentId component;
  uint32_t timestamp;
};
struct DeleteEntity {
  EntityId entity;
};
struct AppendValue {
  EntityId entity;
  ComponentId component;
  uint32_t timestamp;
  std::span<const uint8_t> data;
};
struct PutComponentNetwork {
  EntityId entity;
  ComponentId component;
  uint32_t timestamp;
  uint32_t network_id;
  std::span<const uint8_t> data;
};
struct DeleteComponentNetwork {
  EntityId entity;
  ComponentId component;
  uint32_t timestamp;
  uint32_t network_id;
};
struct DeleteEntityNetwork {
  EntityId entity;
  uint32_t network_id;
  bool legacy_length = false;  // see CrdtMessage::legacy_length
};
// A message of a type this library does not know: kept so it can be relayed byte-exact.
struct UnknownMessage {
  uint32_t type;
  std::span<const uint8_t> body;
};

using TypedMessage =
    std::variant<PutComponent, DeleteComponent, DeleteEntity, AppendValue, PutComponentNetwork,
                 DeleteComponentNetwork, DeleteEntityNetwork, UnknownMessage>;

TypedMessage ToTyped(const CrdtMessage& m);
CrdtMessage FromTyped(const TypedMessage& m);

}  // namespace scenecrdt::protocol
