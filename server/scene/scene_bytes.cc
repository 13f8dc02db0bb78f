// SPDX-License-Identifier: Apache-2.0
// Owns the per-scene byte budget: growth bounds and the exact measure near the cap.
#include "scenecrdt/server/scene/scene_bytes.h"

#include <array>
#include <vector>

namespace scenecrdt::server {

namespace {

using protocol::CrdtMessage;
using protocol::MessageType;

// The encoded size of the register `view` as it appears in a snapshot.
uint64_t RegisterBytes(const runtime::RegisterView& view) {
  static const std::array<uint8_t, protocol::Transform::kSize> kTransformSized{};
  CrdtMessage m;
  m.entity = view.entity;
  m.component = view.component;
  m.timestamp = view.timestamp;
  if (!view.has_data) {
    m.type = MessageType::kDeleteComponent;
  } else {
    m.type = MessageType::kPutComponent;
    m.data = view.transform ? std::span<const uint8_t>(kTransformSized) : view.data;
  }
  return protocol::EncodedSize(m);
}

}  // namespace

uint64_t SceneBytes::Growth(const runtime::CrdtStore& store,
                            std::span<const CrdtMessage> messages) {
  uint64_t growth = 0;
  for (const CrdtMessage& m : messages) {
    const uint64_t size = protocol::EncodedSize(m);
    switch (m.type) {
      case MessageType::kDeleteEntity:
      case MessageType::kDeleteEntityNetwork:
        break;  // never refused by the cap (the tombstone limit bounds them)
      case MessageType::kPutComponent:
      case MessageType::kPutComponentNetwork:
      case MessageType::kDeleteComponent:
      case MessageType::kDeleteComponentNetwork: {
        const auto old = store.FindRegister(m.component, m.entity);
        const uint64_t before = old ? RegisterBytes(*old) : 0;
        if (size > before) growth += size - before;
        break;
      }
      default:
        growth += size;  // APPEND_VALUE: a new element (an upper bound)
        break;
    }
  }
  return growth;
}

bool SceneBytes::Fits(const runtime::CrdtStore& store, uint64_t growth, uint64_t cap,
                      int64_t now_ms) {
  if (cap == 0 || growth == 0 || bytes_ + growth <= cap) return true;
  if (now_ms - measured_ms_ >= 1000) {
    measured_ms_ = now_ms;
    std::vector<uint8_t> snapshot;
    store.ExportSnapshot(snapshot);
    bytes_ = snapshot.size();
  }
  return bytes_ + growth <= cap;
}

}  // namespace scenecrdt::server
