// SPDX-License-Identifier: Apache-2.0
// Tests json/reader.h: what ReadJson accepts and refuses (with the byte offset and reason),
// the depth and size bounds, the sign of "-0", escapes and surrogates, duplicate keys, and
// where array elements start.
#include "scenecrdt/json/reader.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <string>

#include "scenecrdt/json/values.h"

namespace scenecrdt::json {
namespace {

TEST(JsonReaderTest, Validity) {
  struct Bad {
    std::string text;
    uint64_t offset;
    const char* detail;
  };
  // Offsets point at the character where the text stopped being JSON (for a bad literal or
  // number: where reading it stopped).
  const Bad cases[] = {
      {"", 0, "unexpected end of JSON input"},
      {"   ", 3, "unexpected end of JSON input"},
      {"[1,]", 3, "unexpected token"},
      {"[1 2]", 3, "unexpected token"},
      {"[1,2", 4, "unexpected end of JSON input"},
      {"{\"a\":1,}", 7, "expected a string key"},
      {"{\"a\" 1}", 5, "expected ':'"},
      {"{a:1}", 1, "invalid literal"},
      {"{\"a\":}", 5, "unexpected token"},
      {"{\"a\":1", 6, "unexpected end of JSON input"},
      {"tru", 3, "invalid literal"},
      {"nul", 3, "invalid literal"},
      {"True", 0, "invalid literal"},
      {"NaN", 0, "invalid literal"},
      {"Infinity", 0, "invalid literal"},
      {"-", 1, "invalid number"},
      {"+1", 0, "invalid literal"},
      {".5", 0, "invalid literal"},
      {"1.", 2, "invalid number"},
      {"1.e3", 2, "invalid number"},
      {"1e", 2, "invalid number"},
      {"1e+", 3, "invalid number"},
      {"01", 1, "unexpected text after the JSON value"},
      {"-012", 3, "unexpected text after the JSON value"},
      {"0x10", 1, "unexpected text after the JSON value"},
      {"1 2", 2, "unexpected text after the JSON value"},
      {"{} x", 3, "unexpected text after the JSON value"},
      {"[]]", 2, "unexpected text after the JSON value"},
      {"\"abc", 4, "unterminated string"},
      {"\"a\\", 3, "invalid escape"},
      {"\"\\x\"", 2, "invalid escape"},
      {"\"\\u12\"", 5, "invalid \\u escape"},
      {"\"\\u12g4\"", 5, "invalid \\u escape"},
      {"\"\\ud800\"", 7, "unpaired surrogate"},
      {"\"\\ud800x\"", 7, "unpaired surrogate"},
      {"\"\\ud800\\u0041\"", 12, "unpaired surrogate"},
      {"\"\\ud800\\ud800\"", 12, "unpaired surrogate"},
      {"\"\\udc00\"", 6, "unpaired surrogate"},
      {"\"a\x01\"", 2, "control character in a string"},
      {"\"line\nbreak\"", 5, "control character in a string"},
      {"\f1", 0, "invalid literal"},
      // JavaScript would read these as +-Infinity; nlohmann refuses them (docs/JSON.md).
      {"1e400", 4, "number out of the double range"},
      {"-1e400", 5, "number out of the double range"},
      {"\"\xff\"", 1, "invalid UTF-8 in a string"},
      {"\"\xc3\"", 2, "invalid UTF-8 in a string"},
      // An embedded NUL is text after the value, not the end of the input.
      {std::string("[1,2]\0", 6), 5, "NUL byte in JSON text"},
      {std::string("[1,2]\0]", 7), 5, "NUL byte in JSON text"},
      {std::string("\"a\0\"", 4), 2, "NUL byte in JSON text"},
  };
  for (const Bad& c : cases) {
    auto r = ReadJson(c.text);
    ASSERT_FALSE(r.has_value()) << "accepted '" << c.text << "'";
    EXPECT_EQ(r.error().code, ErrorCode::kParse) << c.text;
    EXPECT_EQ(r.error().offset, c.offset) << c.text << ": " << r.error().detail;
    EXPECT_STREQ(r.error().detail, c.detail) << c.text;
  }
}

TEST(JsonReaderTest, AcceptsEveryKindOfValue) {
  auto r = ReadJson(
      " {\"n\":null,\"t\":true,\"f\":false,\"i\":-12,\"d\":1.5e-3,\"e\":1E+2,\"s\":\"x\","
      "\"a\":[],\"o\":{},\"z\":0,\"m\":-0.0,\"u\":4294967296}\r\n\t");
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  const Json& v = *r;
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.size(), 12u);
  EXPECT_TRUE(Member(v, "n")->is_null());
  EXPECT_EQ(*Member(v, "t"), true);
  EXPECT_EQ(*Member(v, "f"), false);
  EXPECT_EQ(Member(v, "i")->get<int64_t>(), -12);
  EXPECT_EQ(Member(v, "d")->get<double>(), 1.5e-3);
  EXPECT_EQ(Member(v, "e")->get<double>(), 100.0);
  EXPECT_EQ(*Member(v, "s"), "x");
  EXPECT_TRUE(Member(v, "a")->is_array());
  EXPECT_TRUE(Member(v, "a")->empty());
  EXPECT_TRUE(Member(v, "o")->is_object());
  EXPECT_EQ(AsU32(*Member(v, "z")), 0u);
  EXPECT_TRUE(std::signbit(Member(v, "m")->get<double>()));
  EXPECT_EQ(Member(v, "u")->get<uint64_t>(), 4294967296u);  // integers stay exact
  EXPECT_EQ(Member(v, "missing"), nullptr);
  EXPECT_EQ(Member(*Member(v, "a"), "x"), nullptr);  // not an object

