// SPDX-License-Identifier: Apache-2.0
// Benchmarks TransformSystem propagation over the TRANSFORM-CASES.md shapes (100 k and 1 M):
// all dirty, few dirty, reparents per frame, deep chain and loop, 1 and 2 threads, feature
// mix; plus, in the same binary, single-core memcpy bandwidth, a naive baseline (recursive,
// glm::mat4, storage in a hash map by entity id) and the 3x4-vs-4x4 storage kernel measurement.
// Counter ns_per_entity = wall time / scene entities (ms per frame = ns_per_entity * N / 1e6).
#include <benchmark/benchmark.h>

#include <cstring>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <unordered_map>
#include <vector>

#include "scenecrdt/runtime/internal/affine.h"
#include "scenecrdt/runtime/scene_shapes.h"
#include "scenecrdt/runtime/transform_system.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace {

using scenecrdt::protocol::EntityId;
using scenecrdt::protocol::Transform;
using namespace scenecrdt::runtime;

constexpr uint64_t kSeed = 42;
EntityId Id(uint32_t index) { return index + 1; }

const SceneShape kShapes[] = {SceneShape::kWide,         SceneShape::kDeepChain,
                              SceneShape::kChains1000,   SceneShape::kBalanced,
                              SceneShape::kRandomForest, SceneShape::kHumanoids67};

struct Scene {
  std::vector<uint32_t> parents;
  std::vector<Transform> transforms;
};

Scene MakeScene(SceneShape shape, uint32_t n) {
  Scene s;
  s.parents = GenerateParents(shape, n, kSeed);
  s.transforms.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    s.transforms[i] = ShapeLocalTransform(i, kSeed);
    s.transforms[i].parent = s.parents[i] == kShapeRoot ? 0 : Id(s.parents[i]);
  }
  return s;
}

void Load(TransformSystem& ts, const Scene& scene, int features_percent = 0) {
  const auto n = static_cast<uint32_t>(scene.transforms.size());
  for (uint32_t i = 0; i < n; ++i) ts.SetTransform(Id(i), scene.transforms[i]);
  if (features_percent > 0) {
    for (uint32_t i = 0; i < n; ++i) {
      if (ShapeHash(i * 31 + 7) % 100 >= static_cast<uint64_t>(features_percent)) continue;
      ts.SetRotationEuler(Id(i), static_cast<EulerOrder>(i % 6), {0.1f, 0.2f, 0.3f});
      ts.SetRotationPivot(Id(i), {0.5f, 0.0f, 0.0f});
      ts.SetScalePivot(Id(i), {0.0f, 0.25f, 0.0f});
      if (i % 2 == 0) ts.SetParentScaleInverse(Id(i), true);
    }
  }
  ts.Update();
}

void SetCounters(benchmark::State& state, uint32_t n) {
  state.counters["ns_per_entity"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["entities"] = n;
}

// Args: shape, N, threads.
void BM_AllDirty(benchmark::State& state) {
  const auto shape = static_cast<SceneShape>(state.range(0));
  const auto n = static_cast<uint32_t>(state.range(1));
  const int threads = static_cast<int>(state.range(2));
  TransformSystem ts;
  Load(ts, MakeScene(shape, n));
  for (auto _ : state) {
    ts.MarkAllDirty();
    ts.Update({threads});
    benchmark::DoNotOptimize(ts.world_matrices().data());
  }
  SetCounters(state, n);
  state.SetLabel(SceneShapeName(shape));
}

// Args: shape, N, dirty parts per million, threads.
void BM_FewDirty(benchmark::State& state) {
  const auto shape = static_cast<SceneShape>(state.range(0));
  const auto n = static_cast<uint32_t>(state.range(1));
  const auto k =
      static_cast<uint32_t>(std::max<int64_t>(1, state.range(1) * state.range(2) / 1000000));
  const int threads = static_cast<int>(state.range(3));
  const Scene scene = MakeScene(shape, n);
  TransformSystem ts;
  Load(ts, scene);
  uint64_t h = 1;
  std::size_t computed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (uint32_t j = 0; j < k; ++j) {
      h = ShapeHash(h);
      const auto i = static_cast<uint32_t>(h % n);
      Transform t = *ts.GetTransform(Id(i));
      t.position.x += 0.001f;
      ts.SetTransform(Id(i), t);
    }
    state.ResumeTiming();
    ts.Update({threads});
    computed += ts.stats().computed;
  }
  SetCounters(state, n);
  state.counters["dirty"] = k;
  state.counters["computed_per_frame"] =
      static_cast<double>(computed) / static_cast<double>(state.iterations());
  state.SetLabel(SceneShapeName(shape));
}

