// SPDX-License-Identifier: Apache-2.0
// Tests the DCL CRDT codec: a smoke test, and the layout measured from SerializeMessage against
// the table of docs/PROTOCOL.md section 1.
#include "scenecrdt/protocol/crdt_codec.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace scenecrdt::protocol {
namespace {

TEST(CrdtCodecTest, TransformPutRoundTrip) {
  std::vector<uint8_t> bytes;
  Transform t;
  t.position = {1, 2, 3};
  AppendTransformPut(512, 1, t, bytes);
  ASSERT_EQ(bytes.size(), 68u);
  std::vector<uint8_t> again;
  auto r = DecodeStream(bytes, {}, [&](const CrdtMessage& m) { AppendMessage(m, again); });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(again, bytes);
}

// docs/PROTOCOL.md section 1, written out: each type's fields with their byte offsets, and the
// size without the payload.
TEST(CrdtLayoutTest, MatchesTheSpecTable) {
  using F = Field;
  using T = MessageType;
  struct Row {
    MessageType type;
    std::vector<std::pair<Field, uint32_t>> fields;
    uint32_t base_size;
  };
  const std::vector<std::pair<Field, uint32_t>> put = {
      {F::kEntity, 8}, {F::kComponent, 12}, {F::kTimestamp, 16}, {F::kData, 20}};
  const Row rows[] = {
      {T::kPutComponent, put, 24},
      {T::kDeleteComponent, {{F::kEntity, 8}, {F::kComponent, 12}, {F::kTimestamp, 16}}, 20},
      {T::kDeleteEntity, {{F::kEntity, 8}}, 12},
      {T::kAppendValue, put, 24},
      {T::kPutComponentNetwork,
       {{F::kEntity, 8},
        {F::kComponent, 12},
        {F::kTimestamp, 16},
        {F::kNetworkId, 20},
        {F::kData, 24}},
       28},
      {T::kDeleteComponentNetwork,
       {{F::kEntity, 8}, {F::kComponent, 12}, {F::kTimestamp, 16}, {F::kNetworkId, 20}},
       24},
      {T::kDeleteEntityNetwork, {{F::kEntity, 8}, {F::kNetworkId, 12}}, 16},
      {MessageType{0}, {{F::kBody, 8}}, 8},
      {MessageType{8}, {{F::kBody, 8}}, 8},
      {MessageType{0xFFFFFFFFu}, {{F::kBody, 8}}, 8},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(static_cast<uint32_t>(row.type));
    const MessageLayout& layout = LayoutOf(row.type);
    EXPECT_EQ(layout.base_size, row.base_size);
    EXPECT_EQ(BaseSize(row.type), row.base_size);
    uint32_t fields = 0;
    for (const auto& [field, offset] : row.fields) {
      fields |= 1u << static_cast<uint32_t>(field);
      EXPECT_EQ(layout.OffsetOf(field), offset);
    }
    EXPECT_EQ(layout.fields, fields);
    const auto v = static_cast<uint32_t>(row.type);
    EXPECT_EQ(HasComponent(row.type), v == 1 || v == 2 || v == 4 || v == 5 || v == 6);
    EXPECT_EQ(HasTimestamp(row.type), HasComponent(row.type));
    EXPECT_EQ(HasNetworkId(row.type), v == 5 || v == 6 || v == 7);
    EXPECT_EQ(HasData(row.type), v == 1 || v == 4 || v == 5);
  }
}

}  // namespace
}  // namespace scenecrdt::protocol
