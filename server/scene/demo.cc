// SPDX-License-Identifier: Apache-2.0
// Owns the demo solar system's kinematics and its writer.
#include "scenecrdt/server/scene/demo.h"

#include <cmath>
#include <numbers>
#include <vector>

#include "scenecrdt/server/scene/scene.h"

namespace scenecrdt::server {

namespace {

struct Orbit {
  uint32_t entity;
  uint32_t parent;  // 0 = root
  float radius;     // in the parent's local units
  float period_s;   // one turn around the parent, in the parent's (spinning) frame
  float spin_period_s;
  float scale;
};

// Sun 512 (drifting on a small circle around the origin); planets 513..516 orbit it; moons
// 517..520 orbit planets. In world space a child turns at 2 pi (1 / period - 1 / parent's
// spin period) per second: the sun's slow spin (60 s) keeps every planet's world period
// between 4.3 and 30 s, and the moons orbit faster than their planets spin.
constexpr Orbit kOrbits[kDemoBodies] = {
    {512, 0, 1.0f, 40.0f, 60.0f, 2.0f},    {513, 512, 3.0f, 4.0f, 2.0f, 0.3f},
    {514, 512, 5.0f, 7.0f, 3.0f, 0.45f},   {515, 512, 8.0f, 12.0f, 6.0f, 0.5f},
    {516, 512, 12.0f, 20.0f, 5.0f, 0.35f}, {517, 514, 2.5f, 1.5f, 3.0f, 0.4f},
    {518, 515, 2.0f, 2.0f, 6.0f, 0.3f},    {519, 515, 3.2f, 3.5f, 6.0f, 0.25f},
    {520, 516, 2.8f, 2.5f, 5.0f, 0.35f},
};

}  // namespace

std::array<DemoBody, kDemoBodies> DemoBodiesAt(double t_s) {
  std::array<DemoBody, kDemoBodies> bodies;
  for (std::size_t i = 0; i < kDemoBodies; ++i) {
    const Orbit& o = kOrbits[i];
    protocol::Transform& tr = bodies[i].local;
    bodies[i].entity = o.entity;
    const double orbit = 2.0 * std::numbers::pi * t_s / o.period_s;
    tr.position = {static_cast<float>(o.radius * std::cos(orbit)), 0.0f,
                   static_cast<float>(o.radius * std::sin(orbit))};
    const double half_spin = std::numbers::pi * t_s / o.spin_period_s;  // about Y
    tr.rotation = {0.0f, static_cast<float>(std::sin(half_spin)), 0.0f,
                   static_cast<float>(std::cos(half_spin))};
    tr.scale = {o.scale, o.scale, o.scale};
    tr.parent = o.parent;
  }
  return bodies;
}

Demo::Demo(ServerContext& ctx, Scenes& scenes, double hz)
    : scenes_(scenes), hz_(hz > 0.0 ? hz : 25.0), timer_(net::asio::make_strand(ctx.ioc())) {}

bool Demo::Start() {
  scene_ = scenes_.FindOrCreate("demo");
  if (!scene_) return false;
  timer_.expires_after(std::chrono::milliseconds(0));
  timer_.async_wait([this](const net::error_code& ec) {
    if (!ec) Tick();
  });
  return true;
}

void Demo::Stop() {
  net::asio::post(timer_.get_executor(), [this] { timer_.cancel(); });
}

void Demo::Tick() {
  const auto bodies = DemoBodiesAt(static_cast<double>(tick_++) / hz_);
  scene_->LocalWrite([bodies](runtime::CrdtStore& store) {
    std::vector<uint8_t> out;  // the store records the change; fan-out exports it
    for (const DemoBody& b : bodies) (void)store.WriteTransform(b.entity, b.local, out);
  });
  timer_.expires_after(std::chrono::microseconds(static_cast<int64_t>(1e6 / hz_)));
  timer_.async_wait([this](const net::error_code& ec) {
    if (!ec) Tick();
  });
}

}  // namespace scenecrdt::server
