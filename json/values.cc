// SPDX-License-Identifier: Apache-2.0
// Owns the typed readers and the float32 writer of values.h.
#include "scenecrdt/json/values.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace scenecrdt::json {
namespace {
constexpr uint32_t kCanonicalNan = 0x7fc00000u;
}  // namespace

const Json* Member(const Json& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  const auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

std::optional<uint32_t> AsU32(const Json& v) {
  // Non-negative integer literals, and only they, are number_unsigned ("-0", "1.0" and "1e3"
  // are not).
  if (!v.is_number_unsigned()) return std::nullopt;
  const auto u = v.get<Json::number_unsigned_t>();
  if (u > 0xFFFFFFFFu) return std::nullopt;
  return static_cast<uint32_t>(u);
}

void AppendFloat(float f, std::string& out) {
  if (std::isfinite(f)) {
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
    out.append(buf, end);
    return;
  }
  const uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isinf(f)) {
    out += f > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  } else if (bits == kCanonicalNan) {
    out += "\"NaN\"";
  } else {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", bits);
    out += '"';
    out += buf;
    out += '"';
  }
}

std::optional<float> AsFloat(const Json& v) {
  // Integers become double exactly as their decimal text would (round to nearest), so every
  // number takes the JavaScript path: text -> double -> float32.
  if (v.is_number()) return static_cast<float>(v.get<double>());
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "NaN") return std::bit_cast<float>(kCanonicalNan);
  if (s == "Infinity") return std::numeric_limits<float>::infinity();
  if (s == "-Infinity") return -std::numeric_limits<float>::infinity();
  if (s.size() == 10 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint32_t bits = 0;
    auto [ptr, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), bits, 16);
    if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
    return std::bit_cast<float>(bits);
  }
  return std::nullopt;
}

}  // namespace scenecrdt::json
