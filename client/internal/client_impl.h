// SPDX-License-Identifier: Apache-2.0
// Owns Client::Impl (internal: not installed), the state behind the public Client: the network
// side (an io_context on the client's thread, the current Connection), the inbox between them
// and the caller's thread, and everything the caller's thread decides (the replica, resume,
// resend, re-stamp, when and where to reconnect). client.cc has the lifecycle and the public
// forwarding, client_session.cc the connection events and frames, client_writes.cc the writes.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/client/backoff.h"
#include "scenecrdt/client/client.h"
#include "scenecrdt/client/internal/connection.h"
#include "scenecrdt/client/url.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client {

struct Client::Impl {
  using TimePoint = std::chrono::steady_clock::time_point;
  // A frame as the connection verified and decoded it (one decode per frame: Poll does not
  // read it again). A Crdt frame's DCL bytes are copied into `dcl` (its `data` is re-pointed
  // there when handled); the other frames own their fields.
  struct InboxItem {
    uint64_t connection = 0;
    session::Frame frame;         // unused when `closed`
    std::vector<uint8_t> dcl;     // a Crdt frame's data
    std::size_t frame_bytes = 0;  // the frame's size on the wire (the inbox's byte bound)
    bool closed = false;
    Error error{};
    TimePoint received{};
    std::chrono::system_clock::time_point received_wall{};
  };
  struct PendingFrame {
    uint64_t frame_sequence = 0;
    std::vector<uint8_t> dcl;
    bool owned = false;    // built from the unsent buffer (not SendCrdt)
    uint64_t sent_on = 0;  // connection it was last handed to (0: never)
  };
  // The latest local write of one entity that is not in a frame yet.
  enum class WriteKind : uint8_t { kTransform, kDeleteTransform, kDeleteEntity };
  struct UnsentWrite {
    WriteKind kind = WriteKind::kTransform;
    protocol::Transform value;  // kTransform
    uint32_t timestamp = 0;     // the local stamp (when stamped; 0 for kDeleteEntity)
    bool stamped = false;       // false: held before the first snapshot
  };

  Impl(Client& owner, ClientOptions options);

  TimePoint Now() const;
  void Log(const std::string& line) const;

  // client.cc
  Result<void> ParseServers();
  void Stop();

  // client_session.cc: connections, the inbox and the frames.
  void Connect();
  void Push(InboxItem item, const std::shared_ptr<std::weak_ptr<Connection>>& link);
  std::size_t Poll();
  void WaitForInput(std::chrono::milliseconds timeout);
  void Handle(const session::Frame& frame, const InboxItem& item);
  void OnCrdt(const session::Crdt& crdt, const InboxItem& item);
  void OnAck(const session::Ack& ack);
  void OnWelcome(const session::Welcome& welcome);
  void OnStateApplied(uint64_t scene_sequence);
  void OnDisconnected(const Error& error);
  void OnRefusal(const session::ErrorFrame& e);
  void OnOutOfView(const session::OutOfView& o);
  // Sends options_.interest (or its absence) on the current connection, when there is one.
  void SendInterest();
  // One own write refused by the scene's authority: the unsent write of its entity is dropped
  // (it would be refused too); the scene's correction arrives as a change.
  void OnWriteRefused(const session::Refusal& r);
  ClientStats stats() const;

  // client_writes.cc: the unsent buffer, frames and resends.
  Result<void> Write(protocol::EntityId entity, const UnsentWrite& write);
  // Merges `w` into the replica with a fresh stamp; the message goes to scratch_.
  Result<runtime::MergeOutcome> StampLocally(protocol::EntityId entity, const UnsentWrite& w);
  void StampUnsent();
  // True when the replica still holds exactly what the stamped write `w` wrote.
  bool StillOurs(protocol::EntityId entity, const UnsentWrite& w) const;
  void AppendUnsent(protocol::EntityId entity, const UnsentWrite& w, std::vector<uint8_t>& out);
  // A frame of own writes refused as rate_limited: its writes go back to the unsent buffer.
  void Requeue(const PendingFrame& frame);
  uint64_t Flush();
  uint64_t SendCrdt(std::span<const uint8_t> dcl);
  bool Transmit(PendingFrame& frame);
  void AddPending(std::vector<uint8_t> dcl, bool owned);
  // Turns interpolation on in `rt` when it is on for the client (a rebuilt replica).
  void CarryInterpolation(runtime::Runtime& rt);

  Client& owner_;
  ClientOptions options_;
  runtime::Runtime runtime_;
  std::vector<std::string> servers_;  // the URL list as given, one URL each
  std::vector<ServerUrl> urls_;       // parsed, same order
  std::size_t server_ = 0;            // index of the current (or last) connection's server
  std::size_t state_server_ = 0;      // the server whose state the replica last applied
  bool started_ = false;
  // Declared before connection_: the Connection (its sockets and timers) must go first.
  std::optional<net::asio::io_context> ioc_;
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
  uint32_t unavailable_retries_ = 0;        // joins refused `unavailable` in a row (retried anyway)
  std::optional<ErrorCode> session_fatal_;  // fatal Error received on the current connection
  bool last_end_was_violation_ = false;     // don't reset the backoff after a protocol error
  // The latest connection whose transport opened (set on the network strand).
  std::atomic<uint64_t> opened_connection_{0};
  ClientError last_error_;
  bool refused_ = false;                    // closed for good after the server's refusal
  std::optional<TimePoint> failing_since_;  // no connection reached its state since then
  uint64_t bytes_sent_closed_ = 0;          // transport bytes of ended connections
  uint64_t bytes_received_closed_ = 0;

  // Caller's thread: replica and writes.
  std::optional<Welcome> welcome_;
  std::unique_ptr<runtime::Runtime> rebuild_;                   // a resync snapshot being applied
  std::optional<runtime::InterpolationOptions> interpolation_;  // on, with these options
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
  // The server's frame limit (the latest Welcome's; the documented default before one).
  uint32_t server_frame_bytes_ = session::kDefaultServerMaxFrameBytes;
  bool frame_limit_logged_ = false;              // Flush said that no write fits it
  std::optional<TimePoint> flush_paused_until_;  // after a rate_limited refusal
  uint32_t rate_limit_pauses_ = 0;
  std::vector<uint8_t> scratch_;
  std::vector<Refusal> refusals_;
  // A refused own DELETE_ENTITY (OnWriteRefused): once this frame is acked, the connection is
  // closed and the next Hello asks for a snapshot (snapshot_next_).
  uint64_t resync_after_frame_ = 0;
  bool snapshot_next_ = false;
  ClientStats stats_;
  std::optional<InterestAck> interest_ack_;
  std::vector<protocol::EntityId> leaving_;  // OutOfView's entities, reused
};

namespace internal {

// Test support: what no caller of the public API may do.
struct ClientTestPeer {
  // The replica, writable: a test plants state the server never had (a lost commit).
  static runtime::Runtime& MutableRuntime(Client& c) { return c.impl_->runtime_; }
};

}  // namespace internal
}  // namespace scenecrdt::client
