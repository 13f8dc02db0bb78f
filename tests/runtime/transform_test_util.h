// SPDX-License-Identifier: Apache-2.0
// Owns helpers shared by the transform-side runtime tests: Transform builders, matrix
// comparisons and a from-scratch reference of the effective tree and of world matrices in
// double precision (deliberately simple: quadratic loops, no incrementality).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <glm/mat4x4.hpp>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/protocol/transform_glm.h"
#include "scenecrdt/runtime/pipeline.h"
#include "scenecrdt/runtime/transform_system.h"

namespace scenecrdt::runtime::testing {

using protocol::EntityId;
using protocol::Transform;

inline Transform MakeTransform(EntityId parent, glm::vec3 position = glm::vec3(0.0f),
                               glm::quat rotation = glm::quat(1.0f, 0.0f, 0.0f, 0.0f),
                               glm::vec3 scale = glm::vec3(1.0f)) {
  Transform t;
  t.position = protocol::FromGlm(position);
  t.rotation = protocol::FromGlm(rotation);
  t.scale = protocol::FromGlm(scale);
  t.parent = parent;
  return t;
}

inline glm::quat RotZ(float degrees) {
  return glm::angleAxis(glm::radians(degrees), glm::vec3(0.0f, 0.0f, 1.0f));
}

inline float MaxAbsDiff(const glm::mat4& a, const glm::mat4& b) {
  float m = 0.0f;
  for (int c = 0; c < 4; ++c)
    for (int r = 0; r < 4; ++r) m = std::max(m, std::fabs(a[c][r] - b[c][r]));
  return m;
}

inline std::string MatString(const glm::mat4& m) {
  std::string s;
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) s += std::to_string(m[c][r]) + (c == 3 ? "\n" : " ");
  }
  return s;
}

#define SCENECRDT_EXPECT_MAT_NEAR(a, b, tol)                            \
  EXPECT_LE(::scenecrdt::runtime::testing::MaxAbsDiff((a), (b)), (tol)) \
      << "actual:\n"                                                    \
      << ::scenecrdt::runtime::testing::MatString(a) << "expected:\n"   \
      << ::scenecrdt::runtime::testing::MatString(b)

inline bool BitwiseEqual(const glm::mat4& a, const glm::mat4& b) {
  return std::memcmp(&a, &b, sizeof(glm::mat4)) == 0;
}

// ---- Reference effective tree (from scratch, O(n^2)) ----
struct RefNode {
  EntityId effective_parent = 0;
  bool parked = false;
  bool placeholder = false;
};

inline std::map<EntityId, RefNode> ReferenceTree(const std::map<EntityId, Transform>& transforms) {
  std::map<EntityId, RefNode> nodes;
  for (const auto& [e, t] : transforms) {
    if (e == 0) continue;
    nodes[e];
    if (t.parent != 0 && transforms.count(t.parent) == 0) nodes[t.parent].placeholder = true;
  }
  for (auto& [e, n] : nodes) {
    if (n.placeholder) continue;
    // On a loop iff following declared parents from e comes back to e.
    EntityId cur = e;
    bool loop = false;
    for (std::size_t step = 0; step <= nodes.size(); ++step) {
      auto it = transforms.find(cur);
      if (it == transforms.end() || it->second.parent == 0) break;
      cur = it->second.parent;
      if (cur == e) {
        loop = true;
        break;
      }
    }
    n.parked = loop;
    n.effective_parent = loop ? 0 : transforms.at(e).parent;
  }
  return nodes;
}

// ---- Reference world matrices in double precision ----
using dmat4 = glm::dmat4;
using dvec3 = glm::dvec3;

