// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's work: joins, merges, fan-out, catch-up, group commit and acks.
#include "scenecrdt/server/scene/scene.h"

#include <algorithm>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "scenecrdt/server/storage/persistence.h"

namespace scenecrdt::server {

namespace {

// How long after an abnormal end a rejoin from the same address and kind counts as a
// reconnect, and how many such ends a scene remembers.
constexpr int64_t kReconnectWindowMs = 30000;
constexpr std::size_t kMaxDepartures = 64;

runtime::StoreLimits StoreLimitsFrom(const Limits& l) {
  runtime::StoreLimits s;
  s.max_payload_bytes = l.max_payload_bytes;
  s.max_entities = l.max_entities;
  s.max_tombstones = l.max_tombstones;
  s.refuse_non_finite_transforms = true;
  return s;
}

}  // namespace

Scene::Scene(ServerContext& ctx, std::string name, std::span<const uint8_t> restore,
             std::optional<uint64_t> incarnation)
    : ctx_(ctx),
      name_(std::move(name)),
      strand_(net::asio::make_strand(ctx.ioc())),
      store_(StoreLimitsFrom(ctx.config().limits)),
      wire_base_(session::MakeSceneSequence(incarnation.value_or(ctx.incarnation()), 0)),
      retry_timer_(strand_),
      rate_timer_(strand_),
      flush_timer_(strand_),
      compression_(ctx.metrics()) {
  if (!restore.empty()) {
    if (auto merged = store_.MergeStream(restore); !merged.has_value()) {
      ctx_.log().Write("restore_failed", "scene=%s error=%s offset=%llu", name_.c_str(),
                       merged.error().detail,
                       static_cast<unsigned long long>(merged.error().offset));
    }
  }
  bytes_.Reset(restore.size());
  flushed_ = durable_ = store_.sequence();
  if (SharedLog* log = ctx_.commits().shared()) {
    // Nobody is welcomed before the scene's state is loaded from the log (scene_cluster.cc).
    sync_ = std::make_unique<ClusterSceneSync>();
    loaded_ = false;
    load_requested_ = true;
    log->Follow(*this);
  }
}

uint64_t Scene::Wire(uint64_t local) const {
  return sync_ ? sync_->Advertise(local) : wire_base_ | local;
}

Scene::Member* Scene::FindMember(uint64_t id) {
  for (Member& m : members_) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

void Scene::Join(std::shared_ptr<SceneMember> session, bool can_write,
                 std::optional<uint64_t> resume) {
  net::asio::post(strand_, [this, session = std::move(session), can_write, resume]() mutable {
    if (HoldJoin(session, can_write, resume)) return;
    if (members_.size() >= ctx_.config().limits.max_sessions_per_scene) {
      session->PostClose(ErrorCode::kSceneFull, "the scene has its maximum number of sessions");
      return;
    }
    Metrics& metrics = ctx_.metrics();
    const SessionKind kind = session->kind();
    const uint64_t seq = store_.sequence();
    uint64_t from = 0;
    JoinState state = JoinState::kSnapshot;
    if (resume) {
      state = JoinState::kResumeStale;
      if (sync_) {
        if (const auto at = sync_->ResumeFrom(*resume); at && *at <= seq) {
          from = *at;
          state = JoinState::kResume;
        }
      } else if ((*resume & ~session::kLocalSequenceMask) == wire_base_ &&
                 session::LocalSequence(*resume) <= seq) {
        from = session::LocalSequence(*resume);
        state = JoinState::kResume;
      }
    }
    const bool resumed = state == JoinState::kResume;
    Metrics::Add(resumed ? metrics.resumes : metrics.snapshots);
    metrics.CountJoin(kind, state);
    // Reconnect evidence: a resume position, or the same address and kind back soon after an
    // abnormal end (the client could not say goodbye).
    const int64_t now = NowMs();
    const char* reconnect = "no";
    while (!departures_.empty() && now - departures_.front().left_ms > kReconnectWindowMs) {
      departures_.pop_front();
    }
    auto departed = std::find_if(departures_.begin(), departures_.end(), [&](const Departure& d) {
      return d.kind == kind && d.address == session->peer().address();
    });
    if (resume) {
      metrics.CountReconnect(ReconnectEvidence::kResume);
      reconnect = "resume";
    } else if (departed != departures_.end()) {
      metrics.CountReconnect(ReconnectEvidence::kRecentDrop);
      reconnect = "recent_drop";
    }
    if (departed != departures_.end()) departures_.erase(departed);
    const auto build_start = std::chrono::steady_clock::now();
    std::vector<SharedFrame> frames;
    const bool raw = session->kind() == SessionKind::kDcl;  // plain DCL chunks, no envelope
    const bool zstd = !raw && session->zstd_frames();
    if (raw || from == 0) {
      // raw: one chunk, the whole state (empty for a new scene)
      frames = SnapshotFrames(raw, zstd);
    } else {
      frames = BuildFrames(from, seq, /*is_state=*/true);
      if (zstd) frames = compression_.Records(frames);
    }
    const auto build_us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - build_start);
    Metrics::Add(metrics.state_build_us, static_cast<uint64_t>(build_us.count()));
    std::size_t state_bytes = 0;
    for (const SharedFrame& f : frames) state_bytes += f->size();
    Metrics::Add(metrics.state_bytes, state_bytes);
    session::Welcome welcome{session->id(), Wire(seq), resumed, can_write};
    Member m;
    m.session = session;
    m.id = session->id();
    m.cursor = seq;
    m.raw = raw;
    m.zstd = zstd;
    m.busy_since_ms = now;
    members_.push_back(std::move(m));
    ctx_.log().Write("open",
                     "scene=%s session=%llu kind=%s peer=%s role=%s state=%s state_bytes=%zu "
                     "reconnect=%s members=%zu",
                     name_.c_str(), static_cast<unsigned long long>(session->id()),
                     SessionKindName(kind), session->peer_text().c_str(),
                     can_write ? "write" : "read",
                     state == JoinState::kResume
                         ? "resume"
                         : (state == JoinState::kResumeStale ? "resume_stale" : "snapshot"),
                     state_bytes, reconnect, members_.size());
    session->PostJoined(welcome, std::move(frames));
  });
}

void Scene::Leave(uint64_t session_id, CloseReason reason) {
  net::asio::post(strand_, [this, session_id, reason] {
    auto it = std::find_if(members_.begin(), members_.end(),
                           [&](const Member& m) { return m.id == session_id; });
    if (it == members_.end()) return;
    // Ends the client did not choose (and the server did not choose for a bad client) are
    // what a reconnect follows.
    const bool abnormal = reason == CloseReason::kPeerGone || reason == CloseReason::kWriteFailed ||
                          reason == CloseReason::kIdleTimeout ||
                          reason == CloseReason::kSlowConsumer;
    if (abnormal) {
      if (departures_.size() >= kMaxDepartures) departures_.pop_front();
      departures_.push_back({it->session->peer().address(), it->session->kind(), NowMs()});
    }
    members_.erase(it);
  });
}

void Scene::Submit(uint64_t session_id, uint64_t frame_sequence, runtime::AdmittedBatch batch) {
  net::asio::post(strand_, [this, session_id, frame_sequence, batch = std::move(batch)]() {
    Member* member = FindMember(session_id);
    if (!member) return;  // left meanwhile
    Metrics& metrics = ctx_.metrics();
    const uint64_t growth = SceneBytes::Growth(store_, batch.messages());
    if (!bytes_.Fits(store_, growth, ctx_.config().limits.max_scene_bytes, NowMs())) {
      member->session->PostRefusal(ErrorCode::kSceneTooLarge,
                                   "the write would grow the scene past --max-scene-bytes",
                                   frame_sequence, batch.size());
      return;
    }
    const uint64_t before = store_.sequence();
    const ErrorCode refusal = store_.MergeAdmitted(
        batch, [&](const protocol::CrdtMessage&, const runtime::MergeResult& r) {
          metrics.CountMerge(r.outcome);
          if (r.outcome == runtime::MergeOutcome::kRefused) metrics.CountRefusal(r.reason);
        });
    if (refusal != ErrorCode::kOk) {
      member->session->PostRefusal(refusal, runtime::RefusalText(refusal), frame_sequence,
                                   batch.size());
      return;
    }
    Metrics::Add(metrics.messages_in, batch.size());
    bytes_.Add(growth);
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
    const int64_t now = NowMs();
    const int64_t busy_ms = now - m->busy_since_ms;
    const uint64_t behind = store_.sequence() - m->cursor;
    const std::size_t bytes = Deliver(*m, now);
    // A consumer whose last delivery took long gets everything that piled up as one coalesced
    // frame from the store's current state: the resync of a slow consumer.
    const int64_t resync_ms =
        std::max<int64_t>(10, static_cast<int64_t>(ctx_.config().limits.slow_consumer_ms) / 5);
    if (bytes > 0 && busy_ms >= resync_ms) {
      Metrics::Add(ctx_.metrics().resyncs);
      Metrics::Add(ctx_.metrics().resync_bytes, bytes);
      ctx_.log().Write("resync",
                       "scene=%s session=%llu kind=%s peer=%s busy_ms=%lld changes_behind=%llu "
                       "bytes=%zu",
                       name_.c_str(), static_cast<unsigned long long>(session_id),
                       SessionKindName(m->session->kind()), m->session->peer_text().c_str(),
                       static_cast<long long>(busy_ms), static_cast<unsigned long long>(behind),
                       bytes);
    }
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

void Scene::RetireIfQuiescent(std::function<void(bool)> done) {
  net::asio::post(strand_, [this, done = std::move(done)] {
    const bool quiescent = members_.empty() && !commit_in_flight_ && !retry_armed_ &&
                           !flush_scheduled_ && rate_timer_at_ms_ == 0 &&
                           durable_ == store_.sequence() && pending_acks_.empty() &&
                           flush_waiters_.empty() && ClusterIdle();
    done(quiescent);  // may destroy this scene: nothing of it is touched afterwards
  });
}

std::vector<SharedFrame> Scene::SnapshotFrames(bool raw, bool zstd) {
  const uint64_t seq = store_.sequence();
  if (snapshot_sequence_ != seq) {
    snapshot_sequence_ = seq;
    snapshot_envelope_.clear();
    snapshot_zstd_.clear();
    snapshot_raw_.reset();
  }
  if (raw) {
    if (SharedFrame shared = snapshot_raw_.lock()) {
      Metrics::Add(ctx_.metrics().snapshot_shares);
      return {shared};
    }
    SharedFrame built = BuildRaw(0);
    snapshot_raw_ = built;
    return {built};
  }
  // The frames of a cache when every one of them is still alive.
  const auto alive = [](const std::vector<std::weak_ptr<const std::vector<uint8_t>>>& cache) {
    std::vector<SharedFrame> frames;
    for (const auto& weak : cache) {
      SharedFrame f = weak.lock();
      if (!f) return std::vector<SharedFrame>();
      frames.push_back(std::move(f));
    }
    return frames;
  };
  auto& cache = zstd ? snapshot_zstd_ : snapshot_envelope_;
  std::vector<SharedFrame> frames = alive(cache);
  if (!frames.empty()) {
    Metrics::Add(ctx_.metrics().snapshot_shares);
    return frames;
  }
  frames = alive(snapshot_envelope_);
  if (frames.empty()) {
    frames = BuildFrames(0, seq, /*is_state=*/true);
    snapshot_envelope_.assign(frames.begin(), frames.end());
  }
  if (zstd) {
    frames = compression_.Records(frames);
    snapshot_zstd_.assign(frames.begin(), frames.end());
  }
  return frames;
}

void Scene::Describe(std::function<void(Summary)> done) {
  net::asio::post(strand_, [this, done = std::move(done)] {
    done(Summary{name_, store_.num_entities(), members_.size()});
  });
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

std::size_t Scene::Deliver(Member& m, int64_t now_ms) {
  const uint64_t seq = store_.sequence();
  if (!m.ready || m.cursor >= seq) return 0;
  const double max_rate = ctx_.config().limits.max_rate_hz;
  if (max_rate > 0.0 && now_ms < m.next_send_ms) {
    ArmRateTimer(m.next_send_ms);
    return 0;
  }
  if (cache_sequence_ != seq) {
    cache_.clear();
    cache_sequence_ = seq;
  }
  auto it = std::find_if(cache_.begin(), cache_.end(),
                         [&](const Batch& b) { return b.cursor == m.cursor; });
  if (it == cache_.end()) {
    cache_.push_back({m.cursor, {}, {}, nullptr});
    it = cache_.end() - 1;
    Metrics::Add(m.cursor == flushed_ || m.cursor + 1 >= seq ? ctx_.metrics().shared_frames
                                                             : ctx_.metrics().catchups);
  }
  std::vector<SharedFrame> frames;
  if (m.raw) {
    if (!it->raw) it->raw = BuildRaw(m.cursor);
    frames.push_back(it->raw);
  } else {
    if (it->envelope.empty()) it->envelope = BuildFrames(m.cursor, seq, /*is_state=*/false);
    frames = it->envelope;
    if (m.zstd) {
      if (it->zstd.empty()) it->zstd = compression_.Records(it->envelope);
      compression_.CountDelivery(it->envelope, it->zstd);
      frames = it->zstd;
    }
  }
  std::size_t bytes = 0;
  for (const SharedFrame& f : frames) bytes += f->size();
  m.session->PostSceneFrames(std::move(frames));
  m.cursor = seq;
  m.ready = false;
  m.busy_since_ms = now_ms;
  if (max_rate > 0.0) m.next_send_ms = now_ms + static_cast<int64_t>(1000.0 / max_rate);
  return bytes;
}

SharedFrame Scene::BuildRaw(uint64_t from) {
  // The store's export is already a plain DCL stream: it is the chunk, as it is.
  std::vector<uint8_t> dcl;
  const std::size_t messages = store_.ExportChangesSince(from, dcl);
  Metrics::Add(ctx_.metrics().messages_out, messages);
  return MakeShared(std::move(dcl));
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
  // A large export's buffer is not kept for the scene's lifetime.
  if (scratch_.capacity() > 4 * std::size_t{chunk_bytes}) std::vector<uint8_t>().swap(scratch_);
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
  ctx_.commits().Submit(std::move(job));
}

void Scene::OnCommitted(bool ok, uint64_t target) {
  commit_in_flight_ = false;
  if (sync_) {
    if (ok) unavailable_notified_ = false;
    if (!ok) NotifyUnavailable();
  }
  if (!ok) {
    // Nothing is acked; the next attempt exports again from the same durable point.
    if (!sync_) TellStorageUnavailable();
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

void Scene::TellStorageUnavailable() {
  const uint64_t episode = ctx_.persistence().health().episode();
  for (const PendingAck& a : pending_acks_) {
    Member* m = FindMember(a.session_id);
    if (!m || m->raw || m->storage_told == episode) continue;  // raw DCL has no acks to wait on
    m->storage_told = episode;
    m->session->PostRefusal(ErrorCode::kStorageUnavailable,
                            "the server cannot commit (disk full or I/O error): your frames are "
                            "merged and will be acknowledged once a commit succeeds",
                            0, 0);
  }
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
