// SPDX-License-Identifier: Apache-2.0
// Owns ServerConfig: every knob of `scenecrdt serve` with its default (docs/SERVER.md lists
// them with the reasoning behind each number). Plain data, filled by the serve command.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/server/auth/access_control.h"
#include "scenecrdt/server/observability/event_log.h"

namespace scenecrdt::server {

struct Limits {
  // Largest envelope frame accepted from a client, size prefix included (TCP frames and
  // WebSocket messages; Beast's 16 MiB default is lowered to this).
  uint32_t max_frame_bytes = 1u << 20;
  // Largest DCL message inside a Crdt frame, header included.
  uint32_t max_message_bytes = 64u << 10;
  // Largest component payload (StoreLimits::max_payload_bytes).
  uint32_t max_payload_bytes = 16u << 10;
  // Token bucket per session over DCL messages: refill rate and bucket size.
  uint32_t messages_per_second = 2000;
  uint32_t message_burst = 4000;
  // Per scene (StoreLimits).
  uint32_t max_entities = 20000;
  uint32_t max_tombstones = 65536;
  // Sessions per scene (kSceneFull beyond).
  uint32_t max_sessions_per_scene = 2000;
  // Control frames (Welcome, Error, Pong) waiting in one session's queue; beyond: dropped.
  uint32_t max_control_frames = 256;
  // A write (to one session) still in flight after this long drops the session
  // (kSlowConsumer). While it is in flight the session's changes coalesce in the scene.
  uint32_t slow_consumer_ms = 5000;
  // Nothing read from a session for this long closes it; a Ping is sent at a third of it.
  uint32_t idle_timeout_ms = 60000;
  // Hello must arrive within this long after connecting (or the WebSocket upgrade).
  uint32_t handshake_timeout_ms = 10000;
  // Frames per second per session for scene changes (0 = unlimited): --max-rate.
  double max_rate_hz = 0.0;
  // Fan-out waits this long after the first change of a batch (0 = as soon as the strand has
  // merged what it holds). Lets the frames of one burst leave as one batch: --batch-window-us.
  uint32_t batch_window_us = 0;
  // Open connections, sessions and HTTP together (0: what RLIMIT_NOFILE allows after the
  // server's own descriptors and the HTTP reserve); beyond: answered and closed at once.
  uint32_t max_connections = 0;
  // Open connections from one source address (clients behind one NAT share it).
  uint32_t max_connections_per_ip = 1024;
  // HTTP connections accepted above max_connections, for /healthz and /metrics only.
  uint32_t http_reserve = 16;
  // State frames (snapshot / resume delta) carry at most this many DCL bytes each.
  uint32_t state_chunk_bytes = 256u << 10;
  // Memory bounds (docs/SERVER.md "Memory bounds").
  // A scene's state as a DCL snapshot may not grow past this (scene_too_large beyond; deletes
  // are always accepted): --max-scene-bytes.
  uint64_t max_scene_bytes = 16u << 20;
  // Scenes held in memory at once (scene_full for a join that needs one more): a scene with
  // no session for scene_idle_evict_ms is dropped from memory (its state is durable).
  uint32_t max_scenes_in_memory = 1000;
  uint32_t scene_idle_evict_ms = 60000;
  // Interest management (docs/INTEREST.md): the side of the grid's square cells (x, z), and
  // the largest interest radius (larger requests are clamped; the client is told).
  double interest_cell_m = 16.0;
  double max_interest_radius_m = 1000.0;
  // An interest member's byte budget, kilobits per second (0: none): beyond it the changes of
  // the entities farthest from its centre are deferred and coalesced (docs/INTEREST.md
  // "Byte budget").
  double client_budget_kbps = 0.0;
};

// Who may write an entity (docs/AUTHORITY.md): kOpen is plain last-writer-wins (every
// writer may write everything); kOwner: the principal whose PUT creates an entity owns it;
// kRules: per component (AuthorityRules, scene/authority/authority_rules.h), owner mode's rule
// where a component's rule is "owner".
enum class AuthorityMode : uint8_t { kOpen, kOwner, kRules };
struct AuthorityRules;

struct ServerConfig {
  // "HOST:PORT" or empty (listener off). Port 0 picks an ephemeral port (tests).
  std::string tcp_listen = "127.0.0.1:7600";
  std::string http_listen = "127.0.0.1:7601";
  int threads = 1;
  std::string data_dir = "./scenecrdt-data";
  // Credentials: the --auth table and/or signed access tokens. None: unauthenticated mode
  // (loopback only, every session may write).
  AccessConfig access;
  // --allowed-origins: browser origins allowed besides same-origin pages (comma-separated,
  // "*" for any); requests without an Origin header are always allowed.
  std::string allowed_origins;
  // --allowed-hosts: Host names answered besides localhost, *.localhost and IP literals
  // (comma-separated, ".example.com" for a domain and its subdomains, "*" for any): the
  // DNS-rebinding guard (docs/SERVER.md "Browser origins").
  std::string allowed_hosts;
  // --tls-cert / --tls-key (PEM): both listeners speak TLS (tls://, https://, wss://). Both or
  // neither. SIGHUP reloads them for new connections.
  std::string tls_cert_file;
  std::string tls_key_file;
  // Non-loopback binds without TLS are refused unless this says so (--insecure-no-tls).
  bool insecure_no_tls = false;
  // The viewer's assets (view.html, viewer.js, scenecrdt.js, scenecrdt.wasm: docs/WEB.md).
  // Empty: the viewer pages answer 404 saying how to build them.
  std::string web_root;
  bool demo = false;
  // --authority open|owner|rules (docs/AUTHORITY.md).
  AuthorityMode authority = AuthorityMode::kOpen;
  // --authority-rules FILE (its path) and the rules read from it at start: kRules needs them
  // (the scenes share them read-only).
  std::string authority_rules_file;
  std::shared_ptr<const AuthorityRules> authority_rules;
  // Demo writer rate.
  double demo_hz = 25.0;
  // SQLite synchronous mode: true = FULL (fsync per commit), false = NORMAL (survives a
  // process kill, not a power loss).
  bool fsync = true;
  // 0: none. The database may not grow past this many bytes: commits beyond fail with
  // SQLITE_FULL as on a full disk (storage_unavailable, /healthz 503): --max-db-bytes.
  uint64_t max_db_bytes = 0;
  Limits limits;
  // Cluster mode (docs/CLUSTER.md): the Redis URL shared by every node (empty: SQLite, the
  // embedded default), the password kept off the URL, and how often this node tries to
  // compact its scenes' streams (0: never).
  std::string redis_url;
  std::string redis_password;
  uint32_t compact_interval_ms = 10000;
  // Entries younger than this (relative to the newest folded) stay after a compaction, for
  // readers that lag a little.
  uint32_t compact_retain_ms = 10000;
  // Compress what clients offer to read compressed: zstd on framed TCP (Hello.compression),
  // permessage-deflate on WebSocket. false: every session plain (--no-compression).
  bool compression = true;
  // With compression on: answer a Hello that offers zstd frames with them (each scene frame
  // compressed once per scene); false: such a client gets the zstd stream, as from a server
  // that predates the mode (tests check both).
  bool zstd_frames = true;
  // Event lines (session open/close, drops, resyncs, refusals: docs/SERVER.md "Logs").
  bool log_events = true;
  // Where they go (each call one complete line; must be thread-safe). Empty: stderr.
  std::function<void(std::string_view line)> log_sink;
  // --log-format text|json and --log-level: lines below the level are not written
  // (docs/SERVER.md "Log format and levels").
  LogFormat log_format = LogFormat::kText;
  LogLevel log_level = LogLevel::kInfo;
  // --admin-token-file: the admin HTTP API's bearer token is read from this file at start
  // (empty: the API answers 404; docs/OPERATIONS.md "Admin API"). Server::Start fills
  // admin_token (at least kMinAdminTokenBytes, the file's trailing newlines dropped).
  std::string admin_token_file;
  std::string admin_token;
  // SIGHUP: reads the config file again (set by `serve --config`; empty: nothing to re-read).
  // Fills `fresh` with the configuration it gives now (the command line's flags still override
  // it) and `changed` with the keys whose value differs from the running one. False with `why`
  // ("FILE:LINE:COL: ...") when the file does not read. The server applies the keys of
  // kReloadableKeys and logs the others as needing a restart (docs/OPERATIONS.md "Reloading").
  std::function<bool(ServerConfig& fresh, std::vector<std::string>& changed, std::string& why)>
      reread_config;
};

inline constexpr std::size_t kMinAdminTokenBytes = 16;

// The config file's keys that SIGHUP applies; a change to any other key needs a restart.
inline constexpr std::string_view kReloadableKeys[] = {"log-level", "auth", "jwt-secret",
                                                       "jwt-public-key", "jwt-leeway-s"};
inline bool IsReloadableKey(std::string_view key) {
  for (std::string_view k : kReloadableKeys) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace scenecrdt::server
