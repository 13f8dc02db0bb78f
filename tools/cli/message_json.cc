// SPDX-License-Identifier: Apache-2.0
// Owns the mapping between CrdtMessage and its JSON-lines representation.
#include "tools/cli/message_json.h"

#include <cstring>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::cli {
namespace {

using protocol::CrdtMessage;
using protocol::JsonValue;
using protocol::MessageType;

void AppendU64(uint64_t v, std::string& out) { out += std::to_string(v); }

void AppendFloats(std::initializer_list<float> fs, std::string& out) {
  out += '[';
  bool first = true;
  for (float f : fs) {
    if (!first) out += ',';
    first = false;
    protocol::AppendJsonFloat(f, out);
  }
  out += ']';
}

Error ParseError(const char* why) { return MakeError(ErrorCode::kParse, why); }

struct TypeName {
  const char* name;
  MessageType type;
};
constexpr TypeName kTypeNames[] = {
    {"put", MessageType::kPutComponent},
    {"delete", MessageType::kDeleteComponent},
    {"delete_entity", MessageType::kDeleteEntity},
    {"append", MessageType::kAppendValue},
    {"put_network", MessageType::kPutComponentNetwork},
    {"delete_network", MessageType::kDeleteComponentNetwork},
    {"delete_entity_network", MessageType::kDeleteEntityNetwork},
};

// An entity is a u32 id or {"number": N, "version": V}.
Result<uint32_t> ParseEntity(const JsonValue& v) {
  if (auto id = v.AsU32()) return *id;
  if (v.is_object()) {
    const JsonValue* n = v.Find("number");
    const JsonValue* ver = v.Find("version");
    auto number = n ? n->AsU32() : std::nullopt;
    auto version = ver ? ver->AsU32() : std::optional<uint32_t>(0);
    if (!number || *number > 0xFFFF || !version || *version > 0xFFFF) {
      return ParseError("entity object needs number and version in 0..65535");
    }
    return protocol::MakeEntityId(*number, *version);
  }
  return ParseError("entity must be a u32 or {\"number\",\"version\"}");
}

Result<void> ParseFloatArray(const JsonValue* v, std::size_t n, float* out) {
  if (!v) return {};
  if (!v->is_array() || v->array().size() != n) {
    return ParseError("position/scale need 3 numbers, rotation 4");
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto f = protocol::ParseFloatJson(v->array()[i]);
    if (!f) return ParseError("transform values must be numbers (or NaN/Infinity strings)");
    out[i] = *f;
  }
  return {};
}

// Reads a Transform from an object holding position/rotation/scale/parent (all optional,
// identity defaults).
Result<protocol::Transform> ParseTransform(const JsonValue& obj) {
  protocol::Transform t;
  float pos[3] = {0, 0, 0}, rot[4] = {0, 0, 0, 1}, scl[3] = {1, 1, 1};
  if (auto r = ParseFloatArray(obj.Find("position"), 3, pos); !r.has_value()) return r.error();
  if (auto r = ParseFloatArray(obj.Find("rotation"), 4, rot); !r.has_value()) return r.error();
  if (auto r = ParseFloatArray(obj.Find("scale"), 3, scl); !r.has_value()) return r.error();
  t.position = {pos[0], pos[1], pos[2]};
  t.rotation = {rot[0], rot[1], rot[2], rot[3]};
  t.scale = {scl[0], scl[1], scl[2]};
  if (const JsonValue* p = obj.Find("parent")) {
    auto parent = ParseEntity(*p);
    if (!parent.has_value()) return parent.error();
    t.parent = *parent;
  }
  return t;
}

Result<uint32_t> RequiredU32(const JsonValue& obj, const char* key, const char* why) {
  const JsonValue* v = obj.Find(key);
  auto u = v ? v->AsU32() : std::nullopt;
  if (!u) return ParseError(why);
  return *u;
}

}  // namespace

