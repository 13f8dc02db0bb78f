// SPDX-License-Identifier: Apache-2.0
// Owns the Prometheus rendering of Metrics.
#include "scenecrdt/server/observability/metrics.h"

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

constexpr const char* kJoinStateNames[kJoinStateCount] = {"snapshot", "resume", "resume_stale"};
constexpr const char* kEvidenceNames[kReconnectEvidenceCount] = {"resume", "recent_drop"};

}  // namespace

const char* SessionKindName(SessionKind kind) {
  switch (kind) {
    case SessionKind::kTcp:
      return "tcp";
    case SessionKind::kWebSocket:
      return "websocket";
    case SessionKind::kDcl:
      return "dcl";
    default:
      return "unknown";
  }
}

const char* CloseReasonName(CloseReason reason) {
  switch (reason) {
    case CloseReason::kNone:
      return "none";
    case CloseReason::kClientClosed:
      return "client_closed";
    case CloseReason::kPeerGone:
      return "peer_gone";
    case CloseReason::kWriteFailed:
      return "write_failed";
    case CloseReason::kIdleTimeout:
      return "idle_timeout";
    case CloseReason::kHandshakeTimeout:
      return "handshake_timeout";
    case CloseReason::kSlowConsumer:
      return "slow_consumer";
    case CloseReason::kUnreadControl:
      return "unread_control";
    case CloseReason::kProtocolViolation:
      return "protocol_violation";
    case CloseReason::kMalformedDcl:
      return "malformed_dcl";
    case CloseReason::kUnauthorized:
      return "unauthorized";
    case CloseReason::kSceneFull:
      return "scene_full";
    case CloseReason::kShuttingDown:
      return "shutting_down";
    case CloseReason::kStorageUnavailable:
      return "storage_unavailable";
    default:
      return "unknown";
  }
}

