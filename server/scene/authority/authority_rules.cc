// SPDX-License-Identifier: Apache-2.0
// Owns parsing the --authority-rules file (docs/AUTHORITY.md "Rules mode").
#include "scenecrdt/server/scene/authority/authority_rules.h"

#include <charconv>
#include <optional>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"

namespace scenecrdt::server {

namespace {

constexpr uint32_t kMaxEntityNumber = 65534;  // protocol::kMaxEntityNumber

std::optional<Writer> ReadWriter(const json::Json& v) {
  const auto* s = v.get_ptr<const std::string*>();
  if (!s) return std::nullopt;
  if (*s == "owner") return Writer::kOwner;
  if (*s == "any") return Writer::kAny;
  if (*s == "admin") return Writer::kAdmin;
  if (*s == "none") return Writer::kNone;
  return std::nullopt;
}

std::optional<uint32_t> ReadComponentId(const std::string& key) {
  uint32_t value = 0;
  const char* end = key.data() + key.size();
  const auto [ptr, ec] = std::from_chars(key.data(), end, value);
  if (key.empty() || ec != std::errc() || ptr != end || (key.size() > 1 && key[0] == '0')) {
    return std::nullopt;
  }
  return value;
}

// A key shown in an error: at most 64 bytes, control bytes replaced.
std::string Shown(std::string_view key) {
  std::string out(key.substr(0, 64));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

const char* WriterName(Writer w) {
  switch (w) {
    case Writer::kOwner:
      return "owner";
    case Writer::kAny:
      return "any";
    case Writer::kAdmin:
      return "admin";
    case Writer::kNone:
      return "none";
  }
  return "owner";
}

Result<AuthorityRules> AuthorityRules::Parse(std::string_view text, std::string& why) {
  const auto bad = [&](std::string text_of_why) {
    why = std::move(text_of_why);
    return MakeError(ErrorCode::kInvalidArgument, "bad --authority-rules file");
  };
  if (text.size() > kMaxFileBytes) return bad("the file is larger than 1 MiB");
  json::ReadLimits limits;
  limits.max_depth = 4;
  limits.refuse_duplicate_members = true;
  auto doc = json::ReadJson(text, limits);
  if (!doc.has_value()) {
    why = std::string("not JSON: ") + doc.error().detail + " at byte " +
          std::to_string(doc.error().offset);
    return MakeError(ErrorCode::kParse, "bad --authority-rules file");
  }
  if (!doc->is_object()) return bad("the file must hold one JSON object");
  AuthorityRules rules;
  for (const auto& [key, value] : doc->items()) {
    if (key == "default") {
      const auto w = ReadWriter(value);
      if (!w) return bad("\"default\": must be \"owner\", \"any\", \"admin\" or \"none\"");
      rules.fallback = *w;
    } else if (key == "components") {
      if (!value.is_object()) return bad("\"components\": must be an object");
      if (value.size() > kMaxComponents) return bad("\"components\": more than 4096 entries");
      for (const auto& [id_text, who] : value.items()) {
        const auto id = ReadComponentId(id_text);
        if (!id) {
          return bad("\"components\": key \"" + Shown(id_text) +
                     "\" is not a component id (a decimal u32)");
        }
        const auto w = ReadWriter(who);
        if (!w) {
          return bad("\"components\": \"" + Shown(id_text) +
                     "\" must be \"owner\", \"any\", \"admin\" or \"none\"");
        }
        rules.components[*id] = *w;
      }
    } else if (key == "admin_entities") {
      if (!value.is_array() || value.size() > kMaxRanges) {
        return bad("\"admin_entities\": must be an array of at most 256 [lo, hi] pairs");
      }
      for (const json::Json& range : value) {
        const json::Json::number_unsigned_t* lo = nullptr;
        const json::Json::number_unsigned_t* hi = nullptr;
        if (range.is_array() && range.size() == 2) {
          lo = range[0].get_ptr<const json::Json::number_unsigned_t*>();
          hi = range[1].get_ptr<const json::Json::number_unsigned_t*>();
        }
        if (!lo || !hi || *lo > *hi || *hi > kMaxEntityNumber) {
          return bad(
              "\"admin_entities\": each range must be [lo, hi] entity numbers with lo <= "
              "hi <= 65534");
        }
        rules.admin_entities.emplace_back(static_cast<uint32_t>(*lo), static_cast<uint32_t>(*hi));
      }
    } else {
      return bad("unknown key \"" + Shown(key) + "\" (known: default, components, admin_entities)");
    }
  }
  return rules;
}

}  // namespace scenecrdt::server
