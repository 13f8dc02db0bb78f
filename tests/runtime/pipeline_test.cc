// SPDX-License-Identifier: Apache-2.0
// Tests the DOTS pipeline (docs/PIPELINE.md) and world composition: every case of
// docs/reference/TRANSFORM-CASES.md, each formula against a literal 4x4 product, the six Euler
// orders, precedence rules, ParentScaleInverse, write-group overrides, Static, and decomposition.
#include "scenecrdt/runtime/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <glm/gtc/matrix_transform.hpp>

#include "scenecrdt/runtime/transform/affine.h"
#include "scenecrdt/runtime/transform_system.h"
#include "tests/runtime/transform_test_util.h"

namespace scenecrdt::runtime {
namespace {

using protocol::EntityId;
using protocol::Transform;

using testing::MakeTransform;
using testing::RotZ;

constexpr EntityId kParent = 600, kChild = 601, kGrand = 602;

glm::mat4 T(glm::vec3 v) { return glm::translate(glm::mat4(1.0f), v); }
glm::mat4 S(glm::vec3 v) { return glm::scale(glm::mat4(1.0f), v); }
glm::mat4 R(glm::quat q) { return glm::mat4_cast(q); }
glm::vec3 Apply(const glm::mat4& m, glm::vec3 p) { return glm::vec3(m * glm::vec4(p, 1.0f)); }

void ExpectVecNear(glm::vec3 a, glm::vec3 b, float tol) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

TEST(PipelineTest, KernelMatchesGlm) {
  const Transform t = MakeTransform(
      0, {1, 2, 3}, glm::normalize(glm::quat(0.9f, 0.1f, -0.3f, 0.2f)), {2, 0.5f, 1.5f});
  const glm::mat4 expected = T({1, 2, 3}) * R(protocol::ToGlm(t.rotation)) * S({2, 0.5f, 1.5f});
  glm::mat4 out;
  internal::ComposeTrs(glm::mat4(1.0f), internal::ToLocalTrs(t), out);
  SCENECRDT_EXPECT_MAT_NEAR(out, expected, 1e-6f);
  const glm::mat4 parent = T({-1, 0, 4}) * R(RotZ(30)) * S({1, 3, 1});
  internal::ComposeTrs(parent, internal::ToLocalTrs(t), out);
  SCENECRDT_EXPECT_MAT_NEAR(out, parent * expected, 1e-5f);
  // parent * (the kernel's own T R S): the same operations in the same order, bit for bit.
  glm::mat4 local;
  internal::ComposeTrs(glm::mat4(1.0f), internal::ToLocalTrs(t), local);
  const internal::Affine product =
      internal::ComposeAffine(internal::AffineFromMat4(parent), internal::AffineFromMat4(local));
  SCENECRDT_EXPECT_MAT_NEAR(internal::Mat4FromAffine(product), parent * expected, 1e-5f);
  EXPECT_TRUE(testing::BitwiseEqual(internal::Mat4FromAffine(product), out));
}

// Case 1: rotated child under a non-uniformly scaled parent is sheared, exactly.
TEST(PipelineTest, Case1RotatedChildUnderNonUniformScaleIsSheared) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {0, 0, 0}, glm::quat(1, 0, 0, 0), {2, 1, 1}));
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 0, 0}, RotZ(45)));
  ts.Update();
  const glm::mat4 w = *ts.WorldMatrix(kChild);
  ExpectVecNear(Apply(w, {1, 0, 0}), {3.4142f, 0.7071f, 0}, 1e-4f);
  ExpectVecNear(Apply(w, {0, 1, 0}), {0.5858f, 0.7071f, 0}, 1e-4f);
  ExpectVecNear(glm::vec3(w[0]), {1.4142f, 0.7071f, 0}, 1e-4f);
  ExpectVecNear(glm::vec3(w[1]), {-1.4142f, 0.7071f, 0}, 1e-4f);
  EXPECT_NEAR(glm::dot(glm::vec3(w[0]), glm::vec3(w[1])), -1.5f, 1e-5f);
  const Decomposed d = DecomposeWorld(w);
  EXPECT_TRUE(d.has_shear);
  EXPECT_NEAR(d.shear, 0.6f, 1e-4f);  // |cos| between the x and y world axes
}

