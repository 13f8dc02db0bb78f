// SPDX-License-Identifier: Apache-2.0
// Owns Backoff: the delay before each reconnect attempt of a Client. Capped exponential with
// jitter: attempt n (0-based) waits `initial * multiplier^n`, capped at `max`, minus a random
// fraction of up to `jitter` of it, so many clients cut at once do not come back in lockstep.
// Randomness comes from a seeded generator: the same seed gives the same delays (tests).
// Single-threaded (the Client's caller thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

namespace scenecrdt::client {

struct BackoffOptions {
  uint32_t initial_delay_ms = 100;  // first attempt's delay before jitter
  uint32_t max_delay_ms = 5000;     // cap on the delay before jitter
  double multiplier = 2.0;          // growth per consecutive failed attempt (>= 1)
  double jitter = 0.5;              // 0: exact delays; 0.5: each delay is in [d/2, d]
  uint64_t seed = 0;                // 0: seeded from std::random_device
};

class Backoff {
 public:
  explicit Backoff(const BackoffOptions& options);

  // The delay before the next attempt; counts the attempt.
  std::chrono::milliseconds Next();
  // Back to the initial delay (after a session was established).
  void Reset() { attempts_ = 0; }
  // Attempts counted since the last Reset().
  uint32_t attempts() const { return attempts_; }

 private:
  BackoffOptions options_;
  std::mt19937_64 random_;
  uint32_t attempts_ = 0;
};

}  // namespace scenecrdt::client
