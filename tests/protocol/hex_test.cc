// SPDX-License-Identifier: Apache-2.0
// Tests the hex helpers of protocol/hex.h: lowercase encoding, strict decoding of either case,
// and the round trip.
#include "scenecrdt/protocol/hex.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <string>
#include <vector>

namespace scenecrdt::protocol {
namespace {

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
