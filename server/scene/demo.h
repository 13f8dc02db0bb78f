// SPDX-License-Identifier: Apache-2.0
// Owns the demo writer of `serve --demo` (docs/SERVER.md "Demo"): scene "demo", a sun
// drifting on a small circle with four planets orbiting it and four moons orbiting planets,
// written by the server itself with local Lamport writes at demo_hz through Scene::LocalWrite.
// Planets hang under the spinning sun and moons under spinning planets, so each orbit period
// is chosen apart from its parent's spin period: every body moves in world space (a child
// whose orbit matched its parent's spin would stand still there).
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/server/context.h"
#include "scenecrdt/server/scene/scenes.h"

namespace scenecrdt::server {

inline constexpr std::size_t kDemoBodies = 9;

// One body's local Transform at a time.
struct DemoBody {
  uint32_t entity = 0;
  protocol::Transform local;
};

// The demo's local Transforms at `t_s` seconds (entities 512..520; parents as above). Pure.
std::array<DemoBody, kDemoBodies> DemoBodiesAt(double t_s);

// Writes DemoBodiesAt(tick / hz) into its scene every 1/hz seconds, on a strand of its own.
class Demo {
 public:
  // `hz` <= 0 means 25. Its scene comes from `scenes`.
  Demo(ServerContext& ctx, Scenes& scenes, double hz);
  // Creates (or finds) the scene "demo" and starts writing. False while the server stops.
  bool Start();
  // Stops writing (thread-safe; the pending tick is cancelled on the strand).
  void Stop();

 private:
  void Tick();

  Scenes& scenes_;
  const double hz_;
  Scene* scene_ = nullptr;
  net::asio::steady_timer timer_;
  uint64_t tick_ = 0;
};

}  // namespace scenecrdt::server
