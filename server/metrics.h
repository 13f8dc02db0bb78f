// SPDX-License-Identifier: Apache-2.0
// Owns Metrics: the server's counters and gauges (relaxed atomics, written from any strand or
// the persistence thread) and their Prometheus text rendering for GET /metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "protocol/result.h"
#include "runtime/crdt_store.h"

namespace scenecrdt::server {

class Metrics {
 public:
  using Counter = std::atomic<uint64_t>;
  using Gauge = std::atomic<int64_t>;

  static void Add(Counter& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
  static void Add(Gauge& g, int64_t n) { g.fetch_add(n, std::memory_order_relaxed); }

  void CountRefusal(ErrorCode code) {
    const auto i = static_cast<std::size_t>(code);
    Add(refusals_[i < refusals_.size() ? i : 0]);
  }
  void CountMerge(runtime::MergeOutcome outcome) {
    Add(merges_[static_cast<std::size_t>(outcome) % merges_.size()]);
  }
  // Commit duration histogram (seconds buckets as Prometheus expects).
  void ObserveCommit(double seconds, uint64_t rows);

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;

  Gauge sessions{0};
  Gauge scenes{0};
  Counter sessions_accepted{0};
  Counter sessions_closed{0};
  Counter frames_in{0};
  Counter frames_out{0};
  Counter messages_in{0};   // DCL messages in accepted Crdt frames
  Counter messages_out{0};  // DCL messages in scene frames handed to sessions
  Counter bytes_in{0};
  Counter bytes_out{0};
  Counter acks_out{0};
  Counter snapshots{0};
  Counter resumes{0};
  Counter state_bytes{0};     // snapshot / resume-delta frame bytes built on join
  Counter state_build_us{0};  // time spent building them (export + encode)
  Counter catchups{0};        // coalesced frames built for sessions that were behind
  Counter shared_frames{0};   // scene frames built once and handed to >= 1 session
  Gauge queued_bytes{0};      // bytes waiting in (or being written from) session queues
  Gauge persistence_queue{0};
  Counter commits{0};
  Counter committed_rows{0};
  Counter commit_failures{0};
  Counter http_requests{0};

 private:
  static constexpr std::array<double, 10> kCommitBuckets = {0.0005, 0.001, 0.002, 0.005, 0.01,
                                                            0.02,   0.05,  0.1,   0.5,   2.0};
  std::array<Counter, 128> refusals_{};
  std::array<Counter, runtime::kMergeOutcomeCount> merges_{};
  std::array<Counter, kCommitBuckets.size() + 1> commit_buckets_{};
  Counter commit_micros_{0};
};

}  // namespace scenecrdt::server
