// SPDX-License-Identifier: Apache-2.0
// Tests json/values.h: u32 reading (plain integers only), members, the float32 text form
// (shortest round trip, NaN payloads and infinities as strings) and reading it back
// bit-exact, including every bit pattern through ReadJson.
#include "scenecrdt/json/values.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>

namespace scenecrdt::json {
namespace {

std::string FloatText(float f) {
  std::string out;
  AppendFloat(f, out);
  return out;
}

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

std::optional<float> ReadFloat(const std::string& text) {
  auto parsed = ReadJson(text);
  if (!parsed.has_value()) return std::nullopt;
  return AsFloat(*parsed);
}

TEST(JsonValuesTest, U32ReadsOnlyPlainIntegers) {
  struct Case {
    const char* text;
    std::optional<uint32_t> u32;
  };
  const Case cases[] = {
      {"0", 0u},
      {"512", 512u},
      {"4294967295", 0xFFFFFFFFu},
      {"4294967296", std::nullopt},
      {"18446744073709551615", std::nullopt},
      {"18446744073709551616", std::nullopt},
      {"-1", std::nullopt},
      {"-0", std::nullopt},
      {"1.0", std::nullopt},
      {"1e3", std::nullopt},
      {"1.5", std::nullopt},
  };
  for (const Case& c : cases) {
    auto r = ReadJson(c.text);
    ASSERT_TRUE(r.has_value()) << c.text;
    EXPECT_EQ(AsU32(*r), c.u32) << c.text;
  }
  for (const char* not_number : {"\"5\"", "true", "null", "[5]", "{}"}) {
    auto r = ReadJson(not_number);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(AsU32(*r), std::nullopt) << not_number;
    EXPECT_EQ(AsFloat(*r), std::nullopt) << not_number;
  }
}

TEST(JsonValuesTest, MemberFindsObjectMembersOnly) {
  auto r = ReadJson(R"({"a":{"b":[1]},"c":null})");
  ASSERT_TRUE(r.has_value());
  ASSERT_NE(Member(*r, "a"), nullptr);
  EXPECT_NE(Member(*Member(*r, "a"), "b"), nullptr);
  EXPECT_NE(Member(*r, "c"), nullptr);  // present, null
  EXPECT_EQ(Member(*r, "b"), nullptr);
  EXPECT_EQ(Member((*Member(*Member(*r, "a"), "b"))[0], "x"), nullptr);
}

TEST(JsonValuesTest, FloatTextIsShortestAndNonFiniteValuesAreStrings) {
  EXPECT_EQ(FloatText(1.0f), "1");
  EXPECT_EQ(FloatText(-1.0f), "-1");
  EXPECT_EQ(FloatText(0.0f), "0");
  EXPECT_EQ(FloatText(-0.0f), "-0");
  EXPECT_EQ(FloatText(0.1f), "0.1");
  EXPECT_EQ(FloatText(1.5f), "1.5");
  EXPECT_EQ(FloatText(1e10f), "1e+10");
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
  AppendFloat(2.0f, out);
  EXPECT_EQ(out, "[2");
}

TEST(JsonValuesTest, NlohmannDumpIsNotTheFloat32Form) {
  // Why values.h writes floats itself (docs/JSON.md): through double, dump() prints the
  // float's exact binary value, and non-finite values become null.
  EXPECT_EQ(Json(static_cast<double>(0.1f)).dump(), "0.10000000149011612");
  EXPECT_EQ(Json(1.0).dump(), "1.0");
  EXPECT_EQ(Json(std::numeric_limits<double>::infinity()).dump(), "null");
}

TEST(JsonValuesTest, AsFloatRoundsLikeFloat32) {
  auto number = [](const char* text) { return ReadFloat(text); };
  auto string = [](const char* text) { return AsFloat(Json(text)); };
  // 0.7071067811865476 (a double) rounds to the float the golden bytes hold.
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("0.7071067811865476")), 0x3f3504f3u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("0.1")), 0x3dcccccdu);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("-0")), 0x80000000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("-0.0")), 0x80000000u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*number("0")), 0u);
  EXPECT_EQ(*number("1e-50"), 0.0f);
  EXPECT_EQ(*number("1e39"), std::numeric_limits<float>::infinity());  // beyond float range
  EXPECT_EQ(*number("-7"), -7.0f);
  EXPECT_EQ(*number("16777217"), 16777216.0f);  // integers round like their decimal text
  EXPECT_EQ(*number("18446744073709551615"), 18446744073709551616.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("NaN")), 0x7fc00000u);
  EXPECT_EQ(*string("Infinity"), std::numeric_limits<float>::infinity());
  EXPECT_EQ(*string("-Infinity"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("0x7fc00001")), 0x7fc00001u);
  EXPECT_EQ(std::bit_cast<uint32_t>(*string("0XFFC00000")), 0xffc00000u);
  for (const char* bad :
       {"nan", "inf", "1.5", "0x7fc0000", "0x7fc000001", "0xZZZZZZZZ", "0x+7fc0000", ""}) {
    EXPECT_EQ(string(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(AsFloat(Json(true)), std::nullopt);
  EXPECT_EQ(AsFloat(Json()), std::nullopt);
}

RC_GTEST_PROP(JsonValuesPropertyTest, FloatTextRoundTripsEveryBitPattern, ()) {
  const uint32_t bits = *rc::gen::resize(rc::kNominalSize, rc::gen::arbitrary<uint32_t>());
  const float f = FromBits(bits);
  const std::string text = FloatText(f);
  auto parsed = ReadJson(text);
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(parsed->is_number() == std::isfinite(f));
  auto back = AsFloat(*parsed);
  RC_ASSERT(back.has_value());
  RC_ASSERT(std::bit_cast<uint32_t>(*back) == bits);
}

TEST(JsonValuesTest, FloatTextRoundTripsASweepOfBitPatterns) {
  // A deterministic sweep across the whole u32 range (a prime stride visits every exponent
  // with varied mantissas); the properties add random patterns.
  int failures = 0;
  for (uint64_t b = 0; b <= 0xFFFFFFFFu && failures < 10; b += 16381) {
    const auto bits = static_cast<uint32_t>(b);
    auto back = ReadFloat(FloatText(FromBits(bits)));
    if (!back || std::bit_cast<uint32_t>(*back) != bits) {
      ADD_FAILURE() << std::hex << "bits 0x" << bits << " -> " << FloatText(FromBits(bits));
      ++failures;
    }
  }
}

RC_GTEST_PROP(JsonValuesPropertyTest, FloatTextRoundTripsSubnormalsAndNans, ()) {
  const uint32_t mantissa =
      *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<uint32_t>(0, 0x800000));
  const uint32_t sign = *rc::gen::arbitrary<bool>() ? 0x80000000u : 0u;
  const uint32_t exponent = *rc::gen::element(0u, 0x7F800000u, 0x00800000u, 0x7F000000u);
  const uint32_t bits = sign | exponent | mantissa;
  auto back = ReadFloat(FloatText(FromBits(bits)));
  RC_ASSERT(back.has_value());
  RC_ASSERT(std::bit_cast<uint32_t>(*back) == bits);
}

}  // namespace
}  // namespace scenecrdt::json
