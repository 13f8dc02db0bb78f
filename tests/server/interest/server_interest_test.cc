// SPDX-License-Identifier: Apache-2.0
// The server side of SetInterest on the wire (docs/INTEREST.md): bad values are a non-fatal
// invalid_interest refusal that leaves the session usable, large radii are clamped and said
// so in InterestSet, an interest may come before the Hello, an unknown follow entity is an
// empty view (only entities without a Transform and tombstones), and the metrics are exported.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

// Reads frames until one of type F arrives (nullopt on timeout or close).
template <class F>
std::optional<F> ReadUntil(RawConnection& c) {
  for (;;) {
    auto bytes = c.ReadFrameBytes(10s);
    if (!bytes) return std::nullopt;
    auto frame = session::ReadFrame(*bytes);
    if (!frame.has_value()) return std::nullopt;
    if (const F* f = std::get_if<F>(&frame.value())) return *f;
  }
}

// The DCL data of the next Crdt frame (copied: the frame's bytes go with the read).
std::optional<std::vector<uint8_t>> ReadCrdtData(RawConnection& c) {
  for (;;) {
    auto bytes = c.ReadFrameBytes(10s);
    if (!bytes) return std::nullopt;
    auto frame = session::ReadFrame(*bytes);
    if (!frame.has_value()) return std::nullopt;
    if (const auto* crdt = std::get_if<session::Crdt>(&frame.value())) {
      return std::vector<uint8_t>(crdt->data.begin(), crdt->data.end());
    }
  }
}

session::SetInterest Point(float x, float radius) {
  session::SetInterest s;
  s.mode = session::InterestMode::kPoint;
  s.center_x = x;
  s.radius = radius;
  return s;
}

TEST(ServerInterestTest, BadInterestsAreRefusedNonFatallyAndRadiiClamped) {
  TestServer server;
  RawConnection c(server.get().tcp_port());
  ASSERT_TRUE(c.connected());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const session::SetInterest& bad :
       {Point(0, nan), Point(0, -1), Point(inf, 5), Point(nan, 5)}) {
    ASSERT_TRUE(c.SendFrame(bad));
    const auto error = c.ReadError();
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, ErrorCode::kInvalidInterest);
    EXPECT_FALSE(error->fatal);
  }
  session::SetInterest hysteresis = Point(0, 5);
  hysteresis.hysteresis = -1.0f;
  ASSERT_TRUE(c.SendFrame(hysteresis));
  ASSERT_EQ(c.ReadError()->code, ErrorCode::kInvalidInterest);
  // Before the Hello: accepted, clamped to the default --max-interest-radius-m (1000).
  ASSERT_TRUE(c.SendFrame(Point(0, 5000)));
  const auto set = ReadUntil<session::InterestSet>(c);
  ASSERT_TRUE(set.has_value());
  EXPECT_TRUE(set->clamped);
  EXPECT_EQ(set->radius, 1000.0f);
  EXPECT_EQ(set->hysteresis, 100.0f);
  ASSERT_TRUE(c.Join("interest-wire").has_value());
  ASSERT_TRUE(c.SendFrame(Point(1, 20)));
  const auto again = ReadUntil<session::InterestSet>(c);
  ASSERT_TRUE(again.has_value());
  EXPECT_FALSE(again->clamped);
  EXPECT_EQ(again->hysteresis, 2.0f);
  const std::string metrics = HttpGet(server.get().http_port(), "/metrics");
  EXPECT_NE(metrics.find("scenecrdt_interest_view_entities_count"), std::string::npos);
  EXPECT_NE(metrics.find("scenecrdt_interest_snapshots_total 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("scenecrdt_refusals_total{reason=\"invalid_interest\"} 5"),
            std::string::npos);
}

// Following an entity that does not exist: the join's state holds only what has no
// Transform; once the entity exists, its surroundings arrive.
TEST(ServerInterestTest, AnUnknownFollowEntityIsAnEmptyViewUntilItExists) {
  TestServer server;
  RawConnection writer(server.get().tcp_port());
  ASSERT_TRUE(writer.Join("follow").has_value());
  std::vector<uint8_t> dcl;
  protocol::Transform far;
  far.position = {500, 0, 0};
  protocol::AppendTransformPut(600, 1, far, dcl);
  protocol::AppendTransformPut(601, 1, protocol::kIdentityTransform, dcl);
  const uint8_t data[] = {1};
  protocol::AppendMessage({protocol::MessageType::kPutComponent, 602, 1090, 1, 0, data}, dcl);
  ASSERT_TRUE(writer.SendFrame(session::Crdt{1, 0, false, dcl}));
  ASSERT_TRUE(ReadUntil<session::Ack>(writer).has_value());

  RawConnection viewer(server.get().tcp_port());
  session::SetInterest follow;
  follow.mode = session::InterestMode::kFollow;
  follow.follow_entity = 700;
  follow.radius = 10;
  ASSERT_TRUE(viewer.SendFrame(follow));
  ASSERT_TRUE(viewer.SendFrame(session::Hello{"follow", "", std::nullopt, "viewer"}));
  const auto welcome = ReadUntil<session::Welcome>(viewer);
  ASSERT_TRUE(welcome.has_value());
  const auto state = ReadCrdtData(viewer);
  ASSERT_TRUE(state.has_value());
  runtime::CrdtStore got;
  ASSERT_TRUE(got.MergeStream(*state).has_value());
  EXPECT_EQ(got.FindTransform(600), nullptr);
  EXPECT_EQ(got.FindTransform(601), nullptr);
  EXPECT_TRUE(got.HoldsEntity(602));
  // Entity 700 appears at the origin: 601 (at the origin) enters, 600 (500 m away) does not.
  dcl.clear();
  protocol::AppendTransformPut(700, 1, protocol::kIdentityTransform, dcl);
  ASSERT_TRUE(writer.SendFrame(session::Crdt{2, 0, false, dcl}));
  const auto live = ReadCrdtData(viewer);
  ASSERT_TRUE(live.has_value());
  ASSERT_TRUE(got.MergeStream(*live).has_value());
  EXPECT_NE(got.FindTransform(700), nullptr);
  EXPECT_NE(got.FindTransform(601), nullptr);
  EXPECT_EQ(got.FindTransform(600), nullptr);
}

}  // namespace
}  // namespace scenecrdt::testing