void AppendTransformJsonFields(const protocol::Transform& t, std::string& out) {
  out += "\"position\":";
  AppendFloats({t.position.x, t.position.y, t.position.z}, out);
  out += ",\"rotation\":";
  AppendFloats({t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w}, out);
  out += ",\"scale\":";
  AppendFloats({t.scale.x, t.scale.y, t.scale.z}, out);
  out += ",\"parent\":";
  AppendU64(t.parent, out);
}

void AppendMessageJson(const CrdtMessage& m, std::string& out) {
  out += "{\"type\":";
  if (!protocol::IsKnownType(m.type)) {
    out += "\"unknown\",\"typeCode\":";
    AppendU64(static_cast<uint32_t>(m.type), out);
    out += ",\"bodyHex\":\"";
    protocol::AppendHex(m.data, out);
    out += "\"}";
    return;
  }
  out += '"';
  out += protocol::MessageTypeName(m.type);
  out += "\",\"entity\":";
  AppendU64(m.entity, out);
  out += ",\"number\":";
  AppendU64(protocol::EntityNumber(m.entity), out);
  out += ",\"version\":";
  AppendU64(protocol::EntityVersion(m.entity), out);
  if (protocol::HasComponent(m.type)) {
    out += ",\"component\":";
    AppendU64(m.component, out);
  }
  if (protocol::HasTimestamp(m.type)) {
    out += ",\"timestamp\":";
    AppendU64(m.timestamp, out);
  }
  if (protocol::HasNetworkId(m.type)) {
    out += ",\"networkId\":";
    AppendU64(m.network_id, out);
  }
  if (m.legacy_length) out += ",\"legacyLength\":true";
  if (protocol::HasData(m.type)) {
    out += ",\"dataHex\":\"";
    protocol::AppendHex(m.data, out);
    out += '"';
    const bool is_put =
        m.type == MessageType::kPutComponent || m.type == MessageType::kPutComponentNetwork;
    if (is_put && m.component == protocol::kTransformComponentId &&
        m.data.size() == protocol::Transform::kSize) {
      const protocol::Transform t =
          protocol::LoadTransform(m.data.first<protocol::Transform::kSize>());
      out += ",\"transform\":{";
      AppendTransformJsonFields(t, out);
      out += '}';
    }
  }
  out += '}';
}

