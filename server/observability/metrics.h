// SPDX-License-Identifier: Apache-2.0
// Owns Metrics: the server's counters and gauges (relaxed atomics, written from any strand or
// the persistence thread) and their Prometheus text rendering for GET /metrics; also the
// session kinds and close reasons they are labelled with (docs/SERVER.md lists every series).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "scenecrdt/protocol/result.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::server {

class PrometheusText;

// How a session talks: framed TCP envelope, WebSocket envelope (/scene/<name>), or raw DCL
// chunks over WebSocket (/dcl/<name>, no envelope).
enum class SessionKind : uint8_t { kTcp, kWebSocket, kDcl };
inline constexpr std::size_t kSessionKindCount = 3;
const char* SessionKindName(SessionKind kind);  // "tcp", "websocket", "dcl"

// Why a session ended. The server-initiated ones (IsDrop) are its "drops".
enum class CloseReason : uint8_t {
  kNone,                // not decided yet
  kClientClosed,        // the client said goodbye (Error{fatal} / WebSocket close frame)
  kPeerGone,            // EOF, reset or another read error without a goodbye
  kWriteFailed,         // a write to the peer failed
  kIdleTimeout,         // nothing read for --idle-timeout-ms (WebSocket keep-alive for /dcl/)
  kHandshakeTimeout,    // no Hello in time
  kSlowConsumer,        // a write stayed in flight past --slow-consumer-ms
  kUnreadControl,       // too many unread control frames
  kProtocolViolation,   // a fatal Error (envelope, Hello, frame size ...)
  kMalformedDcl,        // a /dcl/ chunk that does not decode strictly
  kUnauthorized,        // wrong token / scene not granted
  kSceneFull,           // the scene has its maximum number of sessions
  kShuttingDown,        // the server stops
  kStorageUnavailable,  // the scene cannot be read (storage error, corrupted rows)
  kSceneDeleted,        // an operator deleted the scene (DELETE /admin/scenes/<name>)
};
inline constexpr std::size_t kCloseReasonCount = 15;
const char* CloseReasonName(CloseReason reason);
// True for the reasons where the server cut the session (counted in drops_total).
bool IsDrop(CloseReason reason);

// How a join was served.
enum class JoinState : uint8_t {
  kSnapshot,     // no resume position: the full snapshot
  kResume,       // resume position accepted: only what changed since
  kResumeStale,  // a resume position from another incarnation or the future: full snapshot
};
inline constexpr std::size_t kJoinStateCount = 3;

// Why a join looks like a reconnect.
enum class ReconnectEvidence : uint8_t {
  kResume,      // the Hello carried a resume position (the client had a replica)
  kRecentDrop,  // same address and session kind rejoined within 30 s of an abnormal end
};
inline constexpr std::size_t kReconnectEvidenceCount = 2;

// A latency histogram in seconds (relaxed atomics; any thread), for the scene's fan-out.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                     0.01,   0.025,   0.05,   0.1,   0.25,   1.0};
  void Observe(double seconds);
  void Add(PrometheusText& out, const char* name, const char* help) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<uint64_t> micros_{0};
};

