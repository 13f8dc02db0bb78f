// SPDX-License-Identifier: Apache-2.0
// Owns SceneMembers: a scene's members in join order (the order a fan-out visits them) with
// their lookup by session id in O(1): a scene's strand looks a member up for every frame it
// merges, every delivery it completes and every ack it releases, and a linear scan of 2 000
// members was a visible part of the strand's time (docs/INTEREST.md "Load at 2 000 clients").
// Memory: one hash entry per member. Used on the scene's strand only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scenecrdt/server/scene/scene_member_state.h"

namespace scenecrdt::server {

class SceneMembers {
 public:
  // Appends `m` (its id not a member yet) and returns it.
  MemberState& Add(MemberState m) {
    at_[m.id] = members_.size();
    members_.push_back(std::move(m));
    return members_.back();
  }
  // The member with session id `id`, or null.
  MemberState* Find(uint64_t id) {
    const auto it = at_.find(id);
    return it == at_.end() ? nullptr : &members_[it->second];
  }
  // Removes the member `id` (the later ones keep their order); false when it is not one.
  bool Remove(uint64_t id) {
    const auto it = at_.find(id);
    if (it == at_.end()) return false;
    const std::size_t pos = it->second;
    at_.erase(it);
    members_.erase(members_.begin() + static_cast<std::ptrdiff_t>(pos));
    for (std::size_t k = pos; k < members_.size(); ++k) at_[members_[k].id] = k;
    return true;
  }
  void Clear() {
    members_.clear();
    at_.clear();
  }
  std::size_t size() const { return members_.size(); }
  bool empty() const { return members_.empty(); }
  const std::vector<MemberState>& all() const { return members_; }
  std::vector<MemberState>::iterator begin() { return members_.begin(); }
  std::vector<MemberState>::iterator end() { return members_.end(); }

 private:
  std::vector<MemberState> members_;
  std::unordered_map<uint64_t, std::size_t> at_;  // session id -> position in members_
};

}  // namespace scenecrdt::server
