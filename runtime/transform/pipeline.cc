// SPDX-License-Identifier: Apache-2.0
// Owns the DOTS pipeline formulas: LocalToParent from the replicated Transform and the local
// components, with the precedence rules of docs/PIPELINE.md. Written with GLM as the literal matrix
// products (this is the slow path: only entities with local components take it).
#include "scenecrdt/runtime/pipeline.h"

#include <glm/gtc/matrix_transform.hpp>

#include "scenecrdt/protocol/transform_glm.h"

namespace scenecrdt::runtime {
namespace {

glm::quat AxisRotation(int axis, float radians) {
  glm::vec3 a(0.0f);
  a[axis] = 1.0f;
  return glm::angleAxis(radians, a);
}

// Axis indices of each order, in application order (first applied first).
constexpr int kOrderAxes[kNumEulerOrders][3] = {
    {0, 1, 2},  // XYZ
    {0, 2, 1},  // XZY
    {1, 0, 2},  // YXZ
    {1, 2, 0},  // YZX
    {2, 0, 1},  // ZXY
    {2, 1, 0},  // ZYX
};

glm::mat4 Translation(const glm::vec3& v) { return glm::translate(glm::mat4(1.0f), v); }

}  // namespace

glm::quat EulerToQuat(EulerOrder order, const glm::vec3& radians) {
  const int* axes = kOrderAxes[static_cast<int>(order)];
  const glm::quat a = AxisRotation(axes[0], radians[axes[0]]);
  const glm::quat b = AxisRotation(axes[1], radians[axes[1]]);
  const glm::quat c = AxisRotation(axes[2], radians[axes[2]]);
  return c * b * a;  // first axis applied first
}

glm::quat EffectiveRotation(const protocol::Transform& t, const LocalComponents* c) {
  if (c != nullptr && c->Has(LocalComponents::kRotationEulerMask)) {
    for (int i = 0; i < kNumEulerOrders; ++i) {
      if (c->Has(LocalComponents::kRotationEuler0 << i)) {
        return EulerToQuat(static_cast<EulerOrder>(i), c->rotation_euler[i]);
      }
    }
  }
  return protocol::ToGlm(t.rotation);
}

glm::quat EffectivePostRotation(const LocalComponents& c) {
  for (int i = 0; i < kNumEulerOrders; ++i) {
    if (c.Has(LocalComponents::kPostRotationEuler0 << i)) {
      return EulerToQuat(static_cast<EulerOrder>(i), c.post_rotation_euler[i]);
    }
  }
  if (c.Has(LocalComponents::kPostRotation)) return c.post_rotation;
  return glm::quat(1.0f, 0.0f, 0.0f, 0.0f);
}

bool HasCompositeRotation(const LocalComponents* c) {
  return c != nullptr && c->Has(LocalComponents::kCompositeRotationInputs);
}
bool HasCompositeScale(const LocalComponents* c) {
  return c != nullptr && c->Has(LocalComponents::kCompositeScaleInputs);
}

glm::mat4 CompositeRotationMatrix(const protocol::Transform& t, const LocalComponents& c) {
  if (c.Has(LocalComponents::kCompositeRotation)) return MakeAffine(c.composite_rotation);
  const glm::mat4 rotation = glm::mat4_cast(EffectiveRotation(t, &c));
  const glm::mat4 post = glm::mat4_cast(EffectivePostRotation(c));
  return Translation(c.rotation_pivot_translation) * Translation(c.rotation_pivot) * rotation *
         post * Translation(-c.rotation_pivot);
}

glm::mat4 CompositeScaleMatrix(const protocol::Transform& t, const LocalComponents& c) {
  if (c.Has(LocalComponents::kCompositeScale)) return MakeAffine(c.composite_scale);
  const glm::mat4 scale = glm::scale(glm::mat4(1.0f), protocol::ToGlm(t.scale));
  return Translation(c.scale_pivot_translation) * Translation(c.scale_pivot) * scale *
         Translation(-c.scale_pivot);
}

glm::mat4 CompositeScaleInverseMatrix(const protocol::Transform& t, const LocalComponents& c) {
  const glm::mat4 m = CompositeScaleMatrix(t, c);
  if (glm::determinant(glm::mat3(m)) == 0.0f) return glm::mat4(1.0f);
  return MakeAffine(glm::inverse(m));
}

glm::mat4 RotationScaleMatrix(const protocol::Transform& t, const LocalComponents& c) {
  const glm::mat4 rotation = HasCompositeRotation(&c) ? CompositeRotationMatrix(t, c)
                                                      : glm::mat4_cast(EffectiveRotation(t, &c));
  const glm::mat4 scale = HasCompositeScale(&c)
                              ? CompositeScaleMatrix(t, c)
                              : glm::scale(glm::mat4(1.0f), protocol::ToGlm(t.scale));
  return rotation * scale;
}

glm::mat4 LocalToParentMatrix(const protocol::Transform& t, const LocalComponents* c) {
  if (c != nullptr && c->Has(LocalComponents::kLocalToParent)) {
    return MakeAffine(c->local_to_parent);
  }
  glm::mat4 m = Translation(protocol::ToGlm(t.position));
  if (HasCompositeRotation(c)) {
    m = m * CompositeRotationMatrix(t, *c);
  } else {
    m = m * glm::mat4_cast(EffectiveRotation(t, c));
  }
  if (HasCompositeScale(c)) {
    m = m * CompositeScaleMatrix(t, *c);
  } else {
    m = m * glm::scale(glm::mat4(1.0f), protocol::ToGlm(t.scale));
  }
  return m;
}

glm::mat4 MakeAffine(const glm::mat4& m) {
  glm::mat4 r = m;
  r[0][3] = 0.0f;
  r[1][3] = 0.0f;
  r[2][3] = 0.0f;
  r[3][3] = 1.0f;
  return r;
}

}  // namespace scenecrdt::runtime
