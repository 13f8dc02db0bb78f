// SPDX-License-Identifier: Apache-2.0
// Owns the Prometheus rendering of Metrics.
#include "server/metrics.h"

#include <cstdio>

namespace scenecrdt::server {

namespace {

uint64_t Load(const Metrics::Counter& c) { return c.load(std::memory_order_relaxed); }
int64_t Load(const Metrics::Gauge& g) { return g.load(std::memory_order_relaxed); }

void Line(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

template <class T>
void Value(std::string& out, const char* name, T value, const std::string& labels = {}) {
  out += name;
  if (!labels.empty()) out += '{' + labels + '}';
  out += ' ' + std::to_string(value) + '\n';
}

}  // namespace

void Metrics::ObserveCommit(double seconds, uint64_t rows) {
  Add(commits);
  Add(committed_rows, rows);
  Add(commit_micros_, static_cast<uint64_t>(seconds * 1e6));
  std::size_t i = 0;
  while (i < kCommitBuckets.size() && seconds > kCommitBuckets[i]) ++i;
  Add(commit_buckets_[i]);
}

std::string Metrics::RenderPrometheus() const {
  std::string out;
  out.reserve(8192);
  const auto gauge = [&](const char* name, const char* help, int64_t v) {
    Line(out, name, "gauge", help);
    Value(out, name, v);
  };
  const auto counter = [&](const char* name, const char* help, uint64_t v) {
    Line(out, name, "counter", help);
    Value(out, name, v);
  };
  gauge("scenecrdt_sessions", "Open sessions (TCP and WebSocket).", Load(sessions));
  gauge("scenecrdt_scenes", "Scenes held in memory.", Load(scenes));
  counter("scenecrdt_sessions_accepted_total", "Sessions accepted.", Load(sessions_accepted));
  counter("scenecrdt_sessions_closed_total", "Sessions closed.", Load(sessions_closed));
  counter("scenecrdt_frames_in_total", "Envelope frames received.", Load(frames_in));
  counter("scenecrdt_frames_out_total", "Envelope frames sent.", Load(frames_out));
  counter("scenecrdt_messages_in_total", "DCL messages in accepted Crdt frames.",
          Load(messages_in));
  counter("scenecrdt_messages_out_total", "DCL messages handed to sessions.", Load(messages_out));
  counter("scenecrdt_bytes_in_total", "Bytes received.", Load(bytes_in));
  counter("scenecrdt_bytes_out_total", "Bytes sent.", Load(bytes_out));
  counter("scenecrdt_acks_total", "Ack frames sent.", Load(acks_out));
  counter("scenecrdt_snapshots_total", "Full snapshots sent on join.", Load(snapshots));
  counter("scenecrdt_resumes_total", "Joins served with a resume delta.", Load(resumes));
  counter("scenecrdt_state_bytes_total", "Bytes of state frames built for joins.",
          Load(state_bytes));
  counter("scenecrdt_state_build_microseconds_total",
          "Time spent building state frames for joins (export + encode).", Load(state_build_us));
  counter("scenecrdt_catchups_total",
          "Coalesced frames built for sessions that fell behind (adaptive batching).",
          Load(catchups));
  counter("scenecrdt_shared_frames_total", "Scene frames encoded once and shared.",
          Load(shared_frames));
  gauge("scenecrdt_queued_bytes", "Bytes queued or in flight to sessions.", Load(queued_bytes));
  gauge("scenecrdt_persistence_queue", "Commit jobs waiting for the persistence thread.",
        Load(persistence_queue));
  counter("scenecrdt_commit_rows_total", "Rows written by group commits.", Load(committed_rows));
  counter("scenecrdt_commit_failures_total", "Failed group commits.", Load(commit_failures));
  counter("scenecrdt_http_requests_total", "HTTP requests served.", Load(http_requests));

  Line(out, "scenecrdt_merges_total", "counter", "CRDT merges by outcome.");
  for (int i = 1; i < runtime::kMergeOutcomeCount; ++i) {
    std::string labels = "outcome=\"";
    labels += runtime::MergeOutcomeName(static_cast<runtime::MergeOutcome>(i));
    labels += '"';
    Value(out, "scenecrdt_merges_total", Load(merges_[static_cast<std::size_t>(i)]), labels);
  }
  Line(out, "scenecrdt_refusals_total", "counter", "Refusals (Error frames) by reason.");
  for (std::size_t i = 1; i < refusals_.size(); ++i) {
    const uint64_t v = Load(refusals_[i]);
    const char* name = ErrorCodeName(static_cast<ErrorCode>(i));
    if (v == 0 && std::string_view(name) == "unknown") continue;
    Value(out, "scenecrdt_refusals_total", v, std::string("reason=\"") + name + '"');
  }
  Line(out, "scenecrdt_commit_seconds", "histogram",
       "Group commit latency (persistence thread, off the fan-out path).");
  uint64_t cumulative = 0;
  for (std::size_t i = 0; i < kCommitBuckets.size(); ++i) {
    cumulative += Load(commit_buckets_[i]);
    char le[32];
    std::snprintf(le, sizeof le, "le=\"%g\"", kCommitBuckets[i]);
    Value(out, "scenecrdt_commit_seconds_bucket", cumulative, le);
  }
  cumulative += Load(commit_buckets_[kCommitBuckets.size()]);
  Value(out, "scenecrdt_commit_seconds_bucket", cumulative, "le=\"+Inf\"");
  char sum[32];
  std::snprintf(sum, sizeof sum, "%.6f", static_cast<double>(Load(commit_micros_)) / 1e6);
  out += "scenecrdt_commit_seconds_sum ";
  out += sum;
  out += '\n';
  Value(out, "scenecrdt_commit_seconds_count", Load(commits));
  return out;
}

}  // namespace scenecrdt::server