  for (const char* scalar : {"0", "-0", "7", "1e5", "\"\"", "true", "null", "[[],{}]"}) {
    EXPECT_TRUE(ReadJson(scalar).has_value()) << scalar;
  }
}

TEST(JsonReaderTest, MinusZeroKeepsItsSign) {
  // nlohmann's own parser stores "-0" as the integer 0; JavaScript reads it as -0, and a
  // Transform float written as -0 must read back as -0.
  auto r = ReadJson("[-0,0,-0.0,-5]");
  ASSERT_TRUE(r.has_value());
  const Json& a = *r;
  ASSERT_TRUE(a[0].is_number_float());
  EXPECT_TRUE(std::signbit(a[0].get<double>()));
  EXPECT_TRUE(a[1].is_number_unsigned());
  EXPECT_TRUE(std::signbit(a[2].get<double>()));
  EXPECT_EQ(a[3].get<int64_t>(), -5);
  EXPECT_EQ(AsU32(a[0]), std::nullopt);  // "-0" is not a u32
  EXPECT_EQ(AsU32(a[1]), 0u);
}

TEST(JsonReaderTest, DuplicateKeysKeepTheLast) {
  auto r = ReadJson(R"({"k":1,"k":2,"j":3,"k":4})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->size(), 2u);
  EXPECT_EQ(AsU32(*Member(*r, "k")), 4u);
  EXPECT_EQ(AsU32(*Member(*r, "j")), 3u);
}

TEST(JsonReaderTest, DuplicateMembersCanBeRefused) {
  ReadLimits limits;
  limits.refuse_duplicate_members = true;
  EXPECT_TRUE(ReadJson(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})", limits).has_value());
  for (const char* text : {R"({"a":1,"a":2})", R"({"x":{"b":1,"b":1}})", R"([{"x":1,"x":1}])"}) {
    auto r = ReadJson(text, limits);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kParse);
    EXPECT_STREQ(r.error().detail, "JSON duplicate member") << text;
  }
}

TEST(JsonReaderTest, NestingCountsObjectsAndArraysOnly) {
  ReadLimits limits;
  limits.max_nesting = 2;
  EXPECT_TRUE(ReadJson("1", limits).has_value());
  EXPECT_TRUE(ReadJson(R"({"a":[1]})", limits).has_value());
  EXPECT_TRUE(ReadJson(R"([[],{},[1,2]])", limits).has_value());
  for (const char* text : {R"({"a":[[1]]})", R"({"a":{"b":{}}})", "[[[]]]"}) {
    auto r = ReadJson(text, limits);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_STREQ(r.error().detail, "JSON nested too deeply") << text;
  }
}

TEST(JsonReaderTest, StringEscapesAndSurrogates) {
  struct Case {
    const char* json;
    std::string value;
  };
  const Case cases[] = {
      {R"("\"\\\/\b\f\n\r\t")", "\"\\/\b\f\n\r\t"},
      {R"("\u0041\u00e9\u00E9")", "A\xC3\xA9\xC3\xA9"},
      {R"("\u20ac")", "\xE2\x82\xAC"},
      {R"("\ud83d\ude00")", "\xF0\x9F\x98\x80"},
      {R"("\uDBFF\uDFFF")", "\xF4\x8F\xBF\xBF"},
      {R"("\u0000")", std::string(1, '\0')},
      {"\"caf\xC3\xA9\"", "caf\xC3\xA9"},  // raw UTF-8 passes through
      {R"("")", ""},
  };
  for (const Case& c : cases) {
    auto r = ReadJson(c.json);
    ASSERT_TRUE(r.has_value()) << c.json << ": " << r.error().detail;
    ASSERT_TRUE(r->is_string());
    EXPECT_EQ(r->get<std::string>(), c.value) << c.json;
  }
}

