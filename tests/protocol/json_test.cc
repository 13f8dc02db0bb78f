// SPDX-License-Identifier: Apache-2.0
// Tests the JSON reader/writer of protocol/json.h (what it accepts and refuses, the depth and
// size bounds, escapes and surrogates, u32 reading, bit-exact float text round trips including
// NaN payloads and infinities) and the hex helpers of protocol/hex.h.
#include "scenecrdt/protocol/json.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "scenecrdt/protocol/hex.h"
#include "tests/protocol/rapidcheck_util.h"

namespace scenecrdt::protocol {
namespace {

using test::AnyBits;
using test::Uniform;

std::string FloatText(float f) {
  std::string out;
  AppendJsonFloat(f, out);
  return out;
}

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(JsonTest, Validity) {
  struct Bad {
    const char* text;
    std::size_t offset;
  };
  const Bad cases[] = {
      {"", 0},
      {"   ", 3},
      {"[1,]", 3},
      {"[1 2]", 3},
      {"[1,2", 4},
      {"{\"a\":1,}", 7},
      {"{\"a\" 1}", 5},
      {"{a:1}", 1},
      {"{\"a\":}", 5},
      {"{\"a\":1", 6},
      {"tru", 0},
      {"nul", 0},
      {"True", 0},
      {"NaN", 0},
      {"Infinity", 0},
      {"-", 1},
      {"+1", 0},
      {".5", 0},
      {"1.", 2},
      {"1.e3", 2},
      {"1e", 2},
      {"1e+", 3},
      {"01", 0},
      {"-012", 1},
      {"0x10", 1},
      {"1 2", 2},
      {"{} x", 3},
      {"[]]", 2},
      {"\"abc", 4},
      {"\"a\\", 3},
      {"\"\\x\"", 3},
      {"\"\\u12\"", 3},
      {"\"\\u12g4\"", 6},
      {"\"\\ud800\"", 7},
      {"\"\\ud800x\"", 7},
      {"\"\\ud800\\u0041\"", 13},
      {"\"\\ud800\\ud800\"", 13},
      {"\"\\udc00\"", 7},
      {"\"a\x01\"", 3},
      {"\"line\nbreak\"", 6},
      {"\f1", 0},
  };
  for (const Bad& c : cases) {
    auto r = ParseJson(c.text);
    ASSERT_FALSE(r.has_value()) << "accepted '" << c.text << "'";
    EXPECT_EQ(r.error().code, ErrorCode::kParse) << c.text;
    EXPECT_EQ(r.error().offset, c.offset) << c.text << ": " << r.error().detail;
    EXPECT_NE(std::string(r.error().detail), "");
  }
  // An embedded NUL is text after the value, not the end of the input.
  auto nul = ParseJson(std::string_view("[1,2]\0", 6));
  ASSERT_FALSE(nul.has_value());
  EXPECT_EQ(nul.error().offset, 5u);
}

TEST(JsonTest, AcceptsEveryKindOfValue) {
  auto r = ParseJson(
      " {\"n\":null,\"t\":true,\"f\":false,\"i\":-12,\"d\":1.5e-3,\"e\":1E+2,\"s\":\"x\","
      "\"a\":[],\"o\":{},\"z\":0,\"m\":-0.0}\r\n\t");
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  const JsonValue& v = *r;
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.object().size(), 11u);
  EXPECT_TRUE(v.Find("n")->is_null());
  EXPECT_TRUE(v.Find("t")->is_bool());
  EXPECT_TRUE(v.Find("t")->bool_value());
  EXPECT_FALSE(v.Find("f")->bool_value());
  EXPECT_EQ(v.Find("i")->text(), "-12");
  EXPECT_EQ(v.Find("d")->AsDouble(), 1.5e-3);
  EXPECT_EQ(v.Find("e")->AsDouble(), 100.0);
  EXPECT_EQ(v.Find("s")->text(), "x");
  EXPECT_TRUE(v.Find("a")->is_array());
  EXPECT_TRUE(v.Find("a")->array().empty());
  EXPECT_TRUE(v.Find("o")->is_object());
  EXPECT_EQ(v.Find("z")->AsU32(), 0u);
  EXPECT_TRUE(std::signbit(*v.Find("m")->AsDouble()));
  EXPECT_EQ(v.Find("missing"), nullptr);
  EXPECT_EQ(v.Find("a")->Find("x"), nullptr);  // not an object
  // Members keep source order.
  EXPECT_EQ(v.object().front().first, "n");
  EXPECT_EQ(v.object().back().first, "m");

  for (const char* scalar : {"0", "-0", "7", "1e5", "\"\"", "true", "null", "[[],{}]"}) {
    EXPECT_TRUE(ParseJson(scalar).has_value()) << scalar;
  }
}

TEST(JsonTest, DuplicateKeysFindTheLast) {
  auto r = ParseJson(R"({"k":1,"k":2,"j":3,"k":4})");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->object().size(), 4u);
  EXPECT_EQ(r->Find("k")->AsU32(), 4u);
}

