// SPDX-License-Identifier: Apache-2.0
// Owns the reconnect delay computation (capped exponential, jitter from a seeded generator).
#include "scenecrdt/client/backoff.h"

#include <algorithm>
#include <cmath>

namespace scenecrdt::client {

namespace {
uint64_t SeedOf(const BackoffOptions& options) {
  if (options.seed != 0) return options.seed;
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}
}  // namespace

Backoff::Backoff(const BackoffOptions& options) : options_(options), random_(SeedOf(options)) {
  options_.multiplier = std::max(1.0, options_.multiplier);
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
  options_.max_delay_ms = std::max(options_.max_delay_ms, options_.initial_delay_ms);
}

std::chrono::milliseconds Backoff::Next() {
  // initial * multiplier^attempts, computed in double and capped before any conversion.
  const double grown = static_cast<double>(options_.initial_delay_ms) *
                       std::pow(options_.multiplier, static_cast<double>(attempts_));
  const double capped = std::min(grown, static_cast<double>(options_.max_delay_ms));
  if (attempts_ < 0xFFFFFFFFu) ++attempts_;
  // Uniform in [0, 1) from 53 random bits.
  const double unit = static_cast<double>(random_() >> 11) * 0x1.0p-53;
  const double delay = capped * (1.0 - options_.jitter * unit);
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(delay)));
}

}  // namespace scenecrdt::client
