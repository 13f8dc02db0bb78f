// SPDX-License-Identifier: Apache-2.0
// Owns the state JSON writer.
#include "tools/cli/state_json.h"

#include "scenecrdt/protocol/hex.h"
#include "tools/cli/message_json.h"

namespace scenecrdt::cli {
namespace {

void AppendEntityFields(protocol::EntityId e, std::string& out) {
  out += "\"entity\":" + std::to_string(e) +
         ",\"number\":" + std::to_string(protocol::EntityNumber(e)) +
         ",\"version\":" + std::to_string(protocol::EntityVersion(e));
}

}  // namespace

void AppendStateJsonBody(const runtime::CrdtStore& store,
                         std::span<const protocol::EntityId> entities, std::string& out) {
  const std::vector<runtime::RegisterView> registers = store.SortedRegisters();
  out += "{\"transforms\":[";
  bool first = true;
  for (const auto& r : registers) {
    if (r.component != protocol::kTransformComponentId || !r.transform) continue;
    if (!first) out += ',';
    first = false;
    const protocol::Transform& t = *r.transform;
    out += '{';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + ',';
    AppendTransformJsonFields(t, out);
    out += ",\"dataHex\":\"";
    protocol::AppendHex(protocol::StoreTransform(t), out);
    out += "\"}";
  }
  out += "],\"deletedTransforms\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component != protocol::kTransformComponentId || r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + '}';
  }
  out += "],\"components\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component == protocol::kTransformComponentId || !r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(r.component) + ',';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + ",\"dataHex\":\"";
    protocol::AppendHex(r.data, out);
    out += "\"}";
  }
  out += "],\"deletedComponents\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component == protocol::kTransformComponentId || r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(r.component) + ',';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + '}';
  }
  out += "],\"appendValues\":[";
  first = true;
  for (const auto& s : store.SortedAppendSets()) {
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(s.component) + ',';
    AppendEntityFields(s.entity, out);
    out += ",\"timestamps\":[";
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(s.elements[i].timestamp);
    }
    out += "],\"values\":[";
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      if (i) out += ',';
      out += '"';
      protocol::AppendHex(s.elements[i].data, out);
      out += '"';
    }
    out += "]}";
  }
  out += "],\"entities\":[";
  first = true;
  for (protocol::EntityId e : entities) {
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendEntityFields(e, out);
    out += ",\"state\":\"";
    out += runtime::EntityStateName(store.GetEntityState(e));
    out += "\"}";
  }
  out += "],\"stateHash\":\"" + store.StateHashHex() + '"';
}

}  // namespace scenecrdt::cli