// Case 2 (Bevy #4910): Rz(-90) * S(1,2,1) * Rz(90) == S(2,1,1).
TEST(PipelineTest, Case2ScaleBetweenRotationsIsMatrixProduct) {
  TransformSystem ts;
  ts.SetTransform(kGrand, MakeTransform(0, {}, RotZ(-90)));
  ts.SetTransform(kParent, MakeTransform(kGrand, {}, glm::quat(1, 0, 0, 0), {1, 2, 1}));
  ts.SetTransform(kChild, MakeTransform(kParent, {}, RotZ(90)));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), S({2, 1, 1}), 1e-6f);
}

// Case 3: A * A^-1 is identity with matrices.
TEST(PipelineTest, Case3InverseRoundTrip) {
  TransformSystem ts;
  const glm::mat4 a = T({1, 2, 3}) * R(RotZ(30)) * S({2, 1, 1});
  ts.SetTransform(kParent, MakeTransform(0, {1, 2, 3}, RotZ(30), {2, 1, 1}));
  ts.SetTransform(kChild, MakeTransform(kParent));
  ts.SetLocalToParentOverride(kChild, glm::inverse(a));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), glm::mat4(1.0f), 1e-5f);
}

// Case 4: ParentScaleInverse (scale compensation).
TEST(PipelineTest, Case4ParentScaleInverse) {
  for (const glm::vec3 parent_scale : {glm::vec3(2.0f), glm::vec3(2, 1, 1)}) {
    for (const float degrees : {90.0f, 45.0f}) {
      TransformSystem ts;
      ts.SetTransform(kParent, MakeTransform(0, {}, glm::quat(1, 0, 0, 0), parent_scale));
      ts.SetTransform(kChild, MakeTransform(kParent, {1, 0, 0}, RotZ(degrees)));
      ts.Update();
      const glm::mat4 without = *ts.WorldMatrix(kChild);
      SCENECRDT_EXPECT_MAT_NEAR(without, S(parent_scale) * T({1, 0, 0}) * R(RotZ(degrees)), 1e-5f);
      if (parent_scale.x != parent_scale.y && degrees == 45.0f) {
        EXPECT_TRUE(DecomposeWorld(without).has_shear);
      }
      ts.SetParentScaleInverse(kChild, true);
      ts.Update();
      const glm::mat4 with = *ts.WorldMatrix(kChild);
      ExpectVecNear(glm::vec3(with[3]), {2, 0, 0}, 1e-6f);  // translation still scaled
      for (int axis = 0; axis < 3; ++axis)
        EXPECT_NEAR(glm::length(glm::vec3(with[axis])), 1.0f, 1e-6f);
      EXPECT_FALSE(DecomposeWorld(with).has_shear);
      // LocalToParent = T * S_parent^-1 * R * S, literally.
      SCENECRDT_EXPECT_MAT_NEAR(
          with, S(parent_scale) * (T({1, 0, 0}) * glm::inverse(S(parent_scale)) * R(RotZ(degrees))),
          1e-5f);
    }
  }
}

// Case 5: mirroring keeps det < 0 through the hierarchy.
TEST(PipelineTest, Case5NegativeScaleKeepsNegativeDeterminant) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {}, glm::quat(1, 0, 0, 0), {-1, 1, 1}));
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 0, 0}, RotZ(30), {1, 2, 1}));
  ts.Update();
  const glm::mat4 w = *ts.WorldMatrix(kChild);
  EXPECT_LT(glm::determinant(w), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(w, S({-1, 1, 1}) * T({1, 0, 0}) * R(RotZ(30)) * S({1, 2, 1}), 1e-6f);
  const Decomposed d = DecomposeWorld(*ts.WorldMatrix(kParent));
  EXPECT_FLOAT_EQ(d.scale.x, -1.0f);
  EXPECT_FALSE(d.has_shear);
}

