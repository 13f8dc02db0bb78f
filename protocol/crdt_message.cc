// SPDX-License-Identifier: Apache-2.0
// Owns the message types' short names (the layout itself is inline in crdt_message.h).
#include "scenecrdt/protocol/crdt_message.h"

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

}  // namespace scenecrdt::protocol
