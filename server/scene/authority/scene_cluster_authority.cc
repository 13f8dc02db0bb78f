// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's side of cluster ownership (docs/AUTHORITY.md "Cluster"): the
// decision of a claim the shared log made in stream order (won writes merge, lost ones are
// refused and corrected once this node has read the stream up to the decision), the owner
// rows read from the stream (and the whole owner table after a snapshot reload), acks that
// wait for a member's claims, and the counter-corrections of other nodes' corrections that
// beat a write this node admitted.
#include <algorithm>
#include <span>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

void Scene::LogLoaded(std::vector<std::string> chunks, std::vector<cluster::StreamId> ids,
                      cluster::StreamId last, OwnerRows owners) {
  // The owners first: nobody is welcomed before they apply (the merge welcomes held joins).
  // authority_'s mode never changes: readable from any thread.
  if (authority_.enabled())
    net::asio::post(strand_, [this, last, owners = std::move(owners)] {
      if (retired_) return;
      authority_.TrackAdmitted();  // before any member is welcomed (counter-corrections)
      AfterLogRead(owners, last);
    });
  MergeLoadedState(std::move(chunks), std::move(ids), last);
}

void Scene::LogEntries(std::vector<cluster::DecodedChunk> chunks, cluster::StreamId last,
                       std::size_t posted_bytes, OwnerRows owners,
                       std::vector<CorrectionMark> corrections) {
  net::asio::post(strand_, [this, chunks = std::move(chunks), last, posted_bytes,
                            owners = std::move(owners), corrections = std::move(corrections)] {
    if (retired_ || corrections.empty() || !authority_.enabled()) {
      MergeLogEntries(chunks, last, posted_bytes);
    } else {
      MergeCorrectedEntries(chunks, last, posted_bytes, corrections);
    }
    // After the merge: a due correction needs the values read up to `last`.
    if (!retired_ && authority_.enabled()) AfterLogRead(owners, last);
  });
}

void Scene::LogOwners(OwnerRows owners) {
  net::asio::post(strand_, [this, owners = std::move(owners)] {
    if (retired_ || !authority_.enabled()) return;
    // After the snapshot's merge (posted before): the rows of the trimmed entries never came.
    const std::size_t changed = authority_.ReplaceOwners(owners, owners_in_flight_);
    ctx_.log().Write(LogLevel::kInfo, "authority",
                     "scene=%s owners_reread=%zu owners_changed=%zu (snapshot reload)",
                     name_.c_str(), owners.size(), changed);
  });
}

void Scene::MergeCorrectedEntries(std::span<const cluster::DecodedChunk> chunks,
                                  cluster::StreamId last, std::size_t posted_bytes,
                                  std::span<const CorrectionMark> marks) {
  Metrics& metrics = ctx_.metrics();
  std::vector<Authority::Beaten> beaten;
  std::size_t from = 0;  // the first chunk not merged yet
  std::size_t i = 0;
  while (i < marks.size()) {
    const std::size_t chunk = marks[i].chunk;
    std::size_t end = i;
    while (end < marks.size() && marks[end].chunk == chunk) ++end;
    if (chunk < from || chunk >= chunks.size()) break;  // not in order: the rest merge plainly
    MergeLogEntries(chunks.subspan(from, chunk - from), cluster::StreamId{}, 0);
    beaten.clear();
    authority_.CaptureBeaten(store_, marks.subspan(i, end - i), beaten);
    MergeLogEntries(chunks.subspan(chunk, 1), cluster::StreamId{}, 0);
    for (const CorrectionMark& mark : marks.subspan(i, end - i)) {
      authority_.NoteRemoteCorrection(store_, mark);
    }
    uint64_t countered = 0;
    for (const Authority::Beaten& b : beaten) {
      const auto counter = authority_.CounterCorrection(store_, b);
      if (!counter) continue;
      const runtime::MergeResult merged = store_.Merge(*counter);
      metrics.CountMerge(merged.outcome);
      if (runtime::ChangedState(merged.outcome)) {
        authority_.NoteCounter(*counter);
        ++countered;
      }
    }
    if (countered != 0) {
      // An ordinary write of this node: committed with its next flush, fanned out to everyone.
      Metrics::Add(metrics.authority_counter_corrections, countered);
      mixed_writers_ = true;
      ScheduleFlush();
    }
    from = chunk + 1;
    i = end;
  }
  MergeLogEntries(chunks.subspan(from), last, posted_bytes);
}

bool Scene::LogIdle() const {
  return !shared_log_ || (!load_requested_ && held_joins_.empty() && claims_pending_ == 0);
}

