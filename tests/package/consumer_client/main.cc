// SPDX-License-Identifier: Apache-2.0
// client_cxx URL SCENE ENTITY X: joins SCENE, writes ENTITY at x = X and waits until the
// server acknowledged it; then checks the replica shows it. Exit 0 on success.
#include <scenecrdt/client/client.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: client_cxx URL SCENE ENTITY X\n");
    return 2;
  }
  scenecrdt::client::ClientOptions options;
  options.url = argv[1];
  options.scene = argv[2];
  const auto entity =
      static_cast<scenecrdt::protocol::EntityId>(std::strtoul(argv[3], nullptr, 10));
  scenecrdt::protocol::Transform t;
  t.position.x = std::strtof(argv[4], nullptr);
  scenecrdt::client::Client client(options);
  if (auto joined = client.Join(std::chrono::seconds(30)); !joined.has_value()) {
    std::fprintf(stderr, "client_cxx: join: %s\n", joined.error().detail);
    return 1;
  }
  if (auto written = client.WriteTransform(entity, t); !written.has_value()) {
    std::fprintf(stderr, "client_cxx: write: %s\n", written.error().detail);
    return 1;
  }
  if (!client.PollUntil([&] { return client.pending_frames() == 0 && client.unsent_writes() == 0; },
                        std::chrono::seconds(30))) {
    std::fprintf(stderr, "client_cxx: the write was not acknowledged\n");
    return 1;
  }
  client.Update();
  const auto index = client.runtime().IndexOf(entity);
  if (!index || client.runtime().world_matrices()[*index][3][0] != t.position.x) {
    std::fprintf(stderr, "client_cxx: the replica does not show the write\n");
    return 1;
  }
  std::printf("client_cxx: wrote entity %u, acknowledged\n", entity);
  return 0;
}
