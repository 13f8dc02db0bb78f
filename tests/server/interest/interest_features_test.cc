// SPDX-License-Identifier: Apache-2.0
// Interest management with the features around it (docs/INTEREST.md "With the other
// features"), end to end on an in-process server and real clients: tls:// with the test CA,
// signed tokens (HS256: a writer, and a read-only reader that declares an interest), zstd
// records, the scene evicted from memory while nobody is joined and loaded again (a new
// incarnation), and the reader coming back with its old resume position: each time its replica
// is exactly the server's state restricted to the documented view (tests/client/
// interest_reference.h), and a body that moves away reaches it as a removal.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "scenecrdt/client/client.h"
#include "tests/client/interest_reference.h"
#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
using client::test::AwaitViews;
using client::test::ReferenceView;
using client::test::ViewReference;

constexpr char kScene[] = "world";
constexpr float kRadius = 50.0f;

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Claims(const std::string& role) {
  return R"({"sub":"player","scenes":["world"],"role":")" + role + R"(","exp":)" +
         std::to_string(WallNow() + 600) + "}";
}

protocol::Transform At(float x, float z, protocol::EntityId parent = 0) {
  protocol::Transform t;
  t.position = {x, 0.0f, z};
  t.parent = parent;
  return t;
}

class InterestFeaturesTest : public JwtFixture {
 protected:
  void SetUp() override {
    JwtFixture::SetUp();
    cert_ = MakeCert(dir_.path(), "server");
    server::ServerConfig config = TestServer::Config();
    config.tls_cert_file = cert_.cert;
    config.tls_key_file = cert_.key;
    config.access.jwt_secret_files = {keys().secret_file};
    config.limits.scene_idle_evict_ms = 1;  // evicted at the first sweep after the last leave
    server_.emplace(config);
  }

  std::unique_ptr<client::Client> Connect(const std::string& role, bool interest,
                                          std::optional<uint64_t> resume = std::nullopt) {
    client::ClientOptions o;
    o.url = "tls://127.0.0.1:" + std::to_string(server_->get().tcp_port());
    o.scene = kScene;
    o.token = ValidToken(TestSigner::kHs256, Claims(role));
    o.connection.ca_file = cert_.cert;
    o.connection.zstd = true;
    o.connection.zstd_frames = true;
    o.resume_sequence = resume;
    if (interest) o.interest = interest_;
    auto c = std::make_unique<client::Client>(o);
    if (!c->Start().has_value()) return nullptr;
    c->PollUntil([&] { return c->state_ready() || c->closed(); }, 30s);
    return c;
  }

  ViewReference Expected() {
    ViewReference ref;
    server_->get().InspectScene(kScene, [&](const runtime::CrdtStore& s, uint64_t) {
      ref = ReferenceView(s, interest_.center, std::nullopt, interest_.radius);
    });
    return ref;
  }

  // Writes and waits until the server acknowledged every frame.
  static void Settle(client::Client& c) {
    c.Flush();
    ASSERT_TRUE(c.PollUntil(
        [&] { return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0; }, 20s));
  }

  TempDir dir_;
  TestCert cert_;
  std::optional<TestServer> server_;
  client::Interest interest_{glm::vec3(0.0f), std::nullopt, kRadius, 0.0f};
};

TEST_F(InterestFeaturesTest, TlsTokensZstdEvictionAndResumeKeepTheView) {
  auto writer = Connect("write", false);
  ASSERT_TRUE(writer && writer->state_ready()) << (writer ? writer->close_error().detail : "");
  // Bodies every 10 m along x (five within the radius), and a child near the centre whose
  // parent is far away: the parent is held as its ancestor.
  for (uint32_t i = 0; i < 20; ++i)
    ASSERT_TRUE(
        writer->WriteTransform(600 + i, At(10.0f * static_cast<float>(i) + 1, 0)).has_value());
  ASSERT_TRUE(writer->WriteTransform(700, At(300, 300)).has_value());
  ASSERT_TRUE(writer->WriteTransform(701, At(-298, -299, 700)).has_value());  // world (2, 0, 1)
  Settle(*writer);

  auto reader = Connect("read", true);
  ASSERT_TRUE(reader && reader->state_ready()) << (reader ? reader->close_error().detail : "");
  ViewReference first = Expected();
  ASSERT_EQ(first.view.size(), 7u);  // 600..604, 701 and its parent 700
  ASSERT_EQ(AwaitViews({reader.get()}, {first}, 20s), "");

  // Everybody leaves; the scene leaves memory (its state is on disk). The count is read while
  // the scene still has members: the server's own sweep may evict it as soon as they are gone.
  const uint64_t position = reader->scene_sequence();
  ASSERT_GT(position, 0u);
  const uint64_t evictions = server_->get().metrics().scene_evictions.load();
  reader->Stop();
  writer->Stop();
  reader.reset();
  writer.reset();
  ASSERT_TRUE(WaitUntil(
      [&] {
        server_->get().SweepIdleScenes();
        return server_->get().num_scenes() == 0;
      },
      20s));
  EXPECT_GT(server_->get().metrics().scene_evictions.load(), evictions);

  // Loaded again by the writer (a new incarnation): the reader's old position is from another
  // incarnation, and an interest member gets a snapshot of its view anyway.
  writer = Connect("write", false);
  ASSERT_TRUE(writer && writer->state_ready());
  ASSERT_TRUE(writer->WriteTransform(602, At(400, 0)).has_value());  // leaves the view
  ASSERT_TRUE(writer->WriteTransform(615, At(0, 30)).has_value());   // enters it
  Settle(*writer);
  reader = Connect("read", true, position);
  ASSERT_TRUE(reader && reader->state_ready()) << (reader ? reader->close_error().detail : "");
  EXPECT_EQ(reader->stats().resumes, 0u);
  EXPECT_EQ(reader->stats().snapshots, 1u);
  ViewReference second = Expected();
  ASSERT_EQ(AwaitViews({reader.get()}, {second}, 20s), "");
  EXPECT_EQ(second.view.count(602), 0u);
  EXPECT_EQ(second.view.count(615), 1u);

  // Live: a body moving out is removed from the replica, one moving in is added.
  ASSERT_TRUE(writer->WriteTransform(601, At(-500, 0)).has_value());
  ASSERT_TRUE(writer->WriteTransform(619, At(-20, 0)).has_value());
  Settle(*writer);
  ViewReference third = Expected();
  ASSERT_EQ(AwaitViews({reader.get()}, {third}, 20s), "");
  EXPECT_EQ(third.view.count(601), 0u);
  EXPECT_EQ(third.view.count(619), 1u);
  EXPECT_GT(server_->get().metrics().interest_notices.load(), 0u);
  // Every interest delivery went out as zstd records (compressed per member).
  EXPECT_GT(server_->get().metrics().compression_shared_frames.load(), 0u);
}

}  // namespace
}  // namespace scenecrdt::testing
