// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's work: joins, merges, fan-out, catch-up, group commit and acks.
#include "server/scene.h"

#include <algorithm>

#include "protocol/session/envelope.h"
#include "server/persistence.h"
#include "server/session.h"

namespace scenecrdt::server {

namespace {

runtime::StoreLimits StoreLimitsFrom(const Limits& l) {
  runtime::StoreLimits s;
  s.max_payload_bytes = l.max_payload_bytes;
  s.max_entities = l.max_entities;
  s.max_tombstones = l.max_tombstones;
  s.refuse_non_finite_transforms = true;
  return s;
}

}  // namespace

Scene::Scene(ServerContext& ctx, std::string name, std::span<const uint8_t> restore)
    : ctx_(ctx),
      name_(std::move(name)),
      strand_(net::asio::make_strand(ctx.ioc())),
      store_(StoreLimitsFrom(ctx.config().limits)),
      wire_base_(ctx.incarnation() << kSequenceShift),
      retry_timer_(strand_),
      rate_timer_(strand_),
      flush_timer_(strand_) {
  if (!restore.empty()) (void)store_.MergeStream(restore);
  flushed_ = durable_ = store_.sequence();
}

Scene::Member* Scene::FindMember(uint64_t id) {
  for (Member& m : members_) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

void Scene::Join(std::shared_ptr<Session> session, bool can_write, std::optional<uint64_t> resume) {
  net::asio::post(strand_, [this, session = std::move(session), can_write, resume]() mutable {
    if (members_.size() >= ctx_.config().limits.max_sessions_per_scene) {
      session->PostClose(ErrorCode::kSceneFull, "the scene has its maximum number of sessions");
      return;
    }
    const uint64_t seq = store_.sequence();
    uint64_t from = 0;
    bool resumed = false;
    if (resume && (*resume & ~kLocalSequenceMask) == wire_base_ &&
        (*resume & kLocalSequenceMask) <= seq) {
      from = *resume & kLocalSequenceMask;
      resumed = true;
    }
    Metrics::Add(resumed ? ctx_.metrics().resumes : ctx_.metrics().snapshots);
    const auto build_start = std::chrono::steady_clock::now();
    std::vector<SharedFrame> frames = BuildFrames(from, seq, /*is_state=*/true);
    const auto build_us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - build_start);
    Metrics::Add(ctx_.metrics().state_build_us, static_cast<uint64_t>(build_us.count()));
    for (const SharedFrame& f : frames) Metrics::Add(ctx_.metrics().state_bytes, f->size());
    session::Welcome welcome{session->id(), Wire(seq), resumed, can_write};
    Member m;
    m.session = session;
    m.id = session->id();
    m.cursor = seq;
    members_.push_back(std::move(m));
    session->PostJoined(welcome, std::move(frames));
  });
}

void Scene::Leave(uint64_t session_id) {
  net::asio::post(strand_, [this, session_id] {
    std::erase_if(members_, [&](const Member& m) { return m.id == session_id; });
  });
}

void Scene::Submit(uint64_t session_id, uint64_t frame_sequence, std::vector<uint8_t> dcl,
                   uint32_t messages) {
  net::asio::post(strand_, [this, session_id, frame_sequence, dcl = std::move(dcl), messages]() {
    Member* member = FindMember(session_id);
    if (!member) return;  // left meanwhile
    // Limits that depend on the state are checked for the whole frame before anything merges,
    // so a refused frame leaves the store untouched. Counts are upper bounds (a newer version
    // retiring a live one does not really add an entity).
    const runtime::StoreLimits& limits = store_.limits();
    std::vector<uint32_t> new_entities;
    std::vector<uint32_t> new_tombstones;
    (void)protocol::DecodeStream(dcl, {}, [&](const protocol::CrdtMessage& m) {
      const uint32_t number = protocol::EntityNumber(m.entity);
      const uint32_t version = protocol::EntityVersion(m.entity);
      const bool reserved = protocol::IsReservedEntityNumber(number);
      if (!reserved && (m.type == protocol::MessageType::kDeleteEntity ||
                        m.type == protocol::MessageType::kDeleteEntityNetwork || version > 0)) {
        if (!store_.DeletedVersion(number)) new_tombstones.push_back(number);
      }
      if (protocol::HasComponent(m.type)) {
        const runtime::EntityState state = store_.GetEntityState(m.entity);
        if (state == runtime::EntityState::kUnknown ||
            (state == runtime::EntityState::kReserved && !store_.FindTransform(m.entity))) {
          new_entities.push_back(m.entity);
        }
      }
    });
    const auto distinct = [](std::vector<uint32_t>& v) {
      std::sort(v.begin(), v.end());
      return static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
    };
    ErrorCode refusal = ErrorCode::kOk;
    if (!new_entities.empty() &&
        store_.num_entities() + distinct(new_entities) > limits.max_entities) {
      refusal = ErrorCode::kTooManyEntities;
    } else if (!new_tombstones.empty() &&
               store_.num_tombstones() + distinct(new_tombstones) > limits.max_tombstones) {
      refusal = ErrorCode::kTooManyTombstones;
    }
    if (refusal != ErrorCode::kOk) {
      member->session->PostRefusal(refusal,
                                   refusal == ErrorCode::kTooManyEntities
                                       ? "the scene is at its entity limit"
                                       : "the scene is at its tombstone limit",
                                   frame_sequence);
      return;
    }
    const uint64_t before = store_.sequence();
    (void)protocol::DecodeStream(dcl, {}, [&](const protocol::CrdtMessage& m) {
      const runtime::MergeResult r = store_.Merge(m);
      ctx_.metrics().CountMerge(r.outcome);
      if (r.outcome == runtime::MergeOutcome::kRefused) ctx_.metrics().CountRefusal(r.reason);
    });
    Metrics::Add(ctx_.metrics().messages_in, messages);
    if (store_.sequence() != before) {
      if (sole_writer_ == 0 && !mixed_writers_) {
        sole_writer_ = session_id;
      } else if (sole_writer_ != session_id) {
        mixed_writers_ = true;
      }
    }
    pending_acks_.push_back({store_.sequence(), session_id, frame_sequence});
    ScheduleFlush();
  });
}

void Scene::Ready(uint64_t session_id) {
  net::asio::post(strand_, [this, session_id] {
    Member* m = FindMember(session_id);
    if (!m) return;
    m->ready = true;
    Deliver(*m, NowMs());
  });
}

void Scene::LocalWrite(std::function<void(runtime::CrdtStore&)> write) {
  net::asio::post(strand_, [this, write = std::move(write)] {
    const uint64_t before = store_.sequence();
    write(store_);
    if (store_.sequence() != before) mixed_writers_ = true;
    ScheduleFlush();
  });
}

void Scene::Flush(std::function<void()> done) {
  net::asio::post(strand_, [this, done = std::move(done)]() mutable {
    flush_waiters_.push_back(std::move(done));
    FanOut();
    MaybeCommit();
  });
}

void Scene::Inspect(std::function<void(const runtime::CrdtStore&, uint64_t)> read) {
  net::asio::post(strand_,
                  [this, read = std::move(read)] { read(store_, Wire(store_.sequence())); });
}

void Scene::ScheduleFlush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  const auto run = [this] {
    flush_scheduled_ = false;
    FanOut();
    MaybeCommit();
  };
  if (const uint32_t window = ctx_.config().limits.batch_window_us; window > 0) {
    flush_timer_.expires_after(std::chrono::microseconds(window));
    flush_timer_.async_wait([run](const net::error_code& ec) {
      if (!ec) run();
    });
    return;
  }
  // Posted behind whatever the strand already holds: frames that arrived together merge
  // together and leave as one batch, without waiting for a tick.
  net::asio::post(strand_, run);
}