TEST(JsonReaderTest, DepthIsBounded) {
  ReadLimits limits;
  limits.max_depth = 2;
  // A value inside two containers is at depth 2: allowed; a third level is refused.
  EXPECT_TRUE(ReadJson("[[1]]", limits).has_value());
  EXPECT_TRUE(ReadJson("[[[]]]", limits).has_value());
  EXPECT_TRUE(ReadJson(R"({"a":{"b":2}})", limits).has_value());
  auto too_deep = ReadJson("[[[1]]]", limits);
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_EQ(too_deep.error().code, ErrorCode::kParse);
  EXPECT_STREQ(too_deep.error().detail, "JSON nested too deeply");
  EXPECT_FALSE(ReadJson(R"({"a":{"b":{"c":3}}})", limits).has_value());
  EXPECT_FALSE(ReadJson("[[[[]]]]", limits).has_value());

  // The default bound stops hostile nesting at its first level too deep.
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 200000; ++i) deep += open;
    auto r = ReadJson(deep);
    ASSERT_FALSE(r.has_value());
    EXPECT_STREQ(r.error().detail, "JSON nested too deeply");
    // The 66th container sits at depth 65: that is where reading stopped.
    EXPECT_EQ(r.error().offset, 65u * std::string(open).size());
  }
  std::string ok_depth(64, '[');
  ok_depth += std::string(64, ']');
  EXPECT_TRUE(ReadJson(ok_depth).has_value());
  std::string one_more(65, '[');
  one_more += "1" + std::string(65, ']');
  EXPECT_FALSE(ReadJson(one_more).has_value());
}

TEST(JsonReaderTest, SizeIsBounded) {
  ReadLimits limits;
  limits.max_bytes = 5;
  EXPECT_TRUE(ReadJson("[1,2]", limits).has_value());
  auto r = ReadJson("[1,23]", limits);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().offset, 0u);
  EXPECT_STREQ(r.error().detail, "JSON input above the size limit");
}

TEST(JsonReaderTest, ElementOffsetsLocateEveryArrayElement) {
  const std::string text = "[\n {\"a\":[7, {\"b\":1}]},\n 5,\n \"x\"\n,[1], true]";
  ElementOffsets offsets;
  auto r = ReadJson(text, {}, &offsets);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  const Json& top = *r;
  // Containers: the offset of their '{' or '['; scalars: a byte on their line.
  EXPECT_EQ(offsets.Of(top, 0), text.find('{'));
  EXPECT_EQ(LineOf(text, *offsets.Of(top, 0)), 2u);
  EXPECT_EQ(LineOf(text, *offsets.Of(top, 1)), 3u);
  EXPECT_EQ(LineOf(text, *offsets.Of(top, 2)), 4u);
  EXPECT_EQ(offsets.Of(top, 3), text.find("[1]"));
  EXPECT_EQ(LineOf(text, *offsets.Of(top, 3)), 5u);
  EXPECT_EQ(LineOf(text, *offsets.Of(top, 4)), 5u);
  EXPECT_EQ(offsets.Of(top, 5), std::nullopt);
  // Nested arrays are located too.
  const Json& inner = *Member(top[0], "a");
  EXPECT_EQ(offsets.Of(inner, 1), text.find("{\"b\""));
  // Objects and scalars are not arrays.
  EXPECT_EQ(offsets.Of(top[0], 0), std::nullopt);
  EXPECT_EQ(offsets.Of(top[1], 0), std::nullopt);
  // A document read without offsets has none.
  ElementOffsets other;
  EXPECT_EQ(other.Of(top, 0), std::nullopt);
}

TEST(JsonReaderTest, LineOfCountsNewlinesBefore) {
  EXPECT_EQ(LineOf("", 0), 1u);
  EXPECT_EQ(LineOf("a\nb\nc", 0), 1u);
  EXPECT_EQ(LineOf("a\nb\nc", 1), 1u);  // the newline ends line 1
  EXPECT_EQ(LineOf("a\nb\nc", 2), 2u);
  EXPECT_EQ(LineOf("a\nb\nc", 4), 3u);
  EXPECT_EQ(LineOf("a\nb\nc", 99), 3u);
}

// Whatever nlohmann's own parser accepts, ReadJson accepts as the same document (within the
// bounds); whatever it refuses, ReadJson refuses.
RC_GTEST_PROP(JsonReaderPropertyTest, AgreesWithNlohmann, ()) {
  const auto text = *rc::gen::container<std::string>(
      rc::gen::element('[', ']', '{', '}', '"', ',', ':', '0', '1', '-', '.', 'e', ' ', 't', 'r',
                       'u', 'e', 'n', 'l', 'a', '\\'));
  auto ours = ReadJson(text);
  const Json theirs = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (theirs.is_discarded()) {
    RC_ASSERT(!ours.has_value());
  } else if (!ours.has_value()) {
    RC_ASSERT(std::string(ours.error().detail) == "JSON nested too deeply");
  } else {
    RC_ASSERT(*ours == theirs);  // -0.0 (ours) == 0 (theirs): numbers compare by value
  }
}

RC_GTEST_PROP(JsonReaderPropertyTest, StringsRoundTripThroughDump, ()) {
  // Any UTF-8 text nlohmann writes reads back to the same string.
  const auto codepoints = *rc::gen::container<std::vector<uint32_t>>(
      rc::gen::oneOf(rc::gen::inRange<uint32_t>(0, 0x80), rc::gen::inRange<uint32_t>(0x80, 0xD800),
                     rc::gen::inRange<uint32_t>(0xE000, 0x110000)));
  std::string s;
  for (uint32_t cp : codepoints) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  const std::string text = Json(s).dump();
  auto parsed = ReadJson(text);
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(parsed->is_string());
  RC_ASSERT(parsed->get<std::string>() == s);
}

}  // namespace
}  // namespace scenecrdt::json
