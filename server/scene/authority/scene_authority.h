// SPDX-License-Identifier: Apache-2.0
// Owns SceneAuthority: a scene's write gate under --authority (docs/AUTHORITY.md), on its
// strand: the Authority (rule and owner table) with the owner rows of the commit in flight,
// refused writes left out of a batch and answered (Refusal + correction), an admin's transfer,
// and, on a shared log (docs/AUTHORITY.md "Cluster"), the claims decided in stream order (won
// writes merge, lost ones are refused and corrected once the read loop passed the decision),
// the owner rows read from the stream and the counter-corrections of other nodes' corrections
// that beat a write this node admitted. The corrections it merges into the store and the acks
// it holds for a member's claims go back to its scene through Host (no pointer to the scene).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scenecrdt/cluster/stream_entry.h"
#include "scenecrdt/cluster/stream_id.h"
#include "scenecrdt/net/net.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/ack_book.h"
#include "scenecrdt/server/scene/authority/authority.h"
#include "scenecrdt/server/scene/scene_member_state.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

class SceneAuthority {
 public:
  // What SceneAuthority asks of its scene, on the strand (the scene implements it).
  class Host {
   public:
    virtual MemberState* FindMember(uint64_t id) = 0;
    // The scene was retired or deleted: a claim decided now is dropped.
    virtual bool Gone() const = 0;
    // The authority merged into the store (or decided a claim): a flush is scheduled.
    // `everyone`: changes no single member wrote (corrections, won claims) went in, which
    // every member gets, their writers included.
    virtual void AuthorityMerged(bool everyone) = 0;

   protected:
    ~Host() = default;
  };

  // `owners`: the stored owner rows. On a shared log (ctx.commits().shared()) claims go to it.
  // Everything referenced belongs to the scene `scene` names and outlives this object.
  SceneAuthority(ServerContext& ctx, const std::string& scene, runtime::CrdtStore& store,
                 AckBook& acks, const net::Strand& strand, Host& host,
                 const std::vector<OwnerRow>& owners);
  SceneAuthority(const SceneAuthority&) = delete;
  SceneAuthority& operator=(const SceneAuthority&) = delete;

  // --authority is not open (immutable: any thread).
  bool enabled() const { return authority_.enabled(); }

  // A joining member's principal and range grants (authority on).
  void Joined(MemberState& m);
  // Leaves out of `batch` what the authority refuses (into `refused`). On a shared log, a write
  // that would claim an unowned number is held back and claimed (ClaimJob); the member's acks
  // wait for the decision. True when an allowed write was re-stamped over a correction: its
  // writer's replica holds the old timestamp and must get the new one (not its own change).
  bool Filter(MemberState& m, uint64_t frame_sequence, runtime::AdmittedBatch& batch,
              std::vector<RefusedWrite>& refused);
  // After a member's message `m` merged with `outcome` (Authority::Note).
  void Note(uint32_t principal, const protocol::CrdtMessage& m, runtime::MergeOutcome outcome) {
    authority_.Note(principal, m, outcome);
  }
  // Tells the member which writes of frame `frame_sequence` were refused and merges the
  // corrections that make them lose in its replica. True when a correction changed the store
  // (every member gets it, the refused writer included).
  bool AnswerRefused(MemberState& m, uint64_t frame_sequence, std::vector<RefusedWrite>& refused);
  // The member's frame is acked with the next commit, or once its claims are decided.
  void AddAck(MemberState& m, uint64_t frame_sequence);
  // An admin's TransferOwnership of `entity` to `to`: applied and logged (kOk), else the
  // refusal (kBadRequest without an authority or for a reserved number, kNotAdmin).
  ErrorCode Transfer(const MemberState& m, uint32_t entity, const std::string& to);
  std::vector<OwnerRow> Owners() const { return authority_.Owners(); }

  // Durability: owner rows to commit, the rows of the job taken for the commit in flight
  // (and the corrections merged after store sequence `durable` into `corrections`), and
  // that job's end (a failed one's rows are written again by the next).
  bool has_changes() const { return authority_.has_changes(); }
  std::vector<OwnerRow> TakeChanges(uint64_t durable, std::vector<CorrectionMark>& corrections);
  void Committed() { owners_in_flight_.clear(); }
  void CommitFailed();
  // ClaimJobs submitted and not decided: the scene is not idle.
  bool claims_pending() const { return claims_pending_ != 0; }

  // ---- A shared log, on the strand ----
  // The scene's load: owner rows read up to `last`, before anyone is welcomed (from now on the
  // writes admitted here are remembered, for counter-corrections).
  void Loaded(const OwnerRows& owners, cluster::StreamId last);
  // The stream was read up to `last` (zero: unknown): its owner rows apply, due corrections
  // run.
  void AfterLogRead(const OwnerRows& owners, cluster::StreamId last);
  // The whole owner table re-read after a snapshot reload (logged).
  void ReplaceOwners(const OwnerRows& owners);
  // Merges other nodes' `chunks` with `merge` (the scene's merge of log entries), chunk by
  // chunk around the chunks that carry corrections (`marks`, by chunk index, in order): a
  // correction that beat a value this node admitted is countered, that value stamped just
  // above it.
  using MergeEntries = std::function<void(std::span<const cluster::DecodedChunk> chunks,
                                          cluster::StreamId last, std::size_t posted_bytes)>;
  void MergeCorrected(std::span<const cluster::DecodedChunk> chunks, cluster::StreamId last,
                      std::size_t posted_bytes, std::span<const CorrectionMark> marks,
                      const MergeEntries& merge);

 private:
  // A cluster claim's refused write, corrected once the read loop passed `after`.
  struct DueCorrection {
    cluster::StreamId after;
    RefusedWrite write;
  };

  // A claim's decision: won writes merge, lost ones are refused and corrected once this node
  // has read the stream up to the decision.
  void OnClaimed(uint64_t member_id, const std::string& principal,
                 std::vector<std::pair<uint32_t, std::vector<uint8_t>>> numbers,
                 std::vector<RefusedWrite> writes, const ClaimResult& result);
  // Cluster: a correction of a number whose owner this node learned from a claim's answer
  // waits (due_corrections_) until the read loop passed the winner's entry. True: deferred.
  bool DeferCorrection(const RefusedWrite& write);
  // Merges `correction` (Authority::Correction) and marks it; true when it changed the store.
  bool MergeCorrection(const protocol::CrdtMessage& correction);

  ServerContext& ctx_;
  const std::string& scene_;
  runtime::CrdtStore& store_;
  AckBook& acks_;
  const net::Strand& strand_;
  Host& host_;
  SharedLog* shared_log_;  // on a shared log only

  Authority authority_;
  std::vector<OwnerRow> owners_in_flight_;  // the owner rows of the commit in flight
  // Cluster claims' corrections waiting for the read loop (bounded by the held writes: one
  // per refused register of a claim) and how far it has read.
  std::vector<DueCorrection> due_corrections_;
  cluster::StreamId read_through_;
  // Numbers lost to another claim -> the decision's position, until the read loop passes it
  // (bounded by the owned numbers).
  std::unordered_map<uint32_t, cluster::StreamId> owner_unread_;
  uint32_t claims_pending_ = 0;  // ClaimJobs submitted, not decided
};

}  // namespace scenecrdt::server
