// SPDX-License-Identifier: Apache-2.0
// Owns SplitMix64 and SeededShuffle: the seeded generator of `replay --shuffle`, `converge` and
// the replica simulator (replica_sim.h), the same numbers on every platform.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace scenecrdt::replay {

// A seeded Fisher-Yates permutation with our own generator, identical on every platform
// (std::shuffle's algorithm is implementation-defined).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) (bound > 0), without modulo bias.
  uint64_t Below(uint64_t bound) {
    const uint64_t limit = ~uint64_t{0} - (~uint64_t{0} % bound);
    uint64_t v;
    do {
      v = Next();
    } while (v >= limit);
    return v % bound;
  }
  // True with probability p.
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

template <class T>
void SeededShuffle(std::vector<T>& items, SplitMix64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.Below(i));
    std::swap(items[i - 1], items[j]);
  }
}

}  // namespace scenecrdt::replay