// Random reparents (to an earlier entity or to root: stays acyclic) in a random forest.
// Args: N, reparents parts per million.
void BM_Reparent(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  const auto k =
      static_cast<uint32_t>(std::max<int64_t>(1, state.range(0) * state.range(1) / 1000000));
  TransformSystem ts;
  Load(ts, MakeScene(SceneShape::kRandomForest, n));
  uint64_t h = 7;
  std::size_t rebuilds_before = ts.stats().rebuilds;
  for (auto _ : state) {
    state.PauseTiming();
    for (uint32_t j = 0; j < k; ++j) {
      h = ShapeHash(h);
      const auto c = static_cast<uint32_t>(1 + h % (n - 1));
      const auto p = static_cast<uint32_t>((h >> 32) % (c + 1));
      Transform t = *ts.GetTransform(Id(c));
      t.parent = p == c ? 0 : Id(p);
      ts.SetTransform(Id(c), t);
    }
    state.ResumeTiming();
    ts.Update();
  }
  SetCounters(state, n);
  state.counters["reparents"] = k;
  state.counters["rebuilds"] = static_cast<double>(ts.stats().rebuilds - rebuilds_before);
  state.counters["compactions"] = static_cast<double>(ts.stats().compactions);
  state.counters["pieces"] = static_cast<double>(ts.stats().pieces);
}

// Feature mix: percent of entities with Euler, pivots and ParentScaleInverse. Args: N, %.
void BM_FeatureMix(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  TransformSystem ts;
  Load(ts, MakeScene(SceneShape::kRandomForest, n), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    ts.MarkAllDirty();
    ts.Update();
  }
  SetCounters(state, n);
}

// A 1 000 000-deep chain built, closed into a 1 000 000-long loop by one write, then broken.
void BM_DeepChainLoop1M(benchmark::State& state) {
  const uint32_t n = 1000000;
  for (auto _ : state) {
    TransformSystem ts;
    for (uint32_t i = 1; i <= n; ++i) {
      Transform t = ShapeLocalTransform(i, kSeed);
      t.parent = i - 1;
      ts.SetTransform(i, t);
    }
    ts.Update();
    Transform t = *ts.GetTransform(1);
    t.parent = n;
    ts.SetTransform(1, t);
    ts.Update();  // closes the loop
    if (!ts.IsParked(n / 2)) state.SkipWithError("loop not parked");
    t.parent = 0;
    ts.SetTransform(1, t);
    ts.Update();  // breaks it
    if (ts.IsParked(n / 2) || ts.EffectiveParent(n) != n - 1) state.SkipWithError("not restored");
  }
}

// ---- Baselines ----

void BM_MemcpyBandwidth(benchmark::State& state) {
  const std::size_t bytes = 256u << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::DoNotOptimize(b.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(bytes));
}

// Naive: nodes in a hash map by entity id, children lists, recursion from the roots, glm.
struct NaiveNode {
  Transform local;
  glm::mat4 world;
  std::vector<EntityId> children;
};
void NaiveVisit(std::unordered_map<EntityId, NaiveNode>& nodes, EntityId id,
                const glm::mat4& parent) {
  NaiveNode& node = nodes[id];
  const Transform& t = node.local;
  glm::quat q;
  q.x = t.rotation.x;
  q.y = t.rotation.y;
  q.z = t.rotation.z;
  q.w = t.rotation.w;
  node.world = parent *
               glm::translate(glm::mat4(1.0f), {t.position.x, t.position.y, t.position.z}) *
               glm::mat4_cast(q) * glm::scale(glm::mat4(1.0f), {t.scale.x, t.scale.y, t.scale.z});
  for (EntityId c : node.children) NaiveVisit(nodes, c, node.world);
}
void BM_Naive(benchmark::State& state) {
  const auto shape = static_cast<SceneShape>(state.range(0));
  const auto n = static_cast<uint32_t>(state.range(1));
  const Scene scene = MakeScene(shape, n);
  std::unordered_map<EntityId, NaiveNode> nodes;
  std::vector<EntityId> roots;
  for (uint32_t i = 0; i < n; ++i) nodes[Id(i)].local = scene.transforms[i];
  for (uint32_t i = 0; i < n; ++i) {
    if (scene.parents[i] == kShapeRoot) {
      roots.push_back(Id(i));
    } else {
      nodes[Id(scene.parents[i])].children.push_back(Id(i));
    }
  }
  for (auto _ : state) {
    for (EntityId r : roots) NaiveVisit(nodes, r, glm::mat4(1.0f));
    benchmark::ClobberMemory();
  }
  SetCounters(state, n);
  state.SetLabel(SceneShapeName(shape));
}

