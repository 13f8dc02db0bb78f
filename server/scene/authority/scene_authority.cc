// SPDX-License-Identifier: Apache-2.0
// Owns SceneAuthority's work on the scene strand (docs/AUTHORITY.md): leaving refused writes
// out of a batch, answering them (Refusal + correction), an admin's ownership transfer and,
// on a shared log, claims decided in stream order, the owner rows read from the stream, acks
// that wait for a member's claims and the counter-corrections of other nodes' corrections.
// The rule and the owner table are Authority's (authority.h).
#include "scenecrdt/server/scene/authority/scene_authority.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"

namespace scenecrdt::server {

SceneAuthority::SceneAuthority(ServerContext& ctx, const std::string& scene,
                               runtime::CrdtStore& store, AckBook& acks, const net::Strand& strand,
                               Host& host, const std::vector<OwnerRow>& owners)
    : ctx_(ctx),
      scene_(scene),
      store_(store),
      acks_(acks),
      strand_(strand),
      host_(host),
      shared_log_(ctx.commits().shared()),
      authority_(ctx.config().authority, ctx.config().authority_rules) {
  authority_.Restore(owners);
}

void SceneAuthority::Joined(MemberState& m) {
  if (!authority_.enabled()) return;
  m.principal = authority_.Intern(m.member->principal());
  m.admin = m.member->admin();
  const auto ranges = m.member->entity_ranges();
  m.ranged = !ranges.empty();
  authority_.Grant(m.principal, ranges);
}

bool SceneAuthority::Filter(MemberState& m, uint64_t frame_sequence, runtime::AdmittedBatch& batch,
                            std::vector<RefusedWrite>& refused) {
  bool restamped = false;
  // A shared log decides claims (docs/AUTHORITY.md "Cluster"): held back per number.
  std::map<uint32_t, std::vector<uint8_t>> claims;
  std::vector<RefusedWrite> held;
  batch.RemoveIf([&](const protocol::CrdtMessage& msg) {
    const ErrorCode code = authority_.Check(m.principal, m.admin, m.ranged, msg);
    if (code == ErrorCode::kOk) {
      if (shared_log_ == nullptr || !authority_.IsClaim(msg)) return false;
      protocol::AppendMessage(msg, claims[protocol::EntityNumber(msg.entity)]);
      held.push_back({msg.type, msg.entity, msg.component, msg.timestamp, ErrorCode::kNotOwner});
      return true;
    }
    refused.push_back({msg.type, msg.entity, msg.component, msg.timestamp, code});
    return true;
  });
  if (!claims.empty()) {
    ClaimJob job;
    job.scene = scene_;
    job.principal = m.member->principal();
    job.numbers.assign(std::make_move_iterator(claims.begin()),
                       std::make_move_iterator(claims.end()));
    ++m.claims_in_flight;
    ++claims_pending_;
    m.held_frame = std::max(m.held_frame, frame_sequence);
    job.done = [this, id = m.id, principal = job.principal, numbers = job.numbers,
                held = std::move(held)](ClaimResult r) mutable {
      net::asio::post(strand_,
                      [this, id, principal = std::move(principal), numbers = std::move(numbers),
                       held = std::move(held), r = std::move(r)]() mutable {
                        OnClaimed(id, principal, std::move(numbers), std::move(held), r);
                      });
    };
    shared_log_->Claim(std::move(job));
  }
  batch.RewriteTimestamps([&](protocol::CrdtMessage& msg) {
    restamped |= authority_.RestampOverCorrection(store_, msg);
  });
  return restamped;
}

bool SceneAuthority::MergeCorrection(const protocol::CrdtMessage& correction) {
  const auto replaced = store_.FindRegister(correction.component, correction.entity);
  const std::optional<uint32_t> replaced_at =
      replaced ? std::optional<uint32_t>(replaced->timestamp) : std::nullopt;
  const runtime::MergeResult merged = store_.Merge(correction);
  ctx_.metrics().CountMerge(merged.outcome);
  if (!runtime::ChangedState(merged.outcome)) return false;
  authority_.NoteCorrection(correction, store_.sequence(), replaced_at);
  return true;
}

bool SceneAuthority::AnswerRefused(MemberState& m, uint64_t frame_sequence,
                                   std::vector<RefusedWrite>& refused) {
  // One answer per register: its highest refused timestamp.
  std::sort(refused.begin(), refused.end(), [](const RefusedWrite& a, const RefusedWrite& b) {
    return std::tie(a.component, a.entity, a.type, b.timestamp) <
           std::tie(b.component, b.entity, b.type, a.timestamp);
  });
  refused.erase(std::unique(refused.begin(), refused.end(),
                            [](const RefusedWrite& a, const RefusedWrite& b) {
                              return a.component == b.component && a.entity == b.entity &&
                                     a.type == b.type;
                            }),
                refused.end());
  Metrics& metrics = ctx_.metrics();
  std::vector<uint8_t> scratch;
  uint64_t corrected = 0;
  for (const RefusedWrite& r : refused) {
    m.member->PostWriteRefused(session::Refusal{frame_sequence, r.entity, r.component,
                                                static_cast<uint8_t>(r.type), r.code});
    if (DeferCorrection(r)) continue;  // cluster: the owner's value is not read yet
    const auto correction = Authority::Correction(store_, r, scratch);
    if (!correction) {
      const bool is_register = r.type != protocol::MessageType::kAppendValue &&
                               r.type != protocol::MessageType::kDeleteEntity &&
                               r.type != protocol::MessageType::kDeleteEntityNetwork;
      if (!is_register) Metrics::Add(metrics.authority_uncorrectable);
      continue;
    }
    if (MergeCorrection(*correction)) ++corrected;
  }
  if (corrected == 0) return false;
  Metrics::Add(metrics.authority_corrections, corrected);
  return true;
}

void SceneAuthority::AddAck(MemberState& m, uint64_t frame_sequence) {
  if (m.claims_in_flight == 0) {
    acks_.Add(store_.sequence(), m.id, frame_sequence);
  } else {
    m.held_frame = std::max(m.held_frame, frame_sequence);  // cumulative acks: hold them all
  }
}

ErrorCode SceneAuthority::Transfer(const MemberState& m, uint32_t entity, const std::string& to) {
  const uint32_t number = protocol::EntityNumber(entity);
  if (!authority_.enabled() || protocol::IsReservedEntityNumber(number)) {
    return ErrorCode::kBadRequest;  // nothing to own
  }
  if (!m.admin) return ErrorCode::kNotAdmin;
  authority_.Transfer(number, to);
  ctx_.log().Write(LogLevel::kInfo, "authority", "scene=%s session=%llu transfer=%u to=\"%s\"",
                   scene_.c_str(), static_cast<unsigned long long>(m.id), number, to.c_str());
  return ErrorCode::kOk;
}

std::vector<OwnerRow> SceneAuthority::TakeChanges(uint64_t durable,
                                                  std::vector<CorrectionMark>& corrections) {
  owners_in_flight_ = authority_.TakeChanges(durable, corrections);
  return owners_in_flight_;
}

void SceneAuthority::CommitFailed() {
  authority_.Failed(owners_in_flight_);
  owners_in_flight_.clear();
}

// ---- A shared log ----

void SceneAuthority::Loaded(const OwnerRows& owners, cluster::StreamId last) {
  authority_.TrackAdmitted();  // before any member is welcomed (counter-corrections)
  AfterLogRead(owners, last);
}

void SceneAuthority::ReplaceOwners(const OwnerRows& owners) {
  // After the snapshot's merge (posted before): the rows of the trimmed entries never came.
  const std::size_t changed = authority_.ReplaceOwners(owners, owners_in_flight_);
  ctx_.log().Write(LogLevel::kInfo, "authority",
                   "scene=%s owners_reread=%zu owners_changed=%zu (snapshot reload)",
                   scene_.c_str(), owners.size(), changed);
}

void SceneAuthority::MergeCorrected(std::span<const cluster::DecodedChunk> chunks,
                                    cluster::StreamId last, std::size_t posted_bytes,
                                    std::span<const CorrectionMark> marks,
                                    const MergeEntries& merge) {
  Metrics& metrics = ctx_.metrics();
  std::vector<Authority::Beaten> beaten;
  std::size_t from = 0;  // the first chunk not merged yet
  std::size_t i = 0;
  while (i < marks.size()) {
    const std::size_t chunk = marks[i].chunk;
    std::size_t end = i;
    while (end < marks.size() && marks[end].chunk == chunk) ++end;
    if (chunk < from || chunk >= chunks.size()) break;  // not in order: the rest merge plainly
    merge(chunks.subspan(from, chunk - from), cluster::StreamId{}, 0);
    beaten.clear();
    authority_.CaptureBeaten(store_, marks.subspan(i, end - i), beaten);
    merge(chunks.subspan(chunk, 1), cluster::StreamId{}, 0);
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
      host_.AuthorityMerged(/*everyone=*/true);
    }
    from = chunk + 1;
    i = end;
  }
  merge(chunks.subspan(from), last, posted_bytes);
}

