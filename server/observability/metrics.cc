// SPDX-License-Identifier: Apache-2.0
// Owns the families of Metrics for the Prometheus page (written by PrometheusText).
#include "scenecrdt/server/observability/metrics.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "scenecrdt/server/observability/process_stats.h"
#include "scenecrdt/server/observability/prometheus_text.h"

namespace scenecrdt::server {

namespace {

double D(uint64_t v) { return static_cast<double>(v); }
double D(int64_t v) { return static_cast<double>(v); }

uint64_t Load(const Metrics::Counter& c) { return c.load(std::memory_order_relaxed); }
int64_t Load(const Metrics::Gauge& g) { return g.load(std::memory_order_relaxed); }

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
    case CloseReason::kSceneDeleted:
      return "scene_deleted";
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

double Metrics::WallSecondsNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

const char* Metrics::BuildVersion() { return SCENECRDT_BUILD_VERSION; }
const char* Metrics::BuildCommit() { return SCENECRDT_BUILD_COMMIT; }

void LatencyHistogram::Observe(double seconds) {
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  micros_.fetch_add(static_cast<uint64_t>(std::max(seconds, 0.0) * 1e6), std::memory_order_relaxed);
}

void LatencyHistogram::Add(PrometheusText& out, const char* name, const char* help) const {
  std::array<uint64_t, kBounds.size() + 1> counts{};
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = Load(counts_[i]);
  out.Histogram(name, help, kBounds, counts, static_cast<double>(Load(micros_)) / 1e6);
}

void CountHistogram::Observe(uint64_t n) {
  std::size_t i = 0;
  while (i < kBounds.size() && static_cast<double>(n) > kBounds[i]) ++i;
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(n, std::memory_order_relaxed);
}

void CountHistogram::Add(PrometheusText& out, const char* name, const char* help) const {
  std::array<uint64_t, kBounds.size() + 1> counts{};
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = Load(counts_[i]);
  out.Histogram(name, help, kBounds, counts, static_cast<double>(Load(sum_)));
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
  PrometheusText out;
  using Type = PrometheusText::Type;
  const auto gauge = [&](const char* name, const char* help, int64_t v) {
    out.Gauge(name, help, static_cast<double>(v));
  };
  const auto counter = [&](const char* name, const char* help, uint64_t v) {
    out.Counter(name, help, static_cast<double>(v));
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
  counter("scenecrdt_config_reloads_total",
          "Re-reads (SIGHUP) of the --config file that succeeded (its reloadable keys applied).",
          Load(config_reloads));
  counter("scenecrdt_config_reload_failures_total",
          "Re-reads (SIGHUP) of the --config file that failed; nothing of it was applied.",
          Load(config_reload_failures));
  counter("scenecrdt_admin_requests_total",
          "Admin API requests (/admin/) that carried the admin token.", Load(admin_requests));
  counter("scenecrdt_admin_refused_total",
          "Admin API requests refused (401) for a missing or wrong token.", Load(admin_refused));
  counter("scenecrdt_admin_scene_deletes_total",
          "Scenes deleted through the admin API (DELETE /admin/scenes/<name>).",
          Load(admin_scene_deletes));
  counter("scenecrdt_config_restart_needed_total",
          "Keys changed in the --config file that SIGHUP cannot apply (a restart applies them).",
          Load(config_restart_needed));
  gauge("scenecrdt_tls_certificate_not_after_seconds",
        "The served certificate's notAfter, Unix seconds (0 without TLS).",
        Load(tls_certificate_not_after));
  counter("scenecrdt_tls_certificate_invalid_total",
          "Certificates expired or not yet valid: served at start (warned), refused on reload.",
          Load(tls_certificate_invalid));
  out.Begin("scenecrdt_connections_refused_total",
            "Connections answered and closed at once, by the cap they hit.", Type::kCounter);
  out.Sample(D(Load(connections_refused_total)), {{"reason", "max_connections"}});
  out.Sample(D(Load(connections_refused_per_ip)), {{"reason", "max_connections_per_ip"}});
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
  counter("scenecrdt_authority_corrections_total",
          "Corrections merged for writes the scene's authority refused (docs/AUTHORITY.md).",
          Load(authority_corrections));
  counter("scenecrdt_authority_uncorrectable_total",
          "Refused writes no correction can undo in the writer's replica (APPEND_VALUE, "
          "DELETE_ENTITY; docs/AUTHORITY.md).",
          Load(authority_uncorrectable));
  counter("scenecrdt_authority_cluster_lost_claims_total",
          "Writes of cluster claims the stream order gave to another principal, refused and "
          "corrected (docs/AUTHORITY.md \"Cluster\").",
          Load(authority_cluster_lost_claims));
  counter("scenecrdt_authority_counter_corrections_total",
          "Writes this node admitted, re-stamped above another node's correction that beat them "
          "(docs/AUTHORITY.md \"Cluster\").",
          Load(authority_counter_corrections));
  counter("scenecrdt_authority_bad_correction_marks_total",
          "Cluster entries whose correction marks (field k) did not parse; merged without them.",
          Load(authority_bad_correction_marks));
  counter("scenecrdt_resync_bytes_total", "Bytes of the resync frames.", Load(resync_bytes));
  counter("scenecrdt_log_lines_suppressed_total",
          "Repeated refusal log lines of one session that were not written.",
          Load(log_lines_suppressed));

  out.Begin("scenecrdt_sessions_by_kind", "Open sessions by kind.", Type::kGauge);
  for (std::size_t k = 0; k < kSessionKindCount; ++k) {
    out.Sample(D(Load(sessions_by_kind_[k])),
               {{"kind", SessionKindName(static_cast<SessionKind>(k))}});
  }
  out.Begin("scenecrdt_joins_total",
            "Scene joins by session kind and how they were served (snapshot, resume delta, stale "
            "resume answered with a snapshot).",
            Type::kCounter);
  for (std::size_t k = 0; k < kSessionKindCount; ++k) {
    for (std::size_t j = 0; j < kJoinStateCount; ++j) {
      out.Sample(D(Load(joins_[k][j])), {{"kind", SessionKindName(static_cast<SessionKind>(k))},
                                         {"state", kJoinStateNames[j]}});
    }
  }
  out.Begin("scenecrdt_reconnects_total",
            "Joins that look like reconnects, by evidence (resume position; same address and kind "
            "back within 30 s of an abnormal end).",
            Type::kCounter);
  for (std::size_t e = 0; e < kReconnectEvidenceCount; ++e) {
    out.Sample(D(Load(reconnects_[e])), {{"evidence", kEvidenceNames[e]}});
  }
  out.Begin("scenecrdt_session_closes_total", "Ended sessions by reason.", Type::kCounter);
  for (std::size_t r = 1; r < kCloseReasonCount; ++r) {
    out.Sample(D(Load(closes_[r])), {{"reason", CloseReasonName(static_cast<CloseReason>(r))}});
  }
  out.Begin("scenecrdt_drops_total", "Sessions the server cut, by reason.", Type::kCounter);
  for (std::size_t r = 1; r < kCloseReasonCount; ++r) {
    if (!IsDrop(static_cast<CloseReason>(r))) continue;
    out.Sample(D(Load(drops_[r])), {{"reason", CloseReasonName(static_cast<CloseReason>(r))}});
  }
  out.Begin("scenecrdt_dcl_dropped_messages_total",
            "Raw-DCL messages dropped (the rest of their chunk merged), by reason.",
            Type::kCounter);
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
    out.Sample(D(v), {{"reason", ErrorCodeName(code)}});
  }

  out.Begin("scenecrdt_merges_total", "CRDT merges by outcome.", Type::kCounter);
  for (int i = 1; i < runtime::kMergeOutcomeCount; ++i) {
    out.Sample(D(Load(merges_[static_cast<std::size_t>(i)])),
               {{"outcome", runtime::MergeOutcomeName(static_cast<runtime::MergeOutcome>(i))}});
  }
  out.Begin("scenecrdt_refusals_total", "Refusals (Error frames) by reason.", Type::kCounter);
  for (std::size_t i = 1; i < refusals_.size(); ++i) {
    const uint64_t v = Load(refusals_[i]);
    const char* name = ErrorCodeName(static_cast<ErrorCode>(i));
    if (v == 0 && std::string_view(name) == "unknown") continue;
    out.Sample(D(v), {{"reason", name}});
  }
  std::array<uint64_t, kCommitBuckets.size() + 1> commit_counts{};
  for (std::size_t i = 0; i < commit_counts.size(); ++i)
    commit_counts[i] = Load(commit_buckets_[i]);
  out.Histogram("scenecrdt_commit_seconds",
                "Group commit latency (persistence thread, off the fan-out path).", kCommitBuckets,
                commit_counts, static_cast<double>(Load(commit_micros_)) / 1e6);
  delivery.Add(out, "scenecrdt_delivery_seconds",
               "From the first change merged since a scene's last flush to its frames handed to "
               "every ready member (batch window, strand wait and fan-out).");
  fanout.Add(out, "scenecrdt_fanout_seconds",
             "One scene flush's fan-out: frames built once and handed to every ready member.");
  interest_view_entities.Add(out, "scenecrdt_interest_view_entities",
                             "Entities with a Transform in an interest member's view, after each "
                             "of its view updates (docs/INTEREST.md).");
  counter("scenecrdt_interest_enters_total",
          "Entities that entered an interest member's view (sent whole).", Load(interest_enters));
  counter("scenecrdt_interest_leaves_total",
          "Entities that left an interest member's view (named in OutOfView).",
          Load(interest_leaves));
  counter("scenecrdt_interest_notices_total", "OutOfView frames sent.", Load(interest_notices));
  counter("scenecrdt_interest_snapshots_total",
          "Joins and resumes of interest members (each gets a snapshot of its view).",
          Load(interest_snapshots));
  counter("scenecrdt_interest_deferred_total",
          "Entities whose changes an interest member's byte budget deferred (coalesced, sent "
          "later), counted once per delivery that deferred them.",
          Load(interest_deferred));
  counter("scenecrdt_interest_catchups_gathered_total",
          "Deliveries of interest members that were busy during the last fan-outs, gathered "
          "from the fan-outs' kept batches (docs/INTEREST.md).",
          Load(interest_catchups_gathered));
  counter("scenecrdt_interest_catchups_rebuilt_total",
          "Deliveries of interest members rebuilt from the store's changes since their cursor "
          "(behind further than the kept batches, a byte budget, or a first delivery).",
          Load(interest_catchups_rebuilt));
  interest_index.Add(out, "scenecrdt_interest_index_seconds",
                     "A scene's interest index update per flush: world positions of the changed "
                     "entities and their grid cells.");
  gauge("scenecrdt_scenes_max", "Scenes that may be held in memory (--max-scenes-in-memory).",
        Load(scenes_cap));
  gauge("scenecrdt_connections_max", "Open connections allowed (--max-connections, resolved).",
        Load(connections_cap));
  // Build and process (docs/SERVER.md "Process and build metrics").
  out.Begin("scenecrdt_build_info",
            "Always 1: the version and git commit of this build, as labels.", Type::kGauge);
  out.Sample(1, {{"version", BuildVersion()}, {"commit", BuildCommit()}});
  out.Gauge("scenecrdt_start_time_seconds", "When this server started, Unix seconds.",
            start_time_seconds);
  const ProcessStats p = ReadProcessStats();
  if (p.cpu_seconds) {
    out.Counter("process_cpu_seconds_total", "User and system CPU time, seconds.", *p.cpu_seconds);
  }
  if (p.resident_bytes) {
    gauge("process_resident_memory_bytes", "Resident memory size, bytes.", *p.resident_bytes);
  }
  if (p.virtual_bytes) {
    gauge("process_virtual_memory_bytes", "Virtual memory size, bytes.", *p.virtual_bytes);
  }
  if (p.open_fds) gauge("process_open_fds", "Open file descriptors.", *p.open_fds);
  if (p.max_fds) gauge("process_max_fds", "The open file descriptor limit (soft).", *p.max_fds);
  if (p.start_time_seconds) {
    out.Gauge("process_start_time_seconds",
              "When the process started, Unix seconds (boot time + start ticks).",
              *p.start_time_seconds);
  }
  if (render_extra) render_extra(out);
  return out.Text();
}

}  // namespace scenecrdt::server
