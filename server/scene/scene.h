// SPDX-License-Identifier: Apache-2.0
// Owns Scene: one CrdtStore plus its members, change sequence, fan-out and durability
// bookkeeping, all on one strand (no mutex: every public method posts to the strand). It
// reaches its members only through SceneMember (scene_member.h) and its durability only
// through its CommitLog (storage/commit_log.h: SQLite, or the cluster's shared log). Each
// concern is a class of its own, used on the strand; those that read or update a member take
// its record (MemberState, scene_member_state.h) by reference: SceneFrames (what members
// receive, built once and shared: fan_out/), SceneInterest (interest members, docs/INTEREST.md:
// their frames are their own, built by MemberView over the scene's InterestIndex),
// SceneAuthority (who may write, docs/AUTHORITY.md; it reaches back through its Host
// interface), SceneLogLink (a shared log's load, held joins and outage notice), DeletionJob
// (the admin API's erase), AckBook (acks and flush waiters), RateLimit (--max-rate),
// Departures (reconnects), SceneBytes (--max-scene-bytes) and SceneSequences (scene sequences
// and resume).
//
// Fan-out (docs/SERVER.md): each member has a cursor (the store sequence it has been sent up
// to) and is "ready" when nothing of the scene is in flight to it. A merge schedules one
// flush (posted behind whatever the strand already holds, so frames queued together merge
// together); the flush builds the batch once and hands it to every ready member at the batch
// start. Members that were busy catch up when they report ready, with one coalesced
// ExportChangesSince(cursor) frame, shared by members at the same cursor: while a write is in
// flight, changes pile up as "latest per key" in the store itself, never as queued frames.
// Raw-DCL members (/dcl/<name>) get the same batches as plain DCL chunks (no envelope): one
// per delivery, built once per cursor like the envelope frames; their snapshot is one chunk.
// Members that read zstd frames get the same frames compressed, once per scene and cursor.
// A catch-up after a delivery that took longer than slow_consumer_ms / 5 is a "resync" of a
// slow consumer (counted and logged).
//
// Durability: after merges, the changes since the durable point go to the commit log as one
// job (group commit; what arrives meanwhile goes in the next one). Frames are acked once the
// durable point passes the store sequence they reached. While commits fail, each envelope
// writer waiting for an ack is told `storage_unavailable` once per failure episode (on the
// shared log: `unavailable` once per outage); the frames stay merged and are acked when a
// commit succeeds.
//
// On a shared log (docs/CLUSTER.md "Server integration") the scene is a LoggedScene: joins
// wait until its state is loaded from the log, other nodes' entries merge and fan out like
// local writes, and the scene sequences come from the log's positions.
//
// Deletion (the admin API, docs/OPERATIONS.md "Admin API"; SQLite only): Delete closes every
// member with scene_deleted, refuses joins and writes from then on, commits nothing more, and
// once no commit of the scene is in flight erases its rows (DeletionJob: after that commit, in
// one transaction). The registry then drops it (scene_registry.h).
//
// Memory (docs/SERVER.md "Memory bounds"): writes that would grow the state past
// --max-scene-bytes are refused (scene_too_large); joiners at one store sequence share one set
// of snapshot frames (weak references: nothing is kept once sent).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/ack_book.h"
#include "scenecrdt/server/scene/authority/authority.h"
#include "scenecrdt/server/scene/authority/scene_authority.h"
#include "scenecrdt/server/scene/deletion_job.h"
#include "scenecrdt/server/scene/departures.h"
#include "scenecrdt/server/scene/fan_out/scene_frames.h"
#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/scene/interest/scene_interest.h"
#include "scenecrdt/server/scene/rate_limit.h"
#include "scenecrdt/server/scene/scene_bytes.h"
#include "scenecrdt/server/scene/scene_deletion.h"
#include "scenecrdt/server/scene/scene_log_link.h"
#include "scenecrdt/server/scene/scene_member.h"
#include "scenecrdt/server/scene/scene_member_state.h"
#include "scenecrdt/server/scene/scene_members.h"
#include "scenecrdt/server/scene/scene_sequences.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