void SceneAuthority::OnClaimed(uint64_t member_id, const std::string& principal,
                               std::vector<std::pair<uint32_t, std::vector<uint8_t>>> numbers,
                               std::vector<RefusedWrite> writes, const ClaimResult& result) {
  --claims_pending_;
  if (host_.Gone()) return;
  Metrics& metrics = ctx_.metrics();
  MemberState* m = host_.FindMember(member_id);
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
                       scene_.c_str(), merged.error().detail);
    }
  }
  for (const auto& [number, owner] : result.lost) {
    authority_.SetOwner(number, owner);
    if (read_through_ < result.position) owner_unread_[number] = result.position;
  }
  const bool merged = store_.sequence() != before;
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
                     scene_.c_str(), result.lost.size(), principal.c_str());
  }
  if (m && m->claims_in_flight > 0 && --m->claims_in_flight == 0 && m->held_frame != 0) {
    acks_.Add(store_.sequence(), m->id, m->held_frame);
    m->held_frame = 0;
  }
  AfterLogRead({}, cluster::StreamId{});
  host_.AuthorityMerged(merged);
}

bool SceneAuthority::DeferCorrection(const RefusedWrite& write) {
  if (owner_unread_.empty()) return false;
  const auto it = owner_unread_.find(protocol::EntityNumber(write.entity));
  if (it == owner_unread_.end()) return false;
  due_corrections_.push_back({it->second, write});
  return true;
}

void SceneAuthority::AfterLogRead(const OwnerRows& owners, cluster::StreamId last) {
  for (const auto& [number, principal] : owners) authority_.SetOwner(number, principal);
  read_through_ = std::max(read_through_, last);
  std::erase_if(owner_unread_, [&](const auto& entry) { return entry.second <= read_through_; });
  if (due_corrections_.empty()) return;
  std::vector<uint8_t> scratch;
  uint64_t corrected = 0;
  std::erase_if(due_corrections_, [&](const DueCorrection& due) {
    if (read_through_ < due.after) return false;
    const auto correction = Authority::Correction(store_, due.write, scratch);
    if (correction && MergeCorrection(*correction)) ++corrected;
    return true;
  });
  if (corrected == 0) return;
  Metrics::Add(ctx_.metrics().authority_corrections, corrected);
  host_.AuthorityMerged(/*everyone=*/true);
}

}  // namespace scenecrdt::server
