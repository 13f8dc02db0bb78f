// SPDX-License-Identifier: Apache-2.0
// Tests the benchmark scene shapes: every shape is a forest in index order (parent < child),
// deterministic from its seed, with the structure its name promises; the local transforms
// stay in their documented ranges.
#include "scenecrdt/testing/scene_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace scenecrdt::testing {
namespace {

constexpr SceneShape kAllShapes[] = {SceneShape::kWide,         SceneShape::kDeepChain,
                                     SceneShape::kChains1000,   SceneShape::kBalanced,
                                     SceneShape::kRandomForest, SceneShape::kHumanoids67};

TEST(SceneShapesTest, ShapesAreDeterministicAndWellFormed) {
  for (SceneShape shape : kAllShapes) {
    const auto a = GenerateParents(shape, 5000, 42);
    EXPECT_EQ(a, GenerateParents(shape, 5000, 42));
    for (uint32_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i] == kShapeRoot || a[i] < i);
    EXPECT_EQ(ParseSceneShape(SceneShapeName(shape)), shape);
  }
  const auto forest = GenerateParents(SceneShape::kRandomForest, 100000, 1);
  const auto roots = std::count(forest.begin(), forest.end(), kShapeRoot);
  EXPECT_GT(roots, 700);
  EXPECT_LT(roots, 1300);
}

TEST(SceneShapesTest, NamesIncludeTheReferenceNamesAndRejectOthers) {
  EXPECT_EQ(ParseSceneShape("wide_flat"), SceneShape::kWide);
  EXPECT_EQ(ParseSceneShape("deep_chain"), SceneShape::kDeepChain);
  EXPECT_EQ(ParseSceneShape("chains_1000"), SceneShape::kChains1000);
  EXPECT_EQ(ParseSceneShape("balanced_k8"), SceneShape::kBalanced);
  EXPECT_EQ(ParseSceneShape("random_forest"), SceneShape::kRandomForest);
  EXPECT_EQ(ParseSceneShape("humanoids67"), SceneShape::kHumanoids67);
  EXPECT_EQ(ParseSceneShape(""), std::nullopt);
  EXPECT_EQ(ParseSceneShape("Wide"), std::nullopt);
  EXPECT_EQ(ParseSceneShape("balanced_k4"), std::nullopt);
  EXPECT_STREQ(SceneShapeName(static_cast<SceneShape>(200)), "unknown");
}

TEST(SceneShapesTest, EachShapeHasTheStructureItsNameSays) {
  const auto wide = GenerateParents(SceneShape::kWide, 100, 1);
  EXPECT_EQ(wide[0], kShapeRoot);
  EXPECT_TRUE(std::all_of(wide.begin() + 1, wide.end(), [](uint32_t p) { return p == 0; }));

  const auto deep = GenerateParents(SceneShape::kDeepChain, 100, 1);
  EXPECT_EQ(deep[0], kShapeRoot);
  for (uint32_t i = 1; i < deep.size(); ++i) EXPECT_EQ(deep[i], i - 1);

  const auto chains = GenerateParents(SceneShape::kChains1000, 3500, 1);
  for (uint32_t i = 0; i < chains.size(); ++i) {
    EXPECT_EQ(chains[i], i % 1000 == 0 ? kShapeRoot : i - 1) << i;
  }

  const auto balanced = GenerateParents(SceneShape::kBalanced, 100, 1, 4);
  EXPECT_EQ(balanced[0], kShapeRoot);
  for (uint32_t i = 1; i < balanced.size(); ++i) EXPECT_EQ(balanced[i], (i - 1) / 4);
  // A branching below 1 is a chain, not a division by zero.
  const auto k0 = GenerateParents(SceneShape::kBalanced, 50, 1, 0);
  for (uint32_t i = 1; i < k0.size(); ++i) EXPECT_EQ(k0[i], i - 1);

  // Humanoids: every block of 67 is one rig rooted at its first joint, shaped alike.
  const auto humanoids = GenerateParents(SceneShape::kHumanoids67, 67 * 3, 1);
  for (uint32_t i = 0; i < humanoids.size(); ++i) {
    const uint32_t base = i - i % 67;
    if (i % 67 == 0) {
      EXPECT_EQ(humanoids[i], kShapeRoot) << i;
    } else {
      ASSERT_NE(humanoids[i], kShapeRoot) << i;
      EXPECT_GE(humanoids[i], base) << i;
      EXPECT_EQ(humanoids[i] - base, humanoids[i % 67]) << i;
    }
  }
}

TEST(SceneShapesTest, RandomForestDependsOnTheSeed) {
  EXPECT_NE(GenerateParents(SceneShape::kRandomForest, 1000, 1),
            GenerateParents(SceneShape::kRandomForest, 1000, 2));
}

TEST(SceneShapesTest, LocalTransformsStayInTheirRanges) {
  for (uint32_t i = 0; i < 2000; ++i) {
    for (bool uniform : {true, false}) {
      const protocol::Transform t = ShapeLocalTransform(i, 9, uniform);
      const protocol::Transform again = ShapeLocalTransform(i, 9, uniform);
      EXPECT_EQ(protocol::StoreTransform(t), protocol::StoreTransform(again)) << i;
      EXPECT_EQ(t.parent, 0u);
      for (float p : {t.position.x, t.position.y, t.position.z}) {
        EXPECT_GE(p, -1.0f);
        EXPECT_LE(p, 1.0f);
      }
      const float len = std::sqrt(t.rotation.x * t.rotation.x + t.rotation.y * t.rotation.y +
                                  t.rotation.z * t.rotation.z + t.rotation.w * t.rotation.w);
      EXPECT_NEAR(len, 1.0f, 1e-5f) << i;
      for (float s : {t.scale.x, t.scale.y, t.scale.z}) {
        EXPECT_GE(s, 0.5f);
        EXPECT_LE(s, 1.5f);
      }
      if (uniform) {
        EXPECT_EQ(t.scale.x, t.scale.y);
        EXPECT_EQ(t.scale.x, t.scale.z);
      }
    }
  }
  // Non-uniform scales do occur (the NonUniformScale path is exercised).
  const protocol::Transform t = ShapeLocalTransform(1, 9, false);
  EXPECT_FALSE(t.scale.x == t.scale.y && t.scale.x == t.scale.z);
}

}  // namespace
}  // namespace scenecrdt::testing
