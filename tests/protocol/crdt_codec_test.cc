// SPDX-License-Identifier: Apache-2.0
// Tests the DCL CRDT codec: a smoke test while the full suites land.
#include "scenecrdt/protocol/crdt_codec.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace scenecrdt::protocol
