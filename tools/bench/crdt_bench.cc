// SPDX-License-Identifier: Apache-2.0
// Benchmarks decode + merge of Transform PUT streams into CrdtStores of 10 k and 65 k
// entities (random order, equal-timestamp ties included): messages per second on one core.
#include <benchmark/benchmark.h>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/testing/bench_streams.h"

namespace {

using scenecrdt::runtime::CrdtStore;

// A fresh store per iteration: the whole stream builds the state (replay, late join).
void BM_DecodeMergeIntoFreshStore(benchmark::State& state) {
  const auto entities = static_cast<uint32_t>(state.range(0));
  const uint32_t updates = static_cast<uint32_t>((1u << 20) / entities);
  const std::vector<uint8_t> bytes =
      scenecrdt::testing::MakeTransformPutStream(entities, updates, 7);
  const int64_t messages = static_cast<int64_t>(bytes.size() / 68);
  for (auto _ : state) {
    CrdtStore store;
    auto stats = store.MergeStream(bytes);
    if (!stats.has_value()) state.SkipWithError("merge failed");
    benchmark::DoNotOptimize(store.num_registers());
  }
  state.SetItemsProcessed(state.iterations() * messages);
  state.counters["entities"] = static_cast<double>(entities);
}
BENCHMARK(BM_DecodeMergeIntoFreshStore)->Arg(10000)->Arg(65024)->Unit(benchmark::kMillisecond);

// A store that already holds every entity: steady-state traffic of a live scene.
void BM_DecodeMergeIntoWarmStore(benchmark::State& state) {
  const auto entities = static_cast<uint32_t>(state.range(0));
  const uint32_t updates = static_cast<uint32_t>((1u << 20) / entities);
  const std::vector<uint8_t> warmup = scenecrdt::testing::MakeTransformPutStream(entities, 1, 3);
  const std::vector<uint8_t> bytes =
      scenecrdt::testing::MakeTransformPutStream(entities, updates, 7);
  const int64_t messages = static_cast<int64_t>(bytes.size() / 68);
  for (auto _ : state) {
    state.PauseTiming();
    CrdtStore store;
    (void)store.MergeStream(warmup);
    state.ResumeTiming();
    auto stats = store.MergeStream(bytes);
    if (!stats.has_value()) state.SkipWithError("merge failed");
    benchmark::DoNotOptimize(store.num_registers());
  }
  state.SetItemsProcessed(state.iterations() * messages);
}
BENCHMARK(BM_DecodeMergeIntoWarmStore)->Arg(10000)->Arg(65024)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
