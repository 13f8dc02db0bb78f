// SPDX-License-Identifier: Apache-2.0
// Owns the state JSON writer: one pass per section over registers sorted once, numbers with
// std::to_chars straight into a ChunkedText buffer (no document, no per-value allocations),
// and the state hash computed over the same sorted registers (replay/state_hash.h).
#include "scenecrdt/replay/state_json.h"

#include <algorithm>

#include "scenecrdt/replay/state_hash.h"

namespace scenecrdt::replay {
namespace {

using runtime::RegisterView;

// Room for one record's fixed part: ids, timestamps, a Transform's 10 floats and parent, its
// 44 bytes in hex; generous.
constexpr std::size_t kRecordRoom = 1024;

// How many records ahead the registers a loop will read are fetched.
constexpr std::size_t kAhead = 8;

char* PutEntityFields(char* p, protocol::EntityId e) {
  p = PutLiteral(p, "\"entity\":");
  p = PutU64(p, e);
  p = PutLiteral(p, ",\"number\":");
  p = PutU64(p, protocol::EntityNumber(e));
  p = PutLiteral(p, ",\"version\":");
  return PutU64(p, protocol::EntityVersion(e));
}

char* PutFloats(char* p, std::initializer_list<float> fs) {
  *p++ = '[';
  bool first = true;
  for (float f : fs) {
    if (!first) *p++ = ',';
    first = false;
    p = PutFloat(p, f);
  }
  *p++ = ']';
  return p;
}

// The fields of AppendTransformJsonFields (replay/message_json.h) and "dataHex".
char* PutTransformRecord(char* p, const RegisterView& r) {
  const protocol::Transform& t = *r.transform;
  *p++ = '{';
  p = PutEntityFields(p, r.entity);
  p = PutLiteral(p, ",\"timestamp\":");
  p = PutU64(p, r.timestamp);
  p = PutLiteral(p, ",\"position\":");
  p = PutFloats(p, {t.position.x, t.position.y, t.position.z});
  p = PutLiteral(p, ",\"rotation\":");
  p = PutFloats(p, {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w});
  p = PutLiteral(p, ",\"scale\":");
  p = PutFloats(p, {t.scale.x, t.scale.y, t.scale.z});
  p = PutLiteral(p, ",\"parent\":");
  p = PutU64(p, t.parent);
  p = PutLiteral(p, ",\"dataHex\":\"");
  p = PutHexBytes(p, protocol::StoreTransform(t));
  return PutLiteral(p, "\"}");
}

// `{"component":C,` for opaque registers and append sets, then the entity fields.
char* PutComponentEntity(char* p, protocol::ComponentId c, protocol::EntityId e) {
  p = PutLiteral(p, "{\"component\":");
  p = PutU64(p, c);
  *p++ = ',';
  return PutEntityFields(p, e);
}

// Writes the comma before every record of a list but the first.
class ListSeparator {
 public:
  char* Put(char* p) {
    if (!first_) *p++ = ',';
    first_ = false;
    return p;
  }

 private:
  bool first_ = true;
};

void WriteAppendSets(std::span<const runtime::CrdtStore::AppendSetView> sets, ChunkedText& out) {
  ListSeparator sep;
  for (const auto& s : sets) {
    char* p = sep.Put(out.Room(kRecordRoom));
    p = PutComponentEntity(p, s.component, s.entity);
    p = PutLiteral(p, ",\"timestamps\":[");
    out.Commit(p);
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      p = out.Room(16);
      if (i) *p++ = ',';
      out.Commit(PutU64(p, s.elements[i].timestamp));
    }
    out.Put("],\"values\":[");
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      out.Put(i ? std::string_view(",\"") : std::string_view("\""));
      out.PutHex(s.elements[i].data);
      out.Put('"');
    }
    out.Put("]}");
  }
}

}  // namespace

