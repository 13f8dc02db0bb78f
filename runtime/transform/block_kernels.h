// SPDX-License-Identifier: Apache-2.0
// Owns the block kernels of propagation (docs/PROPAGATION.md, "Kernels"): world matrices of a
// run of consecutive preorder positions, in blocks of kBlock entities, in two phases:
//   1. LocalToParent of every plain entity of the block, from its TRS, computed across
//      entities (SoA, 8 lanes with AVX2, no dependency between entities) into a LocalBlock;
//   2. world = parent world * LocalToParent, entity by entity in preorder (a child needs its
//      parent), reading the LocalBlock with broadcasts.
// Phase 2 comes in two flavours that differ only in where the parent matrix is read and how
// the result is stored: `compose` reads world[parent[pos]] and stores normally (runs where
// every parent is the previous entity keep the parent in registers); `stream` reads the parent
// from a small ancestor ring indexed by depth and writes the world array with non-temporal
// stores (no read-for-ownership of the 64 MB destination of a 1 M scene).
//
// Every flavour and every instruction set performs the same float operations in the same
// order, lane by lane, without fused multiply-add (the sources are built with
// -ffp-contract=off), so an entity's world matrix is bit-identical whichever kernel, thread or
// machine computes it. The canonical formulas are RotationScale (affine.h) for phase 1 and
//   out.c_j = (p.c0 * L[j][0] + p.c1 * L[j][1]) + p.c2 * L[j][2]        (j = 0, 1, 2)
//   out.c3  = (p.c0 * t[0]    + p.c1 * t[1])    + (p.c2 * t[2] + p.c3)
// for phase 2 (ComposeAffine in affine.h spells out the same).
#pragma once

#include <cstdint>
#include <glm/mat4x4.hpp>

#include "scenecrdt/runtime/propagation_policy.h"
#include "scenecrdt/runtime/transform/affine.h"

namespace scenecrdt::runtime::internal {

inline constexpr uint32_t kBlock = 64;

// LocalToParent of up to kBlock entities, SoA: m[3 * j + r][e] is row r of column j (j < 3)
// of entity e, m[9 + r][e] row r of its translation.
struct alignas(64) LocalBlock {
  float m[12][kBlock];

  void Set(uint32_t e, const Rs& rs, const float (&t)[3]) {
    for (int j = 0; j < 3; ++j)
      for (int r = 0; r < 3; ++r) m[3 * j + r][e] = rs.c[j][r];
    for (int r = 0; r < 3; ++r) m[9 + r][e] = t[r];
  }
};

struct BlockKernels {
  // Phase 1: l.m[.][e] = T R S of local[e] for e < count (count <= kBlock).
  void (*local)(const LocalTrs* local, uint32_t count, LocalBlock& l);
  // Phase 2, positions pos = first + e for e in [e0, e1), in order:
  // world[pos] = world[parent[pos]] * L[e] (normal stores).
  void (*compose)(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                  const uint32_t* parent, glm::mat4* world);
  // Ancestor ring of ring_mask + 1 entries (a power of two): entry d & ring_mask holds the
  // world matrix of the last entity of depth d computed (or seeded) by this pass, tagged with
  // d in tag[d & ring_mask]. In preorder the last entity of depth d - 1 before pos is pos's
  // parent, so a matching tag means the entry is the parent; an entry overwritten by a deeper
  // entity (depth d - 1 + k * ring size) fails the tag test and the parent is read from
  // world[parent[pos]] instead (written earlier by this thread: a thread always reads its own
  // non-temporal stores). Then ring[d & ring_mask] = world[pos] = parent * L[e], tag = d, the world
  // store non-temporal; in a run where every parent is the previous entity, all but the last
  // few entities only invalidate their tag instead (their children read the world array).
  void (*stream)(const LocalBlock& l, uint32_t e0, uint32_t e1, uint32_t first,
                 const uint32_t* parent, const uint32_t* depth, uint32_t ring_mask, glm::mat4* ring,
                 uint32_t* tag, glm::mat4* world);
  KernelIsa isa;
  const char* name;
};

// The kernels of `isa` (kAuto: the best this CPU runs). An ISA the CPU lacks falls back to
// kSse2.
const BlockKernels& GetBlockKernels(KernelIsa isa);

// dst[i] = src[i] for i < count with non-temporal stores (both 16-byte aligned).
void StreamCopy(const glm::mat4* src, uint32_t count, glm::mat4* dst);

// Orders the non-temporal stores of this thread before later stores (call before publishing
// results to another thread or returning to the caller).
void StreamFence();

}  // namespace scenecrdt::runtime::internal
