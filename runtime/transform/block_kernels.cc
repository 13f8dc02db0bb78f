// SPDX-License-Identifier: Apache-2.0
// Owns the block kernels (see block_kernels.h). One generic source (the Vec4 helpers and the
// *Impl templates) is instantiated twice: for the baseline target and, on x86-64, inside
// functions marked target("avx2"), where the same 128-bit operations are VEX-encoded and the
// broadcasts become loads (vbroadcastss). Phase 1 additionally has an explicit 8-lane AVX2
// version. The AVX2 variants are chosen at run time (__builtin_cpu_supports), so the build
// needs no -march flag. No FMA anywhere: results are bit-identical across variants.
#include "scenecrdt/runtime/transform/block_kernels.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SCENECRDT_HAVE_AVX2_KERNELS 1
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SCENECRDT_INLINE inline __attribute__((always_inline))
#else
#define SCENECRDT_INLINE inline
#endif

namespace scenecrdt::runtime::internal {
namespace {

float* Floats(glm::mat4* m) { return &(*m)[0][0]; }

// ---- 4-lane vectors: SSE2, or plain floats with the same per-lane operations ----
#if defined(__SSE2__)
using Vec4 = __m128;
SCENECRDT_INLINE Vec4 Load4(const float* p) { return _mm_load_ps(p); }
SCENECRDT_INLINE Vec4 Splat(float x) { return _mm_set1_ps(x); }
SCENECRDT_INLINE Vec4 Add(Vec4 a, Vec4 b) { return _mm_add_ps(a, b); }
SCENECRDT_INLINE Vec4 Mul(Vec4 a, Vec4 b) { return _mm_mul_ps(a, b); }
SCENECRDT_INLINE void Store4(float* p, Vec4 v) { _mm_store_ps(p, v); }
SCENECRDT_INLINE void Stream4(float* p, Vec4 v) { _mm_stream_ps(p, v); }
#else
struct Vec4 {
  float v[4];
};
SCENECRDT_INLINE Vec4 Load4(const float* p) { return {{p[0], p[1], p[2], p[3]}}; }
SCENECRDT_INLINE Vec4 Splat(float x) { return {{x, x, x, x}}; }
SCENECRDT_INLINE Vec4 Add(Vec4 a, Vec4 b) {
  return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2], a.v[3] + b.v[3]}};
}
SCENECRDT_INLINE Vec4 Mul(Vec4 a, Vec4 b) {
  return {{a.v[0] * b.v[0], a.v[1] * b.v[1], a.v[2] * b.v[2], a.v[3] * b.v[3]}};
}
SCENECRDT_INLINE void Store4(float* p, Vec4 v) { std::memcpy(p, v.v, sizeof(v.v)); }
SCENECRDT_INLINE void Stream4(float* p, Vec4 v) { std::memcpy(p, v.v, sizeof(v.v)); }
#endif

struct Cols {
  Vec4 c0, c1, c2, c3;
};
SCENECRDT_INLINE Cols LoadCols(const float* m) {
  return {Load4(m), Load4(m + 4), Load4(m + 8), Load4(m + 12)};
}
SCENECRDT_INLINE void StoreCols(float* m, const Cols& c) {
  Store4(m, c.c0);
  Store4(m + 4, c.c1);
  Store4(m + 8, c.c2);
  Store4(m + 12, c.c3);
}
SCENECRDT_INLINE void StreamCols(float* m, const Cols& c) {
  Stream4(m, c.c0);
  Stream4(m + 4, c.c1);
  Stream4(m + 8, c.c2);
  Stream4(m + 12, c.c3);
}

// parent * L[e]: the canonical operation order (block_kernels.h).
SCENECRDT_INLINE Cols Product(const Cols& p, const LocalBlock& l, uint32_t e) {
  Cols o;
  o.c0 = Add(Add(Mul(p.c0, Splat(l.m[0][e])), Mul(p.c1, Splat(l.m[1][e]))),
             Mul(p.c2, Splat(l.m[2][e])));
  o.c1 = Add(Add(Mul(p.c0, Splat(l.m[3][e])), Mul(p.c1, Splat(l.m[4][e]))),
             Mul(p.c2, Splat(l.m[5][e])));
  o.c2 = Add(Add(Mul(p.c0, Splat(l.m[6][e])), Mul(p.c1, Splat(l.m[7][e]))),
             Mul(p.c2, Splat(l.m[8][e])));
  o.c3 = Add(Add(Mul(p.c0, Splat(l.m[9][e])), Mul(p.c1, Splat(l.m[10][e]))),
             Add(Mul(p.c2, Splat(l.m[11][e])), p.c3));
  return o;
}

// ---- Phase 1 ----

SCENECRDT_INLINE void LocalScalarImpl(const LocalTrs* local, uint32_t begin, uint32_t count,
                                      LocalBlock& l) {
  for (uint32_t e = begin; e < count; ++e) l.Set(e, RotationScale(local[e]), local[e].t);
}

// ---- Phase 2 ----