inline dmat4 DTranslate(const glm::vec3& v) { return glm::translate(dmat4(1.0), dvec3(v)); }
inline dmat4 DScale(const glm::vec3& v) { return glm::scale(dmat4(1.0), dvec3(v)); }
inline dmat4 DRot(const glm::quat& q) {
  glm::dquat d;
  d.x = q.x;
  d.y = q.y;
  d.z = q.z;
  d.w = q.w;
  return glm::mat4_cast(d);
}
inline dmat4 DRotAxis(int axis, double radians) {
  dvec3 a(0.0);
  a[axis] = 1.0;
  return glm::rotate(dmat4(1.0), radians, a);
}
// Euler order ABC -> R_C * R_B * R_A, with literal axis rotation matrices.
inline dmat4 DEuler(EulerOrder order, const glm::vec3& r) {
  static const int kAxes[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  const int* a = kAxes[static_cast<int>(order)];
  return DRotAxis(a[2], r[a[2]]) * DRotAxis(a[1], r[a[1]]) * DRotAxis(a[0], r[a[0]]);
}

inline dmat4 DAffine(const glm::mat4& m) {
  dmat4 d(m);
  d[0][3] = d[1][3] = d[2][3] = 0.0;
  d[3][3] = 1.0;
  return d;
}

inline dmat4 DScaleMatrix(const Transform& t, const LocalComponents* c) {
  const glm::vec3 s = protocol::ToGlm(t.scale);
  if (c != nullptr && c->Has(LocalComponents::kCompositeScale)) return DAffine(c->composite_scale);
  if (c != nullptr &&
      c->Has(LocalComponents::kScalePivot | LocalComponents::kScalePivotTranslation)) {
    return DTranslate(c->scale_pivot_translation) * DTranslate(c->scale_pivot) * DScale(s) *
           DTranslate(-c->scale_pivot);
  }
  return DScale(s);
}

// LocalToParent in double, from the seed's formulas (written independently of pipeline.cc).
inline dmat4 DLocalToParent(const Transform& t, const LocalComponents* c, const Transform* parent_t,
                            const LocalComponents* parent_c) {
  if (c != nullptr && c->Has(LocalComponents::kLocalToParent)) return DAffine(c->local_to_parent);
  dmat4 rotation = DRot(protocol::ToGlm(t.rotation));
  if (c != nullptr) {
    for (int i = 0; i < 6; ++i) {
      if (c->Has(LocalComponents::kRotationEuler0 << i)) {
        rotation = DEuler(static_cast<EulerOrder>(i), c->rotation_euler[i]);
        break;
      }
    }
  }
  dmat4 composite_rotation = rotation;
  if (c != nullptr && c->Has(LocalComponents::kCompositeRotation)) {
    composite_rotation = DAffine(c->composite_rotation);
  } else if (c != nullptr && c->Has(LocalComponents::kCompositeRotationInputs)) {
    dmat4 post(1.0);
    bool post_euler = false;
    for (int i = 0; i < 6; ++i) {
      if (c->Has(LocalComponents::kPostRotationEuler0 << i)) {
        post = DEuler(static_cast<EulerOrder>(i), c->post_rotation_euler[i]);
        post_euler = true;
        break;
      }
    }
    if (!post_euler && c->Has(LocalComponents::kPostRotation)) post = DRot(c->post_rotation);
    composite_rotation = DTranslate(c->rotation_pivot_translation) * DTranslate(c->rotation_pivot) *
                         rotation * post * DTranslate(-c->rotation_pivot);
  }
  dmat4 psi(1.0);
  if (c != nullptr && c->Has(LocalComponents::kParentScaleInverse) && parent_t != nullptr) {
    const dmat4 ps = DScaleMatrix(*parent_t, parent_c);
    dmat4 inv(1.0);
    for (int i = 0; i < 3; ++i) inv[i][i] = ps[i][i] == 0.0 ? 0.0 : 1.0 / ps[i][i];
    const bool diagonal = ps[3][0] == 0.0 && ps[3][1] == 0.0 && ps[3][2] == 0.0;
    psi = diagonal ? inv : glm::inverse(ps);
  }
  return DTranslate(protocol::ToGlm(t.position)) * psi * composite_rotation * DScaleMatrix(t, c);
}

// World matrices of every node (reference tree + double pipeline), iterative.
inline std::map<EntityId, dmat4> ReferenceWorlds(
    const std::map<EntityId, Transform>& transforms,
    const std::map<EntityId, LocalComponents>& locals) {
  const auto tree = ReferenceTree(transforms);
  std::map<EntityId, dmat4> world;
  auto transform_of = [&](EntityId e) {
    auto it = transforms.find(e);
    return it == transforms.end() ? protocol::kIdentityTransform : it->second;
  };
  auto local_of = [&](EntityId e) -> const LocalComponents* {
    auto it = locals.find(e);
    return it == locals.end() ? nullptr : &it->second;
  };
  while (world.size() < tree.size()) {
    for (const auto& [e, n] : tree) {
      if (world.count(e) != 0) continue;
      const EntityId p = n.effective_parent;
      if (p != 0 && world.count(p) == 0) continue;
      const LocalComponents* c = local_of(e);
      if (c != nullptr && c->Has(LocalComponents::kLocalToWorld)) {
        world[e] = DAffine(c->local_to_world);
        continue;
      }
      const Transform pt = transform_of(p);
      const dmat4 local = DLocalToParent(transform_of(e), c, p == 0 ? nullptr : &pt,
                                         p == 0 ? nullptr : local_of(p));
      world[e] = (p == 0 ? dmat4(1.0) : world[p]) * local;
    }
  }
  return world;
}

// Max element error of `actual` relative to (1 + max |element|) of `expected`.
inline double RelativeError(const glm::mat4& actual, const dmat4& expected) {
  double err = 0.0, mag = 0.0;
  for (int c = 0; c < 4; ++c) {
    for (int r = 0; r < 4; ++r) {
      err = std::max(err, std::fabs(static_cast<double>(actual[c][r]) - expected[c][r]));
      mag = std::max(mag, std::fabs(expected[c][r]));
    }
  }
  return err / (1.0 + mag);
}

}  // namespace scenecrdt::runtime::testing
