// SPDX-License-Identifier: Apache-2.0
// Owns the transform pipeline (the Unity DOTS transform system rules of docs/PIPELINE.md): the
// local, non-replicated components a renderer attaches (LocalComponents), their precedence
// rules, and the functions that turn the replicated Transform plus those components into
// LocalToParent. Propagation caches their results per entity
// (runtime/transform/local_to_parent_cache.h); plain entities take the fused kernels of
// runtime/transform/affine.h instead.
//
// Conventions: column vectors, column-major glm::mat4, W = P * L. Angles in radians. Matrices
// are affine: the last row is (0, 0, 0, 1) and is never read (user matrices get it forced).
#pragma once

#include <array>
#include <cstdint>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <glm/vec3.hpp>

#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::runtime {

// Euler rotation orders of the DOTS RotationEuler* / PostRotationEuler* components. `kXYZ`
// rotates about X first, then Y, then Z (Unity.Mathematics quaternion.EulerXYZ): the matrix is
// Rz * Ry * Rx. In general order ABC gives R_C * R_B * R_A. The enumerator order is also the
// precedence order when several are attached (docs/PIPELINE.md: XYZ first).
enum class EulerOrder : uint8_t { kXYZ = 0, kXZY = 1, kYXZ = 2, kYZX = 3, kZXY = 4, kZYX = 5 };
inline constexpr int kNumEulerOrders = 6;

// Quaternion of an Euler rotation (radians) in `order`.
glm::quat EulerToQuat(EulerOrder order, const glm::vec3& radians);

// The local components of one entity. Every field is optional; `present` says which are set.
struct LocalComponents {
  enum Bit : uint32_t {
    kRotationEuler0 = 1u << 0,  // + order index (6 bits)
    kPostRotation = 1u << 6,
    kPostRotationEuler0 = 1u << 7,  // + order index (6 bits)
    kRotationPivot = 1u << 13,
    kRotationPivotTranslation = 1u << 14,
    kScalePivot = 1u << 15,
    kScalePivotTranslation = 1u << 16,
    kCompositeRotation = 1u << 17,  // user-written matrix
    kCompositeScale = 1u << 18,     // user-written matrix
    kParentScaleInverse = 1u << 19,
    kLocalToParent = 1u << 20,  // user-written LocalToParent (write-group override)
    kLocalToWorld = 1u << 21,   // user-written LocalToWorld (write-group override)
    kStatic = 1u << 22,
  };
  static constexpr uint32_t kRotationEulerMask = 0x3Fu;
  static constexpr uint32_t kPostRotationEulerMask = 0x3Fu << 7;
  // Components that make a CompositeRotation / CompositeScale exist.
  static constexpr uint32_t kCompositeRotationInputs = kPostRotation | kPostRotationEulerMask |
                                                       kRotationPivot | kRotationPivotTranslation |
                                                       kCompositeRotation;
  static constexpr uint32_t kCompositeScaleInputs =
      kScalePivot | kScalePivotTranslation | kCompositeScale;

  uint32_t present = 0;
  std::array<glm::vec3, kNumEulerOrders> rotation_euler{};
  std::array<glm::vec3, kNumEulerOrders> post_rotation_euler{};
  glm::quat post_rotation = glm::quat(1.0f, 0.0f, 0.0f, 0.0f);  // glm order: w, x, y, z
  glm::vec3 rotation_pivot{0.0f};
  glm::vec3 rotation_pivot_translation{0.0f};
  glm::vec3 scale_pivot{0.0f};
  glm::vec3 scale_pivot_translation{0.0f};
  // User matrices (CompositeRotation, CompositeScale, LocalToParent, LocalToWorld); only the
  // ones flagged in `present` are meaningful.
  glm::mat4 composite_rotation{1.0f};
  glm::mat4 composite_scale{1.0f};
  glm::mat4 local_to_parent{1.0f};
  glm::mat4 local_to_world{1.0f};

  bool Has(uint32_t bits) const { return (present & bits) != 0; }
};

// The effective Rotation: the first attached RotationEuler in precedence order, else the
// replicated rotation.
glm::quat EffectiveRotation(const protocol::Transform& t, const LocalComponents* c);
// The effective PostRotation: the first PostRotationEuler in precedence order, else the
// PostRotation quaternion, else identity.
glm::quat EffectivePostRotation(const LocalComponents& c);

// Whether the entity has a CompositeRotation / CompositeScale (user-written or built from
// pivots / PostRotation).
bool HasCompositeRotation(const LocalComponents* c);
bool HasCompositeScale(const LocalComponents* c);
// CompositeRotation = RotationPivotTranslation * RotationPivot * Rotation * PostRotation *
// RotationPivot^-1, or the user-written matrix (which wins: Rotation always exists here, so
// a user CompositeRotation could never be written otherwise; docs/PIPELINE.md).
glm::mat4 CompositeRotationMatrix(const protocol::Transform& t, const LocalComponents& c);
// CompositeScale = ScalePivotTranslation * ScalePivot * (Scale|NonUniformScale) * ScalePivot^-1,
// or the user-written matrix.
glm::mat4 CompositeScaleMatrix(const protocol::Transform& t, const LocalComponents& c);
// Inverse of CompositeScale: the ParentScaleInverse its children with ParentScaleInverse
// take. A singular CompositeScale gives identity. (Of a parent without CompositeScale they take
// 1 / its scale per axis, zero staying zero: ParentScaleInverse in
// runtime/transform/local_to_parent_cache.h; a child of the root takes identity.)
glm::mat4 CompositeScaleInverseMatrix(const protocol::Transform& t, const LocalComponents& c);

// (CompositeRotation|Rotation) * (CompositeScale|Scale|NonUniformScale): LocalToParent after
// Translation and ParentScaleInverse (what an entity with ParentScaleInverse caches).
glm::mat4 RotationScaleMatrix(const protocol::Transform& t, const LocalComponents& c);

// LocalToParent = Translation * (CompositeRotation|Rotation) *
// (CompositeScale|Scale|NonUniformScale), or the user-written LocalToParent. ParentScaleInverse
// is not part of it: it depends on the parent, so propagation applies it at compute time,
// Translation * ParentScaleInverse * RotationScaleMatrix (local_to_parent_cache.h).
glm::mat4 LocalToParentMatrix(const protocol::Transform& t, const LocalComponents* c);

// Forces the last row of a user matrix to (0, 0, 0, 1) (world composition is affine).
glm::mat4 MakeAffine(const glm::mat4& m);

}  // namespace scenecrdt::runtime
