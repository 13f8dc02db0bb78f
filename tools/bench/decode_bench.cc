// SPDX-License-Identifier: Apache-2.0
// Benchmarks decoding streams of Transform PUT_COMPONENT messages (messages per second).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"

namespace {

using namespace scenecrdt::protocol;

std::vector<uint8_t> MakeTransformStream(std::size_t count) {
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> pos(-100.0f, 100.0f);
  std::vector<uint8_t> bytes;
  bytes.reserve(count * 68);
  for (std::size_t i = 0; i < count; ++i) {
    Transform t;
    t.position = {pos(rng), pos(rng), pos(rng)};
    t.parent = i % 4 == 0 ? 0 : MakeEntityId(512 + static_cast<uint32_t>(rng() % 1000), 0);
    AppendTransformPut(MakeEntityId(512 + static_cast<uint32_t>(i % 60000), 0),
                       static_cast<uint32_t>(i / 60000 + 1), t, bytes);
  }
  return bytes;
}

void BM_DecodeTransformPuts(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const std::vector<uint8_t> bytes = MakeTransformStream(count);
  DecodeOptions options;
  for (auto _ : state) {
    uint64_t sum = 0;
    auto r = DecodeStream(bytes, options, [&](const CrdtMessage& m) {
      sum += m.entity + m.timestamp + m.data.size();
    });
    if (!r.has_value()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
}
BENCHMARK(BM_DecodeTransformPuts)->Arg(1 << 16)->Arg(1 << 20);

// Decoding plus loading the 44-byte payload into a Transform (what a store does on merge).
void BM_DecodeAndLoadTransforms(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const std::vector<uint8_t> bytes = MakeTransformStream(count);
  DecodeOptions options;
  for (auto _ : state) {
    float sum = 0;
    auto r = DecodeStream(bytes, options, [&](const CrdtMessage& m) {
      const Transform t = LoadTransform(m.data.first<Transform::kSize>());
      sum += t.position.x;
    });
    if (!r.has_value()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(count));
}
BENCHMARK(BM_DecodeAndLoadTransforms)->Arg(1 << 16);

// Chunked decoding with 1400-byte chunks (a TCP-like split: most chunks cut a message).
void BM_DecodeChunked(benchmark::State& state) {
  const std::vector<uint8_t> bytes = MakeTransformStream(1 << 16);
  for (auto _ : state) {
    CrdtStreamDecoder decoder;
    uint64_t n = 0;
    std::span<const uint8_t> rest(bytes);
    while (!rest.empty()) {
      const std::size_t take = std::min<std::size_t>(1400, rest.size());
      auto r = decoder.Feed(rest.first(take), [&](const CrdtMessage&) { ++n; });
      if (!r.has_value()) state.SkipWithError("decode failed");
      rest = rest.subspan(take);
    }
    benchmark::DoNotOptimize(n);
  }
  state.SetItemsProcessed(state.iterations() * (1 << 16));
}
BENCHMARK(BM_DecodeChunked);

}  // namespace

BENCHMARK_MAIN();
