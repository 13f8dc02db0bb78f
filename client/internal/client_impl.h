// SPDX-License-Identifier: Apache-2.0
// Owns Client::Impl (internal: not installed), the state behind the public Client: the network
// side (an io_context on the client's thread, the current Connection), the inbox between them
// and the caller's thread (inbox.h), and everything the caller's thread decides (the replica,
// resume, when and where to reconnect), in client_impl.cc; the writes, their resends and
// re-stamps are the Outbox's (outbox.h). client.cc is the public Client over it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/client/backoff.h"
#include "scenecrdt/client/client.h"
#include "scenecrdt/client/internal/connection.h"
#include "scenecrdt/client/internal/inbox.h"
#include "scenecrdt/client/internal/outbox.h"
#include "scenecrdt/client/url.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client {

struct Client::Impl {
  using TimePoint = std::chrono::steady_clock::time_point;
  using InboxItem = internal::InboxItem;
  using UnsentWrite = internal::Outbox::UnsentWrite;
  using WriteKind = internal::Outbox::WriteKind;

  Impl(Client& owner, ClientOptions options);

  TimePoint Now() const;
  void Log(const std::string& line) const;

  Result<void> ParseServers();
  void Stop();

  // Connections, the inbox and the frames.
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

  // The writes (the Outbox decides; these check the client's state and send).
  Result<void> Write(protocol::EntityId entity, const UnsentWrite& write);
  uint64_t Flush() { return outbox_.Flush(synced_); }
  uint64_t SendCrdt(std::span<const uint8_t> dcl);
  // The Outbox's transmit hook: one frame on the current connection.
  bool Transmit(internal::Outbox::PendingFrame& frame);
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

  internal::Inbox inbox_;  // network strand -> caller's thread

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
  std::vector<Refusal> refusals_;
  // A refused own DELETE_ENTITY (OnWriteRefused): once this frame is acked, the connection is
  // closed and the next Hello asks for a snapshot (snapshot_next_).
  uint64_t resync_after_frame_ = 0;
  bool snapshot_next_ = false;
  ClientStats stats_;
  std::optional<InterestAck> interest_ack_;
  std::vector<protocol::EntityId> leaving_;  // OutOfView's entities, reused
  // Last: it refers to options_, runtime_ and stats_.
  internal::Outbox outbox_;
};

namespace internal {

// Test support: what no caller of the public API may do.
struct ClientTestPeer {
  // The replica, writable: a test plants state the server never had (a lost commit).
  static runtime::Runtime& MutableRuntime(Client& c) { return c.impl_->runtime_; }
};

}  // namespace internal
}  // namespace scenecrdt::client
