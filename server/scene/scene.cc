// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's work: joins, merges, fan-out, catch-up, group commit and acks, and
// what a shared log hands the scene (its load, other nodes' entries, append positions), over
// the concern classes of scene.h.
#include "scenecrdt/server/scene/scene.h"

#include <algorithm>
#include <chrono>

#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "scenecrdt/server/scene/log_merge.h"

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

Scene::Scene(ServerContext& ctx, std::string name, std::span<const uint8_t> restore,
             std::optional<uint64_t> incarnation, std::vector<OwnerRow> owners)
    : ctx_(ctx),
      name_(std::move(name)),
      strand_(net::asio::make_strand(ctx.ioc())),
      store_(StoreLimitsFrom(ctx.config().limits)),
      sequences_(session::MakeSceneSequence(incarnation.value_or(ctx.incarnation()), 0)),
      frames_(ctx.metrics(), ctx.config().limits.state_chunk_bytes, store_, sequences_),
      rate_(ctx.config().limits.max_rate_hz, strand_,
            [this] {
              const int64_t now = NowMs();
              for (MemberState& m : members_) Deliver(m, now);
            }),
      interest_(ctx, name_, store_, sequences_, frames_.builder(), frames_.compression(), rate_),
      retry_timer_(strand_),
      flush_timer_(strand_),
      authority_(ctx, name_, store_, acks_, strand_, *this, owners),
      log_(ctx, *this),
      deletion_(ctx, name_, strand_) {
  if (!restore.empty()) {
    if (auto merged = store_.MergeStream(restore); !merged.has_value()) {
      ctx_.log().Write(LogLevel::kError, "restore_failed", "scene=%s error=%s offset=%llu",
                       name_.c_str(), merged.error().detail,
                       static_cast<unsigned long long>(merged.error().offset));
    }
  }
  bytes_.Reset(restore.size());
  flushed_ = durable_ = store_.sequence();
  if (log_.shared()) {
    // Nobody is welcomed before the scene's state is loaded from the log (LogLoaded).
    sequences_.UseSharedLog();
    log_.Follow();
  }
}

MemberState* Scene::FindMember(uint64_t id) { return members_.Find(id); }

