// SPDX-License-Identifier: Apache-2.0
// Tests the merge-benchmark stream: strict DCL, exactly `updates` Transform PUTs per entity
// with timestamps 1..updates, equal-timestamp ties with different bytes, shuffled, and the
// same bytes for the same seed (the C++ benchmark, `scenecrdt bench stream` and the @dcl/ecs
// comparison all measure this one stream).
#include "scenecrdt/testing/bench_streams.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"

namespace scenecrdt::testing {
namespace {

struct Put {
  protocol::EntityId entity;
  uint32_t timestamp;
  std::vector<uint8_t> data;
};

std::vector<Put> DecodePuts(const std::vector<uint8_t>& bytes) {
  std::vector<Put> puts;
  protocol::DecodeOptions options;
  options.reject_unknown_types = true;
  auto r = protocol::DecodeStream(bytes, options, [&](const protocol::CrdtMessage& m) {
    EXPECT_EQ(m.type, protocol::MessageType::kPutComponent);
    EXPECT_EQ(m.component, protocol::kTransformComponentId);
    EXPECT_EQ(m.data.size(), protocol::Transform::kSize);
    puts.push_back({m.entity, m.timestamp, {m.data.begin(), m.data.end()}});
  });
  EXPECT_TRUE(r.has_value());
  return puts;
}

TEST(BenchStreamsTest, EveryEntityGetsItsUpdatesWithTies) {
  const uint32_t entities = 300;
  const uint32_t updates = 16;
  const std::vector<uint8_t> bytes = MakeTransformPutStream(entities, updates, 7);
  ASSERT_EQ(bytes.size(), std::size_t{entities} * updates * 68);
  const std::vector<Put> puts = DecodePuts(bytes);
  ASSERT_EQ(puts.size(), std::size_t{entities} * updates);

  std::map<protocol::EntityId, uint32_t> per_entity;
  std::map<std::pair<protocol::EntityId, uint32_t>, std::vector<std::vector<uint8_t>>> by_key;
  for (const Put& p : puts) {
    EXPECT_GE(protocol::EntityNumber(p.entity), 512u);
    EXPECT_LT(protocol::EntityNumber(p.entity), 512u + entities);
    EXPECT_EQ(protocol::EntityVersion(p.entity), 0u);
    EXPECT_GE(p.timestamp, 1u);
    EXPECT_LE(p.timestamp, updates);
    ++per_entity[p.entity];
    by_key[{p.entity, p.timestamp}].push_back(p.data);
  }
  EXPECT_EQ(per_entity.size(), entities);
  for (const auto& [entity, count] : per_entity) EXPECT_EQ(count, updates) << entity;

  // About one update in eight repeats the previous timestamp: a tie the data must break.
  std::size_t ties_with_different_bytes = 0;
  for (const auto& [key, payloads] : by_key) {
    for (std::size_t i = 1; i < payloads.size(); ++i) {
      ties_with_different_bytes += payloads[i] != payloads[0] ? 1 : 0;
    }
  }
  EXPECT_GT(ties_with_different_bytes, puts.size() / 16);
  EXPECT_LT(ties_with_different_bytes, puts.size() / 4);

  // Shuffled: the first messages do not all belong to the first entity.
  std::size_t first_entity_in_head = 0;
  for (std::size_t i = 0; i < updates; ++i) {
    first_entity_in_head += protocol::EntityNumber(puts[i].entity) == 512 ? 1 : 0;
  }
  EXPECT_LT(first_entity_in_head, updates);
}

TEST(BenchStreamsTest, SameSeedSameBytes) {
  EXPECT_EQ(MakeTransformPutStream(100, 4, 7), MakeTransformPutStream(100, 4, 7));
  EXPECT_NE(MakeTransformPutStream(100, 4, 7), MakeTransformPutStream(100, 4, 8));
  EXPECT_TRUE(MakeTransformPutStream(0, 4, 7).empty());
  EXPECT_TRUE(MakeTransformPutStream(10, 0, 7).empty());
}

TEST(BenchStreamsTest, EntitiesBeyondTheNumberSpaceTakeTheNextVersion) {
  const std::vector<Put> puts = DecodePuts(MakeTransformPutStream(65024 + 3, 1, 1));
  ASSERT_EQ(puts.size(), 65024u + 3u);
  std::size_t version1 = 0;
  for (const Put& p : puts) {
    if (protocol::EntityVersion(p.entity) == 1) {
      ++version1;
      EXPECT_LT(protocol::EntityNumber(p.entity), 512u + 3u);
    } else {
      EXPECT_EQ(protocol::EntityVersion(p.entity), 0u);
    }
  }
  EXPECT_EQ(version1, 3u);
}

}  // namespace
}  // namespace scenecrdt::testing
