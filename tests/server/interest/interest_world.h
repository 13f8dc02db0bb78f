// SPDX-License-Identifier: Apache-2.0
// Owns InterestWorld: a seeded random scene for the interest tests without a network (a store
// whose entities move, reparent, lose and gain Transforms, carry other components and append
// sets, and are deleted), and a random interest for it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/server/scene/interest/member_view.h"

namespace scenecrdt::server {

class InterestWorld {
 public:
  using EntityId = protocol::EntityId;
  explicit InterestWorld(uint32_t seed) : rng_(seed) {}

  float Coord(float span) { return std::uniform_real_distribution<float>(0.0f, span)(rng_); }
  bool Chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  uint32_t Pick(std::size_t n) {
    return std::uniform_int_distribution<uint32_t>(0, static_cast<uint32_t>(n - 1))(rng_);
  }

  void Put(EntityId e, float x, float z, EntityId parent) {
    protocol::Transform t;
    t.position = {x, 0.0f, z};
    t.parent = parent;
    scratch_.clear();
    ASSERT_TRUE(store.WriteTransform(e, t, scratch_).has_value());
    current_[e] = t;
  }
  // A small step of a random live entity (its parent kept), now and then a long jump.
  void Move() {
    if (current_.empty()) return;
    auto it = std::next(current_.begin(), Pick(current_.size()));
    protocol::Transform t = it->second;
    const float reach = Chance(0.05) ? 60.0f : 3.0f;
    t.position.x += std::uniform_real_distribution<float>(-reach, reach)(rng_);
    t.position.z += std::uniform_real_distribution<float>(-reach, reach)(rng_);
    Put(it->first, t.position.x, t.position.z, t.parent);
  }
  void Reparent() {
    if (current_.size() < 2) return;
    auto it = std::next(current_.begin(), Pick(current_.size()));
    const EntityId parent =
        Chance(0.3) ? 0 : std::next(current_.begin(), Pick(current_.size()))->first;
    Put(it->first, it->second.position.x, it->second.position.z, parent);  // loops allowed
  }
  void Remove() {
    if (current_.empty()) return;
    auto it = std::next(current_.begin(), Pick(current_.size()));
    scratch_.clear();
    if (Chance(0.5)) {
      ASSERT_TRUE(store.WriteDeleteComponent(it->first, protocol::kTransformComponentId, scratch_)
                      .has_value());
    } else {
      ASSERT_TRUE(store.WriteDeleteEntity(it->first, scratch_).has_value());
      deleted_.push_back(it->first);
    }
    current_.erase(it);
  }
  // Another component (one of two ids) of a random entity with or without a Transform: a new
  // value, now and then its deletion.
  void PutComponent(EntityId e) {
    if (IsDeleted(e)) return;
    const protocol::ComponentId component = 2000 + Pick(2);
    scratch_.clear();
    if (Chance(0.15)) {
      ASSERT_TRUE(store.WriteDeleteComponent(e, component, scratch_).has_value());
      return;
    }
    const std::vector<uint8_t> data(1 + Pick(24), static_cast<uint8_t>(Pick(256)));
    ASSERT_TRUE(store.WriteComponent(e, component, data, scratch_).has_value());
  }
  // A value appended to a random entity's set (a grow-only set: every element is exported).
  void Append(EntityId e) {
    if (IsDeleted(e)) return;
    const std::vector<uint8_t> data(1 + Pick(8), static_cast<uint8_t>(Pick(256)));
    scratch_.clear();
    ASSERT_TRUE(store.WriteAppend(e, 2100, data, scratch_).has_value());
  }
  EntityId AnyEntity() {
    return current_.empty() ? 600 : std::next(current_.begin(), Pick(current_.size()))->first;
  }
  bool IsDeleted(EntityId e) const {
    return std::find(deleted_.begin(), deleted_.end(), e) != deleted_.end();
  }

  runtime::CrdtStore store;

 private:
  std::mt19937 rng_;
  std::vector<uint8_t> scratch_;
  std::map<EntityId, protocol::Transform> current_;
  std::vector<EntityId> deleted_;
};

inline InterestSpec RandomInterest(InterestWorld& w) {
  InterestSpec spec;
  if (w.Chance(0.3)) {
    spec.mode = session::InterestMode::kFollow;
    spec.follow = w.AnyEntity();
  } else {
    spec.mode = session::InterestMode::kPoint;
    spec.center = {w.Coord(200), 0.0f, w.Coord(200)};
  }
  spec.radius = 10 + w.Coord(30);
  spec.hysteresis = w.Chance(0.2) ? 0.0 : std::max(1.0, 0.1 * spec.radius);
  return spec;
}

}  // namespace scenecrdt::server