TEST(JsonTest, StringEscapesAndSurrogates) {
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
    auto r = ParseJson(c.json);
    ASSERT_TRUE(r.has_value()) << c.json << ": " << r.error().detail;
    ASSERT_TRUE(r->is_string());
    EXPECT_EQ(r->text(), c.value) << c.json;
  }
}

TEST(JsonTest, DepthIsBounded) {
  JsonParseOptions options;
  options.max_depth = 2;
  // A value inside two containers is at depth 2: allowed; a third level is refused.
  EXPECT_TRUE(ParseJson("[[1]]", options).has_value());
  EXPECT_TRUE(ParseJson("[[[]]]", options).has_value());
  EXPECT_TRUE(ParseJson(R"({"a":{"b":2}})", options).has_value());
  auto too_deep = ParseJson("[[[1]]]", options);
  ASSERT_FALSE(too_deep.has_value());
  EXPECT_EQ(too_deep.error().code, ErrorCode::kParse);
  EXPECT_FALSE(ParseJson(R"({"a":{"b":{"c":3}}})", options).has_value());
  EXPECT_FALSE(ParseJson("[[[[]]]]", options).has_value());

  // The default bound stops hostile nesting long before the stack would overflow.
  for (const char* open : {"[", "{\"a\":"}) {
    std::string deep;
    for (int i = 0; i < 200000; ++i) deep += open;
    auto r = ParseJson(deep);
    ASSERT_FALSE(r.has_value());
    EXPECT_STREQ(r.error().detail, "JSON nested too deeply");
  }
  std::string ok_depth(64, '[');
  ok_depth += std::string(64, ']');
  EXPECT_TRUE(ParseJson(ok_depth).has_value());
}

TEST(JsonTest, SizeIsBounded) {
  JsonParseOptions options;
  options.max_bytes = 5;
  EXPECT_TRUE(ParseJson("[1,2]", options).has_value());
  auto r = ParseJson("[1,23]", options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kParse);
  EXPECT_EQ(r.error().offset, 0u);
}

TEST(JsonTest, U32AndU64ReadOnlyPlainIntegers) {
  struct Case {
    const char* text;
    std::optional<uint32_t> u32;
    std::optional<uint64_t> u64;
  };
  const Case cases[] = {
      {"0", 0u, 0u},
      {"512", 512u, 512u},
      {"4294967295", 0xFFFFFFFFu, 0xFFFFFFFFu},
      {"4294967296", std::nullopt, 0x100000000u},
      {"18446744073709551615", std::nullopt, 0xFFFFFFFFFFFFFFFFu},
      {"18446744073709551616", std::nullopt, std::nullopt},
      {"-1", std::nullopt, std::nullopt},
      {"-0", std::nullopt, std::nullopt},
      {"1.0", std::nullopt, std::nullopt},
      {"1e3", std::nullopt, std::nullopt},
      {"1.5", std::nullopt, std::nullopt},
  };
  for (const Case& c : cases) {
    auto r = ParseJson(c.text);
    ASSERT_TRUE(r.has_value()) << c.text;
    EXPECT_EQ(r->AsU32(), c.u32) << c.text;
    EXPECT_EQ(r->AsU64(), c.u64) << c.text;
  }
  for (const char* not_number : {"\"5\"", "true", "null", "[5]", "{}"}) {
    auto r = ParseJson(not_number);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->AsU32(), std::nullopt) << not_number;
    EXPECT_EQ(r->AsDouble(), std::nullopt) << not_number;
  }
}

TEST(JsonTest, FloatTextIsShortestAndNonFiniteValuesAreStrings) {
  EXPECT_EQ(FloatText(1.0f), "1");
  EXPECT_EQ(FloatText(-1.0f), "-1");
  EXPECT_EQ(FloatText(0.0f), "0");
  EXPECT_EQ(FloatText(-0.0f), "-0");
  EXPECT_EQ(FloatText(0.1f), "0.1");
  EXPECT_EQ(FloatText(1.5f), "1.5");
  EXPECT_EQ(FloatText(FromBits(0x3f3504f3u)), "0.70710677");
  EXPECT_EQ(FloatText(std::numeric_limits<float>::denorm_min()), "1e-45");
  EXPECT_EQ(FloatText(std::numeric_limits<float>::infinity()), "\"Infinity\"");
  EXPECT_EQ(FloatText(-std::numeric_limits<float>::infinity()), "\"-Infinity\"");
  EXPECT_EQ(FloatText(FromBits(0x7fc00000u)), "\"NaN\"");
  EXPECT_EQ(FloatText(FromBits(0x7fc00001u)), "\"0x7fc00001\"");
  EXPECT_EQ(FloatText(FromBits(0xffc00000u)), "\"0xffc00000\"");
  EXPECT_EQ(FloatText(FromBits(0x7f800001u)), "\"0x7f800001\"");  // signalling
  // Appending keeps what was there.
  std::string out = "[";
  AppendJsonFloat(2.0f, out);
  EXPECT_EQ(out, "[2");
}