Result<void> EncodeMessageJson(const JsonValue& obj, std::vector<uint8_t>& out) {
  if (!obj.is_object()) return ParseError("each message must be a JSON object");
  const JsonValue* type_v = obj.Find("type");
  if (!type_v) type_v = obj.Find("op");
  if (!type_v || !type_v->is_string()) return ParseError("missing \"type\" (or \"op\") string");
  const std::string& type_name = type_v->text();

  if (type_name == "unknown") {
    auto code = RequiredU32(obj, "typeCode", "unknown messages need a u32 \"typeCode\"");
    if (!code.has_value()) return code.error();
    if (protocol::IsKnownType(static_cast<MessageType>(*code))) {
      return ParseError("typeCode of an unknown message must not be 1..7");
    }
    const JsonValue* body = obj.Find("bodyHex");
    auto bytes = body && body->is_string() ? protocol::FromHex(body->text()) : std::nullopt;
    if (!bytes) return ParseError("unknown messages need a hex \"bodyHex\"");
    if (bytes->size() > 0xFFFFFFFFu - protocol::kHeaderSize) return ParseError("body too large");
    CrdtMessage m;
    m.type = static_cast<MessageType>(*code);
    m.data = *bytes;
    protocol::AppendMessage(m, out);
    return {};
  }

  CrdtMessage m;
  bool found = false;
  for (const auto& tn : kTypeNames) {
    if (type_name == tn.name) {
      m.type = tn.type;
      found = true;
    }
  }
  if (!found) return ParseError("unknown \"type\" name");

  const JsonValue* entity_v = obj.Find("entity");
  if (entity_v) {
    auto e = ParseEntity(*entity_v);
    if (!e.has_value()) return e.error();
    m.entity = *e;
  } else {
    const JsonValue* n = obj.Find("number");
    const JsonValue* v = obj.Find("version");
    auto number = n ? n->AsU32() : std::nullopt;
    auto version = v ? v->AsU32() : std::optional<uint32_t>(0);
    if (!number || *number > 0xFFFF || !version || *version > 0xFFFF) {
      return ParseError("missing \"entity\" (or \"number\"/\"version\")");
    }
    m.entity = protocol::MakeEntityId(*number, *version);
  }

  if (protocol::HasComponent(m.type)) {
    const JsonValue* c = obj.Find("component");
    if (!c) c = obj.Find("componentId");
    if (c) {
      auto id = c->AsU32();
      if (!id) return ParseError("\"component\" must be a u32");
      m.component = *id;
    } else {
      m.component = protocol::kTransformComponentId;  // ops format: Transform by default
    }
    const JsonValue* ts = obj.Find("timestamp");
    auto t = ts ? ts->AsU32() : std::nullopt;
    if (!t) return ParseError("\"timestamp\" must be a u32");
    m.timestamp = *t;
  }
  if (protocol::HasNetworkId(m.type)) {
    const JsonValue* nid = obj.Find("networkId");
    auto id = nid ? nid->AsU32() : std::optional<uint32_t>(0);
    if (!id) return ParseError("\"networkId\" must be a u32");
    m.network_id = *id;
  }
  if (const JsonValue* legacy = obj.Find("legacyLength")) {
    m.legacy_length =
        legacy->is_bool() && legacy->bool_value() && m.type == MessageType::kDeleteEntityNetwork;
  }

  std::vector<uint8_t> data;
  if (protocol::HasData(m.type)) {
    const bool is_put =
        m.type == MessageType::kPutComponent || m.type == MessageType::kPutComponentNetwork;
    const JsonValue* transform = obj.Find("transform");
    const JsonValue* hex = obj.Find("dataHex");
    const bool ops_transform =
        !transform && !hex && is_put && m.component == protocol::kTransformComponentId;
    if (transform || ops_transform) {
      if (transform && !transform->is_object())
        return ParseError("\"transform\" must be an object");
      auto t = ParseTransform(transform ? *transform : obj);
      if (!t.has_value()) return t.error();
      const auto bytes = protocol::StoreTransform(*t);
      data.assign(bytes.begin(), bytes.end());
    } else {
      auto bytes = hex && hex->is_string() ? protocol::FromHex(hex->text()) : std::nullopt;
      if (!bytes) return ParseError("\"dataHex\" must be a hex string");
      data = std::move(*bytes);
    }
    if (data.size() > 0xFFFFFFFFu - protocol::kPutComponentNetworkBaseSize) {
      return ParseError("payload too large");
    }
    m.data = data;
  }
  protocol::AppendMessage(m, out);
  return {};
}

Result<std::vector<uint8_t>> EncodeJsonText(std::string_view text, std::size_t* error_line) {
  if (error_line) *error_line = 0;
  std::vector<uint8_t> out;
  std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return out;
  // A whole document: an array of messages or {"ops": [...]}. Try it when the text starts
  // with '[' or holds a single object with "ops".
  if (text[first] == '[' || text[first] == '{') {
    auto doc = protocol::ParseJson(text);
    if (doc.has_value()) {
      const JsonValue* list = doc->is_array() ? &*doc : doc->Find("ops");
      if (list && list->is_array()) {
        for (const JsonValue& item : list->array()) {
          if (auto r = EncodeMessageJson(item, out); !r.has_value()) return r.error();
        }
        return out;
      }
      if (!doc->is_object()) return ParseError("expected JSON lines, an array or {\"ops\":[...]}");
    }
  }
  // JSON lines.
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto obj = protocol::ParseJson(line);
    if (!obj.has_value()) {
      if (error_line) *error_line = line_no;
      return obj.error();
    }
    if (auto r = EncodeMessageJson(*obj, out); !r.has_value()) {
      if (error_line) *error_line = line_no;
      return r.error();
    }
  }
  return out;
}

}  // namespace scenecrdt::cli
