// SPDX-License-Identifier: Apache-2.0
// Prints the smoothness figures of docs/INTERPOLATION.md: a mover at 5 m/s sent at 20 or 25 Hz
// over a link with 40 ms latency and +-15 ms jitter, drawn at 60 Hz, with the exact replica
// (no buffer) and with the interpolation buffer, in the same run. Plain main (a simulation,
// not a timing): `interpolation_bench [duration_s] [seed]`.
#include <cstdio>
#include <cstdlib>

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

}  // namespace

int main(int argc, char** argv) {
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