void Scene::FanOut() {
  const uint64_t seq = store_.sequence();
  if (seq == flushed_) return;
  const uint64_t from = flushed_;
  const uint64_t skip = mixed_writers_ ? 0 : sole_writer_;
  flushed_ = seq;
  sole_writer_ = 0;
  mixed_writers_ = false;
  const int64_t now = NowMs();
  for (Member& m : members_) {
    if (!m.ready) continue;  // catches up (coalesced) when its write completes
    if (m.id == skip && m.cursor == from) {
      m.cursor = seq;  // exactly its own changes: its replica has them already
      continue;
    }
    Deliver(m, now);
  }
}

void Scene::Deliver(Member& m, int64_t now_ms) {
  const uint64_t seq = store_.sequence();
  if (!m.ready || m.cursor >= seq) return;
  const double max_rate = ctx_.config().limits.max_rate_hz;
  if (max_rate > 0.0 && now_ms < m.next_send_ms) {
    ArmRateTimer(m.next_send_ms);
    return;
  }
  if (cache_sequence_ != seq) {
    cache_.clear();
    cache_sequence_ = seq;
  }
  auto it = std::find_if(cache_.begin(), cache_.end(),
                         [&](const auto& entry) { return entry.first == m.cursor; });
  if (it == cache_.end()) {
    cache_.emplace_back(m.cursor, BuildFrames(m.cursor, seq, /*is_state=*/false));
    it = cache_.end() - 1;
    Metrics::Add(m.cursor == flushed_ || m.cursor + 1 >= seq ? ctx_.metrics().shared_frames
                                                             : ctx_.metrics().catchups);
  }
  m.session->PostSceneFrames(it->second, 0);
  m.cursor = seq;
  m.ready = false;
  if (max_rate > 0.0) m.next_send_ms = now_ms + static_cast<int64_t>(1000.0 / max_rate);
}

