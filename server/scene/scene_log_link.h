// SPDX-License-Identifier: Apache-2.0
// Owns SceneLogLink: a scene's bookkeeping towards a shared log (docs/CLUSTER.md "Server
// integration"), on its strand: the load (joins wait for it, bounded by
// --max-sessions-per-scene; a failed load closes them with `unavailable`), the outage notice
// (writers waiting for an ack hear once per outage that Redis is away), the read loop's bytes
// released, and the retirement after an eviction (what the log posted before is only
// released). On a local log (SQLite) it holds nothing: the scene is loaded and always idle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/ack_book.h"
#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/scene/scene_member.h"
#include "scenecrdt/server/scene/scene_member_state.h"
#include "scenecrdt/server/storage/commit_log.h"

namespace scenecrdt::server {

class SceneLogLink {
 public:
  // A join waiting for the shared log's load.
  struct HeldJoin {
    std::shared_ptr<SceneMember> member;
    bool can_write;
    std::optional<uint64_t> resume;
    std::optional<InterestSpec> interest;
  };

  // `scene`: what the shared log (ctx.commits().shared()) loads and follows. Both outlive
  // this object.
  SceneLogLink(ServerContext& ctx, LoggedScene& scene)
      : ctx_(ctx), scene_(scene), log_(ctx.commits().shared()) {}
  SceneLogLink(const SceneLogLink&) = delete;
  SceneLogLink& operator=(const SceneLogLink&) = delete;

  bool shared() const { return log_ != nullptr; }
  // On a shared log, the scene's last construction step: the log follows it from now on, and
  // nobody is welcomed before its state is loaded (Loaded).
  void Follow();
  bool loaded() const { return loaded_; }
  // Evicted (Retire): the entries the log posted are only released.
  bool retired() const { return retired_; }
  void Retire() { retired_ = true; }
  // No load pending and no join held (always true on a local log).
  bool idle() const { return !log_ || (!load_requested_ && held_joins_.empty()); }

  // True when the join is the link's: held until the load (which it requests) or refused
  // (kSceneFull); false when the scene is loaded.
  bool HoldJoin(const std::shared_ptr<SceneMember>& member, bool can_write,
                std::optional<uint64_t> resume, const std::optional<InterestSpec>& interest);
  // A held join of `member_id` takes its new interest / is dropped (its session ended).
  void SetHeldInterest(uint64_t member_id, const std::optional<InterestSpec>& interest);
  void DropHeld(uint64_t member_id);
  // The load merged: the joins held for it, to be joined now.
  std::vector<HeldJoin> Loaded();
  // The load failed: the held joins are closed (`unavailable`, with `why`).
  void LoadFailed(const std::string& why);

  // A commit ended: on a failure, each member waiting for an ack (`acks`, found in
  // `members`) hears once per outage that writes are held.
  void Committed(bool ok, const AckBook& acks, const std::vector<MemberState>& members);
  // `posted_bytes` of the read loop's entries were handled.
  void Consumed(std::size_t posted_bytes) { log_->Consumed(posted_bytes); }

 private:
  ServerContext& ctx_;
  LoggedScene& scene_;
  SharedLog* log_;  // nullptr: a local log
  bool loaded_ = true;
  bool load_requested_ = false;
  std::vector<HeldJoin> held_joins_;  // bounded by max_sessions_per_scene
  bool unavailable_notified_ = false;
  bool retired_ = false;
};

}  // namespace scenecrdt::server