class Scene final : public LoggedScene, private SceneAuthority::Host {
 public:
  // `restore`: a DCL stream (from Persistence::LoadScene) merged before anything else and
  // considered durable.
  // `incarnation`: numbers the scene's sequences (default: the server's; a scene reloaded after
  // an eviction gets a fresh one).
  // `owners`: the stored owner rows (--authority owner; docs/AUTHORITY.md).
  Scene(ServerContext& ctx, std::string name, std::span<const uint8_t> restore = {},
        std::optional<uint64_t> incarnation = std::nullopt, std::vector<OwnerRow> owners = {});
  Scene(const Scene&) = delete;
  Scene& operator=(const Scene&) = delete;

  const std::string& name() const override { return name_; }
  // The limits of the scene's store (immutable: any thread). Sessions admit chunks under them.
  const runtime::StoreLimits& store_limits() const { return store_.limits(); }

  // ---- Any thread (each posts to the strand) ----
  // `interest`: the member declared one before its Hello (its state is a snapshot of the
  // view, resume or not: docs/INTEREST.md "Resume").
  void Join(std::shared_ptr<SceneMember> member, bool can_write, std::optional<uint64_t> resume,
            std::optional<InterestSpec> interest = std::nullopt);
  // A joined member's new interest (nullopt: none, back to receiving everything); it takes
  // effect at its next delivery, at once when nothing is in flight to it.
  void SetInterest(uint64_t member_id, std::optional<InterestSpec> interest);
  // `reason`: why the member ended (abnormal ends are remembered for 30 s so that a rejoin
  // from the same address and kind is recognised as a reconnect: departures.h).
  void Leave(uint64_t member_id, CloseReason reason);
  // A chunk the member admitted (CrdtStore::Admit under store_limits(), then its own rate
  // and role checks). The store's batch limits decide here; a refusal goes back to the member.
  void Submit(uint64_t member_id, uint64_t frame_sequence, runtime::AdmittedBatch batch);
  // The member's TransferOwnership (docs/AUTHORITY.md): applied and echoed for an admin, a
  // Refusal (not_admin, or bad_request without an authority) otherwise.
  void Transfer(uint64_t member_id, uint32_t entity, std::string to);
  // Nothing of the scene is in flight to the member any more.
  void Ready(uint64_t member_id);
  // Runs `write(store, out)` on the strand; `out` gets the local writes' messages (Lamport
  // writes by a server-side script such as the demo), which are then fanned out and persisted.
  void LocalWrite(std::function<void(runtime::CrdtStore&)> write);
  // Commits everything merged so far, releases the acks, then calls `done` (on the strand).
  void Flush(std::function<void()> done);
  // The owner rows, sorted by entity number, on the strand (tests, tools).
  void Owners(std::function<void(std::vector<OwnerRow>)> done);
  // Reads the store on the strand (tests, tools): `read` runs there.
  void Inspect(std::function<void(const runtime::CrdtStore&, uint64_t wire_sequence)> read);
  // Calls `done(quiescent)` on the strand: true when nothing of the scene is pending (no
  // member, everything durable, no timer armed), so it may be dropped from memory.
  void RetireIfQuiescent(std::function<void(bool quiescent)> done);
  // What the scene list (GET /, docs/WEB.md) shows; `done` runs on the strand.
  struct Summary {
    std::string name;
    std::size_t entities = 0;
    std::size_t sessions = 0;
    bool in_memory = true;  // false: stored, not loaded (entities and sessions unknown / 0)
    // In memory only (the admin API, docs/OPERATIONS.md): the state's size as a DCL snapshot
    // (--max-scene-bytes' measure), the store sequence, the scene sequence clients see for it,
    // and the store sequence known durable.
    uint64_t bytes = 0;
    uint64_t store_sequence = 0;
    uint64_t wire_sequence = 0;
    uint64_t durable_sequence = 0;
  };
  void Describe(std::function<void(Summary)> done);
  using Deletion = SceneDeletion;  // scene_deletion.h
  // See "Deletion" above. `done` runs on the strand once the erase is durable (or failed).
  // SQLite only: the caller answers 501 in cluster mode. Called once.
  void Delete(std::function<void(Deletion)> done);
  // Runs `then` on the strand behind everything queued there (the registry destroys a deleted
  // scene in it, once nobody references it).
  void AfterPending(std::function<void()> then);

