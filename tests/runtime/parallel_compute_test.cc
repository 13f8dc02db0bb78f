// SPDX-License-Identifier: Apache-2.0
// Tests the work split of a parallel compute (SplitWork): consecutive parts that cover every
// entity once and start at entity total * k / parts, for any number of parts. The compute on
// two threads is tested end to end in propagation_test.cc and transform_property_test.cc.
#include "scenecrdt/runtime/transform/parallel_compute.h"

#include <gtest/gtest.h>

#include <vector>

namespace scenecrdt::runtime::internal {
namespace {

// Entities before (range, offset) in sequence order.
uint64_t EntityIndex(const std::vector<Range>& ranges, std::size_t range, uint32_t offset) {
  uint64_t index = offset;
  for (std::size_t r = 0; r < range; ++r) index += ranges[r].count;
  return index;
}

void ExpectValidSplit(const std::vector<Range>& ranges, std::size_t num_parts) {
  uint64_t total = 0;
  for (const Range& r : ranges) total += r.count;
  const std::vector<WorkPart> parts = SplitWork(ranges, total, num_parts);
  ASSERT_EQ(parts.size(), num_parts);
  EXPECT_EQ(parts.front().begin_range, 0u);
  EXPECT_EQ(parts.front().begin_offset, 0u);
  EXPECT_EQ(parts.back().end_range, ranges.size());
  EXPECT_EQ(parts.back().end_offset, 0u);
  uint64_t covered = 0;
  for (std::size_t k = 0; k < num_parts; ++k) {
    SCOPED_TRACE(k);
    const WorkPart& p = parts[k];
    const uint64_t begin = EntityIndex(ranges, p.begin_range, p.begin_offset);
    EXPECT_EQ(begin, total * k / num_parts);
    if (k > 0) {
      EXPECT_EQ(p.begin_range, parts[k - 1].end_range);
      EXPECT_EQ(p.begin_offset, parts[k - 1].end_offset);
      ASSERT_LT(p.begin_range, ranges.size());
      EXPECT_LT(p.begin_offset, ranges[p.begin_range].count);  // starts on an entity
    }
    const uint64_t end = k + 1 < num_parts ? EntityIndex(ranges, p.end_range, p.end_offset) : total;
    EXPECT_LE(begin, end);
    covered += end - begin;
  }
  EXPECT_EQ(covered, total);
}

TEST(ParallelComputeTest, SplitWorkCoversEveryEntityOnceAtEqualCounts) {
  uint64_t h = 12345;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Range> ranges;
    const int n = 1 + trial % 9;
    uint32_t pos = 1;
    for (int i = 0; i < n; ++i) {
      h = h * 6364136223846793005ull + 1442695040888963407ull;
      const auto count = static_cast<uint32_t>(1 + (h >> 33) % (trial % 2 == 0 ? 5 : 5000));
      ranges.push_back(Range{pos, count});
      pos += count;
    }
    for (std::size_t parts = 1; parts <= 6; ++parts) {
      SCOPED_TRACE(::testing::Message() << "trial " << trial << ", parts " << parts);
      ExpectValidSplit(ranges, parts);
    }
  }
}

TEST(ParallelComputeTest, SplitWorkOfFewerEntitiesThanPartsLeavesPartsEmpty) {
  const std::vector<Range> ranges = {Range{1, 1}, Range{5, 1}};
  const std::vector<WorkPart> parts = SplitWork(ranges, 2, 4);
  ASSERT_EQ(parts.size(), 4u);
  // Parts start at entities 2 * k / 4 = 0, 0, 1, 1: parts 0 and 2 are empty.
  EXPECT_EQ(EntityIndex(ranges, parts[1].begin_range, parts[1].begin_offset), 0u);
  EXPECT_EQ(EntityIndex(ranges, parts[2].begin_range, parts[2].begin_offset), 1u);
  EXPECT_EQ(EntityIndex(ranges, parts[3].begin_range, parts[3].begin_offset), 1u);
  ExpectValidSplit(ranges, 4);
}

}  // namespace
}  // namespace scenecrdt::runtime::internal