// Storage decision: the same fused kernel over preorder arrays writing 4x4 (what the system
// exposes) or 3x4 (12 floats) world matrices. Args: N, floats per matrix (16 or 12).
void BM_StorageKernel(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  const auto stride = static_cast<uint32_t>(state.range(1));
  TransformSystem ts;
  const Scene scene = MakeScene(SceneShape::kRandomForest, n);
  Load(ts, scene);
  // Preorder arrays taken from the system's layout (one piece after the initial build).
  std::vector<uint32_t> parent(n + 1, 0);
  std::vector<internal::LocalTrs> local(n + 1);
  std::vector<uint32_t> index_of(n + 1);
  for (uint32_t i = 0; i < n; ++i) index_of[i] = *ts.IndexOf(Id(i));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t pos = index_of[i];
    local[pos] = internal::ToLocalTrs(scene.transforms[i]);
    parent[pos] = scene.parents[i] == kShapeRoot ? 0 : index_of[scene.parents[i]];
  }
  std::vector<float> world(static_cast<std::size_t>(n + 2) * stride, 0.0f);
  const glm::mat4 identity(1.0f);
  std::memcpy(world.data(), &identity, sizeof(float) * stride);
  for (auto _ : state) {
    float* w = world.data();
    for (uint32_t i = 1; i <= n; ++i) {
      glm::mat4 p;
      const float* src = w + static_cast<std::size_t>(parent[i]) * stride;
      if (stride == 16) {
        for (int c = 0; c < 4; ++c)
          p[c] = glm::vec4(src[c * 4], src[c * 4 + 1], src[c * 4 + 2], src[c * 4 + 3]);
      } else {
        for (int c = 0; c < 4; ++c)
          p[c] = glm::vec4(src[c * 3], src[c * 3 + 1], src[c * 3 + 2], c == 3 ? 1.0f : 0.0f);
      }
      glm::mat4 out;
      internal::ComposeTrs(p, local[i], out);
      float* dst = w + static_cast<std::size_t>(i) * stride;
      if (stride == 16) {
        std::memcpy(dst, &out, sizeof(out));
      } else {
        for (int c = 0; c < 4; ++c) std::memcpy(dst + c * 3, &out[c], sizeof(float) * 3);
      }
    }
    benchmark::ClobberMemory();
  }
  SetCounters(state, n);
}

void AllDirtyArgs(benchmark::internal::Benchmark* b) {
  for (SceneShape s : kShapes) {
    for (int64_t n : {100000, 1000000}) {
      b->Args({static_cast<int64_t>(s), n, 1});
      if (s == SceneShape::kRandomForest || s == SceneShape::kChains1000 ||
          s == SceneShape::kHumanoids67 || s == SceneShape::kWide) {
        b->Args({static_cast<int64_t>(s), n, 2});
      }
    }
  }
}
void FewDirtyArgs(benchmark::internal::Benchmark* b) {
  for (SceneShape s :
       {SceneShape::kRandomForest, SceneShape::kHumanoids67, SceneShape::kChains1000}) {
    for (int64_t ppm : {100, 1000, 10000}) b->Args({static_cast<int64_t>(s), 1000000, ppm, 1});
  }
  b->Args({static_cast<int64_t>(SceneShape::kRandomForest), 100000, 100, 1});
  b->Args({static_cast<int64_t>(SceneShape::kRandomForest), 1000000, 10000, 2});
}
void NaiveArgs(benchmark::internal::Benchmark* b) {
  // deep_chain is left out: recursion 1 000 000 deep overflows the stack (which is the point).
  for (SceneShape s : {SceneShape::kWide, SceneShape::kRandomForest, SceneShape::kHumanoids67}) {
    for (int64_t n : {100000, 1000000}) b->Args({static_cast<int64_t>(s), n});
  }
}

BENCHMARK(BM_MemcpyBandwidth)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_AllDirty)->Apply(AllDirtyArgs)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FewDirty)->Apply(FewDirtyArgs)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_Reparent)
    ->Args({1000000, 100})
    ->Args({1000000, 1000})
    ->Args({100000, 1000})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_FeatureMix)
    ->Args({100000, 0})
    ->Args({100000, 10})
    ->Args({100000, 100})
    ->Args({1000000, 0})
    ->Args({1000000, 10})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_DeepChainLoop1M)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Naive)->Apply(NaiveArgs)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_StorageKernel)
    ->Args({100000, 16})
    ->Args({100000, 12})
    ->Args({1000000, 16})
    ->Args({1000000, 12})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
