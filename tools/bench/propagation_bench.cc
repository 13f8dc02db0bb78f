// SPDX-License-Identifier: Apache-2.0
// Benchmarks TransformSystem propagation over the shapes of docs/reference/TRANSFORM-CASES.md
// (100 k and 1 M): all dirty, few dirty, reparents per frame, deep chain and loop, 1 and 2
// threads, feature mix; plus, in the same binary, single-core memcpy bandwidth, a naive
// baseline (recursive, glm::mat4, storage in a hash map by entity id), the flat preorder
// reference kernel in three world-matrix stores (reference_kernel.h) and the chain scan.
// Counter ns_per_entity = wall time / scene entities (ms per frame = ns_per_entity * N / 1e6).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <glm/gtc/matrix_transform.hpp>
#include <glm/gtc/quaternion.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "scenecrdt/runtime/internal/aligned_allocator.h"
#include "scenecrdt/runtime/transform_system.h"
#include "scenecrdt/testing/scene_shapes.h"
#include "tools/bench/reference_kernel.h"

namespace {

using scenecrdt::protocol::EntityId;
using scenecrdt::protocol::Transform;
using namespace scenecrdt::runtime;
using namespace scenecrdt::testing;
namespace bench = scenecrdt::bench;

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

// The reference kernel's inputs for `scene` in the preorder of `ts`'s layout (one piece after
// the initial build): the same positions as the system's world array.
bench::RefScene MakeRefScene(const TransformSystem& ts, const Scene& scene) {
  const auto n = static_cast<uint32_t>(scene.transforms.size());
  bench::RefScene ref;
  ref.parent.assign(n + 1, 0);
  ref.local.assign(n + 1, bench::RefTrs{{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}});
  std::vector<uint32_t> index_of(n);
  for (uint32_t i = 0; i < n; ++i) index_of[i] = *ts.IndexOf(Id(i));
  for (uint32_t i = 0; i < n; ++i) {
    const Transform& t = scene.transforms[i];
    ref.local[index_of[i]] = bench::RefTrs{{t.position.x, t.position.y, t.position.z},
                                           {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w},
                                           {t.scale.x, t.scale.y, t.scale.z}};
    ref.parent[index_of[i]] = scene.parents[i] == kShapeRoot ? 0 : index_of[scene.parents[i]];
  }
  return ref;
}

// The flat preorder reference kernel (reference_kernel.h) over the same scene as BM_AllDirty:
// preorder arrays taken from the system's layout (one piece after the initial build).
// Args: shape, N, store (0: 4x4 AoS, 1: 3x4 AoS, 2: 3x4 SoA).
void BM_Reference(benchmark::State& state) {
  const auto shape = static_cast<SceneShape>(state.range(0));
  const auto n = static_cast<uint32_t>(state.range(1));
  const auto store = state.range(2);
  bench::RefScene ref;
  {
    TransformSystem ts;
    const Scene scene = MakeScene(shape, n);
    Load(ts, scene);
    ref = MakeRefScene(ts, scene);
  }
  const std::size_t count = std::size_t{n} + 1;
  const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  const float identity34[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  std::vector<float, internal::AlignedAllocator<float>> aos(count * (store == 0 ? 16 : 12), 0.0f);
  std::vector<std::vector<float>> soa(store == 2 ? 12 : 0, std::vector<float>(count, 0.0f));
  float* soa_ptrs[12] = {};
  for (std::size_t e = 0; e < soa.size(); ++e) {
    soa_ptrs[e] = soa[e].data();
    soa[e][0] = identity34[e];
  }
  std::memcpy(aos.data(), store == 0 ? identity : identity34,
              sizeof(float) * (store == 0 ? 16 : 12));
  for (auto _ : state) {
    if (store == 0) {
      bench::RefKernel4x4(ref, aos.data());
    } else if (store == 1) {
      bench::RefKernel3x4(ref, aos.data());
    } else {
      bench::RefKernel3x4Soa(ref, soa_ptrs);
    }
    benchmark::ClobberMemory();
  }
  SetCounters(state, n);
  state.SetLabel(std::string(SceneShapeName(shape)) + (store == 0   ? " 4x4"
                                                       : store == 1 ? " 3x4"
                                                                    : " 3x4 SoA"));
}

// TransformSystem (all dirty) against the reference kernel (4x4) on the same scene, and 1
// against 2 threads, alternated within every iteration so that both sides see the same load
// (the shared VM's load moves wall times by 2-5x between runs). Counters: medians over the
// iterations of the wall time (ms) of each, the thread CPU time (ms) of the one-thread runs
// (also of a system with streaming off: cached_1t), and the ratios ours_1t / ref and
// ours_2t / ours_1t. Args: shape, N.
double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}
double WallMs() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
double MedianOf(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}
void BM_VersusReference(benchmark::State& state) {
  const auto shape = static_cast<SceneShape>(state.range(0));
  const auto n = static_cast<uint32_t>(state.range(1));
  const Scene scene = MakeScene(shape, n);
  TransformSystem ts;
  Load(ts, scene);
  TransformSystem cached;  // the same with streaming off: plain stores, parents from the array
  LayoutPolicy no_streaming;
  no_streaming.min_streaming_entities = 0xFFFFFFFFu;
  cached.SetLayoutPolicy(no_streaming);
  Load(cached, scene);
  bench::RefScene ref = MakeRefScene(ts, scene);
  std::vector<float, internal::AlignedAllocator<float>> world((std::size_t{n} + 1) * 16, 0.0f);
  for (std::size_t k = 0; k < 4; ++k) world[k * 5] = 1.0f;
  std::vector<double> ours1, ours2, reference, ours1_cpu, reference_cpu, cached_cpu;
  for (auto _ : state) {
    double w = WallMs(), c = ThreadCpuMs();
    ts.MarkAllDirty();
    ts.Update({1});
    ours1.push_back(WallMs() - w);
    ours1_cpu.push_back(ThreadCpuMs() - c);
    w = WallMs();
    c = ThreadCpuMs();
    bench::RefKernel4x4(ref, world.data());
    benchmark::ClobberMemory();
    reference.push_back(WallMs() - w);
    reference_cpu.push_back(ThreadCpuMs() - c);
    w = WallMs();
    ts.MarkAllDirty();
    ts.Update({2});
    ours2.push_back(WallMs() - w);
    c = ThreadCpuMs();
    cached.MarkAllDirty();
    cached.Update({1});
    cached_cpu.push_back(ThreadCpuMs() - c);
  }
  state.counters["ours_1t_ms"] = MedianOf(ours1);
  state.counters["ours_2t_ms"] = MedianOf(ours2);
  state.counters["ref_ms"] = MedianOf(reference);
  state.counters["ours_1t_cpu_ms"] = MedianOf(ours1_cpu);
  state.counters["ref_cpu_ms"] = MedianOf(reference_cpu);
  state.counters["1t_over_ref"] = MedianOf(ours1) / MedianOf(reference);
  state.counters["1t_over_ref_cpu"] = MedianOf(ours1_cpu) / MedianOf(reference_cpu);
  state.counters["2t_over_1t"] = MedianOf(ours2) / MedianOf(ours1);
  state.counters["cached_1t_cpu_ms"] = MedianOf(cached_cpu);
  state.counters["cached_over_ref_cpu"] = MedianOf(cached_cpu) / MedianOf(reference_cpu);
  state.SetLabel(SceneShapeName(shape));
}

// A 1 M-deep chain as a prefix product of affines (row-major 3x4, products precomputed from
// the local TRS): threads = 1 is the sequential product; threads = 2 the two-block scan (the
// second half's prefix from identity on a second thread while the first thread does the first
// half, then both multiply the second half by the first half's last matrix: 1.5x the work).
// Counter `differ`: matrices whose bits differ from the sequential result (the scan
// reassociates float products), of the 500 000 the scan computes differently. Rigid links (unit
// scale). Args: threads (1 or 2).
void BM_ChainScan(benchmark::State& state) {
  const uint32_t n = 1000000;
  const bool scan = state.range(0) == 2;
  std::vector<float> local(std::size_t{n} * 12), seq(std::size_t{n} * 12), out(std::size_t{n} * 12);
  for (uint32_t i = 0; i < n; ++i) {
    // Unit scale: a product of 1 000 000 random scales would underflow to zero within a few
    // thousand links, and zeros agree bit for bit whichever order produced them.
    Transform t = ShapeLocalTransform(i, kSeed);
    t.scale = {1.0f, 1.0f, 1.0f};
    const bench::RefRs r = bench::RefRotationScale(
        bench::RefTrs{{t.position.x, t.position.y, t.position.z},
                      {t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w},
                      {t.scale.x, t.scale.y, t.scale.z}});
    float* a = &local[std::size_t{i} * 12];
    for (int row = 0; row < 3; ++row) {
      for (int j = 0; j < 3; ++j) a[row * 4 + j] = r.c[j][row];
    }
    a[3] = t.position.x;
    a[7] = t.position.y;
    a[11] = t.position.z;
  }
  auto prefix = [&](float* dst, uint32_t begin, uint32_t end) {
    std::memcpy(&dst[std::size_t{begin} * 12], &local[std::size_t{begin} * 12], 48);
    for (uint32_t i = begin + 1; i < end; ++i) {
      bench::RefAffineProduct(&dst[std::size_t{i - 1} * 12], &local[std::size_t{i} * 12],
                              &dst[std::size_t{i} * 12]);
    }
  };
  prefix(seq.data(), 0, n);
  const uint32_t m = n / 2;
  for (auto _ : state) {
    if (!scan) {
      prefix(out.data(), 0, n);
    } else {
      std::thread second([&] { prefix(out.data(), m, n); });
      prefix(out.data(), 0, m);
      second.join();
      const float* carry = &out[std::size_t{m - 1} * 12];
      const uint32_t mid = m + (n - m) / 2;
      auto fix = [&](uint32_t begin, uint32_t end) {
        for (uint32_t i = begin; i < end; ++i) {
          bench::RefAffineProduct(carry, &out[std::size_t{i} * 12], &out[std::size_t{i} * 12]);
        }
      };
      std::thread helper([&] { fix(mid, n); });
      fix(m, mid);
      helper.join();
    }
    benchmark::ClobberMemory();
  }
  std::size_t differ = 0;
  for (uint32_t i = 0; i < n; ++i) {
    differ += std::memcmp(&out[std::size_t{i} * 12], &seq[std::size_t{i} * 12], 48) != 0 ? 1 : 0;
  }
  state.counters["differ"] = static_cast<double>(differ);
  SetCounters(state, n);
}

void AllDirtyArgs(benchmark::internal::Benchmark* b) {
  for (SceneShape s : kShapes) {
    for (int64_t n : {100000, 1000000}) {
      for (int64_t threads : {1, 2}) b->Args({static_cast<int64_t>(s), n, threads});
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
void ReferenceArgs(benchmark::internal::Benchmark* b) {
  for (SceneShape s : kShapes) {
    for (int64_t n : {100000, 1000000}) b->Args({static_cast<int64_t>(s), n, 0});
  }
  for (int64_t store : {1, 2}) {
    for (int64_t n : {100000, 1000000}) {
      b->Args({static_cast<int64_t>(SceneShape::kRandomForest), n, store});
    }
  }
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
BENCHMARK(BM_Reference)->Apply(ReferenceArgs)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_VersusReference)
    ->Args({static_cast<int64_t>(SceneShape::kRandomForest), 1000000})
    ->Args({static_cast<int64_t>(SceneShape::kRandomForest), 100000})
    ->Args({static_cast<int64_t>(SceneShape::kWide), 1000000})
    ->Args({static_cast<int64_t>(SceneShape::kChains1000), 1000000})
    ->Args({static_cast<int64_t>(SceneShape::kHumanoids67), 1000000})
    ->Iterations(15)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ChainScan)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