  // ---- LoggedScene: a shared log (storage/commit_log.h), any thread ----
  // A resume from any of the loaded pieces' positions gets a delta, so clients of a dead node
  // resume on a node that did not host the scene yet.
  void LogLoaded(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                 cluster::StreamId last, OwnerRows owners) override;
  void LogLoadFailed(std::string why) override;
  // Other nodes' entries merge and fan out as local writes.
  // Corrections another node made that beat a write this node admitted are countered
  // (docs/AUTHORITY.md "Cluster").
  void LogEntries(std::vector<cluster::DecodedChunk> chunks, cluster::StreamId last,
                  std::size_t posted_bytes, OwnerRows owners,
                  std::vector<CorrectionMark> corrections) override;
  void LogOwners(OwnerRows owners) override;
  void LogAppended(cluster::StreamId id) override;
  // On the strand, once the registry evicted the scene and its shared log stopped following
  // it: what the log posted before is ignored from now on, and `then` runs on the strand
  // after it (the last use of the scene: it may destroy it).
  void Retire(std::function<void()> then);

 private:
  // ---- SceneAuthority::Host ----
  MemberState* FindMember(uint64_t id) override;
  bool Gone() const override { return log_.retired() || deletion_.started(); }
  void AuthorityMerged(bool everyone) override;

  void ScheduleFlush();
  void FanOut();
  // Sends everything after member.cursor (a shared batch or a coalesced catch-up) if allowed;
  // the bytes handed over (0: nothing sent).
  std::size_t Deliver(MemberState& m, int64_t now_ms);
  // LogLoaded's merge (posted to the strand) and LogEntries' (on the strand; scene.cc).
  void MergeLoadedState(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                        cluster::StreamId last);
  void MergeLogEntries(std::span<const cluster::DecodedChunk> chunks, cluster::StreamId last,
                       std::size_t posted_bytes);
  void MaybeCommit();
  void OnCommitted(bool ok, uint64_t target);
  void ReleaseAcks();
  // Commits fail: tells each envelope writer waiting for an ack (once per episode).
  void TellStorageUnavailable();

  ServerContext& ctx_;
  std::string name_;
  net::Strand strand_;
  runtime::CrdtStore store_;
  SceneSequences sequences_;
  SceneMembers members_;

  bool flush_scheduled_ = false;
  std::chrono::steady_clock::time_point flush_asked_;  // the first change since the last flush
  uint64_t flushed_ = 0;                               // store sequence of the last fan-out
  std::vector<uint64_t> visit_;  // the interest members a fan-out visits (kept between fan-outs)
  // The member whose frames made every change since flushed_ (0: none or several): it does
  // not get its own changes echoed back.
  uint64_t sole_writer_ = 0;
  bool mixed_writers_ = false;
  SceneFrames frames_;
  RateLimit rate_;
  Departures departures_;
  SceneBytes bytes_;
  SceneInterest interest_;

  uint64_t durable_ = 0;
  bool commit_in_flight_ = false;
  bool retry_armed_ = false;
  AckBook acks_;
  net::asio::steady_timer retry_timer_;
  net::asio::steady_timer flush_timer_;

  SceneAuthority authority_;
  SceneLogLink log_;
  DeletionJob deletion_;  // started: no join, write or commit
};

}  // namespace scenecrdt::server
