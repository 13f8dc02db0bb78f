// SPDX-License-Identifier: Apache-2.0
// Owns Client: a scene replica over a Connection that it re-opens when it is lost. The
// network side (a strand of an io_context: the client's own thread or the caller's) only
// moves bytes: verified frames go into a bounded inbox. The caller's thread (a render loop)
// calls Poll() to apply them to the Runtime, Update() once per frame, then reads world
// matrices and the change list; the Runtime and every decision (resume, resend, re-stamp,
// when to reconnect) live on that thread.
//
// Writes: WriteTransform() merges locally with a Lamport timestamp and keeps the latest value
// per entity in a bounded unsent buffer; Flush() (Poll() flushes too) sends it as Crdt
// frames. Frames stay in a bounded unacked list until the server's cumulative Ack.
// SendCrdt() sends a DCL stream as it is (`scenecrdt send`).
//
// Resilience (docs/CLIENT.md), with ClientOptions::reconnect.enabled:
// - a lost connection is retried after capped exponential backoff with jitter (Backoff; time
//   from ClientOptions::clock), driven by Poll()/WaitForInput() on the caller's thread;
// - Hello carries the last applied scene sequence, so the server sends only the registers
//   changed since (a resume delta); when it cannot (another server incarnation) it sends a
//   snapshot, which replaces the replica (a resync);
// - unacknowledged frames are resent as they are, in order (idempotent: the same messages
//   with the same timestamps merge to the same state);
// - writes made before the first snapshot are held unstamped and stamped on top of it; writes
//   made while disconnected are stamped locally (the renderer sees them) and, when the resume
//   shows newer state for their key, stamped again on top of it. Neither was ever seen by
//   anyone, so the newer state cannot be causally after them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "scenecrdt/client/backoff.h"
#include "scenecrdt/client/connection.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::client {

// A steady clock the client reads for reconnect scheduling and receive stamps. Called from
// the caller's thread and the network thread: it must be thread-safe.
using SteadyClock = std::function<std::chrono::steady_clock::time_point()>;

struct ReconnectOptions {
  // Off (default): the end of the connection closes the client for good (closed()), which is
  // what one-shot commands want. On: a lost connection is retried with `backoff` delays.
  bool enabled = false;
  // Also retry when the first connection ends before the state was applied (a server that
  // is not up yet). Off: that first failure closes the client (fail fast).
  bool retry_first_connect = false;
  // Consecutive connections that end before their state is applied, after which the client
  // gives up (closed()); 0 = never.
  uint32_t max_failed_attempts = 0;
  BackoffOptions backoff;
  // Keepalive for every connection while reconnecting is on (unless ClientOptions::connection
  // sets its own): a link silent or corrupted in either direction is cut after
  // pong_timeout_ms without a Pong, then retried.
  uint32_t ping_interval_ms = 2000;
  uint32_t pong_timeout_ms = 10000;
};

struct ClientOptions {
  std::string url;    // tcp://HOST:PORT, ws://HOST:PORT or ws://HOST:PORT/scene/NAME (client/url.h)
  std::string scene;  // may stay empty when `url` names the scene; must agree when both do
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
  // Entities with a local write not yet sent (latest value each): held before the first
  // snapshot, kept while disconnected, coalesced while the unacked budget is spent. Full: a
  // write to one more entity fails with kRateLimited and changes nothing (writes to entities
  // already buffered still succeed).
  std::size_t max_unsent_writes = 65536;
  // DCL bytes of frames kept until acknowledged (for resending). Full: Flush() leaves writes
  // coalescing in the unsent buffer and SendCrdt() returns 0.
  std::size_t max_unacked_bytes = 16u << 20;
  // Default: std::chrono::steady_clock::now.
  SteadyClock clock;
  // One line per connection event (connect, loss, resume or snapshot, resends, re-stamps),
  // without a newline; called on the caller's thread.
  std::function<void(std::string_view line)> log;
};

struct Refusal {
  ErrorCode code = ErrorCode::kOk;
  std::string text;
  uint64_t frame_sequence = 0;
  bool fatal = false;
};

