// SPDX-License-Identifier: Apache-2.0
// Owns the smoothness scenario of docs/INTERPOLATION.md, shared by interpolation_bench and the
// runtime tests: one entity moving along x at constant speed, sent as DCL Transform PUTs at a
// fixed rate, delivered in order after a latency with uniform jitter (seeded, optionally with
// lost sends), and drawn by a renderer at 60 Hz from a Runtime, with or without interpolation.
// Then the figures: steps between frames, repeated frames, and the error against the true
// line at the best constant delay. Simulated clock only: nothing sleeps or reads a clock.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::bench {

inline constexpr protocol::EntityId kMoverEntity = 512;

struct MoverScenario {
  double speed_m_per_s = 5.0;
  int64_t send_interval_us = 50'000;  // 20 Hz
  int64_t latency_us = 40'000;
  int64_t jitter_us = 15'000;  // each delivery is late by latency + U(-jitter, +jitter)
  double frame_rate_hz = 60.0;
  int64_t duration_us = 20'000'000;
  int64_t warmup_us = 2'000'000;  // frames before this are not measured
  // Sends with index in [lost_first, lost_first + lost_count) never arrive.
  int64_t lost_first = -1;
  int64_t lost_count = 0;
  bool sender_time = false;       // batches carry the send time (on a clock 1 h ahead)
  bool receive_at_frame = false;  // receive time = the frame that reads the bytes
  bool interpolate = true;
  runtime::InterpolationOptions options;
  uint64_t seed = 1;
};

struct MoverFrame {
  int64_t render_time_us = 0;
  bool present = false;
  float x = 0.0f;
};

// SplitMix64: a tiny deterministic generator (same numbers on every platform).
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct MoverDelivery {
  int64_t send_time_us = 0;
  int64_t arrival_us = 0;
  std::vector<uint8_t> dcl;
};

// The sender's PUTs with their arrival times (in order, as over TCP or a WebSocket).
inline std::vector<MoverDelivery> MoverDeliveries(const MoverScenario& s) {
  std::vector<MoverDelivery> out;
  uint64_t rng = s.seed;
  int64_t last_arrival_us = std::numeric_limits<int64_t>::min();
  for (int64_t k = 0; k * s.send_interval_us <= s.duration_us; ++k) {
    const int64_t send_us = k * s.send_interval_us;
    const double u = static_cast<double>(SplitMix64(rng) >> 11) * 0x1.0p-53;  // [0, 1)
    const int64_t jitter_us = std::llround((2.0 * u - 1.0) * static_cast<double>(s.jitter_us));
    if (k >= s.lost_first && k < s.lost_first + s.lost_count) continue;
    MoverDelivery d;
    d.send_time_us = send_us;
    d.arrival_us = std::max(last_arrival_us, send_us + s.latency_us + jitter_us);
    last_arrival_us = d.arrival_us;
    protocol::Transform t;
    t.position.x = static_cast<float>(s.speed_m_per_s * static_cast<double>(send_us) * 1e-6);
    protocol::AppendTransformPut(kMoverEntity, static_cast<uint32_t>(k + 1), t, d.dcl);
    out.push_back(std::move(d));
  }
  return out;
}

inline int64_t FrameTimeUs(const MoverScenario& s, int64_t frame) {
  return std::llround(static_cast<double>(frame) * 1e6 / s.frame_rate_hz);
}

// Runs the renderer over the whole scenario; `rt` is used as given (interpolation is enabled
// here when s.interpolate). One frame per render tick from the first one.
inline std::vector<MoverFrame> RunMover(const MoverScenario& s, runtime::Runtime& rt) {
  constexpr int64_t kSenderClockOffsetUs = 3'600'000'000;
  if (s.interpolate) (void)rt.EnableInterpolation(s.options);
  const std::vector<MoverDelivery> deliveries = MoverDeliveries(s);
  std::vector<MoverFrame> frames;
  std::size_t next = 0;
  for (int64_t f = 1; FrameTimeUs(s, f) <= s.duration_us; ++f) {
    const int64_t now_us = FrameTimeUs(s, f);
    for (; next < deliveries.size() && deliveries[next].arrival_us <= now_us; ++next) {
      const MoverDelivery& d = deliveries[next];
      runtime::BatchTime time;
      time.receive_time_us = s.receive_at_frame ? now_us : d.arrival_us;
      if (s.sender_time) time.sender_time_us = d.send_time_us + kSenderClockOffsetUs;
      (void)rt.ApplyCrdt(d.dcl, time);
    }
    (void)rt.UpdateInterpolated(now_us);
    MoverFrame frame;
    frame.render_time_us = now_us;
    if (const std::optional<uint32_t> index = rt.InterpolatedIndexOf(kMoverEntity)) {
      frame.present = true;
      frame.x = rt.interpolated_world_matrices()[*index][3][0];
    }
    frames.push_back(frame);
  }
  return frames;
}

inline std::vector<MoverFrame> RunMover(const MoverScenario& s) {
  runtime::Runtime rt;
  return RunMover(s, rt);
}

struct Smoothness {
  int frames = 0;           // measured frames
  int repeated_frames = 0;  // the entity did not move since the previous frame
  int backward_frames = 0;  // it moved backwards
  double mean_step_m = 0.0;
  double max_step_m = 0.0;
  double max_over_mean = 0.0;
  double delay_ms = 0.0;     // best constant delay: mean of (render time - shown send time)
  double error_p50_m = 0.0;  // |shown x - true x at (render time - delay)|
  double error_p99_m = 0.0;
  double error_max_m = 0.0;
};

inline Smoothness MeasureMover(const MoverScenario& s, std::span<const MoverFrame> frames) {
  Smoothness m;
  std::vector<const MoverFrame*> measured;
  for (const MoverFrame& f : frames) {
    if (f.present && f.render_time_us >= s.warmup_us) measured.push_back(&f);
  }
  if (measured.size() < 2) return m;
  m.frames = static_cast<int>(measured.size());
  double step_sum = 0.0;
  double delay_sum_us = 0.0;
  std::vector<double> delays_us;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const double x = measured[i]->x;
    const double shown_us = x / s.speed_m_per_s * 1e6;
    delays_us.push_back(static_cast<double>(measured[i]->render_time_us) - shown_us);
    delay_sum_us += delays_us.back();
    if (i == 0) continue;
    const double step = x - static_cast<double>(measured[i - 1]->x);
    if (step == 0.0) ++m.repeated_frames;
    if (step < 0.0) ++m.backward_frames;
    step_sum += std::fabs(step);
    m.max_step_m = std::max(m.max_step_m, std::fabs(step));
  }
  m.mean_step_m = step_sum / static_cast<double>(measured.size() - 1);
  m.max_over_mean = m.mean_step_m > 0.0 ? m.max_step_m / m.mean_step_m : 0.0;
  const double delay_us = delay_sum_us / static_cast<double>(delays_us.size());
  m.delay_ms = delay_us / 1000.0;
  std::vector<double> errors;
  for (double d : delays_us) errors.push_back(std::fabs(d - delay_us) * s.speed_m_per_s * 1e-6);
  std::sort(errors.begin(), errors.end());
  auto percentile = [&](double q) {
    const std::size_t i = std::min(
        errors.size() - 1, static_cast<std::size_t>(q * static_cast<double>(errors.size())));
    return errors[i];
  };
  m.error_p50_m = percentile(0.50);
  m.error_p99_m = percentile(0.99);
  m.error_max_m = errors.back();
  return m;
}

}  // namespace scenecrdt::bench
