// SPDX-License-Identifier: Apache-2.0
// Backoff: capped exponential growth, jitter bounds, reset, and seeded determinism.
#include "scenecrdt/client/backoff.h"

#include <gtest/gtest.h>

#include <vector>

namespace scenecrdt::client {
namespace {

TEST(BackoffTest, GrowsExponentiallyUpToTheCapWithJitterBelowTheNominalDelay) {
  BackoffOptions o;
  o.initial_delay_ms = 100;
  o.max_delay_ms = 1000;
  o.multiplier = 2.0;
  o.jitter = 0.5;
  o.seed = 7;
  Backoff b(o);
  const int64_t nominal[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (int64_t n : nominal) {
    const int64_t d = b.Next().count();
    EXPECT_GE(d, n / 2) << n;
    EXPECT_LE(d, n) << n;
  }
  EXPECT_EQ(b.attempts(), 7u);
  b.Reset();
  EXPECT_EQ(b.attempts(), 0u);
  EXPECT_LE(b.Next().count(), 100);
}

TEST(BackoffTest, WithoutJitterTheDelaysAreExact) {
  BackoffOptions o;
  o.initial_delay_ms = 10;
  o.max_delay_ms = 50;
  o.multiplier = 3.0;
  o.jitter = 0.0;
  o.seed = 1;
  Backoff b(o);
  std::vector<int64_t> got;
  for (int i = 0; i < 5; ++i) got.push_back(b.Next().count());
  EXPECT_EQ(got, (std::vector<int64_t>{10, 30, 50, 50, 50}));
}

TEST(BackoffTest, TheSameSeedGivesTheSameDelaysAndAnotherSeedOthers) {
  BackoffOptions o;
  o.initial_delay_ms = 1000;
  o.max_delay_ms = 60000;
  o.jitter = 1.0;
  o.seed = 99;
  Backoff a(o);
  Backoff b(o);
  o.seed = 100;
  Backoff c(o);
  bool differs = false;
  for (int i = 0; i < 8; ++i) {
    const auto da = a.Next();
    EXPECT_EQ(da, b.Next());
    differs |= da != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(BackoffTest, OutOfRangeOptionsAreClamped) {
  BackoffOptions o;
  o.initial_delay_ms = 200;
  o.max_delay_ms = 10;  // below the initial delay: the initial delay is the cap
  o.multiplier = 0.5;   // shrinking: treated as 1
  o.jitter = 7.0;       // above 1: treated as 1
  o.seed = 3;
  Backoff b(o);
  for (int i = 0; i < 100; ++i) {  // no overflow however many attempts
    const int64_t d = b.Next().count();
    EXPECT_GE(d, 0);
    EXPECT_LE(d, 200);
  }
}

}  // namespace
}  // namespace scenecrdt::client
