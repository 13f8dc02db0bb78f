// SPDX-License-Identifier: Apache-2.0
// Tests the packed Transform: identity bytes (docs/reference/DCL-CRDT.md section 2), field
// offsets of the 44-byte layout against a golden message, IsFinite, BitwiseEqual, and the GLM
// conversions' quaternion order (wire x, y, z, w; glm::quat's constructor takes w first).
#include "scenecrdt/protocol/transform.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <glm/gtc/quaternion.hpp>
#include <limits>

#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/protocol/transform_glm.h"
#include "tests/protocol/test_util.h"

namespace scenecrdt::protocol {
namespace {

float FromBits(uint32_t bits) { return std::bit_cast<float>(bits); }

// Pointers to the ten floats, in wire order.
std::array<float*, 10> Floats(Transform& t) {
  return {&t.position.x, &t.position.y, &t.position.z, &t.rotation.x, &t.rotation.y,
          &t.rotation.z, &t.rotation.w, &t.scale.x,    &t.scale.y,    &t.scale.z};
}

TEST(TransformTest, IdentityBytesMatchTheReference) {
  // docs/reference/DCL-CRDT.md section 2, TransformSchema.create() serialized.
  const std::string expected =
      "000000000000000000000000"
      "000000000000000000000000"
      "0000803f"
      "0000803f0000803f0000803f"
      "00000000";
  EXPECT_EQ(ToHex(StoreTransform(kIdentityTransform)), expected);
  EXPECT_EQ(ToHex(StoreTransform(Transform{})), expected);
  EXPECT_EQ(Transform::kSize, 44u);
  EXPECT_EQ(kIdentityTransform.parent, kRootEntity);
}

TEST(TransformTest, EachFieldLandsAtItsOffset) {
  // Distinct values per field: field i holds 1000 + i, the parent 0x11223344.
  Transform t;
  auto fields = Floats(t);
  for (std::size_t i = 0; i < fields.size(); ++i) *fields[i] = 1000.0f + static_cast<float>(i);
  t.parent = 0x11223344u;
  const TransformBytes bytes = StoreTransform(t);
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const float expected = 1000.0f + static_cast<float>(i);
    const uint32_t bits = std::bit_cast<uint32_t>(expected);
    EXPECT_EQ(bytes[4 * i], bits & 0xFF) << "field " << i;
    EXPECT_EQ(bytes[4 * i + 1], (bits >> 8) & 0xFF) << "field " << i;
    EXPECT_EQ(bytes[4 * i + 2], (bits >> 16) & 0xFF) << "field " << i;
    EXPECT_EQ(bytes[4 * i + 3], bits >> 24) << "field " << i;
  }
  EXPECT_EQ(bytes[40], 0x44);
  EXPECT_EQ(bytes[41], 0x33);
  EXPECT_EQ(bytes[42], 0x22);
  EXPECT_EQ(bytes[43], 0x11);
}

TEST(TransformTest, GoldenTransformLoadsFieldByField) {
  // Golden line 4: entity (512,1), position (-1, 0.1, 0), rotation (0, 0.7071..., 0, 0.7071...),
  // scale 2, parent (600, 0).
  const auto golden = test::LoadGoldenMessages();
  ASSERT_GE(golden.size(), 4u);
  const auto& bytes = golden[3].bytes;
  ASSERT_EQ(bytes.size(), 68u);
  const std::span<const uint8_t, Transform::kSize> payload(bytes.data() + 24, Transform::kSize);
  const Transform t = LoadTransform(payload);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.position.x), 0xbf800000u);  // -1
  EXPECT_EQ(std::bit_cast<uint32_t>(t.position.y), 0x3dcccccdu);  // 0.1f
  EXPECT_EQ(std::bit_cast<uint32_t>(t.position.z), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.rotation.x), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.rotation.y), 0x3f3504f3u);  // 0.70710677f
  EXPECT_EQ(std::bit_cast<uint32_t>(t.rotation.z), 0u);
  EXPECT_EQ(std::bit_cast<uint32_t>(t.rotation.w), 0x3f3504f3u);
  EXPECT_EQ(t.scale.x, 2.0f);
  EXPECT_EQ(t.scale.y, 2.0f);
  EXPECT_EQ(t.scale.z, 2.0f);
  EXPECT_EQ(t.parent, MakeEntityId(600, 0));
  EXPECT_EQ(ToHex(StoreTransform(t)), ToHex(payload));
  EXPECT_TRUE(IsFinite(t));
}