// Counters since Start(), for logs, metrics and tests. Bytes of state are DCL bytes.
struct ClientStats {
  uint64_t connect_attempts = 0;  // connections started
  uint64_t connects = 0;          // connections welcomed by the server
  uint64_t reconnects = 0;        // of which after an earlier welcomed connection
  uint64_t disconnects = 0;       // connections that ended (Stop() not counted)
  uint64_t resumes = 0;           // welcomes with a resume delta
  uint64_t snapshots = 0;         // welcomes with a full snapshot (the first join included)
  uint64_t resyncs = 0;           // snapshots after the first: the replica was rebuilt
  uint64_t resume_bytes = 0;      // state bytes received as resume deltas
  uint64_t snapshot_bytes = 0;    // state bytes received as snapshots
  uint64_t last_state_bytes = 0;  // state bytes of the latest connection whose state applied
  uint64_t state_frames = 0;
  uint64_t live_frames = 0;
  uint64_t live_bytes = 0;
  uint64_t frames_sent = 0;    // Crdt frames handed to a connection (resends included)
  uint64_t resent_frames = 0;  // unacknowledged frames sent again on a new connection
  uint64_t resent_bytes = 0;
  uint64_t acked_frames = 0;
  uint64_t held_writes = 0;          // writes made before the first snapshot, stamped after it
  uint64_t offline_writes = 0;       // writes made while not connected (stamped locally)
  uint64_t restamped_writes = 0;     // offline writes stamped again: the resume was newer
  uint64_t rate_limited_frames = 0;  // own write frames refused as rate_limited, re-queued
  uint64_t dropped_writes = 0;       // buffered writes the store refused when stamped
  uint64_t bytes_sent = 0;           // transport bytes, every connection
  uint64_t bytes_received = 0;
};

// A Crdt frame as Poll() applies it (Client::on_crdt).
struct CrdtEvent {
  const session::Crdt* crdt = nullptr;  // views valid during the call only
  uint64_t connection = 0;              // 1 for the first connection, +1 per attempt
  bool resumed = false;                 // state frames: a resume delta (else a snapshot)
  bool resync = false;                  // state frames of a snapshot replacing the replica
  std::chrono::steady_clock::time_point received;  // ClientOptions::clock at receipt
  std::chrono::system_clock::time_point received_wall;
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs the network side on a thread of its own.
  Result<void> Start();
  // Runs the network side on the caller's io_context (which the caller runs; with reconnect
  // on, keep it running, e.g. with a work guard). Call Stop() and let the io_context finish
  // (or stop it) before destroying the Client.
  Result<void> Start(net::asio::io_context& ioc);
  // Closes the connection, stops reconnecting and joins the own thread, if any.
  void Stop();

  // ---- Caller's thread ----
  // Applies everything received; reconnects when a backoff delay is over; sends pending
  // writes. Returns the frames handled.
  std::size_t Poll();
  // Blocks until something arrives, a reconnect is due, or `timeout` passes.
  void WaitForInput(std::chrono::milliseconds timeout);
  // Polls until `done()` or the deadline; true when done() became true.
  bool PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  void Update(const runtime::UpdateOptions& options = {}) { runtime_.Update(options); }
  runtime::Runtime& runtime() { return runtime_; }
  const runtime::CrdtStore& store() const { return runtime_.store(); }

  // Local Lamport write: held until the first snapshot; stamped locally otherwise. Errors:
  // kNonFiniteTransform, kRateLimited (unsent buffer full), kIo (closed), the store's.
  Result<void> WriteTransform(protocol::EntityId entity, const protocol::Transform& t);
  // Sends buffered writes as Crdt frames (when connected and within the unacked budget);
  // the last frame sequence sent, or 0.
  uint64_t Flush();
  // Merges `dcl` into the replica and sends it as one Crdt frame, as it is (its own
  // timestamps), now or once connected; kept and resent until acknowledged. Returns its
  // frame sequence (0: not taken, unacked budget full or closed).
  uint64_t SendCrdt(std::span<const uint8_t> dcl);

  // ---- State (caller's thread, after Poll) ----
  bool welcomed() const { return welcome_.has_value(); }
  // The latest connection's Welcome.
  const std::optional<session::Welcome>& welcome() const { return welcome_; }
  // The first snapshot has been applied (stays true across reconnects).
  bool state_ready() const { return state_ready_; }
  // Connected and the current connection's state applied: writes go out at once.
  bool synced() const { return synced_; }
  // Closed for good (Stop(), reconnect off, a permanent refusal, or max_failed_attempts).
  bool closed() const { return closed_; }
  // Why the last connection ended (kOk: cleanly), valid when closed().
  const Error& close_error() const { return close_error_; }
  // The last scene sequence fully applied (resume point).
  uint64_t scene_sequence() const { return scene_sequence_; }
  uint64_t acked_frame_sequence() const { return acked_; }
  uint64_t last_frame_sequence() const { return next_frame_sequence_ - 1; }
  // Frames not yet acknowledged (sent or waiting for a connection).
  std::size_t pending_frames() const { return pending_.size(); }
  // Entities with a write not yet in a frame.
  std::size_t unsent_writes() const { return unsent_.size(); }
  // Refusals (Error frames) received since the last call (at most 1024 kept).
  std::vector<Refusal> TakeRefusals();
  ClientStats stats() const;
  uint64_t state_bytes() const { return stats_.resume_bytes + stats_.snapshot_bytes; }
  uint64_t live_bytes() const { return stats_.live_bytes; }
  uint64_t live_frames() const { return stats_.live_frames; }

