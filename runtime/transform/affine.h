// SPDX-License-Identifier: Apache-2.0
// Owns the float-exact affine math of propagation: the local TRS record the kernels stream
// (LocalTrs, kIdentityTrs), the 3x4 affine type of cached LocalToParent matrices (Affine), and
// the single-entity products out = parent * T R S and out = a * b. They fix the order of float
// operations that the block kernels (block_kernels.h) repeat lane by lane:
//   out.c_j = (p.c0 * L[j][0] + p.c1 * L[j][1]) + p.c2 * L[j][2]     (j = 0, 1, 2)
//   out.c3  = (p.c0 * t[0] + p.c1 * t[1]) + (p.c2 * t[2] + p.c3)     (two short add chains)
// The SSE2 version and the portable version perform the same operations, so an entity's world
// matrix is bit-identical whichever path, thread or instruction set computes it (no fused
// multiply-add: the transform sources are built with -ffp-contract=off).
// Matrices are column-major glm::mat4, affine (last row 0 0 0 1).
#pragma once

#include <glm/mat4x4.hpp>

#include "scenecrdt/protocol/transform.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace scenecrdt::runtime::internal {

// The replicated local TRS as the kernel streams it (40 bytes, wire order for the quaternion).
struct LocalTrs {
  float t[3];
  float q[4];  // x, y, z, w
  float s[3];
};

// Identity TRS: what an entity without a Transform (a placeholder) and the root read as.
inline constexpr LocalTrs kIdentityTrs{
    {0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 1.0f}};

inline LocalTrs ToLocalTrs(const protocol::Transform& t) {
  return LocalTrs{{t.position.x, t.position.y, t.position.z},
                  {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w},
                  {t.scale.x, t.scale.y, t.scale.z}};
}

// The 3x3 rotation-scale block of T R S, column-major (c[col][row]); glm::mat3_cast's formula
// (the quaternion is used as given, not renormalised).
struct Rs {
  float c[3][3];
};
inline Rs RotationScale(const LocalTrs& l) {
  const float x = l.q[0], y = l.q[1], z = l.q[2], w = l.q[3];
  const float xx = x * x, yy = y * y, zz = z * z;
  const float xy = x * y, xz = x * z, yz = y * z;
  const float wx = w * x, wy = w * y, wz = w * z;
  Rs r;
  r.c[0][0] = (1.0f - 2.0f * (yy + zz)) * l.s[0];
  r.c[0][1] = (2.0f * (xy + wz)) * l.s[0];
  r.c[0][2] = (2.0f * (xz - wy)) * l.s[0];
  r.c[1][0] = (2.0f * (xy - wz)) * l.s[1];
  r.c[1][1] = (1.0f - 2.0f * (xx + zz)) * l.s[1];
  r.c[1][2] = (2.0f * (yz + wx)) * l.s[1];
  r.c[2][0] = (2.0f * (xz + wy)) * l.s[2];
  r.c[2][1] = (2.0f * (yz - wx)) * l.s[2];
  r.c[2][2] = (1.0f - 2.0f * (xx + yy)) * l.s[2];
  return r;
}

// An affine 3x4: rotation-scale columns and translation (the last row 0 0 0 1 is implied).
struct Affine {
  Rs rs;
  float t[3];
};
inline constexpr Affine kIdentityAffine{
    {{{1.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 0.0f}, {0.0f, 0.0f, 1.0f}}}, {0.0f, 0.0f, 0.0f}};

// The first three rows of an affine glm::mat4 (its last row is not read).
inline Affine AffineFromMat4(const glm::mat4& m) {
  Affine a;
  for (int j = 0; j < 3; ++j)
    for (int r = 0; r < 3; ++r) a.rs.c[j][r] = m[j][r];
  for (int r = 0; r < 3; ++r) a.t[r] = m[3][r];
  return a;
}

inline glm::mat4 Mat4FromAffine(const Affine& a) {
  glm::mat4 m;
  for (int j = 0; j < 3; ++j) m[j] = glm::vec4(a.rs.c[j][0], a.rs.c[j][1], a.rs.c[j][2], 0.0f);
  m[3] = glm::vec4(a.t[0], a.t[1], a.t[2], 1.0f);
  return m;
}

#if defined(__SSE2__)
struct ParentCols {
  __m128 c0, c1, c2, c3;
};
inline ParentCols LoadParent(const glm::mat4& p) {
  return {_mm_loadu_ps(&p[0][0]), _mm_loadu_ps(&p[1][0]), _mm_loadu_ps(&p[2][0]),
          _mm_loadu_ps(&p[3][0])};
}
// ((p0 * a + p1 * b) + p2 * c), lane-wise.
inline __m128 Column(const ParentCols& p, float a, float b, float c) {
  return _mm_add_ps(_mm_add_ps(_mm_mul_ps(p.c0, _mm_set1_ps(a)), _mm_mul_ps(p.c1, _mm_set1_ps(b))),
                    _mm_mul_ps(p.c2, _mm_set1_ps(c)));
}
inline void StoreProduct(const ParentCols& p, const float (&rs)[3][3], const float (&t)[3],
                         glm::mat4& out) {
  const __m128 o0 = Column(p, rs[0][0], rs[0][1], rs[0][2]);
  const __m128 o1 = Column(p, rs[1][0], rs[1][1], rs[1][2]);
  const __m128 o2 = Column(p, rs[2][0], rs[2][1], rs[2][2]);
  const __m128 o3 = _mm_add_ps(
      _mm_add_ps(_mm_mul_ps(p.c0, _mm_set1_ps(t[0])), _mm_mul_ps(p.c1, _mm_set1_ps(t[1]))),
      _mm_add_ps(_mm_mul_ps(p.c2, _mm_set1_ps(t[2])), p.c3));
  _mm_storeu_ps(&out[0][0], o0);
  _mm_storeu_ps(&out[1][0], o1);
  _mm_storeu_ps(&out[2][0], o2);
  _mm_storeu_ps(&out[3][0], o3);
}
#else
struct ParentCols {
  float c[4][4];
};
inline ParentCols LoadParent(const glm::mat4& p) {
  ParentCols r;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 4; ++i) r.c[j][i] = p[j][i];
  return r;
}
inline void StoreProduct(const ParentCols& p, const float (&rs)[3][3], const float (&t)[3],
                         glm::mat4& out) {
  glm::mat4 o;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      o[j][i] = (p.c[0][i] * rs[j][0] + p.c[1][i] * rs[j][1]) + p.c[2][i] * rs[j][2];
    }
    o[3][i] = (p.c[0][i] * t[0] + p.c[1][i] * t[1]) + (p.c[2][i] * t[2] + p.c[3][i]);
  }
  out = o;
}
#endif

// out = parent * T(t) R(q) S(s). `out` may alias `parent` (inputs are loaded before storing).
inline void ComposeTrs(const glm::mat4& parent, const LocalTrs& local, glm::mat4& out) {
  const ParentCols p = LoadParent(parent);
  const Rs rs = RotationScale(local);
  StoreProduct(p, rs.c, local.t, out);
}

// a * b (both affine), in the canonical operation order with a as the parent.
inline Affine ComposeAffine(const Affine& a, const Affine& b) {
  glm::mat4 out;
  StoreProduct(LoadParent(Mat4FromAffine(a)), b.rs.c, b.t, out);
  return AffineFromMat4(out);
}

}  // namespace scenecrdt::runtime::internal