TEST(TransformTest, IsFiniteRejectsNanAndInfinityInEveryFloat) {
  EXPECT_TRUE(IsFinite(kIdentityTransform));
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::signaling_NaN(), FromBits(0xFFC00001u),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (std::size_t field = 0; field < 10; ++field) {
    for (float value : bad) {
      Transform t;
      *Floats(t)[field] = value;
      EXPECT_FALSE(IsFinite(t)) << "field " << field << " bits " << std::hex
                                << std::bit_cast<uint32_t>(value);
    }
  }
  Transform extremes;
  extremes.position = {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
                       std::numeric_limits<float>::denorm_min()};
  extremes.rotation = {-0.0f, std::numeric_limits<float>::min(), 0.0f, 1.0f};
  extremes.scale = {0.0f, -1e30f, 1e-30f};
  extremes.parent = 0xFFFFFFFFu;  // the parent is an id, never "non-finite"
  EXPECT_TRUE(IsFinite(extremes));
}

TEST(TransformTest, BitwiseEqualComparesBitsNotValues) {
  Transform a;
  Transform b;
  EXPECT_TRUE(BitwiseEqual(a, b));
  // -0 == 0 as floats, but not as bits.
  b.position.y = -0.0f;
  EXPECT_EQ(a.position.y, b.position.y);
  EXPECT_FALSE(BitwiseEqual(a, b));
  // NaN != NaN as floats, but the same payload is the same bits.
  a = Transform{};
  b = Transform{};
  a.scale.z = FromBits(0x7FC01234u);
  b.scale.z = FromBits(0x7FC01234u);
  EXPECT_NE(a.scale.z, b.scale.z);
  EXPECT_TRUE(BitwiseEqual(a, b));
  b.scale.z = FromBits(0x7FC01235u);
  EXPECT_FALSE(BitwiseEqual(a, b));
  b.scale.z = FromBits(0xFFC01234u);  // sign bit only
  EXPECT_FALSE(BitwiseEqual(a, b));
  // Every field and the parent take part.
  for (std::size_t field = 0; field < 10; ++field) {
    Transform c;
    *Floats(c)[field] = std::nextafter(*Floats(c)[field], 10.0f);
    EXPECT_FALSE(BitwiseEqual(c, Transform{})) << "field " << field;
  }
  Transform parented;
  parented.parent = 513;
  EXPECT_FALSE(BitwiseEqual(parented, Transform{}));
}

TEST(TransformTest, GlmQuaternionKeepsWireOrder) {
  const Quatf wire{0.1f, 0.2f, 0.3f, 0.9f};
  const glm::quat q = ToGlm(wire);
  EXPECT_EQ(q.x, 0.1f);
  EXPECT_EQ(q.y, 0.2f);
  EXPECT_EQ(q.z, 0.3f);
  EXPECT_EQ(q.w, 0.9f);
  // glm's constructor takes w first.
  EXPECT_TRUE(q == glm::quat(0.9f, 0.1f, 0.2f, 0.3f));
  const Quatf back = FromGlm(q);
  EXPECT_EQ(back.x, wire.x);
  EXPECT_EQ(back.y, wire.y);
  EXPECT_EQ(back.z, wire.z);
  EXPECT_EQ(back.w, wire.w);
  // The identity rotation on the wire is glm's identity.
  EXPECT_TRUE(ToGlm(kIdentityTransform.rotation) == glm::quat(1.0f, 0.0f, 0.0f, 0.0f));
}

TEST(TransformTest, GlmQuaternionRotatesAsTheWireMeans) {
  // Golden rotation: 90 degrees about +Y, (x,y,z,w) = (0, sin 45, 0, cos 45). It takes +X to
  // -Z; with the components shuffled (w read as x) it would not.
  const float s = std::sqrt(0.5f);
  const glm::vec3 v = ToGlm(Quatf{0.0f, s, 0.0f, s}) * glm::vec3(1.0f, 0.0f, 0.0f);
  EXPECT_NEAR(v.x, 0.0f, 1e-6f);
  EXPECT_NEAR(v.y, 0.0f, 1e-6f);
  EXPECT_NEAR(v.z, -1.0f, 1e-6f);
}

TEST(TransformTest, GlmVectorsRoundTrip) {
  const Vec3f p{1.5f, -2.25f, 1e-20f};
  const glm::vec3 g = ToGlm(p);
  EXPECT_EQ(g.x, 1.5f);
  EXPECT_EQ(g.y, -2.25f);
  EXPECT_EQ(g.z, 1e-20f);
  const Vec3f back = FromGlm(g);
  EXPECT_EQ(back.x, p.x);
  EXPECT_EQ(back.y, p.y);
  EXPECT_EQ(back.z, p.z);
}

}  // namespace
}  // namespace scenecrdt::protocol
