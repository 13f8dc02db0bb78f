// SPDX-License-Identifier: Apache-2.0
// Owns the flat preorder reference kernels that propagation_bench measures TransformSystem
// against (docs/PROPAGATION.md, "Measurements"): a parent index array, local TRS (40 B each,
// AoS), one forward loop, world = world[parent] * T R S, in the stores that the world-matrix
// layout decision compares: 4x4 column-major AoS (what the C ABI hands out), 3x4 row-major
// AoS (48 B, 16-byte rows) and 3x4 SoA (12 float arrays). Plain cached stores, no prefetching,
// no threads: the textbook loop (as in animation runtimes' local-to-model jobs).
// Also the two-block parallel prefix product (scan) of a chain, to show that it reassociates
// float products (docs/PROPAGATION.md, "Threads").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace scenecrdt::bench {

struct RefTrs {
  float t[3];
  float q[4];  // x, y, z, w
  float s[3];
};

// Rotation-scale columns of T R S (glm::mat3_cast's formula, scaled).
struct RefRs {
  float c[3][3];  // c[column][row]
};
inline RefRs RefRotationScale(const RefTrs& l) {
  const float x = l.q[0], y = l.q[1], z = l.q[2], w = l.q[3];
  const float xx = x * x, yy = y * y, zz = z * z, xy = x * y, xz = x * z, yz = y * z;
  const float wx = w * x, wy = w * y, wz = w * z;
  RefRs r;
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

// Inputs in preorder: entity 0 is the root (identity), parent[i] < i for i >= 1.
struct RefScene {
  std::vector<uint32_t> parent;
  std::vector<RefTrs> local;
};

// 4x4 column-major, 64 B per entity (16-byte aligned storage expected).
inline void RefKernel4x4(const RefScene& s, float* world) {
  const std::size_t n = s.parent.size();
  for (std::size_t i = 1; i < n; ++i) {
    const float* p = world + std::size_t{s.parent[i]} * 16;
    const RefTrs& l = s.local[i];
    const RefRs r = RefRotationScale(l);
    float* o = world + i * 16;
#if defined(__SSE2__)
    const __m128 p0 = _mm_load_ps(p), p1 = _mm_load_ps(p + 4), p2 = _mm_load_ps(p + 8),
                 p3 = _mm_load_ps(p + 12);
    for (int j = 0; j < 3; ++j) {
      _mm_store_ps(o + 4 * j, _mm_add_ps(_mm_add_ps(_mm_mul_ps(p0, _mm_set1_ps(r.c[j][0])),
                                                    _mm_mul_ps(p1, _mm_set1_ps(r.c[j][1]))),
                                         _mm_mul_ps(p2, _mm_set1_ps(r.c[j][2]))));
    }
    _mm_store_ps(o + 12, _mm_add_ps(_mm_add_ps(_mm_mul_ps(p0, _mm_set1_ps(l.t[0])),
                                               _mm_mul_ps(p1, _mm_set1_ps(l.t[1]))),
                                    _mm_add_ps(_mm_mul_ps(p2, _mm_set1_ps(l.t[2])), p3)));
#else
    for (int k = 0; k < 4; ++k) {
      for (int j = 0; j < 3; ++j) {
        o[4 * j + k] = p[k] * r.c[j][0] + p[4 + k] * r.c[j][1] + p[8 + k] * r.c[j][2];
      }
      o[12 + k] = p[k] * l.t[0] + p[4 + k] * l.t[1] + p[8 + k] * l.t[2] + p[12 + k];
    }
#endif
  }
}

// 3x4 row-major (three rows of 4: rotation-scale | translation), 48 B per entity. Row i of
// the product is sum_k parent[i][k] * local row k, plus parent[i][3] in the last lane.
inline void RefKernel3x4(const RefScene& s, float* world) {
  const std::size_t n = s.parent.size();
  for (std::size_t i = 1; i < n; ++i) {
    const float* p = world + std::size_t{s.parent[i]} * 12;
    const RefTrs& l = s.local[i];
    const RefRs r = RefRotationScale(l);
    float* o = world + i * 12;
#if defined(__SSE2__)
    const __m128 l0 = _mm_setr_ps(r.c[0][0], r.c[1][0], r.c[2][0], l.t[0]);
    const __m128 l1 = _mm_setr_ps(r.c[0][1], r.c[1][1], r.c[2][1], l.t[1]);
    const __m128 l2 = _mm_setr_ps(r.c[0][2], r.c[1][2], r.c[2][2], l.t[2]);
    for (int row = 0; row < 3; ++row) {
      const __m128 pr = _mm_load_ps(p + 4 * row);
      const __m128 a = _mm_shuffle_ps(pr, pr, 0x00), b = _mm_shuffle_ps(pr, pr, 0x55);
      const __m128 c = _mm_shuffle_ps(pr, pr, 0xAA);
      const __m128 d = _mm_and_ps(pr, _mm_castsi128_ps(_mm_setr_epi32(0, 0, 0, -1)));
      _mm_store_ps(o + 4 * row, _mm_add_ps(_mm_add_ps(_mm_mul_ps(a, l0), _mm_mul_ps(b, l1)),
                                           _mm_add_ps(_mm_mul_ps(c, l2), d)));
    }
#else
    for (int row = 0; row < 3; ++row) {
      const float* pr = p + 4 * row;
      for (int j = 0; j < 3; ++j) {
        o[4 * row + j] = pr[0] * r.c[j][0] + pr[1] * r.c[j][1] + pr[2] * r.c[j][2];
      }
      o[4 * row + 3] = pr[0] * l.t[0] + pr[1] * l.t[1] + pr[2] * l.t[2] + pr[3];
    }
#endif
  }
}

// 3x4 SoA: twelve float arrays soa[e][i] (element e = row * 4 + column of the row-major 3x4).
inline void RefKernel3x4Soa(const RefScene& s, float* const* soa) {
  const std::size_t n = s.parent.size();
  for (std::size_t i = 1; i < n; ++i) {
    const uint32_t pi = s.parent[i];
    const RefTrs& l = s.local[i];
    const RefRs r = RefRotationScale(l);
    for (int row = 0; row < 3; ++row) {
      const float a = soa[row * 4][pi], b = soa[row * 4 + 1][pi], c = soa[row * 4 + 2][pi];
      const float d = soa[row * 4 + 3][pi];
      for (int j = 0; j < 3; ++j)
        soa[row * 4 + j][i] = a * r.c[j][0] + b * r.c[j][1] + c * r.c[j][2];
      soa[row * 4 + 3][i] = a * l.t[0] + b * l.t[1] + c * l.t[2] + d;
    }
  }
}

// Row-major 3x4 product a * b of affines (the implied last row 0 0 0 1).
inline void RefAffineProduct(const float* a, const float* b, float* o) {
  float r[12];
  for (int row = 0; row < 3; ++row) {
    for (int j = 0; j < 4; ++j) {
      r[row * 4 + j] = a[row * 4] * b[j] + a[row * 4 + 1] * b[4 + j] + a[row * 4 + 2] * b[8 + j];
    }
    r[row * 4 + 3] += a[row * 4 + 3];
  }
  for (int k = 0; k < 12; ++k) o[k] = r[k];
}

}  // namespace scenecrdt::bench
