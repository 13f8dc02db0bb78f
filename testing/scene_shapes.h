// SPDX-License-Identifier: Apache-2.0
// Owns the benchmark scene shapes of docs/reference/TRANSFORM-CASES.md as deterministic parent
// arrays (from a seed), and deterministic local transforms for them. Used by tools/bench, the
// tests and `scenecrdt gen`. Entity i's parent is an index < i, or kShapeRoot; callers map
// indices to entity ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "scenecrdt/protocol/transform.h"

namespace scenecrdt::testing {

inline constexpr uint32_t kShapeRoot = 0xFFFFFFFFu;

enum class SceneShape : uint8_t {
  kWide,          // one scene-root entity + N-1 direct children of it
  kDeepChain,     // one chain of N
  kChains1000,    // N/1000 chains of 1000
  kBalanced,      // complete k-ary tree (k = branching, default 8), BFS numbering
  kRandomForest,  // ~1 % roots, otherwise parent uniform among earlier entities
  kHumanoids67,   // N/67 copies of a 67-joint humanoid rig
};

// "wide", "deep", "chains", "balanced", "random", "humanoids" (and the names of
// docs/reference/TRANSFORM-CASES.md: wide_flat, deep_chain, chains_1000, balanced_k8,
// random_forest, humanoids67).
std::optional<SceneShape> ParseSceneShape(std::string_view name);
const char* SceneShapeName(SceneShape shape);

// parent[i] for i in [0, n): an index < i, or kShapeRoot.
std::vector<uint32_t> GenerateParents(SceneShape shape, uint32_t n, uint64_t seed,
                                      uint32_t branching = 8);

// A deterministic local transform for entity `index` (parent field left at root): position in
// [-1, 1]^3, a unit rotation, scale in [0.5, 1.5] (uniform when `uniform_scale`).
protocol::Transform ShapeLocalTransform(uint32_t index, uint64_t seed, bool uniform_scale = true);

// A small deterministic hash (splitmix64) used by the generators; exposed for tests and tools.
uint64_t ShapeHash(uint64_t x);

}  // namespace scenecrdt::testing
