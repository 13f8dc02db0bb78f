// SPDX-License-Identifier: Apache-2.0
// Owns the deterministic Transform-PUT streams used to measure decode+merge throughput (the
// Google Benchmark, `scenecrdt bench merge` and the @dcl/ecs comparison all use the same one).
#pragma once

#include <cstdint>
#include <vector>

namespace scenecrdt::testing {

// `updates_per_entity` PUTs for each of `entities` scene entities (numbers from 512), with
// timestamps 1..updates_per_entity, in a seeded random order; one update in eight repeats
// the timestamp of another with different bytes (an equal-timestamp tie).
std::vector<uint8_t> MakeTransformPutStream(uint32_t entities, uint32_t updates_per_entity,
                                            uint64_t seed);

}  // namespace scenecrdt::testing
