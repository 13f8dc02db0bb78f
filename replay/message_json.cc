// SPDX-License-Identifier: Apache-2.0
// Owns the mapping between CrdtMessage and its JSON-lines representation, both ways. Reading
// refuses what it would otherwise have to ignore (a misspelt key would silently leave a
// Transform at identity), and every refusal names the key and lists the accepted ones.
#include "scenecrdt/replay/message_json.h"

#include <algorithm>
#include <initializer_list>

#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::replay {
namespace {

using json::Json;
using protocol::CrdtMessage;
using protocol::MessageType;

void AppendU64(uint64_t v, std::string& out) { out += std::to_string(v); }

void AppendFloats(std::initializer_list<float> fs, std::string& out) {
  out += '[';
  bool first = true;
  for (float f : fs) {
    if (!first) out += ',';
    first = false;
    json::AppendFloat(f, out);
  }
  out += ']';
}

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

constexpr const char* kTransformKeys[] = {"position", "rotation", "scale", "parent"};

bool IsPut(MessageType type) {
  return type == MessageType::kPutComponent || type == MessageType::kPutComponentNetwork;
}

// The keys a message of `type` may carry ("unknown" messages: type, typeCode, bodyHex).
std::vector<std::string_view> AcceptedKeys(std::optional<MessageType> type) {
  std::vector<std::string_view> keys = {"type", "op"};
  if (!type) {
    keys.insert(keys.end(), {"typeCode", "bodyHex"});
    return keys;
  }
  keys.insert(keys.end(), {"entity", "number", "version"});
  if (protocol::HasComponent(*type)) keys.insert(keys.end(), {"component", "componentId"});
  if (protocol::HasTimestamp(*type)) keys.push_back("timestamp");
  if (protocol::HasNetworkId(*type)) keys.push_back("networkId");
  if (*type == MessageType::kDeleteEntityNetwork) keys.push_back("legacyLength");
  if (protocol::HasData(*type)) keys.push_back("dataHex");
  if (IsPut(*type)) {
    keys.push_back("transform");
    keys.insert(keys.end(), std::begin(kTransformKeys), std::end(kTransformKeys));
  }
  return keys;
}

// "put, delete, ..., unknown".
const std::string& AllTypeNames() {
  static const std::string kAll = [] {
    std::string all;
    for (const auto& tn : kTypeNames) all += std::string(tn.name) + ", ";
    return all + "unknown";
  }();
  return kAll;
}

std::string Join(const std::vector<std::string_view>& words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

// A value as the user wrote it (JSON), cut short for messages.
std::string Shown(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

// Reads one message object; each step either fills the message or writes `problem_`.
class MessageReader {
 public:
  MessageReader(const Json& obj, std::string& problem) : obj_(obj), problem_(problem) {}

  Result<void> Encode(std::vector<uint8_t>& out) {
    if (!obj_.is_object()) return Refuse("each message must be a JSON object, got " + Shown(obj_));
    if (Member("type") && Member("op")) return Refuse("give \"type\" or \"op\", not both");
    const Json* type_v = Member("type") ? Member("type") : Member("op");
    const std::string& all_types = AllTypeNames();
    if (!type_v) {
      return Refuse("missing type: each message needs \"type\" (or \"op\"): " + all_types);
    }
    if (!type_v->is_string()) return Refuse("\"type\" must be one of " + all_types);
    const std::string& type_name = type_v->get_ref<const std::string&>();
    if (type_name == "unknown") {
      type_label_ = "type unknown";
      return EncodeUnknown(out);
    }
    const TypeName* found = nullptr;
    for (const auto& tn : kTypeNames) {
      if (type_name == tn.name) found = &tn;
    }
    if (!found) return Refuse("unknown type " + Shown(*type_v) + " (accepted: " + all_types + ")");
    type_label_ = "type " + type_name;
    CrdtMessage m;
    m.type = found->type;
    if (!CheckKeys(obj_, AcceptedKeys(m.type), "in a message of " + type_label_)) return Fail();
    if (!ReadEntityFields(m.entity)) return Fail();
    if (protocol::HasComponent(m.type)) {
      if (Member("component") && Member("componentId")) {
        return Refuse("give \"component\" or \"componentId\", not both");
      }
      const Json* c = Member("component") ? Member("component") : Member("componentId");
      m.component = protocol::kTransformComponentId;  // ops format: Transform by default
      if (c && !U32(*c, c == Member("component") ? "component" : "componentId", m.component)) {
        return Fail();
      }
    }
    if (protocol::HasTimestamp(m.type) && !Required("timestamp", "a u32", m.timestamp)) {
      return Fail();
    }
    if (protocol::HasNetworkId(m.type)) {
      const Json* nid = Member("networkId");
      if (nid && !U32(*nid, "networkId", m.network_id)) return Fail();
    }
    if (const Json* legacy = Member("legacyLength")) {
      if (!legacy->is_boolean()) return Refuse("\"legacyLength\" must be true or false");
      m.legacy_length = legacy->get<bool>();
    }
    std::vector<uint8_t> data;
    if (protocol::HasData(m.type)) {
      if (!ReadData(m, data)) return Fail();
      if (data.size() > 0xFFFFFFFFu - protocol::kPutComponentNetworkBaseSize) {
        return Refuse("the payload is too large for a DCL message");
      }
      m.data = data;
    }
    protocol::AppendMessage(m, out);
    return {};
  }

 private:
  const Json* Member(std::string_view key) const { return json::Member(obj_, key); }

  Result<void> Refuse(std::string why) {
    problem_ = std::move(why);
    return Fail();
  }
  static Error Fail() { return MakeError(ErrorCode::kParse, "refused message"); }
  bool Problem(std::string why) {
    problem_ = std::move(why);
    return false;
  }

  // Every key of `obj` must be one of `accepted`.
  bool CheckKeys(const Json& obj, const std::vector<std::string_view>& accepted,
                 const std::string& where) {
    for (const auto& [key, value] : obj.items()) {
      if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
      return Problem("unknown key " + Shown(Json(key)) + " " + where +
                     " (accepted keys: " + Join(accepted) + ")");
    }
    return true;
  }

  bool U32(const Json& v, std::string_view key, uint32_t& out) {
    auto u = json::AsU32(v);
    if (!u) {
      return Problem("\"" + std::string(key) + "\" must be a u32 (0..4294967295), got " + Shown(v));
    }
    out = *u;
    return true;
  }

  bool Required(std::string_view key, std::string_view kind, uint32_t& out) {
    const Json* v = Member(key);
    if (!v) {
      return Problem("missing " + std::string(key) + ": a message of " + type_label_ + " needs \"" +
                     std::string(key) + "\" (" + std::string(kind) + ")");
    }
    return U32(*v, key, out);
  }

  // An entity (or a parent): a u32 id or {"number": N, "version": V}.
  bool Entity(const Json& v, std::string_view key, uint32_t& out) {
    if (auto id = json::AsU32(v)) {
      out = *id;
      return true;
    }
    const std::string name(key);
    if (!v.is_object()) {
      return Problem("\"" + name + "\" must be a u32 or {\"number\":N,\"version\":V}, got " +
                     Shown(v));
    }
    if (!CheckKeys(v, {"number", "version"}, "in \"" + name + "\"")) return false;
    return Halves(json::Member(v, "number"), json::Member(v, "version"), name, out);
  }

  // number (required) and version (default 0), each 0..65535.
  bool Halves(const Json* number_v, const Json* version_v, const std::string& where,
              uint32_t& out) {
    if (!number_v) return Problem("missing number: \"" + where + "\" needs \"number\"");
    auto number = json::AsU32(*number_v);
    auto version = version_v ? json::AsU32(*version_v) : std::optional<uint32_t>(0);
    if (!number || *number > 0xFFFF) {
      return Problem("\"number\" of \"" + where + "\" must be 0..65535, got " + Shown(*number_v));
    }
    if (!version || *version > 0xFFFF) {
      return Problem("\"version\" of \"" + where + "\" must be 0..65535, got " + Shown(*version_v));
    }
    out = protocol::MakeEntityId(*number, *version);
    return true;
  }

  // "entity", or the top-level "number"/"version" pair; when both are given they must agree
  // (an edited "number" next to a stale "entity" would otherwise be ignored).
  bool ReadEntityFields(uint32_t& out) {
    const Json* entity_v = Member("entity");
    const Json* number_v = Member("number");
    const Json* version_v = Member("version");
    if (!entity_v && !number_v) {
      return Problem("missing entity: a message of " + type_label_ +
                     " needs \"entity\" (a u32 or {\"number\",\"version\"}) or \"number\" (and "
                     "\"version\")");
    }
    if (entity_v && !Entity(*entity_v, "entity", out)) return false;
    if (!number_v) {
      if (version_v) return Problem("\"version\" needs \"number\" next to it");
      return true;
    }
    uint32_t from_halves = 0;
    if (!Halves(number_v, version_v, "message", from_halves)) return false;
    if (entity_v && from_halves != out) {
      return Problem("\"entity\" " + std::to_string(out) + " and \"number\"/\"version\" " +
                     std::to_string(protocol::EntityNumber(from_halves)) + "/" +
                     std::to_string(protocol::EntityVersion(from_halves)) +
                     " disagree: give one of them");
    }
    out = from_halves;
    return true;
  }

  bool Floats(const Json* v, std::string_view key, std::size_t n, float* out) {
    if (!v) return true;  // identity default
    const std::string name(key);
    const std::string want = n == 3 ? "3 numbers [x,y,z]" : "4 numbers [x,y,z,w]";
    if (!v->is_array() || v->size() != n) {
      return Problem("\"" + name + "\" needs " + want + ", got " + Shown(*v));
    }
    for (std::size_t i = 0; i < n; ++i) {
      auto f = json::AsFloat((*v)[i]);
      if (!f) {
        return Problem("\"" + name + "\" needs " + want +
                       " (or the strings \"NaN\", \"Infinity\", \"-Infinity\", \"0xBITS\"), got " +
                       Shown(*v));
      }
      out[i] = *f;
    }
    return true;
  }

  // position/rotation/scale/parent of `obj` (each optional, identity defaults).
  bool TransformFields(const Json& obj, protocol::Transform& t) {
    float pos[3] = {0, 0, 0}, rot[4] = {0, 0, 0, 1}, scl[3] = {1, 1, 1};
    if (!Floats(json::Member(obj, "position"), "position", 3, pos) ||
        !Floats(json::Member(obj, "rotation"), "rotation", 4, rot) ||
        !Floats(json::Member(obj, "scale"), "scale", 3, scl)) {
      return false;
    }
    t.position = {pos[0], pos[1], pos[2]};
    t.rotation = {rot[0], rot[1], rot[2], rot[3]};
    t.scale = {scl[0], scl[1], scl[2]};
    if (const Json* p = json::Member(obj, "parent")) return Entity(*p, "parent", t.parent);
    return true;
  }

  bool Hex(const Json& v, std::string_view key, std::vector<uint8_t>& out) {
    auto bytes = v.is_string() ? protocol::FromHex(v.get_ref<const std::string&>()) : std::nullopt;
    if (!bytes) {
      return Problem("\"" + std::string(key) + "\" must be a string of hex digit pairs, got " +
                     Shown(v));
    }
    out = std::move(*bytes);
    return true;
  }

  // The payload: "transform" (used instead of "dataHex" when both are there, as `decode`
  // prints both), "dataHex", or the ops format's top-level Transform fields.
  bool ReadData(const CrdtMessage& m, std::vector<uint8_t>& data) {
    const Json* transform = Member("transform");
    const Json* hex = Member("dataHex");
    const bool top_level = std::any_of(std::begin(kTransformKeys), std::end(kTransformKeys),
                                       [&](const char* k) { return Member(k) != nullptr; });
    if (top_level && (transform || hex)) {
      return Problem(std::string("give \"") + (transform ? "transform" : "dataHex") +
                     "\" or top-level \"position\"/\"rotation\"/\"scale\"/\"parent\", not both");
    }
    if (transform || (!hex && IsPut(m.type) && m.component == protocol::kTransformComponentId)) {
      protocol::Transform t;
      if (transform) {
        if (!transform->is_object()) {
          return Problem(
              "\"transform\" must be an object {\"position\",\"rotation\",\"scale\","
              "\"parent\"}, got " +
              Shown(*transform));
        }
        if (!CheckKeys(
                *transform,
                std::vector<std::string_view>(std::begin(kTransformKeys), std::end(kTransformKeys)),
                "in \"transform\"")) {
          return false;
        }
      }
      if (!TransformFields(transform ? *transform : obj_, t)) return false;
      const auto bytes = protocol::StoreTransform(t);
      data.assign(bytes.begin(), bytes.end());
      return true;
    }
    if (!hex) {
      return Problem("missing dataHex: a message of " + type_label_ + " with component " +
                     std::to_string(m.component) + " needs \"dataHex\" (the payload in hex)");
    }
    return Hex(*hex, "dataHex", data);
  }

  Result<void> EncodeUnknown(std::vector<uint8_t>& out) {
    if (!CheckKeys(obj_, AcceptedKeys(std::nullopt), "in a message of type unknown")) {
      return Fail();
    }
    uint32_t code = 0;
    if (!Required("typeCode", "a u32 other than 1..7", code)) return Fail();
    if (protocol::IsKnownType(static_cast<MessageType>(code))) {
      return Refuse("\"typeCode\" of an unknown message must not be 1..7 (give its type name)");
    }
    const Json* body_v = Member("bodyHex");
    if (!body_v)
      return Refuse("missing bodyHex: a message of type unknown needs \"bodyHex\" (hex)");
    std::vector<uint8_t> body;
    if (!Hex(*body_v, "bodyHex", body)) return Fail();
    if (body.size() > 0xFFFFFFFFu - protocol::kHeaderSize) {
      return Refuse("the body is too large for a DCL message");
    }
    CrdtMessage m;
    m.type = static_cast<MessageType>(code);
    m.data = body;
    protocol::AppendMessage(m, out);
    return {};
  }

  const Json& obj_;
  std::string& problem_;
  std::string type_label_;
};

// "invalid JSON: <reason> (column C)" for a reader error at `offset` of `text`.
std::string JsonProblem(std::string_view text, const Error& e) {
  const uint64_t offset = std::min<uint64_t>(e.offset, text.size());
  const std::size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const uint64_t column =
      line_start == std::string_view::npos || offset == 0 ? offset + 1 : offset - line_start;
  return std::string("invalid JSON: ") + e.detail + " (column " + std::to_string(column) + ")";
}

Error Refused(EncodeProblem& problem, std::size_t line, std::string message) {
  problem.line = line;
  problem.message = std::move(message);
  return MakeError(ErrorCode::kParse, "refused input");
}

// A whole document: an array of messages or {"ops": [...], "comment": ...}.
Result<std::vector<uint8_t>> EncodeDocument(std::string_view text, const Json& doc,
                                            const json::ElementOffsets& offsets,
                                            EncodeProblem& problem) {
  std::vector<uint8_t> out;
  const Json* list = &doc;
  if (doc.is_object()) {
    for (const auto& [key, value] : doc.items()) {
      if (key != "ops" && key != "comment") {
        return Refused(
            problem, 1,
            "unknown key " + Shown(Json(key)) + " at the top level (accepted keys: ops, comment)");
      }
    }
    list = json::Member(doc, "ops");
    if (!list->is_array()) return Refused(problem, 1, "\"ops\" must be an array of messages");
  }
  std::string why;
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (EncodeMessageJson((*list)[i], out, why).has_value()) continue;
    const auto at = offsets.Of(*list, i);
    return Refused(problem, at ? json::LineOf(text, *at) : 1, why);
  }
  return out;
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
    if (IsPut(m.type) && m.component == protocol::kTransformComponentId &&
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

Result<void> EncodeMessageJson(const Json& obj, std::vector<uint8_t>& out, std::string& problem) {
  return MessageReader(obj, problem).Encode(out);
}

Result<std::vector<uint8_t>> EncodeJsonText(std::string_view text, EncodeProblem& problem) {
  problem = {};
  std::vector<uint8_t> out;
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return out;
  // A whole document when the text is one array, or one object with "ops"; one object
  // without "ops" is a single JSON line.
  if (text[first] == '[' || text[first] == '{') {
    json::ElementOffsets offsets;
    auto doc = json::ReadJson(text, {}, &offsets);
    if (doc.has_value() && (doc->is_array() || json::Member(*doc, "ops"))) {
      return EncodeDocument(text, *doc, offsets, problem);
    }
    if (!doc.has_value() && text[first] == '[') {
      return Refused(problem, json::LineOf(text, doc.error().offset),
                     JsonProblem(text, doc.error()));
    }
  }
  std::size_t line_no = 0;
  std::size_t pos = 0;
  std::string why;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    ++line_no;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto obj = json::ReadJson(line);
    if (!obj.has_value()) return Refused(problem, line_no, JsonProblem(line, obj.error()));
    if (!EncodeMessageJson(*obj, out, why).has_value()) return Refused(problem, line_no, why);
  }
  return out;
}

}  // namespace scenecrdt::replay
