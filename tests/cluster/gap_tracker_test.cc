// SPDX-License-Identifier: Apache-2.0
// Tests GapTracker (cluster/gap_tracker.h): a marker matches exactly the reads that jumped over
// the last trimmed entry; catching up forgets old reads; a full tracker errs on the safe side.
#include "scenecrdt/cluster/gap_tracker.h"

#include <gtest/gtest.h>

namespace scenecrdt::cluster {
namespace {

TEST(GapTrackerTest, MarkerInsideAReadJumpIsAGap) {
  GapTracker gaps;
  gaps.NoteRead(StreamId{10, 0}, StreamId{20, 0});   // nothing existed in (10-0, 20-0)
  EXPECT_TRUE(gaps.MissedByTrim(StreamId{15, 3}));   // yet 15-3 was trimmed: it was missed
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{10, 0}));  // the reader had read 10-0 itself
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{20, 0}));  // 20-0 was read
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{25, 0}));  // trimmed after it was read
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{5, 0}));   // before the cursor: read long ago
}

TEST(GapTrackerTest, CaughtUpAndResetForget) {
  GapTracker gaps;
  gaps.NoteRead(StreamId{1, 0}, StreamId{9, 0});
  EXPECT_EQ(gaps.size(), 1u);
  gaps.NoteCaughtUp();
  EXPECT_EQ(gaps.size(), 0u);
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{5, 0}));
  gaps.NoteRead(StreamId{1, 0}, StreamId{9, 0});
  gaps.Reset();
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{5, 0}));
  gaps.NoteRead(StreamId{9, 0}, StreamId{9, 0});  // not a jump: ignored
  EXPECT_EQ(gaps.size(), 0u);
}

TEST(GapTrackerTest, FullTrackerMergesIntoASuperset) {
  GapTracker gaps;
  // Pages of a lagging reader: jumps (0,10) (19,30) (39,50) ...; each page read i*20+10..+19.
  for (uint64_t i = 0; i < 2 * GapTracker::kMaxIntervals; ++i) {
    gaps.NoteRead(StreamId{i == 0 ? 0 : i * 20 - 1, 0}, StreamId{i * 20 + 10, 0});
  }
  EXPECT_EQ(gaps.size(), GapTracker::kMaxIntervals);
  // Every real gap is still found.
  for (uint64_t i = 0; i < 2 * GapTracker::kMaxIntervals; ++i) {
    EXPECT_TRUE(gaps.MissedByTrim(StreamId{i * 20 + 5, 0})) << i;
  }
  // The first intervals were never merged: a trim of what they read is not a gap.
  EXPECT_FALSE(gaps.MissedByTrim(StreamId{15, 0}));
}

}  // namespace
}  // namespace scenecrdt::cluster