bool IsDrop(CloseReason reason) {
  switch (reason) {
    case CloseReason::kIdleTimeout:
    case CloseReason::kHandshakeTimeout:
    case CloseReason::kSlowConsumer:
    case CloseReason::kUnreadControl:
    case CloseReason::kProtocolViolation:
    case CloseReason::kMalformedDcl:
    case CloseReason::kUnauthorized:
    case CloseReason::kSceneFull:
    case CloseReason::kStorageUnavailable:
      return true;
    default:
      return false;
  }
}

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
  counter("scenecrdt_compression_plain_bytes_total",
          "Frame bytes sent compressed on framed TCP (zstd stream or frames), before compression.",
          Load(compression_plain_bytes));
  counter("scenecrdt_compression_wire_bytes_total", "Bytes those frames put on the wire.",
          Load(compression_wire_bytes));
  counter("scenecrdt_compression_shared_frames_total",
          "Scene frames compressed once for all of a scene's zstd-frames members.",
          Load(compression_shared_frames));
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
  gauge("scenecrdt_storage_unavailable", "1 while group commits fail (disk full, I/O error).",
        Load(storage_unavailable));
  counter("scenecrdt_storage_episodes_total", "Storage failure episodes.", Load(storage_episodes));
  counter("scenecrdt_scene_loads_total", "Stored scenes loaded into memory.", Load(scene_loads));
  counter("scenecrdt_scene_evictions_total", "Idle scenes dropped from memory.",
          Load(scene_evictions));
  counter("scenecrdt_scene_cap_refusals_total", "Joins refused at --max-scenes-in-memory.",
          Load(scene_cap_refusals));
  counter("scenecrdt_scene_create_refusals_total",
          "Joins of a scene that does not exist by a read-only token.",
          Load(scene_create_refusals));
  counter("scenecrdt_snapshot_shares_total",
          "Joins served state frames built for an earlier joiner at the same sequence.",
          Load(snapshot_shares));
  counter("scenecrdt_http_host_refused_total",
          "HTTP requests refused (403) for a Host header not allowed (--allowed-hosts).",
          Load(http_host_refused));
  counter("scenecrdt_http_reserve_refused_total",
          "Connections of the HTTP reserve refused (503) for a path other than /healthz and "
          "/metrics.",
          Load(http_reserve_refused));
  counter("scenecrdt_http_reserve_evictions_total",
          "Reserve connections closed before their request was read, for a newer one.",
          Load(http_reserve_evictions));
  counter("scenecrdt_scene_listings_total", "Scene listings served (/ and /api/scenes).",
          Load(scene_listings));
  counter("scenecrdt_scene_listings_limited_total",
          "Scene listings refused (429) by the per-address rate.", Load(scene_listings_limited));
  counter("scenecrdt_scene_list_failures_total",
          "Reads of the stored scene names (SQLite or Redis) that failed.",
          Load(scene_list_failures));
  counter("scenecrdt_accept_errors_total",
          "Failed accepts (out of file descriptors ...); each pauses the accept loop.",
          Load(accept_errors));
  counter("scenecrdt_tls_handshake_failures_total",
          "TLS handshakes that failed (plain clients on a TLS port, untrusted certificates).",
          Load(tls_handshake_failures));
  counter("scenecrdt_tls_reloads_total", "Certificate reloads (SIGHUP) that succeeded.",
          Load(tls_reloads));
  counter("scenecrdt_auth_reloads_total",
          "Reloads (SIGHUP) of the --auth table and --jwt-* keys that succeeded.",
          Load(auth_reloads));
  counter("scenecrdt_auth_reload_failures_total",
          "Reloads (SIGHUP) of the credentials that failed; the previous ones stay in use.",
          Load(auth_reload_failures));
  gauge("scenecrdt_tls_certificate_not_after_seconds",
        "The served certificate's notAfter, Unix seconds (0 without TLS).",
        Load(tls_certificate_not_after));
  counter("scenecrdt_tls_certificate_invalid_total",
          "Certificates expired or not yet valid: served at start (warned), refused on reload.",
          Load(tls_certificate_invalid));
  Line(out, "scenecrdt_connections_refused_total", "counter",
       "Connections answered and closed at once, by the cap they hit.");
  Value(out, "scenecrdt_connections_refused_total", Load(connections_refused_total),
        "reason=\"max_connections\"");
  Value(out, "scenecrdt_connections_refused_total", Load(connections_refused_per_ip),
        "reason=\"max_connections_per_ip\"");
  counter("scenecrdt_dcl_chunks_in_total", "Raw-DCL WebSocket messages received (/dcl/).",
          Load(dcl_chunks_in));
  counter("scenecrdt_dcl_chunks_out_total", "Raw-DCL WebSocket messages sent (/dcl/).",
          Load(dcl_chunks_out));
  counter("scenecrdt_dcl_throttles_total",
          "Raw-DCL reads paused by the message rate limit (nothing dropped).", Load(dcl_throttles));
  counter("scenecrdt_resyncs_total",
          "Slow consumers resynced from the store's state (previous delivery took longer than "
          "slow_consumer_ms/5).",
          Load(resyncs));
  counter("scenecrdt_resync_bytes_total", "Bytes of the resync frames.", Load(resync_bytes));
  counter("scenecrdt_log_lines_suppressed_total",
          "Repeated refusal log lines of one session that were not written.",
          Load(log_lines_suppressed));

  Line(out, "scenecrdt_sessions_by_kind", "gauge", "Open sessions by kind.");
  for (std::size_t k = 0; k < kSessionKindCount; ++k) {
    Value(out, "scenecrdt_sessions_by_kind", Load(sessions_by_kind_[k]),
          std::string("kind=\"") + SessionKindName(static_cast<SessionKind>(k)) + '"');
  }
  Line(out, "scenecrdt_joins_total", "counter",
       "Scene joins by session kind and how they were served (snapshot, resume delta, stale "
       "resume answered with a snapshot).");
  for (std::size_t k = 0; k < kSessionKindCount; ++k) {
    for (std::size_t j = 0; j < kJoinStateCount; ++j) {
      Value(out, "scenecrdt_joins_total", Load(joins_[k][j]),
            std::string("kind=\"") + SessionKindName(static_cast<SessionKind>(k)) + "\",state=\"" +
                kJoinStateNames[j] + '"');
    }
  }
  Line(out, "scenecrdt_reconnects_total", "counter",
       "Joins that look like reconnects, by evidence (resume position; same address and kind "
       "back within 30 s of an abnormal end).");
  for (std::size_t e = 0; e < kReconnectEvidenceCount; ++e) {
    Value(out, "scenecrdt_reconnects_total", Load(reconnects_[e]),
          std::string("evidence=\"") + kEvidenceNames[e] + '"');
  }
  Line(out, "scenecrdt_session_closes_total", "counter", "Ended sessions by reason.");
  for (std::size_t r = 1; r < kCloseReasonCount; ++r) {
    Value(out, "scenecrdt_session_closes_total", Load(closes_[r]),
          std::string("reason=\"") + CloseReasonName(static_cast<CloseReason>(r)) + '"');
  }
  Line(out, "scenecrdt_drops_total", "counter", "Sessions the server cut, by reason.");
  for (std::size_t r = 1; r < kCloseReasonCount; ++r) {
    if (!IsDrop(static_cast<CloseReason>(r))) continue;
    Value(out, "scenecrdt_drops_total", Load(drops_[r]),
          std::string("reason=\"") + CloseReasonName(static_cast<CloseReason>(r)) + '"');
  }
  Line(out, "scenecrdt_dcl_dropped_messages_total", "counter",
       "Raw-DCL messages dropped (the rest of their chunk merged), by reason.");
  for (std::size_t i = 1; i < dcl_dropped_messages_.size(); ++i) {
    const uint64_t v = Load(dcl_dropped_messages_[i]);
    const auto code = static_cast<ErrorCode>(i);
    // Always show the reasons a /dcl/ message can be dropped for; others only when counted.
    const bool listed = code == ErrorCode::kReadOnly || code == ErrorCode::kNonFiniteTransform ||
                        code == ErrorCode::kPayloadTooLarge ||
                        code == ErrorCode::kBadTransformSize ||
                        code == ErrorCode::kReservedEntity || code == ErrorCode::kTooManyEntities ||
                        code == ErrorCode::kTooManyTombstones;
    if (v == 0 && !listed) continue;
    Value(out, "scenecrdt_dcl_dropped_messages_total", v,
          std::string("reason=\"") + ErrorCodeName(code) + '"');
  }

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
  if (render_extra) render_extra(out);
  return out;
}

}  // namespace scenecrdt::server