  // Called from Poll for every Ack with the acked frame sequence.
  std::function<void(uint64_t)> on_ack;
  // Called from Poll for every Crdt frame received, before it is applied.
  std::function<void(const CrdtEvent&)> on_crdt;
  // Called for every Crdt frame handed to a connection (first sends and resends).
  std::function<void(uint64_t frame_sequence, std::span<const uint8_t> dcl, bool resend)> on_send;

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct InboxItem {
    uint64_t connection = 0;
    std::vector<uint8_t> frame;  // empty when `closed`
    bool closed = false;
    Error error{};
    TimePoint received{};
    std::chrono::system_clock::time_point received_wall{};
  };
  struct PendingFrame {
    uint64_t frame_sequence = 0;
    std::vector<uint8_t> dcl;
    bool owned = false;    // built from WriteTransform (not SendCrdt)
    uint64_t sent_on = 0;  // connection it was last handed to (0: never)
  };
  struct UnsentWrite {
    protocol::Transform value;
    uint32_t timestamp = 0;  // the local stamp (when stamped)
    bool stamped = false;    // false: held before the first snapshot
  };

  TimePoint Now() const;
  void Log(const std::string& line) const;
  Result<void> StartOn(net::asio::io_context& ioc);
  void Connect();
  void Push(InboxItem item, const std::shared_ptr<std::weak_ptr<Connection>>& link);
  void Handle(const session::Frame& frame, const InboxItem& item);
  void OnWelcome(const session::Welcome& welcome);
  void OnStateApplied(uint64_t scene_sequence);
  void OnDisconnected(const Error& error);
  void OnRefusal(const session::ErrorFrame& e);
  void StampUnsent();
  bool Transmit(PendingFrame& frame);
  void AddPending(std::vector<uint8_t> dcl, bool owned);

  ClientOptions options_;
  runtime::Runtime runtime_;
  ServerUrl url_;
  net::asio::io_context* ioc_ = nullptr;
  // Declared before connection_: the Connection (its sockets and timers) must go first.
  std::optional<net::asio::io_context> own_ioc_;
  std::optional<net::asio::executor_work_guard<net::asio::io_context::executor_type>> work_;
  std::shared_ptr<Connection> connection_;
  std::thread thread_;

  // Inbox (network strand -> caller's thread).
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<InboxItem> inbox_;
  std::size_t inbox_bytes_ = 0;
  bool paused_ = false;

  // Caller's thread: connection lifecycle.
  uint64_t connection_id_ = 0;  // the current (or last) connection; 0 before Start
  bool connection_active_ = false;
  bool stopped_ = false;
  std::optional<TimePoint> reconnect_at_;
  Backoff backoff_;
  uint32_t failed_attempts_ = 0;
  std::optional<ErrorCode> session_fatal_;  // fatal Error received on the current connection
  bool last_end_was_violation_ = false;     // don't reset the backoff after a protocol error
  uint64_t bytes_sent_closed_ = 0;          // transport bytes of ended connections
  uint64_t bytes_received_closed_ = 0;

  // Caller's thread: replica and writes.
  std::optional<session::Welcome> welcome_;
  std::unique_ptr<runtime::Runtime> rebuild_;  // a resync snapshot being applied
  uint64_t connection_state_bytes_ = 0;
  bool state_ready_ = false;
  bool synced_ = false;
  bool closed_ = false;
  Error close_error_{};
  uint64_t scene_sequence_ = 0;
  uint64_t next_frame_sequence_ = 1;
  uint64_t acked_ = 0;
  std::deque<PendingFrame> pending_;  // unacked, ascending frame sequence
  std::size_t pending_bytes_ = 0;
  std::map<protocol::EntityId, UnsentWrite> unsent_;
  std::optional<TimePoint> flush_paused_until_;  // after a rate_limited refusal
  uint32_t rate_limit_pauses_ = 0;
  std::vector<uint8_t> scratch_;
  std::vector<Refusal> refusals_;
  ClientStats stats_;
};

}  // namespace scenecrdt::client