void WriteStateJsonBody(const runtime::CrdtStore& store,
                        std::span<const protocol::EntityId> entities, ChunkedText& out) {
  const std::vector<RegisterView> registers = SortedRegisterViews(store);
  const std::vector<runtime::CrdtStore::AppendSetView> sets = store.SortedAppendSets();
  out.Put("{\"transforms\":[");
  ListSeparator sep;
  // Registers are visited in key order, scattered in memory: fetch each a few records ahead.
  for (std::size_t i = 0; i < registers.size(); ++i) {
    if (i + kAhead < registers.size() && registers[i + kAhead].transform) {
      __builtin_prefetch(registers[i + kAhead].transform);
    }
    const RegisterView& r = registers[i];
    if (r.component != protocol::kTransformComponentId || !r.transform) continue;
    out.Commit(PutTransformRecord(sep.Put(out.Room(kRecordRoom)), r));
  }
  out.Put("],\"deletedTransforms\":[");
  sep = {};
  for (const RegisterView& r : registers) {
    if (r.component != protocol::kTransformComponentId || r.has_data) continue;
    char* p = sep.Put(out.Room(kRecordRoom));
    *p++ = '{';
    p = PutEntityFields(p, r.entity);
    p = PutLiteral(p, ",\"timestamp\":");
    p = PutU64(p, r.timestamp);
    out.Commit(PutLiteral(p, "}"));
  }
  out.Put("],\"components\":[");
  sep = {};
  for (const RegisterView& r : registers) {
    if (r.component == protocol::kTransformComponentId || !r.has_data) continue;
    char* p = sep.Put(out.Room(kRecordRoom));
    p = PutComponentEntity(p, r.component, r.entity);
    p = PutLiteral(p, ",\"timestamp\":");
    p = PutU64(p, r.timestamp);
    out.Commit(PutLiteral(p, ",\"dataHex\":\""));
    out.PutHex(r.data);
    out.Put("\"}");
  }
  out.Put("],\"deletedComponents\":[");
  sep = {};
  for (const RegisterView& r : registers) {
    if (r.component == protocol::kTransformComponentId || r.has_data) continue;
    char* p = sep.Put(out.Room(kRecordRoom));
    p = PutComponentEntity(p, r.component, r.entity);
    p = PutLiteral(p, ",\"timestamp\":");
    p = PutU64(p, r.timestamp);
    out.Commit(PutLiteral(p, "}"));
  }
  out.Put("],\"appendValues\":[");
  WriteAppendSets(sets, out);
  out.Put("],\"entities\":[");
  sep = {};
  // GetEntityState reads the entity's Transform register: fetch it a few ids ahead, walking
  // the Transform registers (sorted by entity, as replay's `entities` are; an unsorted list
  // only loses the prefetch) alongside.
  const auto transform_end = std::partition_point(
      registers.begin(), registers.end(),
      [](const RegisterView& r) { return r.component <= protocol::kTransformComponentId; });
  auto ahead = std::partition_point(registers.begin(), transform_end, [](const RegisterView& r) {
    return r.component < protocol::kTransformComponentId;
  });
  for (std::size_t i = 0; i < entities.size(); ++i) {
    if (i + kAhead < entities.size()) {
      const protocol::EntityId next = entities[i + kAhead];
      while (ahead != transform_end && ahead->entity < next) ++ahead;
      if (ahead != transform_end && ahead->entity == next && ahead->transform) {
        __builtin_prefetch(ahead->transform);
      }
    }
    const protocol::EntityId e = entities[i];
    char* p = sep.Put(out.Room(kRecordRoom));
    *p++ = '{';
    p = PutEntityFields(p, e);
    p = PutLiteral(p, ",\"state\":\"");
    const std::string_view state = runtime::EntityStateName(store.GetEntityState(e));
    std::memcpy(p, state.data(), state.size());
    out.Commit(PutLiteral(p + state.size(), "\"}"));
  }
  out.Put("],\"stateHash\":\"");
  out.Put(CanonicalStateHashHex(store, registers, sets));
  out.Put('"');
}

void AppendStateJsonBody(const runtime::CrdtStore& store,
                         std::span<const protocol::EntityId> entities, std::string& out) {
  ChunkedText text([&out](std::string_view chunk) { out.append(chunk); });
  WriteStateJsonBody(store, entities, text);
  text.Flush();
}

}  // namespace scenecrdt::replay