// Case 6: pivots. RotationPivot (1,0,0) with Rz(90): (1,0,0) is fixed, the origin maps to
// (1,-1,0), and the built CompositeRotation equals the literal product.
TEST(PipelineTest, Case6RotationPivot) {
  TransformSystem ts;
  ts.SetTransform(kChild, MakeTransform(0, {}, RotZ(90)));
  ts.SetRotationPivot(kChild, {1, 0, 0});
  ts.Update();
  const glm::mat4 w = *ts.WorldMatrix(kChild);
  ExpectVecNear(Apply(w, {1, 0, 0}), {1, 0, 0}, 1e-6f);
  ExpectVecNear(Apply(w, {0, 0, 0}), {1, -1, 0}, 1e-6f);
  SCENECRDT_EXPECT_MAT_NEAR(w, T({1, 0, 0}) * R(RotZ(90)) * T({-1, 0, 0}), 1e-6f);
}

// Case 7: the six Euler orders against products of axis rotations (first axis applied first).
TEST(PipelineTest, Case7EulerOrders) {
  const glm::vec3 angles = glm::radians(glm::vec3(30.0f, 45.0f, 60.0f));
  const glm::mat4 rx = glm::rotate(glm::mat4(1.0f), angles.x, glm::vec3(1, 0, 0));
  const glm::mat4 ry = glm::rotate(glm::mat4(1.0f), angles.y, glm::vec3(0, 1, 0));
  const glm::mat4 rz = glm::rotate(glm::mat4(1.0f), angles.z, glm::vec3(0, 0, 1));
  const glm::mat4 expected[6] = {rz * ry * rx, ry * rz * rx, rz * rx * ry,
                                 rx * rz * ry, ry * rx * rz, rx * ry * rz};
  for (int i = 0; i < kNumEulerOrders; ++i) {
    SCOPED_TRACE(i);
    const auto order = static_cast<EulerOrder>(i);
    SCENECRDT_EXPECT_MAT_NEAR(glm::mat4_cast(EulerToQuat(order, angles)), expected[i], 1e-6f);
    TransformSystem ts;
    ts.SetTransform(kChild, MakeTransform(0, {1, 2, 3}, RotZ(10)));  // replaced by the Euler
    ts.SetRotationEuler(kChild, order, angles);
    ts.Update();
    SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({1, 2, 3}) * expected[i], 1e-6f);
  }
  // All orders differ for these angles.
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j) EXPECT_GT(testing::MaxAbsDiff(expected[i], expected[j]), 0.01f);
}

TEST(PipelineTest, EulerPrecedenceXyzFirst) {
  TransformSystem ts;
  const glm::vec3 a = glm::radians(glm::vec3(10, 20, 30));
  const glm::vec3 b = glm::radians(glm::vec3(40, 50, 60));
  ts.SetTransform(kChild, MakeTransform(0));
  ts.SetRotationEuler(kChild, EulerOrder::kZYX, b);
  ts.SetRotationEuler(kChild, EulerOrder::kXZY, a);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), R(EulerToQuat(EulerOrder::kXZY, a)), 1e-6f);
  ts.SetRotationEuler(kChild, EulerOrder::kXYZ, b);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), R(EulerToQuat(EulerOrder::kXYZ, b)), 1e-6f);
  ts.RemoveRotationEuler(kChild, EulerOrder::kXYZ);
  ts.RemoveRotationEuler(kChild, EulerOrder::kXZY);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), R(EulerToQuat(EulerOrder::kZYX, b)), 1e-6f);
  ts.ClearLocalComponents(kChild);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), glm::mat4(1.0f), 0.0f);
  EXPECT_EQ(ts.GetLocalComponents(kChild), nullptr);
}

