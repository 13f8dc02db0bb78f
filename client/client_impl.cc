// SPDX-License-Identifier: Apache-2.0
// Owns Client::Impl, the replica client's caller-thread side: the server list, connections
// and their Hello (with the resume position), taking the inbox (client/internal/inbox.h),
// applying state and live frames, acks and refusals, reconnecting with backoff to the next
// server of the list (fail-over), Stop; the writes go through the Outbox
// (client/internal/outbox.h).
//
// Why the caller's thread decides everything: the resume position, the unacked frames and the
// replica all live there, so a reconnect started from Poll() sends exactly the last applied
// sequence and resends in frame order without any lock beyond the inbox's.
#include "scenecrdt/client/internal/client_impl.h"

#include <algorithm>
#include <deque>

#include "scenecrdt/client/internal/format.h"
#include "scenecrdt/protocol/session/sequence.h"

namespace scenecrdt::client {

namespace {

using internal::Format;
using internal::Ull;

constexpr std::size_t kMaxRefusalsKept = 1024;

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
    case ErrorCode::kUnavailable:
    case ErrorCode::kSceneDeleted:
    case ErrorCode::kOk:
      return false;
    default:
      return true;
  }
}

// Logs show both halves of a scene sequence: incarnation:store sequence.
std::string SequenceText(uint64_t s) {
  return Format("%llu:%llu", Ull(session::SequenceIncarnation(s)), Ull(session::LocalSequence(s)));
}

int64_t Microseconds(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}

}  // namespace

Client::Impl::Impl(Client& owner, ClientOptions options)
    : owner_(owner),
      options_(std::move(options)),
      runtime_(options_.limits),
      inbox_(options_.max_inbox_bytes),
      backoff_(options_.reconnect.backoff),
      outbox_(options_, runtime_, stats_,
              internal::Outbox::Hooks{
                  [this](internal::Outbox::PendingFrame& p) { return Transmit(p); },
                  [this](const std::string& line) { Log(line); }, [this] { return Now(); }}) {}

Client::Impl::TimePoint Client::Impl::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

void Client::Impl::Log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

Result<void> Client::Impl::ParseServers() {
  servers_ = SplitServerList(options_.url);
  for (const std::string& u : options_.urls) {
    for (std::string& one : SplitServerList(u)) servers_.push_back(std::move(one));
  }
  if (servers_.empty()) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "no server URL: set ClientOptions::url (tcp://HOST:PORT or ws://HOST:PORT)");
  }
  urls_.clear();
  std::string url_scene;
  for (const std::string& text : servers_) {
    auto url = ParseServerUrl(text);
    if (!url.has_value()) return url.error();
    // A ws://HOST:PORT/scene/NAME URL fills an empty options.scene; every URL that names a
    // scene must name the same one, and agree with a given options.scene.
    if (!url->scene.empty()) {
      if (!url_scene.empty() && url_scene != url->scene) {
        return MakeError(ErrorCode::kInvalidArgument, "the server URLs name different scenes");
      }
      url_scene = url->scene;
    }
    urls_.push_back(std::move(url).value());
  }
  if (options_.scene.empty()) options_.scene = url_scene;
  if (!url_scene.empty() && url_scene != options_.scene) {
    return MakeError(ErrorCode::kInvalidArgument, "the server URL names another scene");
  }
  if (!session::IsValidSceneName(options_.scene)) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "scene names are 1..64 characters of A-Z a-z 0-9 _ . -");
  }
  if (!options_.connection.local_address.empty()) {
    net::error_code ec;
    (void)net::asio::ip::make_address(options_.connection.local_address, ec);
    if (ec) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "ConnectionOptions::local_address is not an IP address");
    }
  }
  return {};
}

void Client::Impl::Stop() {
  stopped_ = true;
  reconnect_at_.reset();
  if (connection_ && connection_active_ && options_.goodbye_timeout_ms != 0) {
    // The goodbye: the server counts `client_closed` (docs/PROTOCOL.md, the Error frame).
    session::ErrorFrame bye;
    bye.text = "goodbye";
    bye.fatal = true;
    connection_->CloseAfter(session::BuildFrame(bye),
                            std::chrono::milliseconds(options_.goodbye_timeout_ms));
  } else if (connection_) {
    connection_->Close();
  }
  work_.reset();
  if (thread_.joinable()) {
    // Closing cancels every pending operation and the work guard is gone, so run() returns
    // once their handlers ran: nothing referencing the Connection outlives the io_context.
    thread_.join();
  }
}