SCENECRDT_INLINE void ComposeImpl(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                                  const uint32_t* parent, glm::mat4* world) {
  if (e0 >= e1) return;
  float* w = Floats(world);
  // A run where every parent is the previous entity (chains) keeps the parent in registers:
  // the serial dependency then costs the arithmetic only, not a store-to-load round trip.
  bool chain = true;
  for (uint32_t e = e0 + 1; e < e1; ++e) chain &= parent[first + e] == first + e - 1;
  if (chain) {
    Cols p = LoadCols(w + 16 * static_cast<std::size_t>(parent[first + e0]));
    for (uint32_t e = e0; e < e1; ++e) {
      p = Product(p, l, e);
      StoreCols(w + 16 * static_cast<std::size_t>(first + e), p);
    }
    return;
  }
  for (uint32_t e = e0; e < e1; ++e) {
    const uint32_t pos = first + e;
    const Cols p = LoadCols(w + 16 * static_cast<std::size_t>(parent[pos]));
    StoreCols(w + 16 * static_cast<std::size_t>(pos), Product(p, l, e));
  }
}

// A chain run puts only its last kChainRingTail entities on the ancestor ring; the entries of
// the others get a tag no depth has, so a later child of one of them reads its parent from the
// world array (same bits). Writing all of them cycles a deep chain through the whole ring
// (64 KiB at 1024 entries, twice the L1 data cache) and every store misses.
constexpr uint32_t kChainRingTail = 8;
constexpr uint32_t kNoRingTag = 0xFFFFFFFFu;

SCENECRDT_INLINE void StreamImpl(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                                 const uint32_t* parent, const uint32_t* depth, uint32_t ring_mask,
                                 glm::mat4* ring, uint32_t* tag, glm::mat4* world) {
  if (e0 >= e1) return;
  float* w = Floats(world);
  float* s = Floats(ring);
  // A run where every parent is the previous entity (chains): the parent stays in registers,
  // as in ComposeImpl, instead of a tag check and a store-to-load round trip through the ring
  // per link. The tags are still written (later entities may branch off the run), the ring
  // entries only for the run's tail (kChainRingTail).
  bool chain = true;
  for (uint32_t e = e0 + 1; e < e1; ++e) chain &= parent[first + e] == first + e - 1;
  if (chain) {
    const uint32_t d0 = depth[first + e0];
    const uint32_t ps = (d0 - 1) & ring_mask;
    Cols p = LoadCols(tag[ps] == d0 - 1 ? s + 16 * static_cast<std::size_t>(ps)
                                        : w + 16 * static_cast<std::size_t>(parent[first + e0]));
    for (uint32_t e = e0; e < e1; ++e) {
      const uint32_t d = depth[first + e];
      p = Product(p, l, e);
      const uint32_t ds = d & ring_mask;
      if (e + kChainRingTail >= e1) {
        StoreCols(s + 16 * static_cast<std::size_t>(ds), p);
        tag[ds] = d;
      } else {
        tag[ds] = kNoRingTag;
      }
      StreamCols(w + 16 * static_cast<std::size_t>(first + e), p);
    }
    return;
  }
  for (uint32_t e = e0; e < e1; ++e) {
    const uint32_t pos = first + e;
    const uint32_t d = depth[pos];
    const uint32_t ps = (d - 1) & ring_mask;
    const float* p = tag[ps] == d - 1 ? s + 16 * static_cast<std::size_t>(ps)
                                      : w + 16 * static_cast<std::size_t>(parent[pos]);
    const Cols o = Product(LoadCols(p), l, e);
    const uint32_t ds = d & ring_mask;
    StoreCols(s + 16 * static_cast<std::size_t>(ds), o);
    tag[ds] = d;
    StreamCols(w + 16 * static_cast<std::size_t>(pos), o);
  }
}

// ---- Baseline variants ----

void LocalBase(const LocalTrs* local, uint32_t count, LocalBlock& l) {
  LocalScalarImpl(local, 0, count, l);
}
void ComposeBase(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                 const uint32_t* parent, glm::mat4* world) {
  ComposeImpl(l, e0, e1, first, parent, world);
}
void StreamBase(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                const uint32_t* parent, const uint32_t* depth, uint32_t ring_mask, glm::mat4* ring,
                uint32_t* tag, glm::mat4* world) {
  StreamImpl(l, e0, e1, first, parent, depth, ring_mask, ring, tag, world);
}

constexpr BlockKernels kBaseKernels{&LocalBase, &ComposeBase, &StreamBase, KernelIsa::kSse2,
                                    "sse2"};

#if defined(SCENECRDT_HAVE_AVX2_KERNELS)
// ---- AVX2 variants ----

#define SCENECRDT_AVX2 __attribute__((target("avx2")))