TEST(PipelineTest, CompositeRotationFormula) {
  const Transform t =
      MakeTransform(0, {1, -2, 3}, glm::normalize(glm::quat(0.8f, 0.2f, 0.4f, -0.1f)), {1, 2, 3});
  LocalComponents c;
  c.present = LocalComponents::kRotationPivot | LocalComponents::kRotationPivotTranslation |
              LocalComponents::kPostRotation;
  c.rotation_pivot = {0.5f, 1, -1};
  c.rotation_pivot_translation = {2, 0, 1};
  c.post_rotation = glm::normalize(glm::quat(0.7f, -0.3f, 0.1f, 0.5f));
  const glm::mat4 cr = T(c.rotation_pivot_translation) * T(c.rotation_pivot) *
                       R(protocol::ToGlm(t.rotation)) * R(c.post_rotation) * T(-c.rotation_pivot);
  SCENECRDT_EXPECT_MAT_NEAR(CompositeRotationMatrix(t, c), cr, 1e-6f);
  const glm::mat4 l2p = T({1, -2, 3}) * cr * S({1, 2, 3});
  SCENECRDT_EXPECT_MAT_NEAR(LocalToParentMatrix(t, &c), l2p, 1e-5f);
  // PostRotationEuler wins over PostRotation.
  c.present |= LocalComponents::kPostRotationEuler0 << static_cast<int>(EulerOrder::kYZX);
  c.post_rotation_euler[3] = {0.1f, 0.2f, 0.3f};
  const glm::mat4 cr2 = T(c.rotation_pivot_translation) * T(c.rotation_pivot) *
                        R(protocol::ToGlm(t.rotation)) *
                        R(EulerToQuat(EulerOrder::kYZX, {0.1f, 0.2f, 0.3f})) * T(-c.rotation_pivot);
  SCENECRDT_EXPECT_MAT_NEAR(CompositeRotationMatrix(t, c), cr2, 1e-6f);
  // A user CompositeRotation replaces the built one.
  c.present |= LocalComponents::kCompositeRotation;
  c.composite_rotation = R(RotZ(33));
  SCENECRDT_EXPECT_MAT_NEAR(LocalToParentMatrix(t, &c), T({1, -2, 3}) * R(RotZ(33)) * S({1, 2, 3}),
                            1e-5f);
}

TEST(PipelineTest, CompositeScaleFormula) {
  const Transform t = MakeTransform(0, {1, 0, 0}, RotZ(20), {2, 3, 4});
  LocalComponents c;
  c.present = LocalComponents::kScalePivot | LocalComponents::kScalePivotTranslation;
  c.scale_pivot = {1, 1, 0};
  c.scale_pivot_translation = {0, 0, 5};
  const glm::mat4 cs = T({0, 0, 5}) * T({1, 1, 0}) * S({2, 3, 4}) * T({-1, -1, 0});
  SCENECRDT_EXPECT_MAT_NEAR(CompositeScaleMatrix(t, c), cs, 1e-6f);
  SCENECRDT_EXPECT_MAT_NEAR(LocalToParentMatrix(t, &c), T({1, 0, 0}) * R(RotZ(20)) * cs, 1e-5f);
  // ParentScaleInverse of a child of this entity is CompositeScale^-1; singular: identity.
  SCENECRDT_EXPECT_MAT_NEAR(CompositeScaleInverseMatrix(t, c), glm::inverse(cs), 1e-5f);
  LocalComponents flat = c;
  flat.scale_pivot = {0, 0, 0};
  const Transform collapsed = MakeTransform(0, {1, 0, 0}, RotZ(20), {2, 0, 4});
  SCENECRDT_EXPECT_MAT_NEAR(CompositeScaleInverseMatrix(collapsed, flat), glm::mat4(1.0f), 0.0f);
  c.present |= LocalComponents::kCompositeScale;
  c.composite_scale = S({5, 5, 5});
  SCENECRDT_EXPECT_MAT_NEAR(CompositeScaleMatrix(t, c), S({5, 5, 5}), 0.0f);
}

