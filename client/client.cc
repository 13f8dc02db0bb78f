// SPDX-License-Identifier: Apache-2.0
// Owns the replica client: Hello (with the resume position), the inbox between the network
// strand and the caller's thread, applying state and live frames, reconnecting with backoff,
// resending unacknowledged frames, held and re-stamped Lamport writes, acks and refusals.
//
// Why the caller's thread decides everything: the resume position, the unacked frames and the
// replica all live there, so a reconnect started from Poll() sends exactly the last applied
// sequence and resends in frame order without any lock beyond the inbox's.
#include "scenecrdt/client/client.h"

#include <algorithm>
#include <cstdio>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/sequence.h"

namespace scenecrdt::client {

namespace {

// Transform PUTs per frame built by Flush (68 bytes each: ~272 KB, under the server's 1 MiB
// frame limit and its message burst).
constexpr std::size_t kMaxWritesPerFrame = 4000;
constexpr std::size_t kMaxRefusalsKept = 1024;
// Pause of Flush after a rate_limited refusal of an own frame: doubles up to the cap.
constexpr int64_t kRateLimitPauseMs = 100;
constexpr int64_t kRateLimitPauseCapMs = 2000;

// Refusals after which reconnecting cannot help: the same Hello would get the same answer.
bool IsPermanent(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnauthorized:
    case ErrorCode::kProtocolVersion:
    case ErrorCode::kBadRequest:
      return true;
    default:
      return false;
  }
}

// Fatal errors that are not the server going away or shedding load: a protocol violation
// (ours, or bytes corrupted on the way). Reconnecting is allowed, but the backoff keeps
// growing so a client that keeps provoking it does not loop at the initial delay.
bool IsViolation(ErrorCode code) {
  switch (code) {
    case ErrorCode::kShuttingDown:
    case ErrorCode::kSlowConsumer:
    case ErrorCode::kSceneFull:
    case ErrorCode::kOk:
      return false;
    default:
      return true;
  }
}

std::string Format(const char* fmt, auto... args) {
  char line[512];
  std::snprintf(line, sizeof line, fmt, args...);
  return line;
}

unsigned long long Ull(uint64_t v) { return static_cast<unsigned long long>(v); }

// Logs show both halves of a scene sequence: incarnation:store sequence.
std::string SequenceText(uint64_t s) {
  return Format("%llu:%llu", Ull(session::SequenceIncarnation(s)), Ull(session::LocalSequence(s)));
}

}  // namespace

Client::Client(ClientOptions options)
    : options_(std::move(options)),
      runtime_(options_.limits),
      backoff_(options_.reconnect.backoff) {}

Client::~Client() { Stop(); }

Client::TimePoint Client::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

void Client::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

Result<void> Client::Start() {
  own_ioc_.emplace();
  auto started = StartOn(*own_ioc_);
  if (!started.has_value()) return started;
  // Keeps run() going between connections (reconnect); released by Stop().
  work_.emplace(own_ioc_->get_executor());
  thread_ = std::thread([this] { own_ioc_->run(); });
  return {};
}

Result<void> Client::Start(net::asio::io_context& ioc) { return StartOn(ioc); }

Result<void> Client::StartOn(net::asio::io_context& ioc) {
  auto url = ParseServerUrl(options_.url);
  if (!url.has_value()) return url.error();
  // A ws://HOST:PORT/scene/NAME URL fills an empty options.scene and must agree with a given one.
  if (options_.scene.empty()) options_.scene = url->scene;
  if (!url->scene.empty() && url->scene != options_.scene) {
    return MakeError(ErrorCode::kInvalidArgument, "the server URL names another scene");
  }
  if (!session::IsValidSceneName(options_.scene)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "scene names are 1..64 characters of A-Z a-z 0-9 _ . -");
  }
  url_ = url.value();
  ioc_ = &ioc;
  Connect();
  return {};
}

