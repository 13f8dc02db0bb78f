// SPDX-License-Identifier: Apache-2.0
// Owns MemberState: what a scene keeps per member on its strand (scene.h): the member itself,
// its fan-out cursor and readiness, its frame forms, its --max-rate slot, its interest view
// (docs/INTEREST.md) and what its scene's authority knows of it (docs/AUTHORITY.md). The
// scene's concern classes (SceneInterest, SceneAuthority) read and update it by reference.
#pragma once

#include <cstdint>
#include <memory>

#include "scenecrdt/server/scene/interest/member_view.h"
#include "scenecrdt/server/scene/scene_member.h"

namespace scenecrdt::server {

struct MemberState {
  std::shared_ptr<SceneMember> member;
  uint64_t id = 0;
  uint64_t cursor = 0;               // store sequence sent up to
  bool ready = false;                // nothing of the scene in flight to it
  bool raw = false;                  // gets plain DCL chunks (/dcl/) instead of envelope frames
  bool zstd = false;                 // gets the envelope frames as zstd records (compressed once)
  int64_t next_send_ms = 0;          // --max-rate (rate_limit.h)
  int64_t busy_since_ms = 0;         // when the delivery in flight was handed over
  uint64_t storage_told = 0;         // the storage failure episode it was told about
  std::unique_ptr<MemberView> view;  // an interest member (docs/INTEREST.md)
  bool clear_interest = false;       // its interest was cleared: send everything once
  bool own_changes = false;          // FanOut: every change since its cursor is its own
  uint32_t principal = 0;            // Authority::Intern of its principal (authority on)
  bool admin = false;                // role admin: writes anything
  bool ranged = false;               // holds range grants (JWT `entities`)
  uint32_t claims_in_flight = 0;     // cluster claims not decided yet (ClaimJob)
  uint64_t held_frame = 0;           // its last frame, acked once they are decided
};

}  // namespace scenecrdt::server
