// SPDX-License-Identifier: Apache-2.0
// Owns the replica client: Hello, the inbox between the network strand and the caller's
// thread, applying state and live frames, Lamport writes, acks and refusals.
#include "client/client.h"

#include <algorithm>

namespace scenecrdt::client {

Client::Client(ClientOptions options) : options_(std::move(options)), runtime_(options_.limits) {}

Client::~Client() { Stop(); }

Result<void> Client::Start() {
  own_ioc_.emplace();
  auto started = StartOn(*own_ioc_);
  if (!started.has_value()) return started;
  thread_ = std::thread([this] { own_ioc_->run(); });
  return {};
}

Result<void> Client::Start(net::asio::io_context& ioc) { return StartOn(ioc); }

Result<void> Client::StartOn(net::asio::io_context& ioc) {
  auto url = ParseServerUrl(options_.url);
  if (!url.has_value()) return url.error();
  if (!session::IsValidSceneName(options_.scene)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "scene names are 1..64 characters of A-Z a-z 0-9 _ . -");
  }
  ConnectionHandlers handlers;
  handlers.on_open = [this] {
    session::Hello hello;
    hello.scene = options_.scene;
    hello.token = options_.token;
    hello.resume_sequence = options_.resume_sequence;
    hello.client_name = options_.client_name;
    connection_->Send(session::BuildFrame(hello));
  };
  handlers.on_frame = [this](const session::Frame& frame, std::span<const uint8_t> raw) {
    if (const auto* ping = std::get_if<session::Ping>(&frame)) {
      connection_->Send(session::BuildFrame(session::Pong{ping->nonce, ping->sent_us}));
      return;
    }
    Push(std::vector<uint8_t>(raw.begin(), raw.end()), false, {});
  };
  handlers.on_closed = [this](const Error& error) { Push({}, true, error); };
  connection_ = std::make_shared<Connection>(ioc, url.value(), options_.scene, options_.connection,
                                             std::move(handlers));
  connection_->Start();
  return {};
}

void Client::Stop() {
  if (connection_) connection_->Close();
  if (thread_.joinable()) {
    // Closing cancels every pending operation, so run() returns once their handlers ran:
    // nothing referencing the Connection outlives the io_context.
    thread_.join();
  }
}

void Client::Push(std::vector<uint8_t> frame, bool closed, Error error) {
  bool pause = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (closed) {
      inbox_closed_ = true;
      inbox_error_ = error;
    } else {
      inbox_bytes_ += frame.size();
      inbox_.push_back(std::move(frame));
      if (!paused_ && inbox_bytes_ > options_.max_inbox_bytes) pause = paused_ = true;
    }
  }
  if (pause) connection_->SetReading(false);
  cv_.notify_all();
}

void Client::WaitForInput(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !inbox_.empty() || (inbox_closed_ && !closed_); });
}

std::size_t Client::Poll() {
  std::deque<std::vector<uint8_t>> frames;
  bool closed = false;
  Error error{};
  bool resume = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    frames.swap(inbox_);
    inbox_bytes_ = 0;
    closed = inbox_closed_;
    error = inbox_error_;
    if (paused_) {
      paused_ = false;
      resume = true;
    }
  }
  if (resume) connection_->SetReading(true);
  for (const auto& bytes : frames) {
    auto frame = session::ReadFrame(bytes, {options_.connection.max_frame_bytes});
    if (frame.has_value()) Handle(frame.value());
  }
  if (closed && !closed_) {
    closed_ = true;
    close_error_ = error;
  }
  if (state_ready_) Flush();
  return frames.size();
}

bool Client::PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    Poll();
    if (done()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || closed_) return done();
    WaitForInput(std::min<std::chrono::milliseconds>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
        std::chrono::milliseconds(100)));
  }
}

void Client::Handle(const session::Frame& frame) {
  if (const auto* w = std::get_if<session::Welcome>(&frame)) {
    welcome_ = *w;
  } else if (const auto* c = std::get_if<session::Crdt>(&frame)) {
    (void)runtime_.ApplyCrdt(c->data);
    if (c->is_state) {
      state_bytes_ += c->data.size();
      if (c->frame_sequence == 0) {  // the last state frame
        scene_sequence_ = c->scene_sequence;
        if (!state_ready_) {
          state_ready_ = true;
          ApplyHeld();
        }
      }
    } else {
      live_bytes_ += c->data.size();
      ++live_frames_;
      scene_sequence_ = std::max(scene_sequence_, c->scene_sequence);
    }
  } else if (const auto* a = std::get_if<session::Ack>(&frame)) {
    acked_ = std::max(acked_, a->frame_sequence);
    while (!pending_.empty() && pending_.front() <= acked_) pending_.pop_front();
    if (on_ack) on_ack(acked_);
  } else if (const auto* e = std::get_if<session::ErrorFrame>(&frame)) {
    refusals_.push_back(Refusal{e->code, e->text, e->frame_sequence, e->fatal});
    if (e->frame_sequence != 0) {
      std::erase(pending_, e->frame_sequence);
    }
  }
}

std::vector<Refusal> Client::TakeRefusals() {
  std::vector<Refusal> out;
  out.swap(refusals_);
  return out;
}

Result<void> Client::WriteTransform(protocol::EntityId entity, const protocol::Transform& t) {
  if (!state_ready_) {
    auto it =
        std::find_if(held_.begin(), held_.end(), [&](const auto& h) { return h.first == entity; });
    if (it != held_.end()) {
      it->second = t;
    } else {
      held_.emplace_back(entity, t);
    }
    return {};
  }
  auto r = runtime_.WriteTransform(entity, t, outgoing_);
  if (!r.has_value()) return r.error();
  return {};
}

void Client::ApplyHeld() {
  // Stamped now, on top of the snapshot: stored + 1 for every key the snapshot holds.
  for (const auto& [entity, t] : held_) (void)runtime_.WriteTransform(entity, t, outgoing_);
  held_.clear();
  Flush();
}

uint64_t Client::Flush() {
  if (outgoing_.empty()) return 0;
  const uint64_t fs = SendFrame(outgoing_);
  outgoing_.clear();
  return fs;
}

uint64_t Client::SendCrdt(std::span<const uint8_t> dcl) {
  // Merged locally too: the server does not echo a session's own changes back to it.
  (void)runtime_.ApplyCrdt(dcl);
  return SendFrame(dcl);
}

uint64_t Client::SendFrame(std::span<const uint8_t> dcl) {
  if (!connection_ || closed_) return 0;
  const uint64_t fs = next_frame_sequence_;
  session::Crdt crdt;
  crdt.frame_sequence = fs;
  crdt.data = dcl;
  if (!connection_->Send(session::BuildFrame(crdt))) return 0;
  ++next_frame_sequence_;
  pending_.push_back(fs);
  return fs;
}

}  // namespace scenecrdt::client