std::vector<SharedFrame> Scene::BuildFrames(uint64_t from, uint64_t to, bool is_state) {
  scratch_.clear();
  const std::size_t messages = store_.ExportChangesSince(from, scratch_);
  Metrics::Add(ctx_.metrics().messages_out, messages);
  // Cut at message boundaries into chunks of at most state_chunk_bytes (one chunk unless big).
  const std::size_t chunk_bytes = ctx_.config().limits.state_chunk_bytes;
  std::vector<std::span<const uint8_t>> chunks;
  if (scratch_.size() <= chunk_bytes) {
    chunks.emplace_back(scratch_);
  } else {
    std::size_t start = 0;
    std::size_t pos = 0;
    (void)protocol::DecodeStream(scratch_, {}, [&](const protocol::CrdtMessage& m) {
      const std::size_t size = protocol::EncodedSize(m);
      if (pos + size - start > chunk_bytes && pos > start) {
        chunks.emplace_back(scratch_.data() + start, pos - start);
        start = pos;
      }
      pos += size;
    });
    chunks.emplace_back(scratch_.data() + start, scratch_.size() - start);
  }
  std::vector<SharedFrame> frames;
  frames.reserve(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const bool last = i + 1 == chunks.size();
    session::Crdt crdt;
    // State frames count down the frames still to come in frame_sequence (0: the last one).
    crdt.frame_sequence = is_state ? chunks.size() - 1 - i : 0;
    // Only the last chunk reaches `to`: a client cut off mid-way resumes from `from`.
    crdt.scene_sequence = Wire(last ? to : from);
    crdt.is_state = is_state;
    crdt.data = chunks[i];
    frames.push_back(MakeShared(session::BuildFrame(crdt)));
  }
  return frames;
}

void Scene::ArmRateTimer(int64_t at_ms) {
  if (rate_timer_at_ms_ != 0 && rate_timer_at_ms_ <= at_ms) return;
  rate_timer_at_ms_ = at_ms;
  rate_timer_.expires_after(std::chrono::milliseconds(std::max<int64_t>(0, at_ms - NowMs())));
  rate_timer_.async_wait([this](const net::error_code& ec) {
    if (ec) return;
    rate_timer_at_ms_ = 0;
    const int64_t now = NowMs();
    for (Member& m : members_) Deliver(m, now);
  });
}

void Scene::MaybeCommit() {
  if (commit_in_flight_) return;
  const uint64_t seq = store_.sequence();
  if (seq == durable_) {
    ReleaseAcks();
    return;
  }
  std::vector<uint8_t> dcl;
  store_.ExportChangesSince(durable_, dcl);
  commit_in_flight_ = true;
  CommitJob job;
  job.scene = name_;
  job.dcl = std::move(dcl);
  job.done = [this, seq](bool ok) {
    net::asio::post(strand_, [this, ok, seq] { OnCommitted(ok, seq); });
  };
  ctx_.persistence().Submit(std::move(job));
}

void Scene::OnCommitted(bool ok, uint64_t target) {
  commit_in_flight_ = false;
  if (!ok) {
    // Nothing is acked; the next attempt exports again from the same durable point.
    if (!retry_armed_) {
      retry_armed_ = true;
      retry_timer_.expires_after(std::chrono::milliseconds(200));
      retry_timer_.async_wait([this](const net::error_code& ec) {
        retry_armed_ = false;
        if (!ec) MaybeCommit();
      });
    }
    return;
  }
  durable_ = target;
  ReleaseAcks();
  MaybeCommit();
}

void Scene::ReleaseAcks() {
  // One cumulative Ack per session for everything durable now.
  std::vector<std::pair<uint64_t, uint64_t>> acks;  // session id, frame sequence
  while (!pending_acks_.empty() && pending_acks_.front().store_sequence <= durable_) {
    const PendingAck& a = pending_acks_.front();
    auto it = std::find_if(acks.begin(), acks.end(),
                           [&](const auto& p) { return p.first == a.session_id; });
    if (it == acks.end()) {
      acks.emplace_back(a.session_id, a.frame_sequence);
    } else {
      it->second = std::max(it->second, a.frame_sequence);
    }
    pending_acks_.pop_front();
  }
  for (const auto& [id, fs] : acks) {
    if (Member* m = FindMember(id)) m->session->PostAck(fs);
  }
  if (!commit_in_flight_ && durable_ == store_.sequence() && pending_acks_.empty() &&
      !flush_waiters_.empty()) {
    std::vector<std::function<void()>> waiters;
    waiters.swap(flush_waiters_);
    for (auto& w : waiters) w();
  }
}

}  // namespace scenecrdt::server
