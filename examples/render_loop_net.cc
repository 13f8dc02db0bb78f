// SPDX-License-Identifier: Apache-2.0
// Example: a networked renderer's frame loop in C++ (<scenecrdt/client/client.h>,
// docs/CLIENT.md). It joins a scene (Client::Join: connect and wait for the state), turns
// interpolation on, then each frame (60 Hz): Poll() applies what arrived and sends our
// writes, UpdateInterpolated() computes the presented world matrices at the frame's time,
// and the added / removed / changed lists drive the renderer's objects (created, freed,
// re-uploaded). Reconnect, resume and fail-over (a comma-separated --server list) are on.
//
//   render_loop_net --server tcp://127.0.0.1:7600 --scene demo [--frames N] [--token T]
//
// Against `scenecrdt serve --demo` it shows the demo's nine bodies moving; it prints one line
// per second and a summary at the end. Exit status: 0 after N frames, 1 when the join fails,
// 2 for bad usage.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "scenecrdt/client/client.h"

namespace {

using scenecrdt::protocol::EntityId;

// Stand-in for the renderer's GPU-side objects, keyed by entity.
struct Object {
  float world[16];
};

struct Args {
  std::string server;
  std::string scene;
  std::string token;
  long frames = 600;
};

int Usage(const char* why) {
  std::fprintf(stderr,
               "render_loop_net: %s\nusage: render_loop_net --server URL[,URL...] --scene NAME "
               "[--frames N] [--token T]\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::printf(
          "usage: render_loop_net --server URL[,URL...] --scene NAME [--frames N] [--token T]\n"
          "Joins a scene and runs a 60 Hz render loop over the interpolated world matrices\n"
          "for N frames (default 600), printing what a renderer would create, upload and free.\n");
      return 0;
    }
    if (i + 1 >= argc) return Usage(("missing value after " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--server") {
      args.server = value;
    } else if (flag == "--scene") {
      args.scene = value;
    } else if (flag == "--token") {
      args.token = value;
    } else if (flag == "--frames") {
      args.frames = std::strtol(value, nullptr, 10);
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (args.server.empty() || args.scene.empty() || args.frames <= 0) {
    return Usage("needs --server, --scene and a positive --frames");
  }

  scenecrdt::client::ClientOptions options;
  options.url = args.server;
  options.scene = args.scene;
  options.token = args.token;
  options.client_name = "render_loop_net";
  options.reconnect.enabled = true;  // survive server restarts; fail over along the list
  options.log = [](std::string_view line) {
    std::fprintf(stderr, "render_loop_net: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  scenecrdt::client::Client client(options);
  if (auto joined = client.Join(std::chrono::seconds(20)); !joined.has_value()) {
    std::fprintf(stderr, "render_loop_net: cannot join '%s' on %s: %s\n", args.scene.c_str(),
                 args.server.c_str(), joined.error().detail);
    for (const auto& r : client.TakeRefusals()) {
      std::fprintf(stderr, "render_loop_net: refused: %s\n", r.text.c_str());
    }
    return 1;
  }
  // Smooth motion from 20-25 Hz updates: an adaptive delay of about two update intervals.
  if (auto on = client.EnableInterpolation(); !on.has_value()) {
    std::fprintf(stderr, "render_loop_net: %s\n", on.error().detail);
    return 1;
  }

  const scenecrdt::runtime::Runtime& replica = client.runtime();
  std::map<EntityId, Object> objects;
  long uploads = 0, created = 0, freed = 0;
  const auto frame = std::chrono::microseconds(16667);
  auto next = std::chrono::steady_clock::now();
  for (long f = 1; f <= args.frames; ++f) {
    client.Poll();  // apply what arrived, reconnect when due, send our writes
    if (auto updated = client.UpdateInterpolated(); !updated.has_value()) {
      std::fprintf(stderr, "render_loop_net: %s\n", updated.error().detail);
      return 1;
    }
    for (EntityId e : replica.interpolated_added_entities()) {
      objects.try_emplace(e);  // the renderer creates a mesh instance
      ++created;
    }
    for (EntityId e : replica.interpolated_removed_entities()) {
      freed += static_cast<long>(objects.erase(e));  // ... and frees it
    }
    const auto matrices = replica.interpolated_world_matrices();
    for (EntityId e : replica.interpolated_changed_entities()) {
      const auto index = replica.InterpolatedIndexOf(e);
      if (!index) continue;
      const auto [it, is_new] = objects.try_emplace(e);  // present before the first frame
      created += is_new ? 1 : 0;
      // Column-major, column vectors: the 16 floats go to the GPU as they are.
      std::memcpy(it->second.world, &matrices[*index][0][0], sizeof(it->second.world));
      ++uploads;
    }
    if (f % 60 == 0) {
      const auto stats = replica.interpolation_stats();
      std::printf("frame %ld: %zu objects, %ld uploads, delay %.1f ms, snaps %llu%s\n", f,
                  objects.size(), uploads, static_cast<double>(stats.delay_us) / 1000.0,
                  static_cast<unsigned long long>(stats.snaps),
                  client.synced() ? "" : " (reconnecting)");
    }
    next += frame;
    std::this_thread::sleep_until(next);  // stands in for the renderer's vsync
  }
  std::printf("render_loop_net: %ld frames, %zu entities, %ld created, %ld freed, %ld uploads\n",
              args.frames, objects.size(), created, freed, uploads);
  return 0;
}