void Scene::AddAck(MemberState& m, uint64_t frame_sequence) {
  if (m.claims_in_flight == 0) {
    acks_.Add(store_.sequence(), m.id, frame_sequence);
  } else {
    m.held_frame = std::max(m.held_frame, frame_sequence);  // cumulative acks: hold them all
  }
}

void Scene::OnClaimed(uint64_t member_id, const std::string& principal,
                      std::vector<std::pair<uint32_t, std::vector<uint8_t>>> numbers,
                      std::vector<RefusedWrite> writes, const ClaimResult& result) {
  --claims_pending_;
  if (retired_ || deleted_) return;
  Metrics& metrics = ctx_.metrics();
  MemberState* m = FindMember(member_id);
  const auto lost = [&](uint32_t number) -> const std::string* {
    for (const auto& [n, owner] : result.lost) {
      if (n == number) return &owner;
    }
    return nullptr;
  };
  // Won: the writes are in the stream; they merge here as they do on every other node.
  const protocol::DecodeOptions decode;
  const uint64_t before = store_.sequence();
  for (const auto& [number, dcl] : numbers) {
    if (!result.ok || lost(number) != nullptr) continue;
    authority_.SetOwner(number, principal);
    auto merged =
        store_.MergeStream(std::span<const uint8_t>(dcl), decode,
                           [&](const protocol::CrdtMessage&, const runtime::MergeResult& r) {
                             metrics.CountMerge(r.outcome);
                           });
    if (!merged.has_value()) {
      ctx_.log().Write(LogLevel::kError, "authority", "scene=%s claim_merge_error=%s",
                       name_.c_str(), merged.error().detail);
    }
  }
  for (const auto& [number, owner] : result.lost) {
    authority_.SetOwner(number, owner);
    if (read_through_ < result.position) owner_unread_[number] = result.position;
  }
  if (store_.sequence() != before) mixed_writers_ = true;
  // Lost (or not decided: Redis failed): refused like any write of a number someone owns,
  // corrected once the read loop passed the decision (the winner's writes are merged then).
  for (RefusedWrite& w : writes) {
    const uint32_t number = protocol::EntityNumber(w.entity);
    if (result.ok && lost(number) == nullptr) continue;
    if (!result.ok) w.code = ErrorCode::kUnavailable;
    if (m) {
      m->member->PostWriteRefused(session::Refusal{m->held_frame, w.entity, w.component,
                                                   static_cast<uint8_t>(w.type), w.code});
    }
    Metrics::Add(metrics.authority_cluster_lost_claims);
    due_corrections_.push_back({result.position, w});
  }
  if (result.ok && !result.lost.empty()) {
    ctx_.log().Write(LogLevel::kInfo, "authority", "scene=%s claims_lost=%zu principal=\"%s\"",
                     name_.c_str(), result.lost.size(), principal.c_str());
  }
  if (m && m->claims_in_flight > 0 && --m->claims_in_flight == 0 && m->held_frame != 0) {
    acks_.Add(store_.sequence(), m->id, m->held_frame);
    m->held_frame = 0;
  }
  AfterLogRead({}, cluster::StreamId{});
  ScheduleFlush();
}

bool Scene::DeferCorrection(const RefusedWrite& write) {
  if (owner_unread_.empty()) return false;
  const auto it = owner_unread_.find(protocol::EntityNumber(write.entity));
  if (it == owner_unread_.end()) return false;
  due_corrections_.push_back({it->second, write});
  return true;
}

void Scene::AfterLogRead(const OwnerRows& owners, cluster::StreamId last) {
  for (const auto& [number, principal] : owners) authority_.SetOwner(number, principal);
  read_through_ = std::max(read_through_, last);
  std::erase_if(owner_unread_, [&](const auto& entry) { return entry.second <= read_through_; });
  if (due_corrections_.empty()) return;
  Metrics& metrics = ctx_.metrics();
  std::vector<uint8_t> scratch;
  uint64_t corrected = 0;
  std::erase_if(due_corrections_, [&](const DueCorrection& due) {
    if (read_through_ < due.after) return false;
    const auto correction = Authority::Correction(store_, due.write, scratch);
    if (!correction) return true;
    const auto replaced = store_.FindRegister(correction->component, correction->entity);
    const std::optional<uint32_t> replaced_at =
        replaced ? std::optional<uint32_t>(replaced->timestamp) : std::nullopt;
    const runtime::MergeResult merged = store_.Merge(*correction);
    metrics.CountMerge(merged.outcome);
    if (runtime::ChangedState(merged.outcome)) {
      authority_.NoteCorrection(*correction, store_.sequence(), replaced_at);
      ++corrected;
    }
    return true;
  });
  if (corrected == 0) return;
  Metrics::Add(metrics.authority_corrections, corrected);
  mixed_writers_ = true;
  ScheduleFlush();
}

}  // namespace scenecrdt::server
