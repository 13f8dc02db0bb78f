// SPDX-License-Identifier: Apache-2.0
// Owns Outbox (client/internal/outbox.h): the replica client's unsent buffer, its stamping,
// the frames kept until acknowledged, their (re)transmission through the client's hook, frames
// cut under the server's frame limit (docs/PROTOCOL.md section 2, "Frame limit"), and frames
// refused as rate_limited going back into the buffer.
#include "scenecrdt/client/internal/outbox.h"

#include <algorithm>

#include "scenecrdt/client/internal/format.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/crdt_split.h"
#include "scenecrdt/protocol/session/envelope.h"

namespace scenecrdt::client::internal {

namespace {

// Messages per frame built by Flush: the server's default message burst. Fewer when the
// server's frame limit holds fewer of the largest write (a Transform PUT, 68 bytes).
constexpr std::size_t kMaxWritesPerFrame = 4000;
constexpr std::size_t kMaxMessageBytes = 24 + protocol::Transform::kSize;
// Pause of Flush after a rate_limited refusal of an own frame: doubles up to the cap.
constexpr int64_t kRateLimitPauseMs = 100;
constexpr int64_t kRateLimitPauseCapMs = 2000;

// AppendMessage for one unsent write.
void AppendUnsent(protocol::EntityId entity, const Outbox::UnsentWrite& w,
                  std::vector<uint8_t>& out) {
  switch (w.kind) {
    case Outbox::WriteKind::kTransform:
      protocol::AppendTransformPut(entity, w.timestamp, w.value, out);
      return;
    case Outbox::WriteKind::kDeleteTransform:
    case Outbox::WriteKind::kDeleteEntity: {
      protocol::CrdtMessage m;
      m.entity = entity;
      if (w.kind == Outbox::WriteKind::kDeleteEntity) {
        m.type = protocol::MessageType::kDeleteEntity;
      } else {
        m.type = protocol::MessageType::kDeleteComponent;
        m.component = protocol::kTransformComponentId;
        m.timestamp = w.timestamp;
      }
      protocol::AppendMessage(m, out);
      return;
    }
  }
}

}  // namespace

Outbox::Outbox(const ClientOptions& options, runtime::Runtime& replica, ClientStats& stats,
               Hooks hooks)
    : options_(options),
      replica_(replica),
      stats_(stats),
      hooks_(std::move(hooks)),
      server_frame_bytes_(session::kDefaultServerMaxFrameBytes) {}

void Outbox::Log(const std::string& line) const {
  if (hooks_.log) hooks_.log(line);
}

Result<void> Outbox::Write(protocol::EntityId entity, const UnsentWrite& write, bool state_ready,
                           bool synced) {
  auto it = unsent_.find(entity);
  if (it == unsent_.end() && unsent_.size() >= options_.max_unsent_writes) {
    return MakeError(ErrorCode::kRateLimited,
                     "the unsent-write buffer is full (ClientOptions::max_unsent_writes)");
  }
  if (!state_ready) {
    // Held unstamped: a stamp now (1, or our replica's + 1) could lose to, or silently
    // override, state we have not seen yet. StampUnsent() stamps it on top of the snapshot.
    if (it != unsent_.end() && it->second.kind == WriteKind::kDeleteEntity) {
      return MakeError(ErrorCode::kInvalidArgument, "the entity is deleted (a held deletion)");
    }
    unsent_.insert_or_assign(entity, write);
    return {};
  }
  auto written = StampLocally(entity, write);
  if (!written.has_value()) return written.error();
  if (scratch_.empty()) return {};  // unchanged: nothing to send
  UnsentWrite stamped = write;
  stamped.stamped = true;
  if (write.kind != WriteKind::kDeleteEntity) {
    stamped.timestamp =
        replica_.store().FindRegister(protocol::kTransformComponentId, entity)->timestamp;
  }
  unsent_.insert_or_assign(entity, stamped);
  if (!synced) ++stats_.offline_writes;
  return {};
}

Result<runtime::MergeOutcome> Outbox::StampLocally(protocol::EntityId entity,
                                                   const UnsentWrite& w) {
  scratch_.clear();
  switch (w.kind) {
    case WriteKind::kTransform:
      return replica_.WriteTransform(entity, w.value, scratch_);
    case WriteKind::kDeleteTransform:
      return replica_.WriteDeleteComponent(entity, protocol::kTransformComponentId, scratch_);
    case WriteKind::kDeleteEntity:
      break;
  }
  return replica_.WriteDeleteEntity(entity, scratch_);
}

bool Outbox::StillOurs(protocol::EntityId entity, const UnsentWrite& w) const {
  if (w.kind == WriteKind::kDeleteEntity) {
    // A deletion has no stamp and cannot be overtaken: once merged it stays.
    const auto deleted = replica_.store().DeletedVersion(protocol::EntityNumber(entity));
    return deleted && *deleted >= protocol::EntityVersion(entity);
  }
  const auto r = replica_.store().FindRegister(protocol::kTransformComponentId, entity);
  if (!r || r->timestamp != w.timestamp) return false;
  if (w.kind == WriteKind::kDeleteTransform) return !r->has_data;
  return r->has_data && r->transform &&
         protocol::StoreTransform(*r->transform) == protocol::StoreTransform(w.value);
}

void Outbox::StampUnsent() {
  uint64_t held = 0;
  uint64_t restamped = 0;
  for (auto it = unsent_.begin(); it != unsent_.end();) {
    const protocol::EntityId entity = it->first;
    UnsentWrite& w = it->second;
    if (w.stamped) {
      // Still ours when the register holds exactly our stamp and bytes: send it as stamped.
      if (StillOurs(entity, w)) {
        ++it;
        continue;
      }
      ++restamped;
    } else {
      ++held;
    }
    auto written = StampLocally(entity, w);
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
    if (w.kind != WriteKind::kDeleteEntity) {
      w.timestamp =
          replica_.store().FindRegister(protocol::kTransformComponentId, entity)->timestamp;
    }
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

void Outbox::Requeue(const PendingFrame& frame) {
  (void)protocol::DecodeStream(frame.dcl, {}, [&](const protocol::CrdtMessage& m) {
    UnsentWrite w;
    w.timestamp = m.timestamp;
    w.stamped = true;
    if (m.type == protocol::MessageType::kDeleteEntity) {
      w.kind = WriteKind::kDeleteEntity;
    } else if (m.type == protocol::MessageType::kDeleteComponent &&
               m.component == protocol::kTransformComponentId) {
      w.kind = WriteKind::kDeleteTransform;
    } else if (m.type == protocol::MessageType::kPutComponent &&
               m.component == protocol::kTransformComponentId &&
               m.data.size() == protocol::Transform::kSize) {
      w.value = protocol::LoadTransform(std::span<const uint8_t, protocol::Transform::kSize>(
          m.data.data(), protocol::Transform::kSize));
    } else {
      return;  // not one of ours
    }
    unsent_.try_emplace(m.entity, w);
  });
  ++stats_.rate_limited_frames;
  const int64_t pause_ms =
      std::min(kRateLimitPauseCapMs, kRateLimitPauseMs << std::min(rate_limit_pauses_, 5u));
  ++rate_limit_pauses_;
  flush_paused_until_ = hooks_.now() + std::chrono::milliseconds(pause_ms);
}

uint64_t Outbox::Flush(bool synced) {
  if (!synced || unsent_.empty()) return 0;
  if (flush_paused_until_) {
    if (hooks_.now() < *flush_paused_until_) return 0;
    flush_paused_until_.reset();
  }
  const std::size_t per_frame = std::min(
      kMaxWritesPerFrame, session::MaxCrdtDataBytes(server_frame_bytes_) / kMaxMessageBytes);
  if (per_frame == 0) {
    // A misconfigured server: say it once per connection; the writes stay buffered.
    if (!frame_limit_logged_) {
      Log(
          Format("cannot send %zu writes: the server's frame limit (%u bytes) holds no %zu-byte "
                 "write message",
                 unsent_.size(), server_frame_bytes_, kMaxMessageBytes));
      frame_limit_logged_ = true;
    }
    return 0;
  }
  uint64_t last = 0;
  std::vector<uint8_t> dcl;
  while (!unsent_.empty()) {
    const std::size_t n = std::min(unsent_.size(), per_frame);
    if (pending_bytes_ + n * kMaxMessageBytes > options_.max_unacked_bytes) break;  // coalesce
    dcl.clear();
    dcl.reserve(n * kMaxMessageBytes);
    auto it = unsent_.begin();
    for (std::size_t i = 0; i < n; ++i) {
      AppendUnsent(it->first, it->second, dcl);
      it = unsent_.erase(it);
    }
    AddPending(dcl, /*owned=*/true);
    last = pending_.back().frame_sequence;
    if (!hooks_.transmit(pending_.back())) break;
  }
  return last;
}

uint64_t Outbox::SendCrdt(std::span<const uint8_t> dcl, bool synced) {
  if (pending_bytes_ + dcl.size() > options_.max_unacked_bytes) return 0;
  // Frames above the server's limit are fatal there: cut at message boundaries under it.
  const std::size_t max_bytes = session::MaxCrdtDataBytes(server_frame_bytes_);
  std::vector<session::CrdtPart> parts{{0, dcl.size(), 0}};
  if (dcl.size() > max_bytes) {
    auto split = session::SplitCrdtStream(dcl, max_bytes);
    if (!split.has_value()) {
      const Error& e = split.error();
      Log(
          Format("SendCrdt: %zu bytes not sent: %s (%s, at byte %llu); the server's frame limit "
                 "is %u bytes (%zu DCL bytes per frame)",
                 dcl.size(), e.detail, ErrorCodeName(e.code), Ull(e.offset), server_frame_bytes_,
                 max_bytes));
      return 0;
    }
    parts = std::move(split.value());
  }
  // Merged locally too: the server does not echo a session's own changes back to it.
  (void)replica_.ApplyCrdt(dcl);
  bool transmit = synced;
  uint64_t last = 0;
  for (const session::CrdtPart& part : parts) {
    const std::span<const uint8_t> bytes = dcl.subspan(part.offset, part.bytes);
    AddPending(std::vector<uint8_t>(bytes.begin(), bytes.end()), /*owned=*/false);
    PendingFrame& p = pending_.back();
    // After a failed transmit the connection is ending: the next one sends the rest in order.
    if (transmit) transmit = hooks_.transmit(p);
    last = p.frame_sequence;
  }
  return last;
}

void Outbox::AddPending(std::vector<uint8_t> dcl, bool owned) {
  PendingFrame p;
  p.frame_sequence = next_frame_sequence_++;
  p.owned = owned;
  pending_bytes_ += dcl.size();
  p.dcl = std::move(dcl);
  pending_.push_back(std::move(p));
}

void Outbox::OnAck(uint64_t frame_sequence) {
  acked_ = std::max(acked_, frame_sequence);
  while (!pending_.empty() && pending_.front().frame_sequence <= acked_) {
    pending_bytes_ -= pending_.front().dcl.size();
    pending_.pop_front();
    ++stats_.acked_frames;
  }
  rate_limit_pauses_ = 0;
}

void Outbox::OnWelcome(uint32_t server_frame_bytes) {
  server_frame_bytes_ = server_frame_bytes;
  frame_limit_logged_ = false;
}

bool Outbox::ResendPending() {
  const uint64_t resent_before = stats_.resent_frames;
  const uint64_t resent_bytes_before = stats_.resent_bytes;
  bool sent_all = true;
  for (PendingFrame& p : pending_) {
    if (!hooks_.transmit(p)) {
      sent_all = false;  // the connection is ending: the next one resends
      break;
    }
  }
  if (stats_.resent_frames > resent_before) {
    Log(Format("resent %llu unacknowledged frames (%llu bytes)",
               Ull(stats_.resent_frames - resent_before),
               Ull(stats_.resent_bytes - resent_bytes_before)));
  }
  return sent_all;
}

void Outbox::ReapplyPending(runtime::Runtime& replica) const {
  for (const PendingFrame& p : pending_) (void)replica.ApplyCrdt(p.dcl);
}

bool Outbox::OnFrameRefused(uint64_t frame_sequence, bool rate_limited) {
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const PendingFrame& p) { return p.frame_sequence == frame_sequence; });
  if (it == pending_.end()) return false;
  const bool requeue = rate_limited && it->owned;
  // Refused whole, nothing merged: our writes go back to the unsent buffer (unless a newer
  // write of the entity is there) and Flush pauses, so they coalesce meanwhile.
  if (requeue) Requeue(*it);
  pending_bytes_ -= it->dcl.size();
  pending_.erase(it);
  return requeue;
}

}  // namespace scenecrdt::client::internal