void Client::Connect() {
  ++connection_id_;
  ++stats_.connect_attempts;
  connection_active_ = true;
  synced_ = false;
  session_fatal_.reset();
  const uint64_t id = connection_id_;
  session::Hello hello;
  hello.scene = options_.scene;
  hello.token = options_.token;
  hello.resume_sequence =
      state_ready_ ? std::optional<uint64_t>(scene_sequence_) : options_.resume_sequence;
  hello.client_name = options_.client_name;
  hello.compression = OfferedCompression(url_, options_.connection);
  if (id > 1) {
    Log(Format("connecting to %s (attempt %llu, %s)", options_.url.c_str(), Ull(id),
               hello.resume_sequence
                   ? ("resume from " + SequenceText(*hello.resume_sequence)).c_str()
                   : "no resume position"));
  }
  ConnectionOptions connection = options_.connection;
  if (options_.reconnect.enabled && connection.ping_interval_ms == 0) {
    connection.ping_interval_ms = options_.reconnect.ping_interval_ms;
    connection.pong_timeout_ms = options_.reconnect.pong_timeout_ms;
  }
  // The handlers live inside the Connection: they reach it through a weak pointer (no cycle)
  // and tag what they push with the connection id, so a late item of an old connection is
  // recognised and dropped by Poll().
  auto link = std::make_shared<std::weak_ptr<Connection>>();
  ConnectionHandlers handlers;
  handlers.on_open = [link, frame = session::BuildFrame(hello)] {
    if (auto c = link->lock()) c->Send(frame);
  };
  handlers.on_frame = [this, link, id](const session::Frame& frame, std::span<const uint8_t> raw) {
    if (const auto* ping = std::get_if<session::Ping>(&frame)) {
      if (auto c = link->lock()) {
        c->Send(session::BuildFrame(session::Pong{ping->nonce, ping->sent_us}));
      }
      return;
    }
    if (std::holds_alternative<session::Pong>(frame)) return;  // the keepalive's
    InboxItem item;
    item.connection = id;
    item.frame.assign(raw.begin(), raw.end());
    Push(std::move(item), link);
  };
  handlers.on_closed = [this, link, id](const Error& error) {
    InboxItem item;
    item.connection = id;
    item.closed = true;
    item.error = error;
    Push(std::move(item), link);
  };
  connection_ =
      std::make_shared<Connection>(*ioc_, url_, options_.scene, connection, std::move(handlers));
  *link = connection_;
  connection_->Start();
}

void Client::Stop() {
  stopped_ = true;
  reconnect_at_.reset();
  if (connection_) connection_->Close();
  work_.reset();
  if (thread_.joinable()) {
    // Closing cancels every pending operation and the work guard is gone, so run() returns
    // once their handlers ran: nothing referencing the Connection outlives the io_context.
    thread_.join();
  }
}

void Client::Push(InboxItem item, const std::shared_ptr<std::weak_ptr<Connection>>& link) {
  item.received = Now();
  item.received_wall = std::chrono::system_clock::now();
  bool pause = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    inbox_bytes_ += item.frame.size();
    inbox_.push_back(std::move(item));
    if (!paused_ && inbox_bytes_ > options_.max_inbox_bytes) pause = paused_ = true;
  }
  if (pause) {
    if (auto c = link->lock()) c->SetReading(false);
  }
  cv_.notify_all();
}

void Client::WaitForInput(std::chrono::milliseconds timeout) {
  auto wait = timeout;
  if (reconnect_at_ && !connection_active_) {
    const auto until =
        std::chrono::duration_cast<std::chrono::milliseconds>(*reconnect_at_ - Now());
    wait = std::clamp(until, std::chrono::milliseconds(0), timeout);
  }
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, wait, [&] { return !inbox_.empty(); });
}

std::size_t Client::Poll() {
  std::deque<InboxItem> items;
  bool resume_reading = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items.swap(inbox_);
    inbox_bytes_ = 0;
    if (paused_) {
      paused_ = false;
      resume_reading = true;
    }
  }
  if (resume_reading && connection_) connection_->SetReading(true);
  for (const InboxItem& item : items) {
    if (item.connection != connection_id_ || !connection_active_) continue;  // an old one
    if (item.closed) {
      OnDisconnected(item.error);
      continue;
    }
    auto frame = session::ReadFrame(item.frame, {options_.connection.max_frame_bytes});
    if (frame.has_value()) Handle(frame.value(), item);
  }
  if (!closed_ && !connection_active_ && reconnect_at_ && Now() >= *reconnect_at_) {
    reconnect_at_.reset();
    Connect();
  }
  if (synced_) Flush();
  return items.size();
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