// A histogram of counts (entities in one interest member's view), relaxed atomics.
class CountHistogram {
 public:
  static constexpr std::array<double, 10> kBounds = {0,   1,    4,    16,    64,
                                                     256, 1024, 4096, 16384, 65536};
  void Observe(uint64_t n);
  void Add(PrometheusText& out, const char* name, const char* help) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> counts_{};
  std::atomic<uint64_t> sum_{0};
};

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
  void CountJoin(SessionKind kind, JoinState state) {
    Add(joins_[static_cast<std::size_t>(kind) % kSessionKindCount]
              [static_cast<std::size_t>(state) % kJoinStateCount]);
  }
  void CountReconnect(ReconnectEvidence evidence) {
    Add(reconnects_[static_cast<std::size_t>(evidence) % kReconnectEvidenceCount]);
  }
  // One per ended session; drops (IsDrop) also count in drops_total.
  void CountClose(CloseReason reason) {
    const auto i = static_cast<std::size_t>(reason) % kCloseReasonCount;
    Add(closes_[i]);
    if (IsDrop(reason)) Add(drops_[i]);
  }
  // A /dcl/ message dropped (the rest of its chunk merges), by reason.
  void CountDclDrop(ErrorCode code, uint64_t messages = 1) {
    const auto i = static_cast<std::size_t>(code);
    Add(dcl_dropped_messages_[i < dcl_dropped_messages_.size() ? i : 0], messages);
  }
  Gauge& sessions_of(SessionKind kind) {
    return sessions_by_kind_[static_cast<std::size_t>(kind) % kSessionKindCount];
  }
  // Commit duration histogram (seconds buckets as Prometheus expects).
  void ObserveCommit(double seconds, uint64_t rows);

  // The wall clock, Unix seconds (with its fraction).
  static double WallSecondsNow();
  // The version (CMake's project version) and git commit (at configure time; "unknown" outside
  // a git checkout) of this build: scenecrdt_build_info.
  static const char* BuildVersion();
  static const char* BuildCommit();

  // Prometheus text exposition format 0.0.4.
  std::string RenderPrometheus() const;
  // More families added by RenderPrometheus (the cluster node's); set before serving.
  std::function<void(PrometheusText& out)> render_extra;

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
  // Framed TCP compressed mode: frame bytes that went into zstd streams, and what came out.
  Counter compression_plain_bytes{0};
  Counter compression_wire_bytes{0};
  // Scene frames compressed once for a scene's zstd-frames members (not per member).
  Counter compression_shared_frames{0};
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
  // Connection caps and the accept loop (docs/SERVER.md "Connections and file descriptors").
  Counter connections_refused_total{0};   // over --max-connections (or a reserve upgrade)
  Counter connections_refused_per_ip{0};  // over --max-connections-per-ip
  Counter accept_errors{0};               // failed accepts (EMFILE ...), each one a backoff
  Counter tls_handshake_failures{0};      // TLS handshakes that failed (before any session)
  Counter tls_reloads{0};                 // certificate reloads (SIGHUP) that succeeded
  Counter auth_reloads{0};                // credential reloads (SIGHUP) that succeeded
  Counter auth_reload_failures{0};        // ... that failed (the previous ones stay in use)
  Counter config_reloads{0};              // config file re-reads (SIGHUP) that succeeded
  Counter config_reload_failures{0};      // ... that failed (nothing of the file applied)
  Counter config_restart_needed{0};       // keys changed in the file that need a restart
  Counter admin_requests{0};              // admin API requests answered with the right token
  Counter admin_refused{0};               // admin API requests with a missing or wrong token
  Counter admin_scene_deletes{0};         // scenes deleted through the admin API
  Gauge tls_certificate_not_after{0};     // the certificate's notAfter, Unix seconds (0: no TLS)
  Counter tls_certificate_invalid{0};     // certificates loaded or offered outside their validity
  // Raw-DCL path (/dcl/<scene>).
  Counter dcl_chunks_in{0};   // WebSocket messages received (DCL chunks, empty ones included)
  Counter dcl_chunks_out{0};  // WebSocket messages sent (snapshot + live chunks)
  Counter dcl_throttles{0};   // reads paused by the message rate limit (nothing dropped)
  // Slow consumers: a catch-up for a session whose previous delivery took longer than
  // slow_consumer_ms / 5 (it is resynced from the store's latest state, not from a backlog).
  Counter resyncs{0};
  // Authority (docs/AUTHORITY.md): corrections merged for refused writes, and refused writes
  // that no correction can undo in the writer's replica (APPEND_VALUE, DELETE_ENTITY).
  Counter authority_corrections{0};
  Counter authority_uncorrectable{0};
  Counter authority_cluster_lost_claims{0};  // writes of claims the stream order refused
  // Cluster: owner writes re-stamped over another node's correction that beat them, and
  // entries whose correction marks did not parse (docs/AUTHORITY.md "Cluster").
  Counter authority_counter_corrections{0};
  Counter authority_bad_correction_marks{0};
  Counter resync_bytes{0};
  Counter log_lines_suppressed{0};  // repeated refusal lines of one session, not logged
  // Storage and memory bounds (docs/SERVER.md "Storage failures", "Memory bounds").
  Gauge storage_unavailable{0};      // 1 while group commits fail
  Counter storage_episodes{0};       // failure episodes (first failed commit after a success)
  Counter scene_loads{0};            // stored scenes loaded into memory
  Counter scene_evictions{0};        // idle scenes dropped from memory
  Counter scene_cap_refusals{0};     // joins refused at --max-scenes-in-memory
  Counter scene_create_refusals{0};  // joins of a missing scene by a read-only token
  Counter snapshot_shares{0};        // joins served a snapshot another joiner's build made
  // The web surface (issue 23: docs/SERVER.md "Browser origins", "Connections ...", WEB.md).
  Counter http_host_refused{0};       // requests naming a Host not allowed (DNS rebinding)
  Counter http_reserve_refused{0};    // reserve connections asking for more than health/metrics
  Counter http_reserve_evictions{0};  // reserve connections closed unread for a newer one
  Counter scene_listings{0};          // scene listings served (/, /api/scenes)
  Counter scene_listings_limited{0};  // scene listings refused (429) by the per-address rate
  Counter scene_list_failures{0};     // stored-scene reads (SQLite / Redis) that failed
  // A scene's flush: from the first change merged since the last one to its frames handed to
  // every ready member (batch window and strand wait included), and the fan-out alone.
  LatencyHistogram delivery;
  LatencyHistogram fanout;
  // Interest management (docs/INTEREST.md "Metrics"): entities held by an interest member
  // after each of its view updates, entities entering / leaving views, OutOfView frames, and
  // the index update (world positions of the changed entities, grid) once per flush.
  CountHistogram interest_view_entities;
  Counter interest_enters{0};
  Counter interest_leaves{0};
  Counter interest_notices{0};
  Counter interest_snapshots{0};  // joins / resumes of interest members (a view snapshot)
  Counter interest_deferred{0};   // entities a byte budget deferred, once per delivery
  // Deliveries of members behind the last fan-out: gathered from the kept fan-out batches, or
  // rebuilt from the store (further behind than the ring, a byte budget, a first delivery).
  Counter interest_catchups_gathered{0};
  Counter interest_catchups_rebuilt{0};
  LatencyHistogram interest_index;
  // The caps in force (set at start): --max-scenes-in-memory and the resolved
  // --max-connections, so dashboards and alerts can compare the gauges with them.
  Gauge scenes_cap{0};
  Gauge connections_cap{0};
  // When these metrics began (the server's construction), Unix seconds.
  const double start_time_seconds = WallSecondsNow();

 private:
  static constexpr std::array<double, 10> kCommitBuckets = {0.0005, 0.001, 0.002, 0.005, 0.01,
                                                            0.02,   0.05,  0.1,   0.5,   2.0};
  std::array<Counter, 128> refusals_{};
  std::array<Counter, runtime::kMergeOutcomeCount> merges_{};
  std::array<std::array<Counter, kJoinStateCount>, kSessionKindCount> joins_{};
  std::array<Counter, kReconnectEvidenceCount> reconnects_{};
  std::array<Counter, kCloseReasonCount> closes_{};
  std::array<Counter, kCloseReasonCount> drops_{};
  std::array<Counter, 128> dcl_dropped_messages_{};
  std::array<Gauge, kSessionKindCount> sessions_by_kind_{};
  std::array<Counter, kCommitBuckets.size() + 1> commit_buckets_{};
  Counter commit_micros_{0};
};

}  // namespace scenecrdt::server
