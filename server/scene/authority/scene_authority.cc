// SPDX-License-Identifier: Apache-2.0
// Owns the scene strand's authority hooks (docs/AUTHORITY.md): leaving refused writes out of a
// batch, answering them (Refusal + correction), and an admin's ownership transfer. The rule
// and the owner table are Authority's (authority.h).
#include <algorithm>
#include <map>
#include <tuple>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

void Scene::FilterByAuthority(MemberState& m, uint64_t frame_sequence, runtime::AdmittedBatch& batch,
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
    job.scene = name_;
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
  // The writer's replica holds its write at the old timestamp: it must get the re-stamped one.
  if (restamped) mixed_writers_ = true;
}

void Scene::AnswerRefused(MemberState& m, uint64_t frame_sequence, std::vector<RefusedWrite>& refused) {
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
    const auto replaced = store_.FindRegister(correction->component, correction->entity);
    const std::optional<uint32_t> replaced_at =
        replaced ? std::optional<uint32_t>(replaced->timestamp) : std::nullopt;
    const runtime::MergeResult merged = store_.Merge(*correction);
    metrics.CountMerge(merged.outcome);
    if (runtime::ChangedState(merged.outcome)) {
      authority_.NoteCorrection(*correction, store_.sequence(), replaced_at);
      ++corrected;
    }
  }
  if (corrected == 0) return;
  Metrics::Add(metrics.authority_corrections, corrected);
  // The corrections go to every member, the refused writer included (it is not the sole
  // writer of these changes).
  mixed_writers_ = true;
}

void Scene::Transfer(uint64_t member_id, uint32_t entity, std::string to) {
  net::asio::post(strand_, [this, member_id, entity, to = std::move(to)]() mutable {
    MemberState* m = FindMember(member_id);
    if (!m) return;
    const uint32_t number = protocol::EntityNumber(entity);
    ErrorCode refusal = ErrorCode::kOk;
    if (!authority_.enabled() || protocol::IsReservedEntityNumber(number)) {
      refusal = ErrorCode::kBadRequest;  // nothing to own
    } else if (!m->admin) {
      refusal = ErrorCode::kNotAdmin;
    }
    if (refusal != ErrorCode::kOk) {
      m->member->PostWriteRefused(session::Refusal{0, entity, 0, 0, refusal});
      return;
    }
    authority_.Transfer(number, to);
    ctx_.log().Write(LogLevel::kInfo, "authority", "scene=%s session=%llu transfer=%u to=\"%s\"",
                     name_.c_str(), static_cast<unsigned long long>(member_id), number, to.c_str());
    m->member->PostOwnershipTransferred(session::TransferOwnership{entity, std::move(to)});
    MaybeCommit();  // the owner row is durable state of its own
  });
}

}  // namespace scenecrdt::server