void Client::Impl::Connect() {
  ++connection_id_;
  ++stats_.connect_attempts;
  connection_active_ = true;
  synced_ = false;
  session_fatal_.reset();
  const uint64_t id = connection_id_;
  session::Hello hello;
  hello.scene = options_.scene;
  hello.token = options_.token;
  // A resume position means something only to servers that share the scene's sequences.
  const bool can_resume =
      state_ready_ && (server_ == state_server_ || options_.reconnect.resume_across_servers);
  hello.resume_sequence = can_resume     ? std::optional<uint64_t>(scene_sequence_)
                          : state_ready_ ? std::nullopt
                                         : options_.resume_sequence;
  if (snapshot_next_) {
    hello.resume_sequence.reset();  // a snapshot rebuilds the replica (OnWelcome)
    snapshot_next_ = false;
  }
  hello.client_name = options_.client_name;
  OfferCompression(urls_[server_], options_.connection, hello);
  if (id > 1) {
    Log(Format("connecting to %s (attempt %llu, %s)", servers_[server_].c_str(), Ull(id),
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
  handlers.on_open = [this, id, link, frame = session::BuildFrame(hello)] {
    opened_connection_.store(id, std::memory_order_release);
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
    item.frame = frame;
    item.frame_bytes = raw.size();
    if (const auto* crdt = std::get_if<session::Crdt>(&frame)) {
      item.dcl.assign(crdt->data.begin(), crdt->data.end());
      std::get<session::Crdt>(item.frame).data = {};  // points into `dcl` once handled
    }
    Push(std::move(item), link);
  };
  handlers.on_closed = [this, link, id](const Error& error) {
    InboxItem item;
    item.connection = id;
    item.closed = true;
    item.error = error;
    Push(std::move(item), link);
  };
  connection_ = std::make_shared<Connection>(*ioc_, urls_[server_], options_.scene, connection,
                                             std::move(handlers));
  *link = connection_;
  // Queued on the connection's strand before it starts, so it goes ahead of the Hello (which
  // on_open sends): the join's state is then a snapshot of the view.
  if (options_.interest) SendInterest();
  connection_->Start();
}

void Client::Impl::SendInterest() {
  if (!connection_ || !connection_active_) return;  // the next Connect sends it
  session::SetInterest s;
  if (options_.interest) {
    const Interest& i = *options_.interest;
    s.mode = i.follow_entity ? session::InterestMode::kFollow : session::InterestMode::kPoint;
    s.center_x = i.center.x;
    s.center_y = i.center.y;
    s.center_z = i.center.z;
    s.follow_entity = i.follow_entity.value_or(0);
    s.radius = i.radius;
    s.hysteresis = i.hysteresis;
  }
  connection_->Send(session::BuildFrame(s));
}

void Client::Impl::OnOutOfView(const session::OutOfView& o) {
  ++stats_.out_of_view_frames;
  leaving_.assign(o.entities.begin(), o.entities.end());
  runtime::Runtime& target = rebuild_ ? *rebuild_ : runtime_;
  stats_.out_of_view_entities += target.ForgetEntities(leaving_);
}

void Client::Impl::Push(InboxItem item, const std::shared_ptr<std::weak_ptr<Connection>>& link) {
  item.received = Now();
  item.received_wall = std::chrono::system_clock::now();
  // Paused on the strand now; a resume from Poll is dispatched to the strand, so after this.
  if (inbox_.Push(std::move(item))) {
    if (auto c = link->lock()) c->SetReading(false);
  }
}

void Client::Impl::WaitForInput(std::chrono::milliseconds timeout) {
  auto wait = timeout;
  if (reconnect_at_ && !connection_active_) {
    const auto until =
        std::chrono::duration_cast<std::chrono::milliseconds>(*reconnect_at_ - Now());
    wait = std::clamp(until, std::chrono::milliseconds(0), timeout);
  }
  inbox_.WaitFor(wait);
}

std::size_t Client::Impl::Poll() {
  if (!started_) return 0;
  std::deque<InboxItem> items;
  if (inbox_.TakeAll(items) && connection_) connection_->SetReading(true);
  for (InboxItem& item : items) {
    if (item.connection != connection_id_ || !connection_active_) continue;  // an old one
    if (item.closed) {
      OnDisconnected(item.error);
      continue;
    }
    if (auto* crdt = std::get_if<session::Crdt>(&item.frame)) crdt->data = item.dcl;
    Handle(item.frame, item);
  }
  if (!closed_ && !connection_active_ && reconnect_at_ && Now() >= *reconnect_at_) {
    reconnect_at_.reset();
    Connect();
  }
  if (synced_) Flush();
  return items.size();
}

void Client::Impl::Handle(const session::Frame& frame, const InboxItem& item) {
  if (const auto* w = std::get_if<session::Welcome>(&frame)) {
    OnWelcome(*w);
  } else if (const auto* c = std::get_if<session::Crdt>(&frame)) {
    OnCrdt(*c, item);
  } else if (const auto* a = std::get_if<session::Ack>(&frame)) {
    OnAck(*a);
  } else if (const auto* e = std::get_if<session::ErrorFrame>(&frame)) {
    OnRefusal(*e);
  } else if (const auto* o = std::get_if<session::OutOfView>(&frame)) {
    OnOutOfView(*o);
  } else if (const auto* i = std::get_if<session::InterestSet>(&frame)) {
    interest_ack_ = InterestAck{i->radius, i->hysteresis, i->clamped};
  } else if (const auto* r = std::get_if<session::Refusal>(&frame)) {
    OnWriteRefused(*r);
  } else if (std::get_if<session::TransferOwnership>(&frame)) {
    ++stats_.ownership_transfers;
  }
}

void Client::Impl::OnCrdt(const session::Crdt& c, const InboxItem& item) {
  if (owner_.on_crdt) {
    CrdtEvent event;
    event.data = c.data;
    event.scene_sequence = c.scene_sequence;
    event.is_state = c.is_state;
    event.state_frames_left = c.is_state ? c.frame_sequence : 0;
    event.connection = item.connection;
    event.server = server_;
    event.resumed = c.is_state && welcome_ && welcome_->resumed;
    event.resync = c.is_state && rebuild_ != nullptr;
    event.received = item.received;
    event.received_wall = item.received_wall;
    owner_.on_crdt(event);
  }
  if (c.is_state) {
    // State is shown at once (no receive time): a join or a resume is a discontinuity.
    runtime::Runtime& target = rebuild_ ? *rebuild_ : runtime_;
    (void)target.ApplyCrdt(c.data);
    ++stats_.state_frames;
    connection_state_bytes_ += c.data.size();
    (welcome_ && welcome_->resumed ? stats_.resume_bytes : stats_.snapshot_bytes) += c.data.size();
    if (c.frame_sequence == 0) OnStateApplied(c.scene_sequence);  // the last state frame
    return;
  }
  if (rebuild_) {
    (void)rebuild_->ApplyCrdt(c.data);
  } else {
    // Live traffic carries its receive time: the interpolated presentation plays it back a
    // short delay later (without interpolation the time changes nothing).
    const int64_t received_us = Microseconds(item.received);
    if (received_us >= -runtime::kMaxTimeUs && received_us <= runtime::kMaxTimeUs) {
      (void)runtime_.ApplyCrdt(c.data, runtime::BatchTime{received_us, runtime::kNoSenderTime});
    } else {
      (void)runtime_.ApplyCrdt(c.data);  // a clock outside the timeline's range: untimed
    }
  }
  stats_.live_bytes += c.data.size();
  ++stats_.live_frames;
  scene_sequence_ = c.scene_sequence;
}

void Client::Impl::OnAck(const session::Ack& a) {
  outbox_.OnAck(a.frame_sequence);
  if (resync_after_frame_ != 0 && outbox_.acked() >= resync_after_frame_ && connection_) {
    resync_after_frame_ = 0;
    snapshot_next_ = true;
    Log("an own entity deletion was refused: rejoining for a snapshot");
    connection_->Close();
  }
  if (owner_.on_ack) owner_.on_ack(outbox_.acked());
}

void Client::Impl::OnWelcome(const session::Welcome& welcome) {
  outbox_.OnWelcome(session::ServerMaxFrameBytes(welcome));
  welcome_ = Welcome{welcome.session_id, welcome.scene_sequence, welcome.resumed, welcome.can_write,
                     outbox_.server_frame_bytes()};
  synced_ = false;
  connection_state_bytes_ = 0;
  ++stats_.connects;
  if (stats_.connects > 1) ++stats_.reconnects;
  if (welcome.resumed) {
    ++stats_.resumes;
  } else {
    ++stats_.snapshots;
    // A snapshot after the first one (the server restarted, another server that cannot
    // resume us, or it lost our position): it replaces the replica, which may hold changes
    // that server does not have.
    if (state_ready_) {
      rebuild_ = std::make_unique<runtime::Runtime>(options_.limits);
      CarryInterpolation(*rebuild_);
    }
  }
}

void Client::Impl::CarryInterpolation(runtime::Runtime& rt) {
  if (interpolation_) (void)rt.EnableInterpolation(*interpolation_);  // validated when enabled
}

void Client::Impl::OnStateApplied(uint64_t scene_sequence) {
  const bool resync = rebuild_ != nullptr;
  if (resync) {
    runtime_ = std::move(*rebuild_);
    rebuild_.reset();
    ++stats_.resyncs;
    // Our unacknowledged frames are on their way again: the replica shows them, as before.
    outbox_.ReapplyPending(runtime_);
  }
  scene_sequence_ = scene_sequence;
  state_ready_ = true;
  state_server_ = server_;
  synced_ = true;
  failed_attempts_ = 0;
  failing_since_.reset();
  unavailable_retries_ = 0;
  if (!last_end_was_violation_) backoff_.Reset();
  stats_.last_state_bytes = connection_state_bytes_;
  const bool resumed = welcome_ && welcome_->resumed;
  Log(Format(
      "joined scene '%s' on %s (connection %llu, session %llu, sequence %s): %s of %llu bytes",
      options_.scene.c_str(), servers_[server_].c_str(), Ull(connection_id_),
      Ull(welcome_ ? welcome_->session_id : 0), SequenceText(scene_sequence).c_str(),
      resumed ? "resume delta"
              : (resync ? "snapshot (cannot resume: replica rebuilt)" : "snapshot"),
      Ull(connection_state_bytes_)));
  // 1. Unacknowledged frames, as they are and in frame order: every frame at or below a
  //    cumulative Ack of this connection has then been sent on it.
  const bool sent_all = outbox_.ResendPending();
  // 2. Writes never sent: stamp the held ones, re-stamp the offline ones the state overtook.
  outbox_.StampUnsent();
  outbox_.ResumeFlush();
  if (sent_all) Flush();
}

void Client::Impl::OnRefusal(const session::ErrorFrame& e) {
  if (e.fatal) {
    session_fatal_ = e.code;
    last_error_ = ClientError{e.code, e.text, true, failed_attempts_};
  }
  bool report = true;
  if (e.frame_sequence != 0 && !e.fatal &&
      outbox_.OnFrameRefused(e.frame_sequence, e.code == ErrorCode::kRateLimited)) {
    report = false;  // our writes are back in the unsent buffer: not the caller's concern
  }
  if (report) {
    if (refusals_.size() >= kMaxRefusalsKept) refusals_.erase(refusals_.begin());
    refusals_.push_back(Refusal{e.code, e.text, e.frame_sequence, e.fatal});
  }
}

void Client::Impl::OnWriteRefused(const session::Refusal& r) {
  ++stats_.refused_writes;
  outbox_.DropUnsent(r.entity);
  const auto type = static_cast<protocol::MessageType>(r.message_type);
  if ((type == protocol::MessageType::kDeleteEntity ||
       type == protocol::MessageType::kDeleteEntityNetwork) &&
      options_.reconnect.enabled) {
    // Our replica tombstoned the entity for good, which no correction undoes: once the frame
    // is acknowledged (so that it is not sent again), rejoin for a snapshot that rebuilds the
    // replica (docs/AUTHORITY.md).
    resync_after_frame_ = std::max(resync_after_frame_, r.frame_sequence);
  }
  if (refusals_.size() >= kMaxRefusalsKept) refusals_.erase(refusals_.begin());
  refusals_.push_back(
      Refusal{r.code,
              Format("%s: entity %u component %u", ErrorCodeName(r.code),
                     static_cast<unsigned>(r.entity), static_cast<unsigned>(r.component)),
              r.frame_sequence, false});
}

void Client::Impl::OnDisconnected(const Error& error) {
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
  if (reached_state) failing_since_ = Now();
  if (!session_fatal_) {
    last_error_.code = error.code == ErrorCode::kOk ? ErrorCode::kIo : error.code;
    last_error_.text = error.detail != nullptr && error.detail[0] != '\0'
                           ? error.detail
                           : "the server closed the connection";
    last_error_.from_server = false;
  }
  last_error_.failed_attempts = failed_attempts_;
  last_end_was_violation_ = session_fatal_ && IsViolation(*session_fatal_);
  const ReconnectOptions& r = options_.reconnect;
  const char* why_not = nullptr;
  // Before the first join, every server of the list gets one try, even without reconnect.
  const bool untried = !state_ready_ && failed_attempts_ < servers_.size();
  // The server said "retry" (unavailable: it cannot serve the scene now, e.g. a cluster node
  // whose Redis is away): not fatal to the client, whatever the reconnect options.
  const bool retry_unavailable = session_fatal_ && *session_fatal_ == ErrorCode::kUnavailable &&
                                 unavailable_retries_ < r.max_unavailable_retries;
  if (session_fatal_ && IsPermanent(*session_fatal_)) {
    why_not = "the server's refusal is permanent";
  } else if (!r.enabled && !untried && !retry_unavailable) {
    why_not = session_fatal_ && *session_fatal_ == ErrorCode::kUnavailable
                  ? "the server stayed unavailable"
                  : "reconnect is off";
  } else if (!state_ready_ && !r.retry_first_connect && !untried && !retry_unavailable) {
    why_not = servers_.size() > 1 ? "no server of the list could be joined"
                                  : "the first connection failed";
  } else if (r.max_failed_attempts != 0 && failed_attempts_ >= r.max_failed_attempts) {
    why_not = "too many failed attempts";
  } else if (r.give_up_after_ms != 0 && failing_since_ &&
             Now() - *failing_since_ >= std::chrono::milliseconds(r.give_up_after_ms)) {
    why_not = "no join within give_up_after_ms";
  }
  if (!why_not && retry_unavailable) ++unavailable_retries_;
  std::string reason = error.detail ? error.detail : "closed";
  if (session_fatal_) reason += std::string(" after ") + ErrorCodeName(*session_fatal_);
  if (why_not) {
    closed_ = true;
    close_error_ = error;
    refused_ = session_fatal_.has_value();
    last_error_.text += std::string(" (gave up: ") + why_not + ")";
    if (r.enabled || servers_.size() > 1 || unavailable_retries_ > 0) {
      Log(Format("connection ended (%s); giving up: %s", reason.c_str(), why_not));
    }
    return;
  }
  // Fail-over: every new attempt goes to the next server of the list.
  const std::size_t previous = server_;
  server_ = (server_ + 1) % servers_.size();
  if (server_ != previous) ++stats_.failovers;
  const auto delay = backoff_.Next();
  reconnect_at_ = Now() + delay;
  Log(Format(
      "connection to %s lost (%s); reconnecting to %s in %lld ms (%zu unacked frames, %zu "
      "unsent writes kept)",
      servers_[previous].c_str(), reason.c_str(), servers_[server_].c_str(),
      static_cast<long long>(delay.count()), outbox_.pending_frames(), outbox_.unsent_writes()));
}

ClientStats Client::Impl::stats() const {
  ClientStats s = stats_;
  s.bytes_sent = bytes_sent_closed_;
  s.bytes_received = bytes_received_closed_;
  if (connection_ && connection_active_) {
    s.bytes_sent += connection_->bytes_sent();
    s.bytes_received += connection_->bytes_received();
  }
  return s;
}

Result<void> Client::Impl::Write(protocol::EntityId entity, const UnsentWrite& write) {
  if (closed_) return MakeError(ErrorCode::kIo, "the client is closed");
  return outbox_.Write(entity, write, state_ready_, synced_);
}

uint64_t Client::Impl::SendCrdt(std::span<const uint8_t> dcl) {
  if (closed_ || stopped_) return 0;
  return outbox_.SendCrdt(dcl, synced_);
}

bool Client::Impl::Transmit(internal::Outbox::PendingFrame& p) {
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
  if (owner_.on_send) owner_.on_send(p.frame_sequence, p.dcl, resend);
  return true;
}

}  // namespace scenecrdt::client
