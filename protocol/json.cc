// SPDX-License-Identifier: Apache-2.0
// Owns the JSON parser (recursive descent with an explicit depth bound) and the writers.
#include "scenecrdt/protocol/json.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace scenecrdt::protocol {

JsonValue JsonValue::Bool(bool b) {
  JsonValue v;
  v.kind_ = Kind::kBool;
  v.bool_ = b;
  return v;
}
JsonValue JsonValue::Number(std::string text) {
  JsonValue v;
  v.kind_ = Kind::kNumber;
  v.text_ = std::move(text);
  return v;
}
JsonValue JsonValue::String(std::string s) {
  JsonValue v;
  v.kind_ = Kind::kString;
  v.text_ = std::move(s);
  return v;
}
JsonValue JsonValue::MakeArray(Array a) {
  JsonValue v;
  v.kind_ = Kind::kArray;
  v.array_ = std::move(a);
  return v;
}
JsonValue JsonValue::MakeObject(Object o) {
  JsonValue v;
  v.kind_ = Kind::kObject;
  v.object_ = std::move(o);
  return v;
}

const JsonValue::Array& JsonValue::array() const { return array_; }
const JsonValue::Object& JsonValue::object() const { return object_; }

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (auto it = object_.rbegin(); it != object_.rend(); ++it) {
    if (it->first == key) return &it->second;
  }
  return nullptr;
}

std::optional<uint64_t> JsonValue::AsU64() const {
  if (kind_ != Kind::kNumber || text_.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), v);
  if (ec != std::errc() || ptr != text_.data() + text_.size()) return std::nullopt;
  return v;
}

std::optional<uint32_t> JsonValue::AsU32() const {
  auto v = AsU64();
  if (!v || *v > 0xFFFFFFFFu) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

std::optional<double> JsonValue::AsDouble() const {
  if (kind_ != Kind::kNumber) return std::nullopt;
  double d = 0;
  auto [ptr, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), d);
  if (ec != std::errc() || ptr != text_.data() + text_.size()) return std::nullopt;
  return d;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, const JsonParseOptions& options) : s_(text), options_(options) {}

  Result<JsonValue> ParseDocument() {
    if (s_.size() > options_.max_bytes) {
      return MakeError(ErrorCode::kParse, "JSON input above the size limit", 0);
    }
    JsonValue v;
    if (!ParseValue(v, 0)) return MakeError(ErrorCode::kParse, error_, pos_);
    SkipSpace();
    if (pos_ != s_.size()) {
      return MakeError(ErrorCode::kParse, "unexpected text after the JSON value", pos_);
    }
    return v;
  }

 private:
  bool Fail(const char* what) {
    error_ = what;
    return false;
  }
  void SkipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ParseValue(JsonValue& out, std::size_t depth) {
    if (depth > options_.max_depth) return Fail("JSON nested too deeply");
    SkipSpace();
    if (pos_ >= s_.size()) return Fail("unexpected end of JSON input");
    const char c = s_[pos_];
    if (c == '{') return ParseObject(out, depth);
    if (c == '[') return ParseArray(out, depth);
    if (c == '"') {
      std::string str;
      if (!ParseString(str)) return false;
      out = JsonValue::String(std::move(str));
      return true;
    }
    if (c == 't') {
      if (!Literal("true")) return false;
      out = JsonValue::Bool(true);
      return true;
    }
    if (c == 'f') {
      if (!Literal("false")) return false;
      out = JsonValue::Bool(false);
      return true;
    }
    if (c == 'n') {
      if (!Literal("null")) return false;
      out = JsonValue();
      return true;
    }
    return ParseNumber(out);
  }

  bool ParseNumber(JsonValue& out) {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const std::size_t d = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ > d;
    };
    if (pos_ + 1 < s_.size() && s_[pos_] == '0' && s_[pos_ + 1] >= '0' && s_[pos_ + 1] <= '9') {
      return Fail("leading zero in number");  // RFC 8259: "01" is not a JSON number
    }
    if (!digits()) return Fail("invalid number");
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return Fail("invalid number fraction");
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return Fail("invalid number exponent");
    }
    out = JsonValue::Number(std::string(s_.substr(start, pos_ - start)));
    return true;
  }

  static void AppendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool Hex4(uint32_t& cp) {
    if (pos_ + 4 > s_.size()) return Fail("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      cp <<= 4;
      if (h >= '0' && h <= '9') {
        cp |= static_cast<uint32_t>(h - '0');
      } else if (h >= 'a' && h <= 'f') {
        cp |= static_cast<uint32_t>(h - 'a' + 10);
      } else if (h >= 'A' && h <= 'F') {
        cp |= static_cast<uint32_t>(h - 'A' + 10);
      } else {
        return Fail("invalid \\u escape");
      }
    }
    return true;
  }

  bool ParseString(std::string& out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= s_.size()) return Fail("unterminated string");
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) return Fail("unterminated escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!Hex4(cp)) return false;
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t lo = 0;
            if (pos_ + 2 > s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') {
              return Fail("unpaired surrogate");
            }
            pos_ += 2;
            if (!Hex4(lo)) return false;
            if (lo < 0xDC00 || lo > 0xDFFF) return Fail("unpaired surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            return Fail("unpaired surrogate");
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Fail("invalid escape");
      }
    }
  }

  bool ParseArray(JsonValue& out, std::size_t depth) {
    ++pos_;
    JsonValue::Array items;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      out = JsonValue::MakeArray(std::move(items));
      return true;
    }
    while (true) {
      JsonValue item;
      if (!ParseValue(item, depth + 1)) return false;
      items.push_back(std::move(item));
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] != ']') return Fail("expected ',' or ']'");
      ++pos_;
      out = JsonValue::MakeArray(std::move(items));
      return true;
    }
  }

  bool ParseObject(JsonValue& out, std::size_t depth) {
    ++pos_;
    JsonValue::Object members;
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == '}') {
      ++pos_;
      out = JsonValue::MakeObject(std::move(members));
      return true;
    }
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != '"') return Fail("expected a string key");
      std::string key;
      if (!ParseString(key)) return false;
      SkipSpace();
      if (pos_ >= s_.size() || s_[pos_] != ':') return Fail("expected ':'");
      ++pos_;
      JsonValue value;
      if (!ParseValue(value, depth + 1)) return false;
      members.emplace_back(std::move(key), std::move(value));
      SkipSpace();
      if (pos_ >= s_.size()) return Fail("unterminated object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] != '}') return Fail("expected ',' or '}'");
      ++pos_;
      out = JsonValue::MakeObject(std::move(members));
      return true;
    }
  }

  std::string_view s_;
  JsonParseOptions options_;
  std::size_t pos_ = 0;
  const char* error_ = "invalid JSON";
};

constexpr uint32_t kCanonicalNan = 0x7fc00000u;

}  // namespace

Result<JsonValue> ParseJson(std::string_view text, const JsonParseOptions& options) {
  return Parser(text, options).ParseDocument();
}

void AppendJsonString(std::string_view s, std::string& out) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

void AppendJsonFloat(float f, std::string& out) {
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

std::optional<float> ParseFloatJson(const JsonValue& v) {
  if (v.is_number()) {
    if (auto d = v.AsDouble()) return static_cast<float>(*d);
    // Out of double range: JavaScript reads such a literal as +-Infinity (or +-0), and so
    // does strtod (the C locale is never changed in this program). The text is a valid JSON
    // number, so strtod consumes all of it.
    return static_cast<float>(std::strtod(v.text().c_str(), nullptr));
  }
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.text();
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

}  // namespace scenecrdt::protocol
