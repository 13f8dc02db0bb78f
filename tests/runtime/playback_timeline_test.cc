// SPDX-License-Identifier: Apache-2.0
// Tests PlaybackTimeline and its arrival clock on simulated clocks: option validation, the
// delay converging on a steady 20 Hz stream, jitter smoothed out of the stamps, sender clocks
// (offset, drift, restart), skipped ticks, stalls and backlogs (a reset, never a long
// catch-up), rate-limited delay changes, and times that go backwards.
#include "scenecrdt/runtime/playback_timeline.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "tools/bench/interpolation_scenario.h"

namespace scenecrdt::runtime {
namespace {

constexpr int64_t kFrameUs = 16'667;

TEST(PlaybackTimelineValidityTest, EveryOptionOutOfRangeIsRefused) {
  EXPECT_TRUE(ValidateInterpolationOptions({}).has_value());
  auto refused = [](void (*edit)(InterpolationOptions&)) {
    InterpolationOptions o;
    edit(o);
    const Result<void> r = ValidateInterpolationOptions(o);
    return !r.has_value() && r.error().code == ErrorCode::kInvalidArgument;
  };
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.fixed_delay_us = -1; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.fixed_delay_us = kMaxTimeUs + 1; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.initial_delay_us = -5; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.min_delay_us = -1; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.max_delay_us = -1; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) {
    o.min_delay_us = 200'000;
    o.max_delay_us = 100'000;
  }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.interval_multiple = 0.5; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.interval_multiple = NAN; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.jitter_multiple = -1.0; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.jitter_multiple = INFINITY; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.catch_up = 0.6; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.slow_down = -0.01; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.slow_down = NAN; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.max_extrapolation_us = -1; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.snap_distance = 0.0f; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.snap_distance = NAN; }));
  EXPECT_TRUE(refused([](InterpolationOptions& o) { o.max_interval_us = 0; }));
  InterpolationOptions never_snap;
  never_snap.snap_distance = INFINITY;
  EXPECT_TRUE(ValidateInterpolationOptions(never_snap).has_value());
}

// A 20 Hz sender over a link with 40 ms latency and +-15 ms jitter, read as the scenario does.
std::vector<bench::MoverDelivery> Stream(int64_t duration_us, uint64_t seed = 7) {
  bench::MoverScenario s;
  s.duration_us = duration_us;
  s.seed = seed;
  return bench::MoverDeliveries(s);
}

