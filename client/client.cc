// SPDX-License-Identifier: Apache-2.0
// Owns the public Client: its lifecycle (starting the network thread, Join, Stop) and the
// methods, which forward to Client::Impl (client_impl.cc) on the caller's thread.
#include "scenecrdt/client/client.h"

#include <cmath>

#include "scenecrdt/client/internal/client_impl.h"

namespace scenecrdt::client {

Client::Client(ClientOptions options) : impl_(std::make_unique<Impl>(*this, std::move(options))) {}

Client::~Client() { Stop(); }

Result<void> Client::Start() {
  Impl& m = *impl_;
  if (m.started_) return MakeError(ErrorCode::kInvalidArgument, "the client was started already");
  if (auto parsed = m.ParseServers(); !parsed.has_value()) return parsed;
  m.started_ = true;
  m.failing_since_ = m.Now();
  m.ioc_.emplace();
  // Keeps run() going between connections (reconnect); released by Stop().
  m.work_.emplace(m.ioc_->get_executor());
  m.Connect();
  m.thread_ = std::thread([&m] { m.ioc_->run(); });
  return {};
}

Result<void> Client::Join(std::chrono::milliseconds timeout) {
  if (!impl_->started_) {
    if (auto started = Start(); !started.has_value()) return started;
  }
  if (PollUntil([this] { return state_ready() || !impl_->refusals_.empty(); }, timeout) &&
      state_ready()) {
    return {};
  }
  if (!impl_->refusals_.empty()) {
    return MakeError(impl_->refusals_.front().code,
                     "the server refused the join (TakeRefusals() has its text)");
  }
  if (closed()) {
    const Error& e = close_error();
    return MakeError(e.code == ErrorCode::kOk ? ErrorCode::kIo : e.code,
                     e.detail != nullptr && e.detail[0] != '\0'
                         ? e.detail
                         : "the connection closed before the scene's state arrived");
  }
  return MakeError(ErrorCode::kIo,
                   "timed out waiting for the scene's state (is the server up? raise the "
                   "timeout)");
}

void Client::Stop() { impl_->Stop(); }

std::size_t Client::Poll() { return impl_->Poll(); }

void Client::WaitForInput(std::chrono::milliseconds timeout) { impl_->WaitForInput(timeout); }

bool Client::PollUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    Poll();
    if (done()) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline || impl_->closed_) return done();
    WaitForInput(std::min<std::chrono::milliseconds>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now),
        std::chrono::milliseconds(100)));
  }
}

void Client::Update(const runtime::UpdateOptions& options) { impl_->runtime_.Update(options); }

const runtime::Runtime& Client::runtime() const { return impl_->runtime_; }
const runtime::CrdtStore& Client::store() const { return impl_->runtime_.store(); }

Result<void> Client::EnableInterpolation(const runtime::InterpolationOptions& options) {
  if (auto enabled = impl_->runtime_.EnableInterpolation(options); !enabled.has_value()) {
    return enabled;
  }
  impl_->interpolation_ = options;
  return {};
}

void Client::DisableInterpolation() {
  impl_->runtime_.DisableInterpolation();
  impl_->interpolation_.reset();
}

bool Client::interpolation_enabled() const { return impl_->runtime_.interpolation_enabled(); }

Result<void> Client::UpdateInterpolated(int64_t render_time_us,
                                        const runtime::UpdateOptions& options) {
  return impl_->runtime_.UpdateInterpolated(render_time_us, options);
}

Result<void> Client::UpdateInterpolated() { return UpdateInterpolated(NowUs()); }

int64_t Client::NowUs() const {
  return std::chrono::duration_cast<std::chrono::microseconds>(impl_->Now().time_since_epoch())
      .count();
}

Result<void> Client::WriteTransform(protocol::EntityId entity, const protocol::Transform& t) {
  if (!protocol::IsFinite(t)) {
    return MakeError(ErrorCode::kNonFiniteTransform, "servers refuse non-finite Transforms");
  }
  Impl::UnsentWrite w;
  w.kind = Impl::WriteKind::kTransform;
  w.value = t;
  return impl_->Write(entity, w);
}

Result<void> Client::DeleteTransform(protocol::EntityId entity) {
  Impl::UnsentWrite w;
  w.kind = Impl::WriteKind::kDeleteTransform;
  return impl_->Write(entity, w);
}

Result<void> Client::DeleteEntity(protocol::EntityId entity) {
  if (protocol::IsReservedEntity(entity)) {
    return MakeError(ErrorCode::kReservedEntity, "entities below 512 cannot be deleted");
  }
  Impl::UnsentWrite w;
  w.kind = Impl::WriteKind::kDeleteEntity;
  return impl_->Write(entity, w);
}

