// SPDX-License-Identifier: Apache-2.0
// Owns Client, the public face of the networked replica (docs/CLIENT.md): join a scene on one
// of several servers, apply what arrives to a runtime::Runtime, send Lamport-stamped writes,
// survive lost connections. The network side (Asio/Beast sockets, the flatbuffers envelope)
// lives in a private implementation (client/internal/): this header pulls in none of it.
//
// Threads: the network side runs on a thread of its own and only moves bytes into a bounded
// inbox. The caller's thread (a render loop) calls Poll() to apply them, Update() or
// UpdateInterpolated() once per frame, then reads runtime(): world matrices and the change
// lists. The replica is read-only from outside: every write goes through the client, which
// stamps it, sends it and resends it until acknowledged.
//
// Resilience (ClientOptions::reconnect): reconnect with capped exponential backoff and jitter,
// to the next server of the list (fail-over); the Hello carries the last applied scene
// sequence so the server sends only what changed (a resume delta) or, when it cannot, a
// snapshot that replaces the replica; unacknowledged frames are resent as they are; writes made
// before the first snapshot are held and stamped on top of it; writes made offline are
// re-stamped when the resume shows newer state for their key.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scenecrdt/client/client_options.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/result.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/runtime/interpolation.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::client {

// What the server said when it admitted the latest connection.
struct Welcome {
  uint64_t session_id = 0;
  uint64_t scene_sequence = 0;  // the state that follows reaches this sequence
  bool resumed = false;         // true: a delta since our resume position; false: a snapshot
  bool can_write = false;
  // The largest frame the server accepts (Welcome.max_frame_bytes, docs/PROTOCOL.md section 2
  // "Frame limit"); the documented default, 1 MiB, when the server does not say.
  uint32_t max_frame_bytes = 0;
};

// A refusal (an Error frame) from the server.
struct Refusal {
  ErrorCode code = ErrorCode::kOk;
  std::string text;
  uint64_t frame_sequence = 0;  // the refused frame of ours, or 0
  bool fatal = false;           // the server ended the connection after it
};

// Where a client stands (docs/CLIENT.md, "Diagnostics"). kConnecting also covers the backoff
// wait between attempts; kRefused and kClosed are for good (closed() is true).
enum class ClientState : uint8_t {
  kConnecting,  // started (or waiting to retry); the transport is not open yet
  kJoining,     // the transport is open, the Hello sent; the scene's state not applied yet
  kJoined,      // connected and the connection's state applied (synced())
  kRefused,     // closed for good after the server refused us (last_error() has its reason)
  kClosed,      // closed for good otherwise: Stop(), reconnect off, or the give-up policy
};
const char* ClientStateName(ClientState state);  // "connecting", "joining", ...

// The latest failure: a refusal from the server (its ErrorCode and text) or a connection that
// ended (kIo and why, with the hint naming the right port when the URL dialled the wrong
// one). Stays until a newer failure; code kOk when nothing failed yet.
struct ClientError {
  ErrorCode code = ErrorCode::kOk;
  std::string text;
  bool from_server = false;      // the server's Error frame (its refusal), not a transport error
  uint32_t failed_attempts = 0;  // consecutive connections that ended before their state
};

// Counters since Start(), for logs, metrics and tests. Bytes of state are DCL bytes.
struct ClientStats {
  uint64_t connect_attempts = 0;  // connections started
  uint64_t connects = 0;          // connections welcomed by the server
  uint64_t reconnects = 0;        // of which after an earlier welcomed connection
  uint64_t disconnects = 0;       // connections that ended (Stop() not counted)
  uint64_t failovers = 0;         // connection attempts to another server than the last one
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
  uint64_t out_of_view_frames = 0;    // OutOfView notices received (docs/INTEREST.md)
  uint64_t out_of_view_entities = 0;  // entities they named that the replica held
  // Own writes the scene's authority refused (session::Refusal; docs/AUTHORITY.md): the
  // unsent write of the entity was dropped and the scene's value came back as a change.
  uint64_t refused_writes = 0;
  // TransferOwnership requests the server applied (its echo; docs/AUTHORITY.md).
  uint64_t ownership_transfers = 0;
};