void Client::Handle(const session::Frame& frame, const InboxItem& item) {
  if (const auto* w = std::get_if<session::Welcome>(&frame)) {
    OnWelcome(*w);
  } else if (const auto* c = std::get_if<session::Crdt>(&frame)) {
    if (on_crdt) {
      CrdtEvent event;
      event.crdt = c;
      event.connection = item.connection;
      event.resumed = c->is_state && welcome_ && welcome_->resumed;
      event.resync = c->is_state && rebuild_ != nullptr;
      event.received = item.received;
      event.received_wall = item.received_wall;
      on_crdt(event);
    }
    if (c->is_state) {
      runtime::Runtime& target = rebuild_ ? *rebuild_ : runtime_;
      (void)target.ApplyCrdt(c->data);
      ++stats_.state_frames;
      connection_state_bytes_ += c->data.size();
      (welcome_ && welcome_->resumed ? stats_.resume_bytes : stats_.snapshot_bytes) +=
          c->data.size();
      if (c->frame_sequence == 0) OnStateApplied(c->scene_sequence);  // the last state frame
    } else {
      (void)(rebuild_ ? *rebuild_ : runtime_).ApplyCrdt(c->data);
      stats_.live_bytes += c->data.size();
      ++stats_.live_frames;
      scene_sequence_ = c->scene_sequence;
    }
  } else if (const auto* a = std::get_if<session::Ack>(&frame)) {
    acked_ = std::max(acked_, a->frame_sequence);
    while (!pending_.empty() && pending_.front().frame_sequence <= acked_) {
      pending_bytes_ -= pending_.front().dcl.size();
      pending_.pop_front();
      ++stats_.acked_frames;
    }
    rate_limit_pauses_ = 0;
    if (on_ack) on_ack(acked_);
  } else if (const auto* e = std::get_if<session::ErrorFrame>(&frame)) {
    OnRefusal(*e);
  }
}

void Client::OnWelcome(const session::Welcome& welcome) {
  welcome_ = welcome;
  synced_ = false;
  connection_state_bytes_ = 0;
  ++stats_.connects;
  if (stats_.connects > 1) ++stats_.reconnects;
  if (welcome.resumed) {
    ++stats_.resumes;
  } else {
    ++stats_.snapshots;
    // A snapshot after the first one (the server restarted, or lost our position): it
    // replaces the replica, which may hold changes the server no longer has.
    if (state_ready_) rebuild_ = std::make_unique<runtime::Runtime>(options_.limits);
  }
}

void Client::OnStateApplied(uint64_t scene_sequence) {
  const bool resync = rebuild_ != nullptr;
  if (resync) {
    runtime_ = std::move(*rebuild_);
    rebuild_.reset();
    ++stats_.resyncs;
    // Our unacknowledged frames are on their way again: the replica shows them, as before.
    for (const PendingFrame& p : pending_) (void)runtime_.ApplyCrdt(p.dcl);
  }
  scene_sequence_ = scene_sequence;
  state_ready_ = true;
  synced_ = true;
  failed_attempts_ = 0;
  if (!last_end_was_violation_) backoff_.Reset();
  stats_.last_state_bytes = connection_state_bytes_;
  const bool resumed = welcome_ && welcome_->resumed;
  Log(Format("joined scene '%s' (connection %llu, session %llu, sequence %s): %s of %llu bytes",
             options_.scene.c_str(), Ull(connection_id_), Ull(welcome_ ? welcome_->session_id : 0),
             SequenceText(scene_sequence).c_str(),
             resumed ? "resume delta"
                     : (resync ? "snapshot (cannot resume: replica rebuilt)" : "snapshot"),
             Ull(connection_state_bytes_)));
  // 1. Unacknowledged frames, as they are and in frame order: every frame at or below a
  //    cumulative Ack of this connection has then been sent on it.
  const uint64_t resent_before = stats_.resent_frames;
  const uint64_t resent_bytes_before = stats_.resent_bytes;
  bool sent_all = true;
  for (PendingFrame& p : pending_) {
    if (!Transmit(p)) {
      sent_all = false;  // the connection is ending: the next one resends
      break;
    }
  }
  if (stats_.resent_frames > resent_before) {
    Log(Format("resent %llu unacknowledged frames (%llu bytes)",
               Ull(stats_.resent_frames - resent_before),
               Ull(stats_.resent_bytes - resent_bytes_before)));
  }
  // 2. Writes never sent: stamp the held ones, re-stamp the offline ones the state overtook.
  StampUnsent();
  flush_paused_until_.reset();
  if (sent_all) Flush();
}