void Scene::Join(std::shared_ptr<SceneMember> member, bool can_write,
                 std::optional<uint64_t> resume, std::optional<InterestSpec> interest) {
  net::asio::post(
      strand_, [this, member = std::move(member), can_write, resume, interest]() mutable {
        if (deletion_.started()) {
          member->PostClose(ErrorCode::kSceneDeleted, "the scene was deleted; join again");
          return;
        }
        if (log_.HoldJoin(member, can_write, resume, interest)) return;
        if (members_.size() >= ctx_.config().limits.max_sessions_per_scene) {
          member->PostClose(ErrorCode::kSceneFull, "the scene has its maximum number of sessions");
          return;
        }
        Metrics& metrics = ctx_.metrics();
        const SessionKind kind = member->kind();
        const uint64_t seq = store_.sequence();
        uint64_t from = 0;
        JoinState state = JoinState::kSnapshot;
        // An interest member gets a snapshot of its view, resume or not (docs/INTEREST.md).
        if (resume && !interest) {
          state = JoinState::kResumeStale;
          if (const auto at = sequences_.ResumeFrom(*resume, seq)) {
            from = *at;
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
        const bool recent_drop = departures_.Take(member->peer().address(), kind, now);
        if (resume) {
          metrics.CountReconnect(ReconnectEvidence::kResume);
          reconnect = "resume";
        } else if (recent_drop) {
          metrics.CountReconnect(ReconnectEvidence::kRecentDrop);
          reconnect = "recent_drop";
        }
        const auto build_start = std::chrono::steady_clock::now();
        std::vector<SharedFrame> frames;
        const bool raw = kind == SessionKind::kDcl;  // plain DCL chunks, no envelope
        const bool zstd = !raw && member->zstd_frames();
        std::unique_ptr<MemberView> view;
        if (interest && !raw) {
          view = std::make_unique<MemberView>(*interest, false);
          frames = interest_.JoinSnapshot(*view, zstd);
        } else if (raw || from == 0) {
          // raw: one chunk, the whole state (empty for a new scene)
          frames = frames_.Snapshot(raw, zstd);
        } else {
          frames = frames_.Resume(from, zstd);
        }
        const auto build_us = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - build_start);
        Metrics::Add(metrics.state_build_us, static_cast<uint64_t>(build_us.count()));
        std::size_t state_bytes = 0;
        for (const SharedFrame& f : frames) state_bytes += f->size();
        Metrics::Add(metrics.state_bytes, state_bytes);
        session::Welcome welcome{member->id(), sequences_.Wire(seq), resumed, can_write};
        MemberState m;
        m.member = member;
        m.id = member->id();
        m.cursor = seq;
        m.raw = raw;
        m.zstd = zstd;
        m.busy_since_ms = now;
        authority_.Joined(m);
        m.view = std::move(view);
        MemberState& joined = members_.Add(std::move(m));
        if (joined.view) interest_.Joined(joined);
        ctx_.log().Write(LogLevel::kInfo, "open",
                         "scene=%s session=%llu kind=%s peer=%s role=%s state=%s state_bytes=%zu "
                         "reconnect=%s members=%zu interest=%s",
                         name_.c_str(), static_cast<unsigned long long>(member->id()),
                         SessionKindName(kind), member->peer_text().c_str(),
                         can_write ? "write" : "read",
                         state == JoinState::kResume
                             ? "resume"
                             : (state == JoinState::kResumeStale ? "resume_stale" : "snapshot"),
                         state_bytes, reconnect, members_.size(), interest ? "yes" : "no");
        member->PostJoined(welcome, std::move(frames));
      });
}

void Scene::Leave(uint64_t member_id, CloseReason reason) {
  net::asio::post(strand_, [this, member_id, reason] {
    // A join still held for the scene's load from Redis (cluster mode) is dropped: joined
    // after its session ended, it would stay a member for good and keep the scene from being
    // evicted (its Join was posted before this Leave, on the same strand).
    log_.DropHeld(member_id);
    MemberState* m = members_.Find(member_id);
    if (!m) return;
    if (Departures::Abnormal(reason)) {
      departures_.Note(m->member->peer().address(), m->member->kind(), NowMs());
    }
    if (m->view) interest_.Leaving(*m);
    members_.Remove(member_id);
  });
}

void Scene::Submit(uint64_t member_id, uint64_t frame_sequence, runtime::AdmittedBatch batch) {
  net::asio::post(strand_, [this, member_id, frame_sequence, batch = std::move(batch)]() mutable {
    MemberState* member = FindMember(member_id);
    if (!member) return;  // left meanwhile
    Metrics& metrics = ctx_.metrics();
    const uint64_t growth = SceneBytes::Growth(store_, batch.messages());
    if (!bytes_.Fits(store_, growth, ctx_.config().limits.max_scene_bytes, NowMs())) {
      member->member->PostRefusal(ErrorCode::kSceneTooLarge,
                                  "the write would grow the scene past --max-scene-bytes",
                                  frame_sequence, batch.size());
      return;
    }
    std::vector<RefusedWrite> refused;
    // A write re-stamped over a correction: its writer's replica holds the old timestamp.
    if (authority_.enabled() && authority_.Filter(*member, frame_sequence, batch, refused)) {
      mixed_writers_ = true;
    }
    const uint64_t before = store_.sequence();
    const uint32_t principal = member->principal;
    const ErrorCode refusal = store_.MergeAdmitted(
        batch, [&](const protocol::CrdtMessage& m, const runtime::MergeResult& r) {
          metrics.CountMerge(r.outcome);
          if (r.outcome == runtime::MergeOutcome::kRefused) metrics.CountRefusal(r.reason);
          authority_.Note(principal, m, r.outcome);
        });
    if (refusal != ErrorCode::kOk) {
      member->member->PostRefusal(refusal, runtime::RefusalText(refusal), frame_sequence,
                                  batch.size());
      return;
    }
    Metrics::Add(metrics.messages_in, batch.size());
    if (member->view) {
      for (const protocol::CrdtMessage& msg : batch.messages())
        member->view->NoteWritten(msg.entity);
    }
    bytes_.Add(growth);
    if (store_.sequence() != before) {
      if (sole_writer_ == 0 && !mixed_writers_) {
        sole_writer_ = member_id;
      } else if (sole_writer_ != member_id) {
        mixed_writers_ = true;
      }
    }
    // The corrections go to every member, the refused writer included (it is not the sole
    // writer of these changes).
    if (!refused.empty() && authority_.AnswerRefused(*member, frame_sequence, refused)) {
      mixed_writers_ = true;
    }
    authority_.AddAck(*member, frame_sequence);
    ScheduleFlush();
  });
}

void Scene::Ready(uint64_t member_id) {
  net::asio::post(strand_, [this, member_id] {
    MemberState* m = FindMember(member_id);
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
      ctx_.log().Write(LogLevel::kWarn, "resync",
                       "scene=%s session=%llu kind=%s peer=%s busy_ms=%lld changes_behind=%llu "
                       "bytes=%zu",
                       name_.c_str(), static_cast<unsigned long long>(member_id),
                       SessionKindName(m->member->kind()), m->member->peer_text().c_str(),
                       static_cast<long long>(busy_ms), static_cast<unsigned long long>(behind),
                       bytes);
    }
  });
}