SCENECRDT_AVX2 SCENECRDT_INLINE void Transpose8(__m256 (&r)[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

SCENECRDT_AVX2 SCENECRDT_INLINE __m128 LoadPair(const float* p) {
  double d;
  std::memcpy(&d, p, sizeof(d));
  return _mm_castpd_ps(_mm_set_sd(d));
}

// Eight entities per step: the 40-byte TRS records are transposed to SoA in registers, then
// RotationScale's formula runs on 8 lanes (same operations, same order).
SCENECRDT_AVX2 void LocalAvx2(const LocalTrs* local, uint32_t count, LocalBlock& l) {
  static_assert(sizeof(LocalTrs) == 10 * sizeof(float));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 two = _mm256_set1_ps(2.0f);
  uint32_t e = 0;
  for (; e + 8 <= count; e += 8) {
    const float* p = local[e].t;
    __m256 r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(p + 10 * k);
    Transpose8(r);  // tx ty tz qx qy qz qw sx
    // sy, sz of the 8 entities: pairs (y, z) of entities 0,1 | 4,5 and 2,3 | 6,7.
    const __m128 a0 = _mm_movelh_ps(LoadPair(p + 8), LoadPair(p + 18));
    const __m128 a1 = _mm_movelh_ps(LoadPair(p + 28), LoadPair(p + 38));
    const __m128 a2 = _mm_movelh_ps(LoadPair(p + 48), LoadPair(p + 58));
    const __m128 a3 = _mm_movelh_ps(LoadPair(p + 68), LoadPair(p + 78));
    const __m256 lo = _mm256_set_m128(a2, a0);  // y0 z0 y1 z1 | y4 z4 y5 z5
    const __m256 hi = _mm256_set_m128(a3, a1);  // y2 z2 y3 z3 | y6 z6 y7 z7
    const __m256 sy = _mm256_shuffle_ps(lo, hi, 0x88);
    const __m256 sz = _mm256_shuffle_ps(lo, hi, 0xDD);
    const __m256 x = r[3], y = r[4], z = r[5], w = r[6], sx = r[7];
    const __m256 xx = _mm256_mul_ps(x, x), yy = _mm256_mul_ps(y, y), zz = _mm256_mul_ps(z, z);
    const __m256 xy = _mm256_mul_ps(x, y), xz = _mm256_mul_ps(x, z), yz = _mm256_mul_ps(y, z);
    const __m256 wx = _mm256_mul_ps(w, x), wy = _mm256_mul_ps(w, y), wz = _mm256_mul_ps(w, z);
    _mm256_store_ps(
        &l.m[0][e],
        _mm256_mul_ps(_mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(yy, zz))), sx));
    _mm256_store_ps(&l.m[1][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_add_ps(xy, wz)), sx));
    _mm256_store_ps(&l.m[2][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_sub_ps(xz, wy)), sx));
    _mm256_store_ps(&l.m[3][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_sub_ps(xy, wz)), sy));
    _mm256_store_ps(
        &l.m[4][e],
        _mm256_mul_ps(_mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(xx, zz))), sy));
    _mm256_store_ps(&l.m[5][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_add_ps(yz, wx)), sy));
    _mm256_store_ps(&l.m[6][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_add_ps(xz, wy)), sz));
    _mm256_store_ps(&l.m[7][e], _mm256_mul_ps(_mm256_mul_ps(two, _mm256_sub_ps(yz, wx)), sz));
    _mm256_store_ps(
        &l.m[8][e],
        _mm256_mul_ps(_mm256_sub_ps(one, _mm256_mul_ps(two, _mm256_add_ps(xx, yy))), sz));
    _mm256_store_ps(&l.m[9][e], r[0]);
    _mm256_store_ps(&l.m[10][e], r[1]);
    _mm256_store_ps(&l.m[11][e], r[2]);
  }
  LocalScalarImpl(local, e, count, l);
}
SCENECRDT_AVX2 void ComposeAvx2(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                                const uint32_t* parent, glm::mat4* world) {
  ComposeImpl(l, e0, e1, first, parent, world);
}
SCENECRDT_AVX2 void StreamAvx2(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                               const uint32_t* parent, const uint32_t* depth, uint32_t ring_mask,
                               glm::mat4* ring, uint32_t* tag, glm::mat4* world) {
  StreamImpl(l, e0, e1, first, parent, depth, ring_mask, ring, tag, world);
}

#undef SCENECRDT_AVX2

constexpr BlockKernels kAvx2Kernels{&LocalAvx2, &ComposeAvx2, &StreamAvx2, KernelIsa::kAvx2,
                                    "avx2"};

bool CpuHasAvx2() { return __builtin_cpu_supports("avx2") != 0; }
#endif

}  // namespace

const BlockKernels& GetBlockKernels(KernelIsa isa) {
#if defined(SCENECRDT_HAVE_AVX2_KERNELS)
  if (isa != KernelIsa::kSse2 && CpuHasAvx2()) return kAvx2Kernels;
#else
  (void)isa;
#endif
  return kBaseKernels;
}

void StreamCopy(const glm::mat4* src, uint32_t count, glm::mat4* dst) {
#if defined(__SSE2__)
  const float* s = &src[0][0][0];
  float* d = &dst[0][0][0];
  for (uint32_t i = 0; i < 16 * count; i += 4) _mm_stream_ps(d + i, _mm_load_ps(s + i));
#else
  std::memcpy(dst, src, sizeof(glm::mat4) * count);
#endif
}

void StreamFence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace scenecrdt::runtime::internal