uint64_t Client::Flush() { return impl_->Flush(); }
uint64_t Client::SendCrdt(std::span<const uint8_t> dcl) { return impl_->SendCrdt(dcl); }
Result<void> Client::TransferOwnership(protocol::EntityId entity, const std::string& to) {
  Impl& m = *impl_;
  if (!m.connection_ || !m.connection_active_ || !m.synced_) {
    return MakeError(ErrorCode::kIo, "not joined: TransferOwnership needs a joined connection");
  }
  if (to.size() > session::kMaxPrincipalBytes) {
    return MakeError(ErrorCode::kInvalidArgument, "the principal is longer than 256 bytes");
  }
  if (!m.connection_->Send(session::BuildFrame(session::TransferOwnership{entity, to}))) {
    return MakeError(ErrorCode::kIo, "the connection cannot take the frame now");
  }
  return {};
}
std::size_t Client::max_crdt_bytes() const {
  return session::MaxCrdtDataBytes(impl_->outbox_.server_frame_bytes());
}

bool Client::welcomed() const { return impl_->welcome_.has_value(); }
const std::optional<Welcome>& Client::welcome() const { return impl_->welcome_; }
bool Client::state_ready() const { return impl_->state_ready_; }
bool Client::synced() const { return impl_->synced_; }
bool Client::closed() const { return impl_->closed_; }
ClientState Client::state() const {
  const Impl& m = *impl_;
  if (m.closed_ || m.stopped_) return m.refused_ ? ClientState::kRefused : ClientState::kClosed;
  if (m.synced_) return ClientState::kJoined;
  if (m.connection_active_ &&
      m.opened_connection_.load(std::memory_order_acquire) == m.connection_id_) {
    return ClientState::kJoining;
  }
  return ClientState::kConnecting;
}
const ClientError& Client::last_error() const { return impl_->last_error_; }
void Client::SetGiveUp(uint32_t max_failed_attempts, uint32_t give_up_after_ms) {
  impl_->options_.reconnect.max_failed_attempts = max_failed_attempts;
  impl_->options_.reconnect.give_up_after_ms = give_up_after_ms;
}

const char* ClientStateName(ClientState state) {
  switch (state) {
    case ClientState::kConnecting:
      return "connecting";
    case ClientState::kJoining:
      return "joining";
    case ClientState::kJoined:
      return "joined";
    case ClientState::kRefused:
      return "refused";
    case ClientState::kClosed:
      return "closed";
  }
  return "unknown";
}
const Error& Client::close_error() const { return impl_->close_error_; }
const std::vector<std::string>& Client::servers() const { return impl_->servers_; }
std::size_t Client::current_server() const { return impl_->server_; }
uint64_t Client::scene_sequence() const { return impl_->scene_sequence_; }
uint64_t Client::acked_frame_sequence() const { return impl_->outbox_.acked(); }
uint64_t Client::last_frame_sequence() const { return impl_->outbox_.last_frame_sequence(); }
std::size_t Client::pending_frames() const { return impl_->outbox_.pending_frames(); }
std::size_t Client::unsent_writes() const { return impl_->outbox_.unsent_writes(); }

std::vector<Refusal> Client::TakeRefusals() {
  std::vector<Refusal> out;
  out.swap(impl_->refusals_);
  return out;
}

Result<void> Client::SetInterest(const Interest& interest) {
  const auto finite = [](float v) { return std::isfinite(v); };
  if (!finite(interest.radius) || interest.radius < 0) {
    return MakeError(ErrorCode::kInvalidInterest, "interest radius must be finite and >= 0");
  }
  if (!interest.follow_entity &&
      (!finite(interest.center.x) || !finite(interest.center.y) || !finite(interest.center.z))) {
    return MakeError(ErrorCode::kInvalidInterest, "interest centre must be finite");
  }
  if (interest.hysteresis && (!finite(*interest.hysteresis) || *interest.hysteresis < 0)) {
    return MakeError(ErrorCode::kInvalidInterest, "interest hysteresis must be finite and >= 0");
  }
  impl_->options_.interest = interest;
  impl_->SendInterest();
  return {};
}

void Client::ClearInterest() {
  if (!impl_->options_.interest) return;
  impl_->options_.interest.reset();
  impl_->interest_ack_.reset();
  impl_->SendInterest();
}

const std::optional<Interest>& Client::interest() const { return impl_->options_.interest; }
const std::optional<InterestAck>& Client::interest_ack() const { return impl_->interest_ack_; }

ClientStats Client::stats() const { return impl_->stats(); }
uint64_t Client::state_bytes() const {
  return impl_->stats_.resume_bytes + impl_->stats_.snapshot_bytes;
}
uint64_t Client::live_bytes() const { return impl_->stats_.live_bytes; }
uint64_t Client::live_frames() const { return impl_->stats_.live_frames; }

}  // namespace scenecrdt::client
