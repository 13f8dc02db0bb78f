// SPDX-License-Identifier: Apache-2.0
// Runs c_client_program.c (a C11 translation unit, strict warnings as errors) against
// libscenecrdt.so and an in-process scenecrdt server on loopback: two C clients join, one
// writes, the other sees it. Also the URL list (a dead server first: fail-over), and the
// golden @dcl/ecs component stream (docs/COMPONENTS.md) sent through the server by a C++ client
// and read by a C client: each frame's bytes, sets and lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/scenecrdt.h"
#include "tests/capi/c_client_program.h"
#include "tests/client/test_server.h"
#include "tests/runtime/ecs_components_golden.h"

namespace scenecrdt::capi_test {
namespace {

TEST(CapiClientTest, CClientSeesAWriteOfAnotherClient) {
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  char error[512] = "";
  EXPECT_EQ(capi_c_client_program(server.tcp_url().c_str(), "capi", error, sizeof(error)), 1)
      << error;
  EXPECT_EQ(capi_c_client_program((server.ws_url() + "/scene/capi-ws").c_str(), nullptr, error,
                                  sizeof(error)),
            1)
      << error;
}

TEST(CapiClientTest, AListWithADeadServerFailsOverToTheLiveOne) {
  const std::string dead = "tcp://127.0.0.1:1";  // nothing listens there
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  const std::string list = dead + "," + server.tcp_url();
  char error[512] = "";
  EXPECT_EQ(capi_c_client_program(list.c_str(), "capi-list", error, sizeof(error)), 1) << error;
}

using Keys = std::set<golden::Key>;

// Every pair of one of the view's component lists.
Keys ListOf(const sc_runtime* view,
            int (*copy)(const sc_runtime*, uint32_t*, uint32_t*, size_t, size_t*)) {
  std::vector<uint32_t> e(256), c(256);
  size_t n = 0;
  EXPECT_EQ(copy(view, e.data(), c.data(), e.size(), &n), SC_OK) << sc_last_error();
  Keys out;
  for (size_t i = 0; i < n && i < e.size(); ++i) out.emplace(e[i], c[i]);
  return out;
}

// The view holds exactly what the frame says the engine held.
bool Holds(const sc_runtime* view, const golden::EcsFrame& frame) {
  for (const auto& [key, bytes] : frame.values) {
    std::vector<uint8_t> buf(bytes.size() + 1);
    size_t len = 0;
    if (sc_runtime_get_component(view, key.first, key.second, buf.data(), buf.size(), &len) !=
            SC_OK ||
        std::vector<uint8_t>(buf.begin(), buf.begin() + static_cast<long>(len)) != bytes) {
      return false;
    }
  }
  for (const auto& [key, values] : frame.grow_only) {
    size_t len = 0;
    if (sc_runtime_copy_append_values(view, key.first, key.second, nullptr, 0, &len) !=
            SC_E_BUFFER_TOO_SMALL ||
        len < values.size() * SC_APPEND_RECORD_HEADER_BYTES) {
      return false;
    }
  }
  for (const golden::Key& key : frame.removed) {
    size_t len = 0;
    if (sc_runtime_get_component(view, key.first, key.second, nullptr, 0, &len) != SC_E_NOT_FOUND) {
      return false;
    }
  }
  return true;
}

TEST(CapiClientTest, ComponentsOfADclEcsStreamReachACClient) {
  const golden::EcsGolden g = golden::LoadEcsGolden();
  ASSERT_EQ(g.frames.size(), 4u);
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  sc_client* reader = sc_client_connect(server.tcp_url().c_str(), "capi-components", nullptr);
  ASSERT_NE(reader, nullptr) << sc_last_error();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (sc_client_state_ready(reader) != 1 && std::chrono::steady_clock::now() < deadline) {
    ASSERT_GE(sc_client_poll(reader, 5), 0) << sc_last_error();
  }
  ASSERT_EQ(sc_client_state_ready(reader), 1);
  client::ClientOptions options;
  options.url = server.tcp_url();
  options.scene = "capi-components";
  client::Client writer(options);
  ASSERT_TRUE(writer.Join(std::chrono::seconds(30)).has_value());
  const sc_runtime* view = sc_client_runtime(reader);
  for (std::size_t f = 0; f < g.frames.size(); ++f) {
    const golden::EcsFrame& frame = g.frames[f];
    ASSERT_NE(
        writer.SendCrdt(std::span<const uint8_t>(g.stream).subspan(frame.offset, frame.length)),
        0u);
    writer.Flush();
    // The lists of every update until the frame has arrived (one live frame: one update).
    Keys changed, added, removed;
    bool arrived = false;
    while (!arrived && std::chrono::steady_clock::now() < deadline) {
      writer.Poll();
      ASSERT_GE(sc_client_poll(reader, 5), 0) << sc_last_error();
      const Keys c = ListOf(view, sc_runtime_copy_changed_components);
      const Keys a = ListOf(view, sc_runtime_copy_added_components);
      const Keys r = ListOf(view, sc_runtime_copy_removed_components);
      changed.insert(c.begin(), c.end());
      added.insert(a.begin(), a.end());
      removed.insert(r.begin(), r.end());
      arrived = Holds(view, frame) && changed.size() >= frame.changed.size() &&
                removed.size() >= frame.removed.size();
    }
    ASSERT_TRUE(arrived) << "frame " << f << " did not reach the C client";
    EXPECT_EQ(changed, Keys(frame.changed.begin(), frame.changed.end())) << "frame " << f;
    EXPECT_EQ(added, Keys(frame.added.begin(), frame.added.end())) << "frame " << f;
    EXPECT_EQ(removed, Keys(frame.removed.begin(), frame.removed.end())) << "frame " << f;
  }
  sc_client_destroy(reader);
}

}  // namespace
}  // namespace scenecrdt::capi_test
