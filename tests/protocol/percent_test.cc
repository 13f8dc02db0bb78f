// SPDX-License-Identifier: Apache-2.0
// Tests the one percent/query rule (protocol/percent.h): malformed escapes, '+', empty values,
// repeated keys, and that encoding then decoding gives every byte back.
#include "scenecrdt/protocol/percent.h"

#include <gtest/gtest.h>

#include <string>

namespace scenecrdt::protocol {
namespace {

TEST(PercentDecode, DecodesEscapesInEitherCase) {
  EXPECT_EQ(PercentDecode("a%20b%2fc%2F"), "a b/c/");
  EXPECT_EQ(PercentDecode(""), "");
  EXPECT_EQ(PercentDecode("%00", Plus::kLiteral), std::string(1, '\0'));
  EXPECT_EQ(PercentDecode("%ff"), std::string(1, '\xff'));
}

TEST(PercentDecode, MalformedEscapeFailsWholeText) {
  for (const char* bad : {"%", "%4", "a%", "%zz", "%4g", "%g4", "ok%2", "%%41"}) {
    EXPECT_FALSE(PercentDecode(bad, Plus::kLiteral).has_value()) << bad;
    EXPECT_FALSE(PercentDecode(bad, Plus::kSpace).has_value()) << bad;
  }
}

TEST(PercentDecode, PlusIsASpaceOnlyInAFormQuery) {
  EXPECT_EQ(PercentDecode("a+b%2B", Plus::kLiteral), "a+b+");
  EXPECT_EQ(PercentDecode("a+b%2B", Plus::kSpace), "a b+");
}

TEST(QueryParam, FindsTheKeyAndDecodesItsValue) {
  EXPECT_EQ(QueryParam("v=1&token=wr%21te+tok%2Fen", "token"), "wr!te tok/en");
  EXPECT_EQ(QueryParam("token=x", "token"), "x");
  EXPECT_FALSE(QueryParam("", "token").has_value());
  EXPECT_FALSE(QueryParam("tokens=x&TOKEN=y", "token").has_value());
  // Keys compare undecoded.
  EXPECT_FALSE(QueryParam("t%6Fken=x", "token").has_value());
}

TEST(QueryParam, EmptyValuesAndPairsWithoutEquals) {
  EXPECT_EQ(QueryParam("token=", "token"), "");
  EXPECT_EQ(QueryParam("token", "token"), "");
  EXPECT_EQ(QueryParam("&&token=x&&", "token"), "x");
  EXPECT_EQ(QueryParam("a&token=x", "token"), "x");
}

TEST(QueryParam, FirstPairWinsOverRepeats) {
  EXPECT_EQ(QueryParam("token=a&token=b", "token"), "a");
  // A bare key is a pair with an empty value, as URLSearchParams reads it: it is the first.
  EXPECT_EQ(QueryParam("token&token=b", "token"), "");
  // A malformed first value is not skipped for a later one.
  EXPECT_FALSE(QueryParam("token=%zz&token=b", "token").has_value());
}

TEST(PercentEncode, RoundTripsEveryByte) {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  const std::string encoded = PercentEncode(all);
  EXPECT_EQ(PercentDecode(encoded, Plus::kLiteral), all);
  EXPECT_EQ(PercentDecode(encoded, Plus::kSpace), all);
  EXPECT_EQ(QueryParam("token=" + encoded, "token"), all);
  EXPECT_EQ(PercentEncode("a-b.c_d~e/f g+"), "a-b.c_d~e%2Ff%20g%2B");
  EXPECT_EQ(PercentEncode("/run/redis.sock", Slash::kKeep), "/run/redis.sock");
}

}  // namespace
}  // namespace scenecrdt::protocol