TEST(PlaybackTimelineTest, ConvergesOnASteady20HzStream) {
  PlaybackTimeline timeline;
  const auto stream = Stream(10'000'000);
  std::size_t next = 0;
  std::vector<int64_t> stamps;
  int64_t previous_playback = INT64_MIN;
  int stalled_frames = 0;
  for (int64_t now = kFrameUs; now <= 10'000'000; now += kFrameUs) {
    for (; next < stream.size() && stream[next].arrival_us <= now; ++next) {
      stamps.push_back(timeline.OnBatch({stream[next].arrival_us, kNoSenderTime}));
      std::vector<int64_t> gaps;
      if (stamps.size() > 1) gaps.push_back(stamps.back() - stamps[stamps.size() - 2]);
      timeline.ObserveUpdateGaps(gaps);
    }
    const int64_t playback = timeline.Advance(now);
    EXPECT_GE(playback, previous_playback);  // never backwards
    previous_playback = playback;
    if (now > 2'000'000) {
      stalled_frames += timeline.stalled() ? 1 : 0;
      EXPECT_NEAR(static_cast<double>(timeline.target_delay_us()), 100'000.0, 10'000.0);
      EXPECT_LE(std::llabs(timeline.delay_us() - timeline.target_delay_us()),
                timeline.target_delay_us() / 10 + 1);
      EXPECT_GE(timeline.buffer_depth(), 1u);
      EXPECT_LE(timeline.buffer_depth(), 3u);
    }
  }
  EXPECT_EQ(stalled_frames, 0);
  EXPECT_EQ(timeline.resets(), 0u);
  EXPECT_EQ(timeline.late_batches(), 0u);
  EXPECT_NEAR(static_cast<double>(timeline.interval_us()), 50'000.0, 1'000.0);
  // Stamps are the send times on a line: the jitter (+-15 ms) is smoothed to a few ms.
  double max_gap_error_us = 0.0;
  for (std::size_t k = 60; k < stamps.size(); ++k) {
    const double gap = static_cast<double>(stamps[k] - stamps[k - 1]);
    max_gap_error_us = std::max(max_gap_error_us, std::fabs(gap - 50'000.0));
  }
  EXPECT_LT(max_gap_error_us, 3'000.0);
}

TEST(PlaybackTimelineTest, SenderTimesWithAnyOffsetAndDriftGiveRegularStamps) {
  PlaybackTimeline timeline;
  const auto stream = Stream(10'000'000);
  std::vector<int64_t> stamps;
  for (const auto& d : stream) {
    // The sender's clock is 5 days ahead and runs 100 ppm fast.
    const int64_t sender_us = 432'000'000'000 + d.send_time_us + d.send_time_us / 10'000;
    stamps.push_back(timeline.OnBatch({d.arrival_us, sender_us}));
  }
  EXPECT_EQ(timeline.resets(), 0u);
  for (std::size_t k = 40; k < stamps.size(); ++k) {
    EXPECT_NEAR(static_cast<double>(stamps[k] - stamps[k - 1]), 50'005.0, 1'500.0) << k;
    // The stamps follow the arrivals (their mean latency), not the sender's clock.
    EXPECT_NEAR(static_cast<double>(stamps[k] - stream[k].send_time_us), 40'000.0, 8'000.0);
  }
}

TEST(PlaybackTimelineTest, SenderClockGoingBackResyncs) {
  PlaybackTimeline timeline;
  for (int64_t k = 0; k < 20; ++k) (void)timeline.OnBatch({k * 50'000, 9'000'000 + k * 50'000});
  EXPECT_EQ(timeline.resets(), 0u);
  const int64_t stamp = timeline.OnBatch({20 * 50'000, 10});  // the sender restarted
  EXPECT_EQ(timeline.resets(), 1u);
  EXPECT_EQ(stamp, 20 * 50'000);
}

TEST(PlaybackTimelineTest, SkippedTicksKeepTheirPlaceOnTheLine) {
  PlaybackTimeline timeline;
  std::vector<int64_t> stamps;
  for (int64_t k = 0; k < 60; ++k) {
    if (k == 30 || k == 31 || k == 45) continue;  // ticks with nothing to send
    stamps.push_back(timeline.OnBatch({10'000 + k * 50'000, kNoSenderTime}));
    EXPECT_EQ(stamps.back(), 10'000 + k * 50'000);
  }
  EXPECT_EQ(timeline.resets(), 0u);
}

TEST(PlaybackTimelineTest, ResetsAfterALongStallInsteadOfCatchingUp) {
  PlaybackTimeline timeline;
  int64_t now = 0;
  int64_t arrival = 0;
  auto run_until = [&](int64_t end_us, bool send) {
    for (; now < end_us; now += kFrameUs) {
      while (send && arrival <= now) {
        (void)timeline.OnBatch({arrival, kNoSenderTime});
        arrival += 50'000;
      }
      (void)timeline.Advance(now);
    }
  };
  run_until(3'000'000, true);
  const uint64_t resets_before = timeline.resets();
  const int64_t delay_before = timeline.delay_us();
  arrival = 8'000'000;  // 5 s of silence
  run_until(8'000'000, false);
  EXPECT_TRUE(timeline.stalled());
  EXPECT_EQ(timeline.delay_us(), delay_before);  // playback kept its pace: nothing to repay
  run_until(8'500'000, true);
  EXPECT_EQ(timeline.resets(), resets_before + 1);  // the clock restarted at the new batch
  EXPECT_FALSE(timeline.stalled());
  EXPECT_EQ(timeline.delay_us(), delay_before);
  // The first batch after the stall is shown one delay after it came, not seconds later.
  EXPECT_GE(timeline.playback_time_us(), 8'000'000 + 500'000 - delay_before - kFrameUs);
}

TEST(PlaybackTimelineTest, ABacklogIsSqueezedNotReplayedSlowly) {
  PlaybackTimeline timeline;
  int64_t now = 0;
  for (int64_t k = 0; now < 3'000'000; now += kFrameUs) {
    for (; k * 50'000 <= now; ++k) (void)timeline.OnBatch({k * 50'000, k * 50'000});
    (void)timeline.Advance(now);
  }
  // The link stalls for 2 s; then 40 batches arrive at once (TCP delivers the backlog).
  const int64_t backlog_arrival = now + 2'000'000;
  int64_t newest = 0;
  for (int64_t k = 0; k < 40; ++k) {
    newest = timeline.OnBatch({backlog_arrival, 3'000'000 + k * 50'000});
  }
  EXPECT_GE(timeline.resets(), 1u);
  // All of it is stamped within about one delay of its arrival: playback reaches the newest
  // state a couple of delays later, not 2 s later.
  EXPECT_LE(newest - backlog_arrival, 2 * timeline.target_delay_us());
}

TEST(PlaybackTimelineTest, DelayChangesByRatesAndJumpsOnlyForward) {
  InterpolationOptions o;
  o.fixed_delay_us = 100'000;
  PlaybackTimeline timeline(o);
  int64_t now = 0;
  (void)timeline.Advance(now);
  // A longer delay: playback slows by 4 % until it is reached (never moves back).
  o.fixed_delay_us = 140'000;
  timeline.set_options(o);
  int64_t previous = timeline.playback_time_us();
  for (int i = 0; i < 60; ++i) {
    now += kFrameUs;
    const int64_t playback = timeline.Advance(now);
    EXPECT_GE(playback - previous, kFrameUs * 96 / 100 - 1);
    EXPECT_LE(playback - previous, kFrameUs);
    previous = playback;
  }
  // 4 % of a frame per frame, until within 1/40 of the target (no oscillation around it).
  EXPECT_NEAR(static_cast<double>(timeline.delay_us()), 140'000.0, 140'000.0 / 40 + 1);
  const int64_t settled = timeline.delay_us();
  for (int i = 0; i < 120; ++i) (void)timeline.Advance(now += kFrameUs);
  EXPECT_EQ(timeline.delay_us(), settled);
  // A shorter delay within one buffer: playback speeds up by 2 %.
  o.fixed_delay_us = 100'000;
  timeline.set_options(o);
  previous = timeline.playback_time_us();
  (void)timeline.Advance(now += kFrameUs);
  EXPECT_EQ(timeline.playback_time_us() - previous, std::llround(kFrameUs * 1.02));
  // More than one buffer behind: one forward jump.
  o.fixed_delay_us = 20'000;
  timeline.set_options(o);
  const uint64_t resets = timeline.resets();
  (void)timeline.Advance(now += kFrameUs);
  EXPECT_EQ(timeline.resets(), resets + 1);
  EXPECT_EQ(timeline.delay_us(), 20'000);
}

TEST(PlaybackTimelineTest, TimesGoingBackwardsAreCountedAndHeld) {
  PlaybackTimeline timeline;
  (void)timeline.OnBatch({1'000'000, kNoSenderTime});
  const int64_t stamp = timeline.OnBatch({900'000, kNoSenderTime});
  EXPECT_GT(stamp, 1'000'000 - 1);
  EXPECT_EQ(timeline.time_regressions(), 1u);
  const int64_t playback = timeline.Advance(2'000'000);
  EXPECT_EQ(timeline.Advance(1'500'000), playback);
  EXPECT_EQ(timeline.time_regressions(), 2u);
  EXPECT_GT(timeline.Advance(2'000'000 + kFrameUs), playback);
}

}  // namespace
}  // namespace scenecrdt::runtime
