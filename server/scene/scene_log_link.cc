// SPDX-License-Identifier: Apache-2.0
// Owns SceneLogLink's work on the scene strand: joins held for the shared log's load, the
// load's end, and the outage notice to writers waiting for acks.
#include "scenecrdt/server/scene/scene_log_link.h"

#include <algorithm>

namespace scenecrdt::server {

void SceneLogLink::Follow() {
  if (!log_) return;
  loaded_ = false;
  load_requested_ = true;
  log_->Follow(scene_);
}

bool SceneLogLink::HoldJoin(const std::shared_ptr<SceneMember>& member, bool can_write,
                            std::optional<uint64_t> resume,
                            const std::optional<InterestSpec>& interest) {
  if (loaded_) return false;
  if (held_joins_.size() >= ctx_.config().limits.max_sessions_per_scene) {
    member->PostClose(ErrorCode::kSceneFull, "the scene has its maximum number of sessions");
    return true;
  }
  held_joins_.push_back({member, can_write, resume, interest});
  if (!load_requested_) {
    load_requested_ = true;
    log_->RequestLoad(scene_);
  }
  return true;
}

void SceneLogLink::SetHeldInterest(uint64_t member_id,
                                   const std::optional<InterestSpec>& interest) {
  for (HeldJoin& j : held_joins_) {
    if (j.member && j.member->id() == member_id) j.interest = interest;
  }
}

void SceneLogLink::DropHeld(uint64_t member_id) {
  std::erase_if(held_joins_,
                [&](const HeldJoin& j) { return j.member && j.member->id() == member_id; });
}

std::vector<SceneLogLink::HeldJoin> SceneLogLink::Loaded() {
  loaded_ = true;
  load_requested_ = false;
  std::vector<HeldJoin> held;
  held.swap(held_joins_);
  return held;
}

void SceneLogLink::LoadFailed(const std::string& why) {
  load_requested_ = false;
  std::vector<HeldJoin> held;
  held.swap(held_joins_);
  for (HeldJoin& j : held) {
    j.member->PostClose(ErrorCode::kUnavailable,
                        "the scene cannot be loaded from Redis now (" + why + "); retry");
  }
}

void SceneLogLink::Committed(bool ok, const AckBook& acks,
                             const std::vector<MemberState>& members) {
  if (!log_) return;
  if (ok) {
    unavailable_notified_ = false;
    return;
  }
  if (unavailable_notified_) return;
  unavailable_notified_ = true;
  // Frame sequence 0: the notice refuses no frame, so clients keep theirs and wait for acks.
  const std::vector<uint64_t> told = acks.Waiting();
  for (const uint64_t id : told) {
    const auto it = std::find_if(members.begin(), members.end(),
                                 [&](const MemberState& m) { return m.id == id; });
    if (it != members.end()) {
      it->member->PostRefusal(ErrorCode::kUnavailable,
                              "Redis is unreachable: writes are held, not acknowledged", 0);
    }
  }
  ctx_.log().Write(LogLevel::kWarn, "cluster", "scene=%s unavailable=held writers=%zu",
                   scene_.name().c_str(), told.size());
}

}  // namespace scenecrdt::server