TEST(PipelineTest, LocalToParentFullFormulaInSystem) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {0, 1, 0}, RotZ(15), {2, 1, 3}));
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 2, 3}, RotZ(40), {1, 2, 1}));
  ts.SetRotationPivot(kChild, {0, 1, 0});
  ts.SetPostRotationEuler(kChild, EulerOrder::kZXY, {0.3f, 0.2f, 0.1f});
  ts.SetScalePivot(kChild, {1, 0, 0});
  ts.SetParentScaleInverse(kChild, true);
  ts.Update();
  const glm::mat4 parent = T({0, 1, 0}) * R(RotZ(15)) * S({2, 1, 3});
  const glm::mat4 cr = T({0, 1, 0}) * R(RotZ(40)) *
                       R(EulerToQuat(EulerOrder::kZXY, {0.3f, 0.2f, 0.1f})) * T({0, -1, 0});
  const glm::mat4 cs = T({1, 0, 0}) * S({1, 2, 1}) * T({-1, 0, 0});
  const glm::mat4 l2p = T({1, 2, 3}) * glm::inverse(S({2, 1, 3})) * cr * cs;
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), parent * l2p, 1e-5f);
}

TEST(PipelineTest, WriteGroupOverrides) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {10, 0, 0}));
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 0, 0}));
  ts.SetTransform(kGrand, MakeTransform(kChild, {0, 1, 0}));
  const glm::mat4 l2p = T({0, 0, 7}) * R(RotZ(90));
  ts.SetLocalToParentOverride(kChild, l2p);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({10, 0, 0}) * l2p, 1e-6f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kGrand), T({10, 0, 0}) * l2p * T({0, 1, 0}), 1e-6f);
  // LocalToWorld wins over LocalToParent and ignores the parent.
  const glm::mat4 l2w = T({0, 3, 0}) * S({2, 2, 2});
  ts.SetLocalToWorldOverride(kChild, l2w);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), l2w, 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kGrand), l2w * T({0, 1, 0}), 1e-6f);
  ts.SetTransform(kParent, MakeTransform(0, {20, 0, 0}));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), l2w, 0.0f);
  ts.RemoveLocalToWorldOverride(kChild);
  ts.RemoveLocalToParentOverride(kChild);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kGrand), T({21, 1, 0}), 1e-6f);
  // A projective last row is dropped: world composition is affine.
  glm::mat4 projective(1.0f);
  projective[0][3] = 0.5f;
  ts.SetLocalToWorldOverride(kChild, projective);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), glm::mat4(1.0f), 0.0f);
}

TEST(PipelineTest, StaticIsComputedOnceThenFrozen) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {1, 0, 0}));
  ts.SetTransform(kChild, MakeTransform(kParent, {0, 1, 0}));
  ts.SetTransform(kGrand, MakeTransform(kChild, {0, 0, 1}));
  ts.SetStatic(kChild, true);
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({1, 1, 0}), 0.0f);
  // The parent moves: the static child stays; its children follow the frozen matrix.
  ts.SetTransform(kParent, MakeTransform(0, {5, 0, 0}));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({1, 1, 0}), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kGrand), T({1, 1, 1}), 0.0f);
  const auto changed = ts.changed_entities();
  EXPECT_EQ(std::count(changed.begin(), changed.end(), kChild), 0);
  EXPECT_EQ(std::count(changed.begin(), changed.end(), kParent), 1);
  // Its own Transform changes: computed once more against the current parent.
  ts.SetTransform(kChild, MakeTransform(kParent, {0, 2, 0}));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({5, 2, 0}), 0.0f);
  EXPECT_EQ(std::count(ts.changed_entities().begin(), ts.changed_entities().end(), kChild), 1);
  // No longer static: follows the parent again.
  ts.SetStatic(kChild, false);
  ts.SetTransform(kParent, MakeTransform(0, {7, 0, 0}));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), T({7, 2, 0}), 0.0f);
}

TEST(PipelineTest, ScaleAndNonUniformScaleMapping) {
  // Scale (x == y == z) and NonUniformScale give the matrices of their definitions.
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {}, glm::quat(1, 0, 0, 0), {3, 3, 3}));
  ts.SetTransform(kChild, MakeTransform(0, {}, glm::quat(1, 0, 0, 0), {1, 2, 3}));
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kParent), S({3, 3, 3}), 0.0f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), S({1, 2, 3}), 0.0f);
}