TEST(JsonTest, ParseFloatJsonRoundsLikeFloat32) {
  auto number = [](const char* text) { return ParseFloatJson(JsonValue::Number(text)); };
  auto string = [](const char* text) { return ParseFloatJson(JsonValue::String(text)); };
  // 0.7071067811865476 (a double) rounds to the float the golden bytes hold.
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("0.7071067811865476")), 0x3f3504f3u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("0.1")), 0x3dcccccdu);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("-0")), 0x80000000u);
  EXPECT_EQ(*number("1e-50"), 0.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("NaN")), 0x7fc00000u);
  EXPECT_EQ(*string("Infinity"), std::numeric_limits<float>::infinity());
  EXPECT_EQ(*string("-Infinity"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("0x7fc00001")), 0x7fc00001u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("0XFFC00000")), 0xffc00000u);
  for (const char* bad :
       {"nan", "inf", "1.5", "0x7fc0000", "0x7fc000001", "0xZZZZZZZZ", "0x+7fc0000", ""}) {
    EXPECT_EQ(string(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseFloatJson(JsonValue::Bool(true)), std::nullopt);
  EXPECT_EQ(ParseFloatJson(JsonValue()), std::nullopt);
}

RC_GTEST_PROP(JsonPropertyTest, FloatTextRoundTripsEveryBitPattern, ()) {
  const uint32_t bits = *AnyBits<uint32_t>();
  const float f = FromBits(bits);
  const std::string text = FloatText(f);
  auto parsed = ParseJson(text);
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(parsed->is_number() == std::isfinite(f));
  auto back = ParseFloatJson(*parsed);
  RC_ASSERT(back.has_value());
  RC_ASSERT(std::bit_cast<uint32_t>(*back) == bits);
}

TEST(JsonTest, FloatTextRoundTripsASweepOfBitPatterns) {
  // A deterministic sweep across the whole u32 range (a prime stride visits every exponent
  // with varied mantissas); the properties below add random patterns.
  int failures = 0;
  for (uint64_t b = 0; b <= 0xFFFFFFFFu && failures < 10; b += 16381) {
    const auto bits = static_cast<uint32_t>(b);
    auto parsed = ParseJson(FloatText(FromBits(bits)));
    auto back = parsed.has_value() ? ParseFloatJson(*parsed) : std::nullopt;
    if (!back || std::bit_cast<uint32_t>(*back) != bits) {
      ADD_FAILURE() << std::hex << "bits 0x" << bits << " -> " << FloatText(FromBits(bits));
      ++failures;
    }
  }
}

RC_GTEST_PROP(JsonPropertyTest, FloatTextRoundTripsSubnormalsAndNans, ()) {
  const uint32_t mantissa = *Uniform<uint32_t>(0, 0x800000);
  const uint32_t sign = *rc::gen::arbitrary<bool>() ? 0x80000000u : 0u;
  const uint32_t exponent = *rc::gen::element(0u, 0x7F800000u, 0x00800000u, 0x7F000000u);
  const uint32_t bits = sign | exponent | mantissa;
  auto back = ParseFloatJson(*ParseJson(FloatText(FromBits(bits))));
  RC_ASSERT(back.has_value());
  RC_ASSERT(std::bit_cast<uint32_t>(*back) == bits);
}

RC_GTEST_PROP(JsonPropertyTest, StringsRoundTrip, ()) {
  const auto s = *rc::gen::container<std::string>(rc::gen::arbitrary<char>());
  std::string text;
  AppendJsonString(s, text);
  for (char c : text) RC_ASSERT(static_cast<unsigned char>(c) >= 0x20);
  auto parsed = ParseJson(text);
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(parsed->is_string());
  RC_ASSERT(parsed->text() == s);
}

TEST(JsonTest, StringWriterEscapes) {
  std::string out;
  AppendJsonString("a\"b\\c\n\r\t\x01\x1f\x7f", out);
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f\x7f\"");
}

TEST(HexTest, EncodesLowercase) {
  const uint8_t bytes[] = {0x00, 0x0f, 0xab, 0xff, 0x10};
  EXPECT_EQ(ToHex(bytes), "000fabff10");
  EXPECT_EQ(ToHex({}), "");
  std::string out = "x:";
  AppendHex(bytes, out);
  EXPECT_EQ(out, "x:000fabff10");
}

TEST(HexTest, DecodesEitherCaseStrictly) {
  EXPECT_EQ(FromHex("00abFF10"), (std::vector<uint8_t>{0x00, 0xab, 0xff, 0x10}));
  EXPECT_EQ(FromHex(""), std::vector<uint8_t>{});
  for (const char* bad : {"0", "abc", "0g", "g0", " 00", "00 ", "0x00", "-1", "zz"}) {
    EXPECT_EQ(FromHex(bad), std::nullopt) << bad;
  }
}

RC_GTEST_PROP(HexPropertyTest, RoundTrips, (const std::vector<uint8_t>& bytes)) {
  const std::string hex = ToHex(bytes);
  RC_ASSERT(hex.size() == 2 * bytes.size());
  RC_ASSERT(FromHex(hex) == bytes);
}

}  // namespace
}  // namespace scenecrdt::protocol