void Scene::LocalWrite(std::function<void(runtime::CrdtStore&)> write) {
  net::asio::post(strand_, [this, write = std::move(write)] {
    if (deletion_.started()) return;  // a server-side writer of a deleted scene: nothing is kept
    const uint64_t before = store_.sequence();
    write(store_);
    if (store_.sequence() != before) mixed_writers_ = true;
    ScheduleFlush();
  });
}

void Scene::Flush(std::function<void()> done) {
  net::asio::post(strand_, [this, done = std::move(done)]() mutable {
    if (deletion_.started()) {
      done();  // nothing more is committed
      return;
    }
    acks_.AddWaiter(std::move(done));
    FanOut();
    MaybeCommit();
  });
}

void Scene::Owners(std::function<void(std::vector<OwnerRow>)> done) {
  net::asio::post(strand_, [this, done = std::move(done)] { done(authority_.Owners()); });
}

void Scene::Inspect(std::function<void(const runtime::CrdtStore&, uint64_t)> read) {
  net::asio::post(strand_, [this, read = std::move(read)] {
    read(store_, sequences_.Wire(store_.sequence()));
  });
}

void Scene::RetireIfQuiescent(std::function<void(bool)> done) {
  net::asio::post(strand_, [this, done = std::move(done)] {
    const bool quiescent = members_.empty() && !commit_in_flight_ && !retry_armed_ &&
                           !flush_scheduled_ && !rate_.armed() && durable_ == store_.sequence() &&
                           !authority_.has_changes() && acks_.empty() && !acks_.has_waiters() &&
                           log_.idle() && !authority_.claims_pending();
    done(quiescent);  // may destroy this scene: nothing of it is touched afterwards
  });
}

void Scene::Describe(std::function<void(Summary)> done) {
  net::asio::post(strand_, [this, done = std::move(done)] {
    const uint64_t seq = store_.sequence();
    done(Summary{name_, store_.num_entities(), members_.size(), true, bytes_.bytes(), seq,
                 sequences_.Wire(seq), durable_});
  });
}

void Scene::ScheduleFlush() {
  if (flush_scheduled_) return;
  flush_scheduled_ = true;
  flush_asked_ = std::chrono::steady_clock::now();
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
  const auto started = std::chrono::steady_clock::now();
  // Interest members at `from` whose cells saw no change, whose view is all near its centre
  // and that did not write get nothing: only their cursor moves (docs/INTEREST.md).
  const bool selective = interest_.active() && interest_.Visits(from, visit_);
  for (MemberState& m : members_) {
    if (!m.ready) continue;  // catches up (coalesced) when its write completes
    if (selective && m.view && m.cursor == from && !m.clear_interest && !m.view->dirty() &&
        !m.view->holds_far() && !m.view->registered_all &&
        !std::binary_search(visit_.begin(), visit_.end(), m.id)) {
      m.cursor = seq;
      continue;
    }
    if (m.id == skip && m.cursor == from) {
      if (!m.view) {
        m.cursor = seq;  // exactly its own changes: its replica has them already
        continue;
      }
      m.own_changes = true;  // its view may still change: enters and leaves only
    }
    Deliver(m, now);
    m.own_changes = false;
  }
  const auto done = std::chrono::steady_clock::now();
  ctx_.metrics().fanout.Observe(std::chrono::duration<double>(done - started).count());
  if (flush_asked_ != std::chrono::steady_clock::time_point{}) {
    ctx_.metrics().delivery.Observe(std::chrono::duration<double>(done - flush_asked_).count());
  }
}

std::size_t Scene::Deliver(MemberState& m, int64_t now_ms) {
  if (m.view) {
    // Changes after the last fan-out reach an interest member with the next one, whose batch
    // its catch-up can then gather from (docs/INTEREST.md "Server work and bounds").
    if (store_.sequence() == flushed_ || deletion_.started()) return interest_.Deliver(m, now_ms);
    ScheduleFlush();
    return 0;
  }
  const uint64_t seq = store_.sequence();
  if (!m.ready || m.cursor >= seq) return 0;
  if (!rate_.Allow(m.next_send_ms, now_ms)) return 0;
  std::vector<SharedFrame> frames =
      frames_.Delivery(m, seq, m.cursor == flushed_ || m.cursor + 1 >= seq);
  std::size_t bytes = 0;
  for (const SharedFrame& f : frames) bytes += f->size();
  m.member->PostSceneFrames(std::move(frames));
  m.cursor = seq;
  m.ready = false;
  m.busy_since_ms = now_ms;
  if (const int64_t next = rate_.Next(now_ms); next != 0) m.next_send_ms = next;
  return bytes;
}

