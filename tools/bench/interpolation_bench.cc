// SPDX-License-Identifier: Apache-2.0
// Prints the smoothness figures of docs/INTERPOLATION.md: a mover at 5 m/s sent at 20 or 25 Hz
// over a link with 40 ms latency and +-15 ms jitter, drawn at 60 Hz, with the exact replica
// (no buffer) and with the interpolation buffer, in the same run. Plain main (a simulation,
// not a timing): `interpolation_bench [duration_s] [seed]`. `interpolation_bench --cost N`
// times instead one frame of N entities all moving at 20 Hz, drawn at 60 Hz, with Update()
// and with UpdateInterpolated() (thread CPU time; build with the release preset).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "tools/bench/interpolation_scenario.h"

namespace {

using scenecrdt::bench::MeasureMover;
using scenecrdt::bench::MoverScenario;
using scenecrdt::bench::RunMover;
using scenecrdt::bench::Smoothness;

void PrintRow(const char* name, const char* mode, const MoverScenario& s) {
  const Smoothness m = MeasureMover(s, RunMover(s));
  std::printf("%-28s %-8s %6d %8d %8.1f %8.1f %7.2f %8.1f %8.1f %8.1f %8.1f\n", name, mode,
              m.frames, m.repeated_frames, m.mean_step_m * 1000.0, m.max_step_m * 1000.0,
              m.max_over_mean, m.delay_ms, m.error_p50_m * 1000.0, m.error_p99_m * 1000.0,
              m.error_max_m * 1000.0);
}

void Compare(const char* name, MoverScenario s) {
  s.interpolate = false;
  PrintRow(name, "exact", s);
  s.interpolate = true;
  PrintRow(name, "interp", s);
}

// Thread CPU time in microseconds (the machine may be shared: wall time would count others).
double CpuNowUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

// Mean CPU microseconds per frame (merging the batches that arrived, then the update) over
// 10 s of simulated time: 600 frames, 200 batches of N PUTs, built before the clock starts.
double CostPerFrameUs(uint32_t entities, bool interpolate) {
  using scenecrdt::protocol::Transform;
  std::vector<std::vector<uint8_t>> batches;
  for (uint32_t tick = 1; tick <= 201; ++tick) {
    std::vector<uint8_t>& batch = batches.emplace_back();
    for (uint32_t i = 0; i < entities; ++i) {
      Transform t;
      t.position.x = 0.25f * static_cast<float>(tick) + static_cast<float>(i % 100);
      t.parent = i % 10 == 0 ? 0 : 512 + i - i % 10;  // groups of ten under a leader
      scenecrdt::protocol::AppendTransformPut(512 + i, tick, t, batch);
    }
  }
  scenecrdt::runtime::Runtime rt;
  if (interpolate) (void)rt.EnableInterpolation();
  double total_us = 0.0;
  int frames = 0;
  std::size_t next = 0;
  for (int64_t now = 16'667; now <= 10'000'000; now += 16'667) {
    const double start_us = CpuNowUs();
    for (; next < batches.size() && static_cast<int64_t>(next) * 50'000 <= now; ++next) {
      (void)rt.ApplyCrdt(batches[next],
                         scenecrdt::runtime::BatchTime{static_cast<int64_t>(next) * 50'000});
    }
    (void)rt.UpdateInterpolated(now);
    total_us += CpuNowUs() - start_us;
    ++frames;
  }
  return total_us / frames;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--cost") == 0) {
    const uint32_t n = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
    const double exact = CostPerFrameUs(n, false);
    const double interp = CostPerFrameUs(n, true);
    std::printf(
        "%u entities moving at 20 Hz, 60 Hz frames (apply + update): exact %.1f us/frame, "
        "interpolated %.1f us/frame (x%.2f)\n",
        n, exact, interp, interp / exact);
    return 0;
  }
  MoverScenario base;
  if (argc > 1) base.duration_us = static_cast<int64_t>(std::atof(argv[1]) * 1e6);
  if (argc > 2) base.seed = std::strtoull(argv[2], nullptr, 10);
  std::printf(
      "mover %.1f m/s, latency %.0f ms, jitter +-%.0f ms, render %.0f Hz, %.0f s "
      "(first %.0f s not measured), seed %llu\n",
      base.speed_m_per_s, static_cast<double>(base.latency_us) / 1000.0,
      static_cast<double>(base.jitter_us) / 1000.0, base.frame_rate_hz,
      static_cast<double>(base.duration_us) / 1e6, static_cast<double>(base.warmup_us) / 1e6,
      static_cast<unsigned long long>(base.seed));
  std::printf("%-28s %-8s %6s %8s %8s %8s %7s %8s %8s %8s %8s\n", "scenario", "mode", "frames",
              "repeated", "mean_mm", "max_mm", "max/mn", "delay_ms", "err_p50", "err_p99",
              "err_max");
  Compare("20Hz receive times", base);
  MoverScenario sender = base;
  sender.sender_time = true;
  Compare("20Hz sender times", sender);
  MoverScenario polled = base;
  polled.receive_at_frame = true;
  Compare("20Hz received at frame", polled);
  MoverScenario hz25 = base;
  hz25.send_interval_us = 40'000;
  Compare("25Hz receive times", hz25);
  MoverScenario lost = base;
  lost.lost_first = 100;  // 3 sends lost at t = 5 s
  lost.lost_count = 3;
  Compare("20Hz, 3 sends lost", lost);
  std::printf("errors in mm against the true line at the best constant delay\n");
  return 0;
}
