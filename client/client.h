// SPDX-License-Identifier: Apache-2.0
// Owns Client: a scene replica over one Connection. The network side (a strand of an
// io_context: the client's own thread or the caller's) only moves bytes: verified frames go
// into a bounded inbox. The caller's thread (a render loop) calls Poll() to apply them to the
// Runtime, Update() once per frame, then reads world matrices and the change list; the
// Runtime is only ever touched from that thread.
//
// Writes: WriteTransform() merges locally with a Lamport timestamp and queues the message;
// Flush() sends the queued messages as one Crdt frame (Poll() flushes too). Writes made
// before the first snapshot is applied are held and stamped after it, so they cannot
// override newer server state. SendCrdt() sends a DCL stream as it is (`scenecrdt send`).
// Acks are cumulative: acked_frame_sequence() and pending_frames() track them.
//
// For issue 6 (reconnect with backoff, resume, resend): the client keeps the last applied
// scene sequence (scene_sequence()) and the unacked frames' numbers; a reconnect creates a
// new Connection with Hello.resume_sequence = scene_sequence().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/connection.h"
#include "runtime/runtime.h"

namespace scenecrdt::client {

struct ClientOptions {
  std::string url;  // tcp://HOST:PORT or ws://HOST:PORT
  std::string scene;
  std::string token;
  std::string client_name = "scenecrdt-client";
  std::optional<uint64_t> resume_sequence;
  runtime::StoreLimits limits;
  // Received bytes waiting for Poll(); beyond it the client stops reading (the server then
  // coalesces for us).
  std::size_t max_inbox_bytes = 64u << 20;
  ConnectionOptions connection;
};

struct Refusal {
  ErrorCode code = ErrorCode::kOk;
  std::string text;
  uint64_t frame_sequence = 0;
  bool fatal = false;
};

class Client {
 public:
  explicit Client(ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Runs the network side on a thread of its own.
  Result<void> Start();
  // Runs the network side on the caller's io_context (which the caller runs). Call Stop()
  // and let the io_context finish (or stop it) before destroying the Client.
  Result<void> Start(net::asio::io_context& ioc);
  // Closes the connection and joins the own thread, if any.
  void Stop();

  // ---- Caller's thread ----
  // Applies everything received; flushes pending writes. Returns the frames handled.
  std::size_t Poll();
  // Blocks until something arrives (or the connection ends) or `timeout` passes.
  void WaitForInput(std::chrono::milliseconds timeout);
  // Polls until `done()` or the deadline; true when done() became true.
  bool PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);
  void Update(const runtime::UpdateOptions& options = {}) { runtime_.Update(options); }
  runtime::Runtime& runtime() { return runtime_; }
  const runtime::CrdtStore& store() const { return runtime_.store(); }

  // Local Lamport write (held until the snapshot is applied).
  Result<void> WriteTransform(protocol::EntityId entity, const protocol::Transform& t);
  // Sends queued local writes as one Crdt frame; its frame sequence, or 0 when nothing queued.
  uint64_t Flush();
  // Merges `dcl` into the replica and sends it as one Crdt frame, as it is (its own
  // timestamps); returns its frame sequence (0: not sent, queue full or closed).
  uint64_t SendCrdt(std::span<const uint8_t> dcl);

  // ---- State (caller's thread, after Poll) ----
  bool welcomed() const { return welcome_.has_value(); }
  const std::optional<session::Welcome>& welcome() const { return welcome_; }
  bool state_ready() const { return state_ready_; }
  bool closed() const { return closed_; }
  // Why the connection ended (kOk: cleanly), valid when closed().
  const Error& close_error() const { return close_error_; }
  // The last scene sequence fully applied (resume point).
  uint64_t scene_sequence() const { return scene_sequence_; }
  uint64_t acked_frame_sequence() const { return acked_; }
  uint64_t last_frame_sequence() const { return next_frame_sequence_ - 1; }
  std::size_t pending_frames() const { return pending_.size(); }
  // Refusals (Error frames) received since the last call.
  std::vector<Refusal> TakeRefusals();
  // Bytes of Crdt data received in state frames (snapshot / resume delta) and live frames.
  uint64_t state_bytes() const { return state_bytes_; }
  uint64_t live_bytes() const { return live_bytes_; }
  uint64_t live_frames() const { return live_frames_; }
  // Called from Poll for every Ack with the acked frame sequence.
  std::function<void(uint64_t)> on_ack;

 private:
  Result<void> StartOn(net::asio::io_context& ioc);
  void Push(std::vector<uint8_t> frame, bool closed, Error error);
  void Handle(const session::Frame& frame);
  uint64_t SendFrame(std::span<const uint8_t> dcl);
  void ApplyHeld();

  ClientOptions options_;
  runtime::Runtime runtime_;
  // Declared before connection_: the Connection (its sockets and timers) must go first.
  std::optional<net::asio::io_context> own_ioc_;
  std::shared_ptr<Connection> connection_;
  std::thread thread_;

  // Inbox (network strand -> caller's thread).
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::vector<uint8_t>> inbox_;
  std::size_t inbox_bytes_ = 0;
  bool inbox_closed_ = false;
  Error inbox_error_{};
  bool paused_ = false;

  // Caller's thread.
  std::optional<session::Welcome> welcome_;
  bool state_ready_ = false;
  bool closed_ = false;
  Error close_error_{};
  uint64_t scene_sequence_ = 0;
  uint64_t next_frame_sequence_ = 1;
  uint64_t acked_ = 0;
  std::deque<uint64_t> pending_;  // unacked frame sequences, ascending
  std::vector<Refusal> refusals_;
  std::vector<uint8_t> outgoing_;  // local writes not yet sent
  std::vector<std::pair<protocol::EntityId, protocol::Transform>> held_;
  uint64_t state_bytes_ = 0;
  uint64_t live_bytes_ = 0;
  uint64_t live_frames_ = 0;
};

}  // namespace scenecrdt::client
