// SPDX-License-Identifier: Apache-2.0
// Owns the conversions between the flat CrdtMessage and the typed message structs.
#include "scenecrdt/protocol/crdt_message.h"

#include <type_traits>

namespace scenecrdt::protocol {

const char* MessageTypeName(MessageType t) {
  switch (t) {
    case MessageType::kPutComponent:
      return "put";
    case MessageType::kDeleteComponent:
      return "delete";
    case MessageType::kDeleteEntity:
      return "delete_entity";
    case MessageType::kAppendValue:
      return "append";
    case MessageType::kPutComponentNetwork:
      return "put_network";
    case MessageType::kDeleteComponentNetwork:
      return "delete_network";
    case MessageType::kDeleteEntityNetwork:
      return "delete_entity_network";
    default:
      return "unknown";
  }
}

TypedMessage ToTyped(const CrdtMessage& m) {
  switch (m.type) {
    case MessageType::kPutComponent:
      return PutComponent{m.entity, m.component, m.timestamp, m.data};
    case MessageType::kDeleteComponent:
      return DeleteComponent{m.entity, m.component, m.timestamp};
    case MessageType::kDeleteEntity:
      return DeleteEntity{m.entity};
    case MessageType::kAppendValue:
      return AppendValue{m.entity, m.component, m.timestamp, m.data};
    case MessageType::kPutComponentNetwork:
      return PutComponentNetwork{m.entity, m.component, m.timestamp, m.network_id, m.data};
    case MessageType::kDeleteComponentNetwork:
      return DeleteComponentNetwork{m.entity, m.component, m.timestamp, m.network_id};
    case MessageType::kDeleteEntityNetwork:
      return DeleteEntityNetwork{m.entity, m.network_id, m.legacy_length};
    default:
      return UnknownMessage{static_cast<uint32_t>(m.type), m.data};
  }
}

CrdtMessage FromTyped(const TypedMessage& typed) {
  return std::visit(
      [](const auto& v) -> CrdtMessage {
        using V = std::decay_t<decltype(v)>;
        CrdtMessage m;
        if constexpr (std::is_same_v<V, PutComponent>) {
          m = {MessageType::kPutComponent, v.entity, v.component, v.timestamp, 0, v.data};
        } else if constexpr (std::is_same_v<V, DeleteComponent>) {
          m = {MessageType::kDeleteComponent, v.entity, v.component, v.timestamp, 0, {}};
        } else if constexpr (std::is_same_v<V, DeleteEntity>) {
          m = {MessageType::kDeleteEntity, v.entity, 0, 0, 0, {}};
        } else if constexpr (std::is_same_v<V, AppendValue>) {
          m = {MessageType::kAppendValue, v.entity, v.component, v.timestamp, 0, v.data};
        } else if constexpr (std::is_same_v<V, PutComponentNetwork>) {
          m = {MessageType::kPutComponentNetwork,
               v.entity,
               v.component,
               v.timestamp,
               v.network_id,
               v.data};
        } else if constexpr (std::is_same_v<V, DeleteComponentNetwork>) {
          m = {MessageType::kDeleteComponentNetwork,
               v.entity,
               v.component,
               v.timestamp,
               v.network_id,
               {}};
        } else if constexpr (std::is_same_v<V, DeleteEntityNetwork>) {
          m = {
              MessageType::kDeleteEntityNetwork, v.entity, 0, 0, v.network_id, {}, v.legacy_length};
        } else {
          m.type = static_cast<MessageType>(v.type);
          m.data = v.body;
        }
        return m;
      },
      typed);
}

}  // namespace scenecrdt::protocol