// ParentScaleInverse under a parent with a zero scale component: that component inverts to
// zero (not infinity), so the child's world stays finite; at root it is identity.
TEST(PipelineTest, ZeroParentScaleDoesNotPoisonCompensatedChild) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {0, 1, 0}, glm::quat(1, 0, 0, 0), {0, 2, 1}));
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 2, 3}, RotZ(30), {1, 2, 1}));
  ts.SetTransform(kGrand, MakeTransform(0, {4, 0, 0}, RotZ(10), {3, 1, 1}));
  ts.SetParentScaleInverse(kChild, true);
  ts.SetParentScaleInverse(kGrand, true);
  ts.Update();
  const glm::mat4 child = *ts.WorldMatrix(kChild);
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) EXPECT_TRUE(std::isfinite(child[c][r])) << c << "," << r;
  const glm::mat4 parent = T({0, 1, 0}) * S({0, 2, 1});
  SCENECRDT_EXPECT_MAT_NEAR(
      child, parent * T({1, 2, 3}) * S({0, 0.5f, 1}) * R(RotZ(30)) * S({1, 2, 1}), 1e-6f);
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kGrand), T({4, 0, 0}) * R(RotZ(10)) * S({3, 1, 1}),
                            1e-6f);
}

// ParentScaleInverse under a parent with a CompositeScale: its inverse, or identity when it
// is singular.
TEST(PipelineTest, ParentScaleInverseOfCompositeScale) {
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {}, glm::quat(1, 0, 0, 0), {2, 3, 4}));
  ts.SetScalePivot(kParent, {1, 1, 0});
  ts.SetScalePivotTranslation(kParent, {0, 0, 5});
  ts.SetTransform(kChild, MakeTransform(kParent, {1, 0, 0}, RotZ(40)));
  ts.SetParentScaleInverse(kChild, true);
  ts.Update();
  const glm::mat4 cs = T({0, 0, 5}) * T({1, 1, 0}) * S({2, 3, 4}) * T({-1, -1, 0});
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild),
                            cs * (T({1, 0, 0}) * glm::inverse(cs) * R(RotZ(40))), 1e-5f);
  ts.SetCompositeScale(kParent, S({0, 1, 1}));  // singular
  ts.Update();
  SCENECRDT_EXPECT_MAT_NEAR(*ts.WorldMatrix(kChild), S({0, 1, 1}) * T({1, 0, 0}) * R(RotZ(40)),
                            1e-6f);
}

TEST(DecomposeTest, RecoversTrsOfUnshearedWorlds) {
  const glm::quat q = glm::normalize(glm::quat(0.6f, 0.3f, -0.5f, 0.2f));
  const glm::mat4 m = T({1, 2, 3}) * R(q) * S({2, 0.5f, 4});
  const Decomposed d = DecomposeWorld(m);
  ExpectVecNear(d.translation, {1, 2, 3}, 1e-6f);
  ExpectVecNear(d.scale, {2, 0.5f, 4}, 1e-5f);
  EXPECT_NEAR(std::fabs(glm::dot(d.rotation, q)), 1.0f, 1e-5f);
  EXPECT_FALSE(d.has_shear);
  EXPECT_LT(d.shear, 1e-5f);
  // Uniformly scaled hierarchy: still no shear.
  TransformSystem ts;
  ts.SetTransform(kParent, MakeTransform(0, {1, 0, 0}, RotZ(30), {2, 2, 2}));
  ts.SetTransform(kChild, MakeTransform(kParent, {0, 1, 0}, RotZ(45), {1, 3, 1}));
  ts.Update();
  const Decomposed dc = DecomposeWorld(*ts.WorldMatrix(kChild));
  EXPECT_FALSE(dc.has_shear);
  ExpectVecNear(dc.scale, {2, 6, 2}, 1e-5f);
  EXPECT_NEAR(std::fabs(glm::dot(dc.rotation, RotZ(75))), 1.0f, 1e-5f);
}

}  // namespace
}  // namespace scenecrdt::runtime
