// SPDX-License-Identifier: Apache-2.0
// Runs c_client_program.c (a C11 translation unit, strict warnings as errors) against
// libscenecrdt.so and an in-process scenecrdt server on loopback: two C clients join, one
// writes, the other sees it. Also the URL list (a dead server first: fail-over), and the
// golden @dcl/ecs component stream (docs/COMPONENTS.md) sent through the server by a C++ client
// and read by a C client: each frame's bytes, sets and lists.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>
#include <string>
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

// Interest through the C ABI (docs/INTEREST.md): a body crossing the border of a 10 m view
// and back leaves once and enters once, in the view's removed / added lists; bad values are
// refused with a typed status.
TEST(CapiClientTest, InterestBorderCrossingShowsInRemovedAndAddedLists) {
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  client::ClientOptions wo;
  wo.url = server.tcp_url();
  wo.scene = "capi-interest";
  client::Client writer(wo);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.synced(); }, std::chrono::seconds(20)));
  constexpr uint32_t kMover = 777;
  const auto move = [&](float x) {
    protocol::Transform t;
    t.position = {x, 0, 0};
    ASSERT_TRUE(writer.WriteTransform(kMover, t).has_value());
    writer.Flush();
    ASSERT_TRUE(
        writer.PollUntil([&] { return writer.pending_frames() == 0; }, std::chrono::seconds(20)));
  };
  move(0);
  sc_client* c = sc_client_connect(server.tcp_url().c_str(), "capi-interest", nullptr);
  ASSERT_NE(c, nullptr) << sc_last_error();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(sc_client_set_interest(c, 0, 0, 0, nan), SC_E_INVALID_ARGUMENT);
  EXPECT_NE(std::string(sc_last_error()).find("invalid_interest"), std::string::npos);
  EXPECT_EQ(sc_client_set_interest(c, 0, 0, 0, -1), SC_E_INVALID_ARGUMENT);
  EXPECT_EQ(sc_client_set_interest(c, nan, 0, 0, 5), SC_E_INVALID_ARGUMENT);
  EXPECT_EQ(sc_client_follow_interest(c, 600, -1), SC_E_INVALID_ARGUMENT);
  EXPECT_EQ(sc_client_set_interest(nullptr, 0, 0, 0, 5), SC_E_INVALID_ARGUMENT);
  ASSERT_EQ(sc_client_set_interest(c, 0, 0, 0, 10), SC_OK) << sc_last_error();
  const sc_runtime* view = sc_client_runtime(c);
  int added = 0, removed = 0;
  const auto count = [&] {
    uint32_t e[64];
    size_t n = 0;
    ASSERT_EQ(sc_runtime_copy_added(view, e, 64, &n), SC_OK);
    for (size_t i = 0; i < n; ++i) added += e[i] == kMover;
    ASSERT_EQ(sc_runtime_copy_removed(view, e, 64, &n), SC_OK);
    for (size_t i = 0; i < n; ++i) removed += e[i] == kMover;
  };
  const auto wait_for = [&](bool in, float x) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      ASSERT_GE(sc_client_poll(c, 5), 0) << sc_last_error();
      count();
      sc_transform t;
      const int got = sc_runtime_get_transform(view, kMover, &t);
      if (in ? (got == SC_OK && t.position[0] == x) : got == SC_E_NOT_FOUND) return;
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "x " << x;
    }
  };
  wait_for(true, 0);
  // Out through the hysteresis band (1 m), lingering in it, back in.
  bool in = true;
  for (const float x : {5.0f, 10.5f, 9.0f, 10.9f, 11.5f, 10.5f, 10.8f, 9.5f, 0.0f}) {
    move(x);
    in = x <= 10.0f || (in && x <= 11.0f);
    wait_for(in, x);
  }
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(added, 2);  // the first appearance, then the re-entry
  EXPECT_EQ(sc_client_clear_interest(c), SC_OK);
  sc_client_destroy(c);
  writer.Stop();
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
