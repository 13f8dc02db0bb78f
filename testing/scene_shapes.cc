// SPDX-License-Identifier: Apache-2.0
// Owns the scene shape generators (see scene_shapes.h). Randomness comes from splitmix64 of
// (seed, index), so output is identical on every platform and library version.
#include "scenecrdt/testing/scene_shapes.h"

#include <cmath>

namespace scenecrdt::testing {
namespace {

// 67-joint humanoid: hips, spine, neck, head, two legs, two arms with five 4-joint fingers,
// two eyes.
std::vector<uint32_t> HumanoidRig() {
  std::vector<uint32_t> p(67, kShapeRoot);
  p[1] = 0;  // spine
  p[2] = 1;
  p[3] = 2;
  p[4] = 3;  // neck
  p[5] = 4;  // head
  p[6] = 5;
  for (uint32_t leg = 0; leg < 2; ++leg) {
    const uint32_t b = 7 + leg * 5;
    p[b] = 0;
    for (uint32_t j = 1; j < 5; ++j) p[b + j] = b + j - 1;
  }
  for (uint32_t arm = 0; arm < 2; ++arm) {
    const uint32_t b = 17 + arm * 24;
    p[b] = 3;  // shoulder
    p[b + 1] = b;
    p[b + 2] = b + 1;
    p[b + 3] = b + 2;  // hand
    for (uint32_t f = 0; f < 5; ++f) {
      const uint32_t fb = b + 4 + f * 4;
      p[fb] = b + 3;
      for (uint32_t j = 1; j < 4; ++j) p[fb + j] = fb + j - 1;
    }
  }
  p[65] = 5;
  p[66] = 5;
  return p;
}

float Unit(uint64_t h) {  // [0, 1)
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f);
}

}  // namespace

uint64_t ShapeHash(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::optional<SceneShape> ParseSceneShape(std::string_view name) {
  if (name == "wide" || name == "wide_flat") return SceneShape::kWide;
  if (name == "deep" || name == "deep_chain") return SceneShape::kDeepChain;
  if (name == "chains" || name == "chains_1000") return SceneShape::kChains1000;
  if (name == "balanced" || name == "balanced_k8") return SceneShape::kBalanced;
  if (name == "random" || name == "random_forest") return SceneShape::kRandomForest;
  if (name == "humanoids" || name == "humanoids67") return SceneShape::kHumanoids67;
  return std::nullopt;
}

const char* SceneShapeName(SceneShape shape) {
  switch (shape) {
    case SceneShape::kWide:
      return "wide";
    case SceneShape::kDeepChain:
      return "deep";
    case SceneShape::kChains1000:
      return "chains";
    case SceneShape::kBalanced:
      return "balanced";
    case SceneShape::kRandomForest:
      return "random";
    case SceneShape::kHumanoids67:
      return "humanoids";
    default:
      return "unknown";
  }
}

std::vector<uint32_t> GenerateParents(SceneShape shape, uint32_t n, uint64_t seed,
                                      uint32_t branching) {
  std::vector<uint32_t> parent(n, kShapeRoot);
  const uint32_t k = branching < 1 ? 1 : branching;
  switch (shape) {
    case SceneShape::kWide:
      for (uint32_t i = 1; i < n; ++i) parent[i] = 0;
      break;
    case SceneShape::kDeepChain:
      for (uint32_t i = 1; i < n; ++i) parent[i] = i - 1;
      break;
    case SceneShape::kChains1000:
      for (uint32_t i = 0; i < n; ++i) parent[i] = i % 1000 == 0 ? kShapeRoot : i - 1;
      break;
    case SceneShape::kBalanced:
      for (uint32_t i = 1; i < n; ++i) parent[i] = (i - 1) / k;
      break;
    case SceneShape::kRandomForest:
      for (uint32_t i = 1; i < n; ++i) {
        const uint64_t h = ShapeHash(seed * 0x100000001B3ull + i);
        if (h % 100 == 0) continue;  // ~1 % roots
        parent[i] = static_cast<uint32_t>((h >> 8) % i);
      }
      break;
    case SceneShape::kHumanoids67: {
      const std::vector<uint32_t> rig = HumanoidRig();
      for (uint32_t i = 0; i < n; ++i) {
        const uint32_t base = i - i % 67;
        const uint32_t p = rig[i % 67];
        parent[i] = p == kShapeRoot ? kShapeRoot : base + p;
      }
      break;
    }
    default:
      break;
  }
  return parent;
}

protocol::Transform ShapeLocalTransform(uint32_t index, uint64_t seed, bool uniform_scale) {
  uint64_t h = ShapeHash(seed ^ (static_cast<uint64_t>(index) << 20) ^ 0x5EED);
  auto next = [&h] {
    h = ShapeHash(h);
    return Unit(h);
  };
  protocol::Transform t;
  t.position = {next() * 2.0f - 1.0f, next() * 2.0f - 1.0f, next() * 2.0f - 1.0f};
  float q[4] = {next() - 0.5f, next() - 0.5f, next() - 0.5f, next() - 0.5f};
  float len = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (len < 1e-3f) {
    q[0] = q[1] = q[2] = 0.0f;
    q[3] = len = 1.0f;
  }
  t.rotation = {q[0] / len, q[1] / len, q[2] / len, q[3] / len};
  const float s = 0.5f + next();
  t.scale =
      uniform_scale ? protocol::Vec3f{s, s, s} : protocol::Vec3f{s, 0.5f + next(), 0.5f + next()};
  return t;
}

}  // namespace scenecrdt::testing
