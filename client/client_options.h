// SPDX-License-Identifier: Apache-2.0
// Owns the options of a Client (docs/CLIENT.md): the servers to join (several for fail-over),
// the transport's limits and keepalive, reconnecting with backoff, and the bounds on every
// buffer a client keeps. Plain values only: no network headers come with it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <glm/vec3.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenecrdt/client/backoff.h"
#include "scenecrdt/runtime/crdt_store.h"

namespace scenecrdt::client {

// A steady clock the client reads for reconnect scheduling and receive stamps. Called from
// the caller's thread and the network thread: it must be thread-safe.
using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

struct ConnectionOptions {
  // Largest frame accepted from the server (state frames are chunked by the server).
  uint32_t max_frame_bytes = 64u << 20;
  uint32_t connect_timeout_ms = 5000;
  // Frames queued for sending beyond this many bytes are refused (the connection then ends).
  std::size_t max_queued_bytes = 64u << 20;
  // Keepalive, 0 = off: a Ping every ping_interval_ms once open; when no Pong came back for
  // pong_timeout_ms the connection fails with kIo ("no Pong"). Detects links that are up but
  // silent or corrupted in either direction (the Client then reconnects).
  uint32_t ping_interval_ms = 0;
  uint32_t pong_timeout_ms = 0;
  // tls:// and wss://: the CA certificates (PEM) the server's certificate must chain to;
  // empty: the system trust store. The host name (or IP) of the URL must match it.
  std::string ca_file;
  // Offer permessage-deflate on ws:// and wss:// (browsers and node `ws` offer it too). The
  // server decides; the frames read are the same either way.
  bool deflate = true;
  // Offer zstd on tcp:// and tls:// (default on): zstd frames (Hello.zstd_frames: each scene
  // frame compressed once per scene, ~5x fewer bytes at about the server CPU of plain frames)
  // and, for servers that predate them, the zstd stream (Hello.compression). The server
  // decides; one that offers neither (`serve --no-compression`, older builds) answers plain.
  // false: plain frames (`load --compression none`).
  bool zstd = true;
  // With zstd: offer zstd frames too. false offers only the per-connection zstd stream
  // (~6x fewer bytes, but ~3x the server CPU of a plain fan-out and a longer latency tail).
  bool zstd_frames = true;
  // Bind the socket to this local IP address before connecting (IP_BIND_ADDRESS_NO_PORT: the
  // port is still picked at connect time); empty (default): the kernel picks the source
  // address. Used by `load` to spread its clients over 127.0.0.0/8 (a server caps the
  // connections of one address). Only server addresses of the same family are tried.
  std::string local_address;
  // tcp:// only (not tls://): take each read's receive time from the kernel (SO_TIMESTAMPNS,
  // the CLOCK_REALTIME time the bytes reached the socket), readable as receive_time_ns() while
  // on_frame runs. Measures latency without the caller's own event-loop delay (`load`).
  bool kernel_receive_timestamps = false;
};

struct ReconnectOptions {
  // Off (default): the end of the connection closes the client for good (closed()), which is
  // what one-shot commands want. On: a lost connection is retried with `backoff` delays.
  bool enabled = false;
  // Also retry when the first connection ends before the state was applied (a server that
  // is not up yet). Off: that first failure closes the client (fail fast) once every server
  // of the list has been tried.
  bool retry_first_connect = false;
  // Consecutive connections that end before their state is applied, after which the client
  // gives up (closed()); 0 = never.
  uint32_t max_failed_attempts = 0;
  // Give up (closed(), state() kClosed) when an attempt ends and no connection has reached its
  // state for this long: since Start(), or since the last connection that did ended. 0 = never
  // (default: retry forever; state() and last_error() report why meanwhile).
  uint32_t give_up_after_ms = 0;
  // A join refused with `unavailable` ("retry": e.g. a cluster node that cannot load the scene
  // from Redis now) is retried with `backoff` delays even when reconnecting is off or before
  // the first state, up to this many refusals in a row (then closed()); 0 = never retried.
  uint32_t max_unavailable_retries = 10;
  BackoffOptions backoff;
  // With several servers: whether a connection to another server than the one whose state
  // the replica holds still sends the resume position. On (default): the servers of the list
  // share the scene's history and sequences (the nodes of one cluster, docs/CLUSTER.md), so a
  // resume delta is exact. Off: unrelated servers; a move asks for a snapshot (a resync).
  bool resume_across_servers = true;
  // Keepalive for every connection while reconnecting is on (unless ClientOptions::connection
  // sets its own): a link silent or corrupted in either direction is cut after
  // pong_timeout_ms without a Pong, then retried.
  uint32_t ping_interval_ms = 2000;
  uint32_t pong_timeout_ms = 10000;
};

// An interest (docs/INTEREST.md): the client receives only the entities whose world position
// is within `radius` metres of `center`, or of the world position of `follow_entity` when it
// is set (typically the client's own avatar; an entity without a Transform: an empty view),
// plus their ancestors and every entity without a Transform. They leave at radius +
// hysteresis (unset: the server's default, max(1 m, 0.1 radius)).
struct Interest {
  glm::vec3 center{0.0f};
  std::optional<protocol::EntityId> follow_entity;
  float radius = 0.0f;
  std::optional<float> hysteresis;
};

struct ClientOptions {
  // The servers of the scene, in order of preference: tcp://HOST:PORT, ws://HOST:PORT or
  // ws://HOST:PORT/scene/NAME (client/url.h). `url` may hold one URL or a comma-separated list;
  // `urls` adds more. With several, every reconnect goes to the next one (fail-over, round
  // robin): the nodes of a cluster, or replicas of one scene.
  std::string url;
  std::vector<std::string> urls;
  std::string scene;  // may stay empty when a URL names the scene; must agree when both do
  std::string token;
  std::string client_name = "scenecrdt-client";
  // Resume position of the first Hello (later Hellos use scene_sequence()).
  std::optional<uint64_t> resume_sequence;
  runtime::StoreLimits limits;
  // Received bytes waiting for Poll(); beyond it the client stops reading (the server then
  // coalesces for us).
  std::size_t max_inbox_bytes = 64u << 20;
  ConnectionOptions connection;
  ReconnectOptions reconnect;
  // Entities with a local write not yet sent (latest write each: a Transform, a Transform
  // deletion or an entity deletion): held before the first snapshot, kept while disconnected,
  // coalesced while the unacked budget is spent. Full: a write to one more entity fails with
  // kRateLimited and changes nothing (writes to entities already buffered still succeed).
  std::size_t max_unsent_writes = 65536;
  // DCL bytes of frames kept until acknowledged (for resending). Full: Flush() leaves writes
  // coalescing in the unsent buffer and SendCrdt() returns 0.
  std::size_t max_unacked_bytes = 16u << 20;
  // Stop() on an open connection: the goodbye (a fatal Error frame) gets this long to be
  // written before the socket closes anyway; 0: no goodbye (the server logs `peer_gone`).
  uint32_t goodbye_timeout_ms = 500;
  // Default: std::chrono::steady_clock::now. Also the clock of receive times and of the
  // default render time of Client::UpdateInterpolated().
  SteadyClock clock;
  // One line per connection event (connect, loss, fail-over, resume or snapshot, resends,
  // re-stamps), without a newline; called on the caller's thread.
  std::function<void(std::string_view line)> log;
  // Receive only this part of the scene (docs/INTEREST.md); unset: everything. Declared
  // before every Hello, so a join or reconnect gets a snapshot of the view.
  std::optional<Interest> interest;
};

}  // namespace scenecrdt::client