// What the server said about our latest interest (its InterestSet).
struct InterestAck {
  float radius = 0;      // in effect: clamped to the server's --max-interest-radius-m
  float hysteresis = 0;  // in effect
  bool clamped = false;
};

// A Crdt frame as Poll() applies it (Client::on_crdt).
struct CrdtEvent {
  std::span<const uint8_t> data;   // the DCL stream; valid during the call only
  uint64_t scene_sequence = 0;     // the scene sequence after these changes
  bool is_state = false;           // part of a join's snapshot or resume delta
  uint64_t state_frames_left = 0;  // state frames: how many more follow (0: the last one)
  uint64_t connection = 0;         // 1 for the first connection, +1 per attempt
  std::size_t server = 0;          // index of the connection's server in the URL list
  bool resumed = false;            // state frames: a resume delta (else a snapshot)
  bool resync = false;             // state frames of a snapshot replacing the replica
  std::chrono::steady_clock::time_point received;  // ClientOptions::clock at receipt
  std::chrono::system_clock::time_point received_wall;
};

namespace internal {
struct ClientTestPeer;
}  // namespace internal

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Checks the options and starts connecting to the first server, on a network thread of the
  // client's own. kInvalidArgument for bad URLs or scene names (nothing started).
  Result<void> Start();
  // Start() (unless started), then polls until the scene's state is applied or `timeout`
  // passes. Errors: the server's refusal code (TakeRefusals() has its text), kIo when every
  // connection failed (close_error() says why) or on timeout ("timed out"); the client keeps
  // trying after a timeout when reconnecting is on.
  Result<void> Join(std::chrono::milliseconds timeout);
  // Says goodbye to the server when connected (a fatal Error frame, so the server counts
  // `client_closed`, not `peer_gone`; sent within goodbye_timeout_ms), closes the connection,
  // stops reconnecting and joins the network thread.
  void Stop();

  // ---- Caller's thread ----
  // Applies everything received; reconnects when a backoff delay is over; sends pending
  // writes. Returns the frames handled.
  std::size_t Poll();
  // Blocks until something arrives, a reconnect is due, or `timeout` passes.
  void WaitForInput(std::chrono::milliseconds timeout);
  // Polls until `done()` or the deadline; true when done() became true.
  bool PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  // Once per frame: the merged changes reach the world matrices (Runtime::Update).
  void Update(const runtime::UpdateOptions& options = {});

  // The replica, read-only: world matrices, IndexOf, the changed / added / removed lists,
  // the interpolated reads. Writes go through WriteTransform / Delete* / SendCrdt. A resync
  // replaces its content (stats().resyncs).
  const runtime::Runtime& runtime() const;
  const runtime::CrdtStore& store() const;

  // ---- Interpolation (docs/INTERPOLATION.md), off by default ----
  // Live frames are stamped with their receive time (ClientOptions::clock); with interpolation
  // on, they are shown a short adaptive delay later, blended between updates. Survives
  // resyncs. kInvalidArgument for options out of range.
  Result<void> EnableInterpolation(const runtime::InterpolationOptions& options = {});
  void DisableInterpolation();
  bool interpolation_enabled() const;
  // Update(), then the presentation at `render_time_us` (ClientOptions::clock's time since its
  // epoch, in microseconds: what NowUs() returns).
  Result<void> UpdateInterpolated(int64_t render_time_us,
                                  const runtime::UpdateOptions& options = {});
  // The same at NowUs().
  Result<void> UpdateInterpolated();
  // ClientOptions::clock now, as microseconds since its epoch (the receive-time clock).
  int64_t NowUs() const;

  // ---- Writes (caller's thread) ----
  // Local Lamport write: held until the first snapshot; stamped locally otherwise. Errors:
  // kNonFiniteTransform, kRateLimited (unsent buffer full), kIo (closed), the store's (e.g. a
  // deleted entity).
  Result<void> WriteTransform(protocol::EntityId entity, const protocol::Transform& t);
  // Deletes the entity's Transform (DELETE_COMPONENT, Lamport-stamped like a write); nothing
  // is sent when it has none. Same errors.
  Result<void> DeleteTransform(protocol::EntityId entity);
  // Deletes the entity (DELETE_ENTITY: every component of this number and version, for good).
  // kReservedEntity for numbers below 512.
  Result<void> DeleteEntity(protocol::EntityId entity);
  // Sends buffered writes as Crdt frames (when connected and within the unacked budget), each
  // under the server's frame limit; the last frame sequence sent, or 0.
  uint64_t Flush();
  // Merges `dcl` into the replica and sends it as it is (its own timestamps), now or once
  // connected; kept and resent until acknowledged. One Crdt frame, or several cut at message
  // boundaries when it is larger than max_crdt_bytes(). Returns the frame sequence of its last
  // frame (an Ack of it covers them all); 0: not taken (unacked budget full, closed, or, logged,
  // a message larger than max_crdt_bytes() alone or bytes that are not whole messages).
  uint64_t SendCrdt(std::span<const uint8_t> dcl);
  // Asks the server to give entity number `entity` to principal `to` ("" releases it): admins
  // only (docs/AUTHORITY.md). Sent now (kIo when not joined); the answer is counted in
  // stats().ownership_transfers or comes as a refusal (TakeRefusals: not_admin).
  Result<void> TransferOwnership(protocol::EntityId entity, const std::string& to);
  // The most DCL bytes one Crdt frame carries to the current server: its frame limit (the
  // Welcome's, else the documented default of 1 MiB) less the envelope (docs/PROTOCOL.md
  // section 2, "Frame limit").
  std::size_t max_crdt_bytes() const;

  // ---- Interest (docs/INTEREST.md) ----
  // Receive only this part of the scene from now on (sent at once when connected, and before
  // every later Hello). The replica drops what leaves the view (no tombstone: the renderer
  // sees it in removed_entities()) and gets back what enters. kInvalidInterest for a NaN,
  // infinite or negative radius, centre or hysteresis (nothing changes).
  Result<void> SetInterest(const Interest& interest);
  // Receive everything again (the server sends the whole state once).
  void ClearInterest();
  const std::optional<Interest>& interest() const;
  // The server's answer to the latest interest (nullopt before one).
  const std::optional<InterestAck>& interest_ack() const;

  // ---- State (caller's thread, after Poll) ----
  bool welcomed() const;
  // The latest connection's Welcome.
  const std::optional<Welcome>& welcome() const;
  // The first snapshot has been applied (stays true across reconnects).
  bool state_ready() const;
  // Connected and the current connection's state applied: writes go out at once.
  bool synced() const;
  // Closed for good (Stop(), reconnect off, a permanent refusal, or max_failed_attempts).
  bool closed() const;
  // Why the last connection ended (kOk: cleanly), valid when closed().
  const Error& close_error() const;
  // Where the client stands, and the latest failure (docs/CLIENT.md, "Diagnostics").
  ClientState state() const;
  const ClientError& last_error() const;
  // Changes the give-up policy (ReconnectOptions::max_failed_attempts, give_up_after_ms) of a
  // started client; 0 = never, for either.
  void SetGiveUp(uint32_t max_failed_attempts, uint32_t give_up_after_ms);
  // The servers (parsed URL list) and the one of the current or last connection.
  const std::vector<std::string>& servers() const;
  std::size_t current_server() const;
  // The last scene sequence fully applied (resume point).
  uint64_t scene_sequence() const;
  uint64_t acked_frame_sequence() const;
  uint64_t last_frame_sequence() const;
  // Frames not yet acknowledged (sent or waiting for a connection).
  std::size_t pending_frames() const;
  // Entities with a write not yet in a frame.
  std::size_t unsent_writes() const;
  // Refusals (Error frames) received since the last call (at most 1024 kept).
  std::vector<Refusal> TakeRefusals();
  ClientStats stats() const;
  uint64_t state_bytes() const;
  uint64_t live_bytes() const;
  uint64_t live_frames() const;

  // Called from Poll for every Ack with the acked frame sequence.
  std::function<void(uint64_t)> on_ack;
  // Called from Poll for every Crdt frame received, before it is applied.
  std::function<void(const CrdtEvent&)> on_crdt;
  // Called for every Crdt frame handed to a connection (first sends and resends).
  std::function<void(uint64_t frame_sequence, std::span<const uint8_t> dcl, bool resend)> on_send;

  // client/internal/client_impl.h
  struct Impl;

 private:
  friend struct internal::ClientTestPeer;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scenecrdt::client