void Client::StampUnsent() {
  uint64_t held = 0;
  uint64_t restamped = 0;
  for (auto it = unsent_.begin(); it != unsent_.end();) {
    const protocol::EntityId entity = it->first;
    UnsentWrite& w = it->second;
    if (w.stamped) {
      // Still ours when the register holds exactly our stamp and bytes: send it as stamped.
      const auto r = runtime_.store().FindRegister(protocol::kTransformComponentId, entity);
      if (r && r->has_data && r->timestamp == w.timestamp && r->transform &&
          protocol::StoreTransform(*r->transform) == protocol::StoreTransform(w.value)) {
        ++it;
        continue;
      }
      ++restamped;
    } else {
      ++held;
    }
    scratch_.clear();
    auto written = runtime_.WriteTransform(entity, w.value, scratch_);
    if (!written.has_value()) {
      ++stats_.dropped_writes;
      Log(Format("dropped the write of entity %u: %s", entity, written.error().detail));
      it = unsent_.erase(it);
      continue;
    }
    if (scratch_.empty()) {  // the state already holds this value: nothing to send
      it = unsent_.erase(it);
      continue;
    }
    w.timestamp = runtime_.store().FindRegister(protocol::kTransformComponentId, entity)->timestamp;
    w.stamped = true;
    ++it;
  }
  stats_.held_writes += held;
  stats_.restamped_writes += restamped;
  if (held > 0) Log(Format("stamped %llu writes held before the snapshot", Ull(held)));
  if (restamped > 0) {
    Log(Format("re-stamped %llu offline writes over newer server state", Ull(restamped)));
  }
}

void Client::OnRefusal(const session::ErrorFrame& e) {
  if (e.fatal) session_fatal_ = e.code;
  bool report = true;
  if (e.frame_sequence != 0 && !e.fatal) {
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const PendingFrame& p) {
      return p.frame_sequence == e.frame_sequence;
    });
    if (it != pending_.end()) {
      if (e.code == ErrorCode::kRateLimited && it->owned) {
        // Refused whole, nothing merged: our writes go back to the unsent buffer (unless a
        // newer write of the entity is there) and Flush pauses, so they coalesce meanwhile.
        (void)protocol::DecodeStream(it->dcl, {}, [&](const protocol::CrdtMessage& m) {
          if (m.data.size() != protocol::Transform::kSize) return;
          const protocol::Transform t =
              protocol::LoadTransform(std::span<const uint8_t, protocol::Transform::kSize>(
                  m.data.data(), protocol::Transform::kSize));
          unsent_.try_emplace(m.entity, UnsentWrite{t, m.timestamp, true});
        });
        ++stats_.rate_limited_frames;
        const int64_t pause_ms =
            std::min(kRateLimitPauseCapMs, kRateLimitPauseMs << std::min(rate_limit_pauses_, 5u));
        ++rate_limit_pauses_;
        flush_paused_until_ = Now() + std::chrono::milliseconds(pause_ms);
        report = false;
      }
      pending_bytes_ -= it->dcl.size();
      pending_.erase(it);
    }
  }
  if (report) {
    if (refusals_.size() >= kMaxRefusalsKept) refusals_.erase(refusals_.begin());
    refusals_.push_back(Refusal{e.code, e.text, e.frame_sequence, e.fatal});
  }
}

void Client::OnDisconnected(const Error& error) {
  connection_active_ = false;
  const bool reached_state = synced_;
  synced_ = false;
  rebuild_.reset();
  if (connection_) {
    bytes_sent_closed_ += connection_->bytes_sent();
    bytes_received_closed_ += connection_->bytes_received();
  }
  if (stopped_) {
    closed_ = true;
    close_error_ = error;
    return;
  }
  ++stats_.disconnects;
  if (!reached_state) ++failed_attempts_;
  last_end_was_violation_ = session_fatal_ && IsViolation(*session_fatal_);
  const ReconnectOptions& r = options_.reconnect;
  const char* why_not = nullptr;
  if (!r.enabled) {
    why_not = "reconnect is off";
  } else if (session_fatal_ && IsPermanent(*session_fatal_)) {
    why_not = "the server's refusal is permanent";
  } else if (!state_ready_ && !r.retry_first_connect) {
    why_not = "the first connection failed";
  } else if (r.max_failed_attempts != 0 && failed_attempts_ >= r.max_failed_attempts) {
    why_not = "too many failed attempts";
  }
  std::string reason = error.detail ? error.detail : "closed";
  if (session_fatal_) reason += std::string(" after ") + ErrorCodeName(*session_fatal_);
  if (why_not) {
    closed_ = true;
    close_error_ = error;
    if (r.enabled) Log(Format("connection ended (%s); giving up: %s", reason.c_str(), why_not));
    return;
  }
  const auto delay = backoff_.Next();
  reconnect_at_ = Now() + delay;
  Log(Format(
      "connection lost (%s); reconnecting in %lld ms (%zu unacked frames, %zu unsent "
      "writes kept)",
      reason.c_str(), static_cast<long long>(delay.count()), pending_.size(), unsent_.size()));
}

std::vector<Refusal> Client::TakeRefusals() {
  std::vector<Refusal> out;
  out.swap(refusals_);
  return out;
}

