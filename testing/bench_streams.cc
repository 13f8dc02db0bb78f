// SPDX-License-Identifier: Apache-2.0
// Owns the generator of benchmark Transform-PUT streams.
#include "scenecrdt/testing/bench_streams.h"

#include <algorithm>

#include "scenecrdt/protocol/crdt_codec.h"

namespace scenecrdt::testing {
namespace {
uint64_t Mix(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<uint8_t> MakeTransformPutStream(uint32_t entities, uint32_t updates_per_entity,
                                            uint64_t seed) {
  struct Update {
    uint32_t entity;
    uint32_t timestamp;
    float x;
  };
  uint64_t rng = seed;
  std::vector<Update> updates;
  updates.reserve(std::size_t{entities} * updates_per_entity);
  for (uint32_t e = 0; e < entities; ++e) {
    for (uint32_t u = 1; u <= updates_per_entity; ++u) {
      const bool tie = u > 1 && Mix(rng) % 8 == 0;
      updates.push_back({protocol::MakeEntityId(512 + e % 65024, e / 65024), tie ? u - 1 : u,
                         static_cast<float>(Mix(rng) % 1000) * 0.25f});
    }
  }
  for (std::size_t i = updates.size(); i > 1; --i) {
    std::swap(updates[i - 1], updates[Mix(rng) % i]);
  }
  std::vector<uint8_t> bytes;
  bytes.reserve(updates.size() * 68);
  for (const Update& u : updates) {
    protocol::Transform t;
    t.position = {u.x, 1.0f, -u.x};
    t.parent = u.entity % 7 == 0 ? 0 : 512 + (u.entity * 31) % 512;
    protocol::AppendTransformPut(u.entity, u.timestamp, t, bytes);
  }
  return bytes;
}

}  // namespace scenecrdt::testing
