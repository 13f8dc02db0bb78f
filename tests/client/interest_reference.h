// SPDX-License-Identifier: Apache-2.0
// Owns the reference of interest management's view (docs/INTEREST.md "The view"), written as a
// pure function of the server's full state, from scratch and independently of the server's
// incremental index: world positions from a fresh TransformSystem, the core within the
// radius (hysteresis 0), closed under effective parents and parked loops, plus every entity
// without a live Transform and every tombstone. Used by the interest tests (the client ones and
// the cluster ones); AwaitViews is their shared check of live replicas against it.
#pragma once

#include <chrono>
#include <cstring>
#include <glm/mat4x4.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/runtime/transform_system.h"
#include "scenecrdt/server/scene/interest/interest_index.h"

namespace scenecrdt::client::test {

struct ViewReference {
  std::string hash;                    // the state hash of the restricted state
  std::set<protocol::EntityId> view;   // entities with a Transform in the view
  std::vector<glm::mat4> world;        // their world matrices (server side), in view order
  std::size_t transform_entities = 0;  // entities with a live Transform in the scene
};

// `follow`: the centre is that entity's world position (none: an empty view).
inline ViewReference ReferenceView(const runtime::CrdtStore& s, std::optional<glm::vec3> center,
                                   std::optional<protocol::EntityId> follow, double radius) {
  ViewReference out;
  runtime::TransformSystem ts;
  std::set<protocol::EntityId> has;
  for (const runtime::TransformRegister& r : s.transform_registers()) {
    if (r.has_data == 0 || r.entity == protocol::kRootEntity) continue;
    ts.SetTransform(r.entity, r.value);
    has.insert(r.entity);
  }
  ts.Update(runtime::UpdateOptions{1});
  out.transform_entities = has.size();
  if (follow) {
    center.reset();
    if (has.count(*follow) != 0) center = glm::vec3((*ts.WorldMatrix(*follow))[3]);
  }
  std::vector<protocol::EntityId> work;
  if (center) {
    for (const protocol::EntityId e : has) {
      if (server::WithinRadius(*center, glm::vec3((*ts.WorldMatrix(e))[3]), radius)) {
        out.view.insert(e);
        work.push_back(e);
      }
    }
  }
  const auto add = [&](protocol::EntityId e) {
    if (e != 0 && has.count(e) != 0 && out.view.insert(e).second) work.push_back(e);
  };
  while (!work.empty()) {
    const protocol::EntityId x = work.back();
    work.pop_back();
    add(ts.EffectiveParent(x));
    if (ts.IsParked(x)) add(ts.GetTransform(x)->parent);  // the loop, one member at a time
  }
  std::vector<uint8_t> all;
  s.ExportSnapshot(all);
  runtime::CrdtStore restricted;
  std::size_t pos = 0;
  (void)protocol::DecodeStream(all, {}, [&](const protocol::CrdtMessage& m) {
    const std::size_t size = protocol::EncodedSize(m);
    const bool keep = m.type == protocol::MessageType::kDeleteEntity || has.count(m.entity) == 0 ||
                      out.view.count(m.entity) != 0;
    if (keep) (void)restricted.MergeStream(std::span<const uint8_t>(all.data() + pos, size));
    pos += size;
  });
  out.hash = restricted.StateHashHex();
  for (const protocol::EntityId e : out.view) out.world.push_back(*ts.WorldMatrix(e));
  return out;
}

// True when `got` holds bitwise the same matrix.
inline bool SameBits(const glm::mat4& a, const glm::mat4& b) {
  return std::memcmp(&a, &b, sizeof(glm::mat4)) == 0;
}

// Polls every client until each replica's state hash is its reference's (`refs[i]` for
// `clients[i]`; nothing may write meanwhile) or `timeout` passes, then checks the world matrices
// of every view entity bitwise. Returns an empty string, or what differs first.
inline std::string AwaitViews(const std::vector<Client*>& clients,
                              const std::vector<ViewReference>& refs,
                              std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto converged = [&] {
    for (std::size_t i = 0; i < clients.size(); ++i) {
      if (!clients[i]->synced() || clients[i]->store().StateHashHex() != refs[i].hash) {
        return false;
      }
    }
    return true;
  };
  for (;;) {
    for (Client* c : clients) c->Poll();
    if (converged() || std::chrono::steady_clock::now() >= deadline) break;
    clients.front()->WaitForInput(std::chrono::milliseconds(2));
  }
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const std::string who = "client " + std::to_string(i) + ": ";
    if (clients[i]->store().StateHashHex() != refs[i].hash) {
      return who + "state hash differs (view " + std::to_string(refs[i].view.size()) + " of " +
             std::to_string(refs[i].transform_entities) + ")";
    }
    clients[i]->Update();
    std::size_t k = 0;
    for (const protocol::EntityId e : refs[i].view) {
      const std::optional<glm::mat4> got = clients[i]->runtime().transforms().WorldMatrix(e);
      if (!got) return who + "no world matrix for entity " + std::to_string(e);
      if (!SameBits(*got, refs[i].world[k])) {
        return who + "world matrix of entity " + std::to_string(e) + " differs";
      }
      ++k;
    }
  }
  return {};
}

}  // namespace scenecrdt::client::test