void Scene::MaybeCommit() {
  if (commit_in_flight_ || deletion_.started()) return;
  const uint64_t seq = store_.sequence();
  if (seq == durable_ && !authority_.has_changes()) {
    ReleaseAcks();
    return;
  }
  // The flush's export when the fan-out made one from the durable point (the usual case:
  // commits keep up), else one the members catching up from there will share.
  const SharedFrame& exported = frames_.Export(seq, durable_).dcl;
  std::vector<uint8_t> dcl(exported->begin(), exported->end());
  commit_in_flight_ = true;
  acks_.Submitted(seq);
  CommitJob job;
  job.scene = name_;
  job.dcl = std::move(dcl);
  job.owners = authority_.TakeChanges(durable_, job.corrections);
  job.done = [this, seq](bool ok) {
    net::asio::post(strand_, [this, ok, seq] { OnCommitted(ok, seq); });
  };
  ctx_.commits().Submit(std::move(job));
}

void Scene::OnCommitted(bool ok, uint64_t target) {
  commit_in_flight_ = false;
  if (deletion_.started()) {
    deletion_.EraseRows();  // the commit that was in flight is done: the erase goes after it
    return;
  }
  log_.Committed(ok, acks_, members_.all());
  if (!ok) {
    // Nothing is acked; the next attempt exports again from the same durable point (and
    // writes the owner rows of this one again).
    authority_.CommitFailed();
    if (!log_.shared()) TellStorageUnavailable();
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
  authority_.Committed();
  ReleaseAcks();
  MaybeCommit();
}

void Scene::TellStorageUnavailable() {
  const uint64_t episode = ctx_.commits().failure_episode();
  for (const uint64_t id : acks_.Waiting()) {
    MemberState* m = FindMember(id);
    if (!m || m->raw || m->storage_told == episode) continue;  // raw DCL has no acks to wait on
    m->storage_told = episode;
    m->member->PostRefusal(ErrorCode::kStorageUnavailable,
                           "the server cannot commit (disk full or I/O error): your frames are "
                           "merged and will be acknowledged once a commit succeeds",
                           0, 0);
  }
}

void Scene::ReleaseAcks() {
  // One cumulative Ack per member for everything durable now.
  for (const auto& [id, fs] : acks_.TakeDurable(durable_)) {
    if (MemberState* m = FindMember(id)) m->member->PostAck(fs);
  }
  if (!commit_in_flight_ && durable_ == store_.sequence() && acks_.empty() && acks_.has_waiters()) {
    acks_.ReleaseWaiters();
  }
}

void Scene::AuthorityMerged(bool everyone) {
  if (everyone) mixed_writers_ = true;
  ScheduleFlush();
}

void Scene::SetInterest(uint64_t member_id, std::optional<InterestSpec> interest) {
  net::asio::post(strand_, [this, member_id, interest] {
    MemberState* m = FindMember(member_id);
    if (m == nullptr) {
      // A join still held for the shared log's load takes the interest with it.
      log_.SetHeldInterest(member_id, interest);
      return;
    }
    if (m->raw) return;  // raw DCL cannot express "out of view" (docs/INTEREST.md)
    interest_.SetInterest(*m, interest);
    Deliver(*m, NowMs());
  });
}

void Scene::Transfer(uint64_t member_id, uint32_t entity, std::string to) {
  net::asio::post(strand_, [this, member_id, entity, to = std::move(to)]() mutable {
    MemberState* m = FindMember(member_id);
    if (!m) return;
    if (const ErrorCode refusal = authority_.Transfer(*m, entity, to); refusal != ErrorCode::kOk) {
      m->member->PostWriteRefused(session::Refusal{0, entity, 0, 0, refusal});
      return;
    }
    m->member->PostOwnershipTransferred(session::TransferOwnership{entity, std::move(to)});
    MaybeCommit();  // the owner row is durable state of its own
  });
}

// ---- Deletion ----

void Scene::Delete(std::function<void(Deletion)> done) {
  net::asio::post(strand_, [this, done = std::move(done)]() mutable {
    deletion_.Start(std::move(done), store_.num_entities(), members_.size());
    flush_timer_.cancel();
    retry_timer_.cancel();
    rate_.Cancel();
    for (MemberState& m : members_) {
      m.member->PostClose(ErrorCode::kSceneDeleted,
                          "an operator deleted the scene (admin API); join again for an empty "
                          "scene");
    }
    // Their Leave finds nothing; their frames still queued here are dropped (Submit finds no
    // member), and nothing is acked: a client resends its unacked frames after a rejoin.
    members_.Clear();
    acks_.ReleaseWaiters();
    if (!commit_in_flight_) deletion_.EraseRows();  // else OnCommitted erases once it is done
  });
}

void Scene::AfterPending(std::function<void()> then) { net::asio::post(strand_, std::move(then)); }

// ---- A shared log ----

void Scene::LogLoaded(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                      cluster::StreamId last, OwnerRows owners) {
  // The owners first: nobody is welcomed before they apply (the merge welcomes held joins).
  // The authority's mode never changes: readable from any thread.
  if (authority_.enabled())
    net::asio::post(strand_, [this, last, owners = std::move(owners)] {
      if (!log_.retired()) authority_.Loaded(owners, last);
    });
  MergeLoadedState(std::move(chunks), std::move(ids), last);
}

void Scene::MergeLoadedState(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                             cluster::StreamId last) {
  net::asio::post(strand_, [this, chunks = std::move(chunks), ids = std::move(ids), last] {
    // What was loaded is in the log already: nothing to append, nothing to fan out yet. Its
    // size counts towards --max-scene-bytes (the bytes that rebuilt it: an upper bound).
    bytes_.Reset(MergeLoaded(store_, sequences_.marks(), chunks, ids, last, ctx_.log(), name_));
    flushed_ = durable_ = store_.sequence();
    for (SceneLogLink::HeldJoin& j : log_.Loaded()) {
      Join(std::move(j.member), j.can_write, j.resume, j.interest);
    }
  });
}

void Scene::LogLoadFailed(std::string why) {
  net::asio::post(strand_, [this, why = std::move(why)] { log_.LoadFailed(why); });
}

void Scene::LogEntries(std::vector<cluster::DecodedChunk> chunks, cluster::StreamId last,
                       std::size_t posted_bytes, OwnerRows owners,
                       std::vector<CorrectionMark> corrections) {
  net::asio::post(strand_, [this, chunks = std::move(chunks), last, posted_bytes,
                            owners = std::move(owners), corrections = std::move(corrections)] {
    if (log_.retired() || corrections.empty() || !authority_.enabled()) {
      MergeLogEntries(chunks, last, posted_bytes);
    } else {
      authority_.MergeCorrected(
          chunks, last, posted_bytes, corrections,
          [this](std::span<const cluster::DecodedChunk> part, cluster::StreamId part_last,
                 std::size_t part_bytes) { MergeLogEntries(part, part_last, part_bytes); });
    }
    // After the merge: a due correction needs the values read up to `last`.
    if (!log_.retired() && authority_.enabled()) authority_.AfterLogRead(owners, last);
  });
}

void Scene::MergeLogEntries(std::span<const cluster::DecodedChunk> chunks, cluster::StreamId last,
                            std::size_t posted_bytes) {
  if (log_.retired()) {
    log_.Consumed(posted_bytes);  // evicted: the entries are in the log
    return;
  }
  // Nothing of ours is waiting to be appended: the merged entries are in the log already, so
  // the durable point moves with them. Otherwise the next flush carries them again, which
  // last-write-wins makes harmless.
  const bool idle = !commit_in_flight_ && durable_ == store_.sequence();
  const uint64_t before = store_.sequence();
  MergeRemote(store_, bytes_, chunks, ctx_.config().limits.max_scene_bytes, ctx_.metrics(),
              ctx_.log(), name_);
  if (idle) durable_ = store_.sequence();
  if (!last.is_zero() && log_.loaded()) {
    sequences_.marks().NoteRead(last, store_.sequence(), durable_);
  }
  if (store_.sequence() != before) {
    mixed_writers_ = true;
    ScheduleFlush();
  }
  log_.Consumed(posted_bytes);
}

void Scene::LogOwners(OwnerRows owners) {
  net::asio::post(strand_, [this, owners = std::move(owners)] {
    if (log_.retired() || !authority_.enabled()) return;
    authority_.ReplaceOwners(owners);
  });
}

void Scene::LogAppended(cluster::StreamId id) {
  net::asio::post(strand_, [this, id] { sequences_.marks().NoteAppended(id, durable_); });
}

void Scene::Retire(std::function<void()> then) {
  // Called on the strand (from the registry's quiescence check), so nothing of the scene runs
  // meanwhile; whatever is queued behind runs before `then` (a strand is FIFO).
  log_.Retire();
  net::asio::post(strand_, std::move(then));
}

}  // namespace scenecrdt::server
