// SPDX-License-Identifier: Apache-2.0
// Tests StreamId text and the scene sequence mapping (cluster/stream_id.h): strict parsing,
// order, exactness in range, monotonic saturation beyond, inverse never past the ID.
#include "scenecrdt/cluster/stream_id.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace scenecrdt::cluster {
namespace {

TEST(StreamIdTest, Validity) {
  const char* bad[] = {"",     "-",    "1",     "1-",   "-1",   "01-1",
                       "1-01", "1--1", "1-1-1", " 1-1", "1-1 ", "+1-1",
                       "a-1",  "1-b",  "1.5-1", "*",    "$",    "18446744073709551616-0"};
  for (const char* text : bad) {
    auto r = ParseStreamId(text);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_EQ(r.error().code, ErrorCode::kParse) << text;
  }
}

TEST(StreamIdTest, ParsesAndPrints) {
  auto id = ParseStreamId("1700000000123-7");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->ms, 1700000000123u);
  EXPECT_EQ(id->seq, 7u);
  EXPECT_EQ(id->ToString(), "1700000000123-7");
  auto max = ParseStreamId("18446744073709551615-18446744073709551615");
  ASSERT_TRUE(max.has_value());
  EXPECT_EQ(max->Next(), *max);
  EXPECT_EQ((StreamId{5, UINT64_MAX}.Next()), (StreamId{6, 0}));
  EXPECT_TRUE(StreamId{}.is_zero());
  EXPECT_LT((StreamId{1, 9}), (StreamId{2, 0}));
}

TEST(StreamIdTest, SequenceIsExactInRange) {
  const StreamId id{1700000000123, 42};
  EXPECT_TRUE(IsExactSceneSequence(id));
  const uint64_t s = SceneSequenceFromStreamId(id);
  EXPECT_EQ(s, (uint64_t{1700000000123} << 22) | 42);
  EXPECT_EQ(StreamIdFromSceneSequence(s), id);
  EXPECT_EQ(SceneSequenceFromStreamId(StreamId{}), 0u);
}

TEST(StreamIdTest, SequenceSaturatesMonotonically) {
  const StreamId busy{100, kSceneSequenceMaxSeq + 5};
  EXPECT_FALSE(IsExactSceneSequence(busy));
  EXPECT_EQ(SceneSequenceFromStreamId(busy),
            SceneSequenceFromStreamId({100, kSceneSequenceMaxSeq}));
  EXPECT_LT(SceneSequenceFromStreamId(busy), SceneSequenceFromStreamId({101, 0}));
  EXPECT_LE(StreamIdFromSceneSequence(SceneSequenceFromStreamId(busy)), busy);
  const StreamId far{kSceneSequenceMaxMs + 1, 0};
  EXPECT_EQ(SceneSequenceFromStreamId(far), UINT64_MAX);
  EXPECT_LE(StreamIdFromSceneSequence(UINT64_MAX), far);
}

RC_GTEST_PROP(StreamIdProperty, SequenceIsMonotonicAndNeverPastTheId,
              (uint64_t ms_a, uint64_t seq_a, uint64_t ms_b, uint64_t seq_b)) {
  // Mix small values (exact range) with anything.
  const StreamId a{ms_a % 4 == 0 ? ms_a : ms_a >> 22, seq_a % 3 == 0 ? seq_a : seq_a >> 43};
  const StreamId b{ms_b % 4 == 0 ? ms_b : ms_b >> 22, seq_b % 3 == 0 ? seq_b : seq_b >> 43};
  const uint64_t sa = SceneSequenceFromStreamId(a);
  const uint64_t sb = SceneSequenceFromStreamId(b);
  if (a < b) RC_ASSERT(sa <= sb);
  if (a < b && IsExactSceneSequence(a) && IsExactSceneSequence(b)) RC_ASSERT(sa < sb);
  RC_ASSERT(StreamIdFromSceneSequence(sa) <= a);
  if (IsExactSceneSequence(a)) RC_ASSERT(StreamIdFromSceneSequence(sa) == a);
  auto parsed = ParseStreamId(a.ToString());
  RC_ASSERT(parsed.has_value());
  RC_ASSERT(*parsed == a);
}

}  // namespace
}  // namespace scenecrdt::cluster
