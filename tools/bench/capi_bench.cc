// SPDX-License-Identifier: Apache-2.0
// Benchmarks the renderer's per-frame crossings of the C ABI (docs/C-ABI.md) on a random-forest
// scene: one bulk copy of every world matrix (sc_runtime_copy_world), of the changed ones after
// every entity moved (sc_runtime_copy_changed_world), and the same reads done in C++ without
// the boundary (TransformSystem::Nodes() + copy; a plain copy of world_matrices(), the floor).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"
#include "scenecrdt/testing/scene_shapes.h"

namespace {

namespace testing = scenecrdt::testing;

// Transform PUTs of a random forest of `n` entities (numbers from 512), timestamp `ts`,
// positions shifted by `dx`.
std::vector<uint8_t> SceneStream(uint32_t n, uint32_t ts, float dx) {
  const std::vector<uint32_t> parents =
      testing::GenerateParents(testing::SceneShape::kRandomForest, n, 1);
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < n; ++i) {
    scenecrdt::protocol::Transform t = testing::ShapeLocalTransform(i, 1, false);
    t.position.x += dx;
    t.parent = parents[i] == testing::kShapeRoot ? 0 : 512 + parents[i];
    scenecrdt::protocol::AppendTransformPut(512 + i, ts, t, out);
  }
  return out;
}

struct Scene {
  explicit Scene(uint32_t n) : rt(sc_runtime_create()), ids(n), matrices(16 * n) {
    const std::vector<uint8_t> bytes = SceneStream(n, 1, 0.0f);
    if (sc_runtime_apply(rt, bytes.data(), bytes.size()) != SC_OK ||
        sc_runtime_update(rt) != SC_OK) {
      rt = nullptr;
    }
    cpp.ApplyCrdt(bytes).value();
    cpp.Update();
  }
  ~Scene() { sc_runtime_destroy(rt); }
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  sc_runtime* rt;
  scenecrdt::runtime::Runtime cpp;
  std::vector<uint32_t> ids;
  std::vector<float> matrices;
};

void BM_CapiCopyWorld(benchmark::State& state) {
  Scene scene(static_cast<uint32_t>(state.range(0)));
  size_t count = 0;
  for (auto _ : state) {
    if (sc_runtime_copy_world(scene.rt, scene.ids.data(), scene.matrices.data(), scene.ids.size(),
                              &count) != SC_OK) {
      state.SkipWithError(sc_last_error());
    }
    benchmark::DoNotOptimize(scene.matrices.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
}
BENCHMARK(BM_CapiCopyWorld)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_CppNodesAndCopy(benchmark::State& state) {
  Scene scene(static_cast<uint32_t>(state.range(0)));
  for (auto _ : state) {
    const std::vector<scenecrdt::runtime::NodeInfo> nodes = scene.cpp.transforms().Nodes();
    const auto world = scene.cpp.world_matrices();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      scene.ids[i] = nodes[i].entity;
      std::memcpy(&scene.matrices[16 * i], &world[nodes[i].index], sizeof(glm::mat4));
    }
    benchmark::DoNotOptimize(scene.matrices.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CppNodesAndCopy)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

void BM_CppWorldSpanCopy(benchmark::State& state) {
  Scene scene(static_cast<uint32_t>(state.range(0)));
  for (auto _ : state) {
    const auto world = scene.cpp.world_matrices().subspan(1);  // index 0 is the root
    std::memcpy(scene.matrices.data(), world.data(), world.size_bytes());
    benchmark::DoNotOptimize(scene.matrices.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_CppWorldSpanCopy)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

// Every entity moved by the last update: the changed list is the whole scene.
void BM_CapiCopyChangedWorldAllMoved(benchmark::State& state) {
  const auto n = static_cast<uint32_t>(state.range(0));
  Scene scene(n);
  const std::vector<uint8_t> moved = SceneStream(n, 2, 0.25f);
  if (sc_runtime_apply(scene.rt, moved.data(), moved.size()) != SC_OK ||
      sc_runtime_update(scene.rt) != SC_OK) {
    state.SkipWithError(sc_last_error());
  }
  size_t count = 0;
  for (auto _ : state) {
    if (sc_runtime_copy_changed_world(scene.rt, scene.ids.data(), scene.matrices.data(),
                                      scene.ids.size(), &count) != SC_OK) {
      state.SkipWithError(sc_last_error());
    }
    benchmark::DoNotOptimize(scene.matrices.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
  state.counters["changed"] = static_cast<double>(count);
}
BENCHMARK(BM_CapiCopyChangedWorldAllMoved)->Arg(1000)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