ClientStats Client::stats() const {
  ClientStats s = stats_;
  s.bytes_sent = bytes_sent_closed_;
  s.bytes_received = bytes_received_closed_;
  if (connection_ && connection_active_) {
    s.bytes_sent += connection_->bytes_sent();
    s.bytes_received += connection_->bytes_received();
  }
  return s;
}

Result<void> Client::WriteTransform(protocol::EntityId entity, const protocol::Transform& t) {
  if (closed_) return MakeError(ErrorCode::kIo, "the client is closed");
  if (!protocol::IsFinite(t)) {
    return MakeError(ErrorCode::kNonFiniteTransform, "servers refuse non-finite Transforms");
  }
  auto it = unsent_.find(entity);
  if (it == unsent_.end() && unsent_.size() >= options_.max_unsent_writes) {
    return MakeError(ErrorCode::kRateLimited,
                     "the unsent-write buffer is full (ClientOptions::max_unsent_writes)");
  }
  if (!state_ready_) {
    // Held unstamped: a stamp now (1, or our replica's + 1) could lose to, or silently
    // override, state we have not seen yet. StampUnsent() stamps it on top of the snapshot.
    if (it != unsent_.end()) {
      it->second.value = t;
    } else {
      unsent_.emplace(entity, UnsentWrite{t, 0, false});
    }
    return {};
  }
  scratch_.clear();
  auto written = runtime_.WriteTransform(entity, t, scratch_);
  if (!written.has_value()) return written.error();
  if (scratch_.empty()) return {};  // unchanged: nothing to send
  const uint32_t timestamp =
      runtime_.store().FindRegister(protocol::kTransformComponentId, entity)->timestamp;
  unsent_.insert_or_assign(entity, UnsentWrite{t, timestamp, true});
  if (!synced_) ++stats_.offline_writes;
  return {};
}

uint64_t Client::Flush() {
  if (!synced_ || unsent_.empty()) return 0;
  if (flush_paused_until_) {
    if (Now() < *flush_paused_until_) return 0;
    flush_paused_until_.reset();
  }
  constexpr std::size_t kPutBytes = 24 + protocol::Transform::kSize;
  uint64_t last = 0;
  std::vector<uint8_t> dcl;
  while (!unsent_.empty()) {
    const std::size_t n = std::min(unsent_.size(), kMaxWritesPerFrame);
    if (pending_bytes_ + n * kPutBytes > options_.max_unacked_bytes) break;  // coalesce
    dcl.clear();
    dcl.reserve(n * kPutBytes);
    auto it = unsent_.begin();
    for (std::size_t i = 0; i < n; ++i) {
      protocol::AppendTransformPut(it->first, it->second.timestamp, it->second.value, dcl);
      it = unsent_.erase(it);
    }
    AddPending(dcl, /*owned=*/true);
    last = pending_.back().frame_sequence;
    if (!Transmit(pending_.back())) break;
  }
  return last;
}

uint64_t Client::SendCrdt(std::span<const uint8_t> dcl) {
  if (closed_ || stopped_) return 0;
  if (pending_bytes_ + dcl.size() > options_.max_unacked_bytes) return 0;
  // Merged locally too: the server does not echo a session's own changes back to it.
  (void)runtime_.ApplyCrdt(dcl);
  AddPending(std::vector<uint8_t>(dcl.begin(), dcl.end()), /*owned=*/false);
  PendingFrame& p = pending_.back();
  if (synced_) (void)Transmit(p);
  return p.frame_sequence;
}

void Client::AddPending(std::vector<uint8_t> dcl, bool owned) {
  PendingFrame p;
  p.frame_sequence = next_frame_sequence_++;
  p.owned = owned;
  pending_bytes_ += dcl.size();
  p.dcl = std::move(dcl);
  pending_.push_back(std::move(p));
}

bool Client::Transmit(PendingFrame& p) {
  if (!connection_ || !connection_active_) return false;
  session::Crdt crdt;
  crdt.frame_sequence = p.frame_sequence;
  crdt.data = p.dcl;
  if (!connection_->Send(session::BuildFrame(crdt))) {
    // Closed meanwhile, or its queue is full: either way this connection can no longer carry
    // every frame in order, so end it; the next one resends everything unacknowledged.
    connection_->Close();
    return false;
  }
  const bool resend = p.sent_on != 0;
  p.sent_on = connection_id_;
  ++stats_.frames_sent;
  if (resend) {
    ++stats_.resent_frames;
    stats_.resent_bytes += p.dcl.size();
  }
  if (on_send) on_send(p.frame_sequence, p.dcl, resend);
  return true;
}

}  // namespace scenecrdt::client
