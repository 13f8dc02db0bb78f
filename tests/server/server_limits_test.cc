// SPDX-License-Identifier: Apache-2.0
// Hostile and broken clients: every bad input gets its typed refusal, the server stays up,
// other sessions keep working and the store is untouched. Also the rate limit, auth and a
// consumer that never reads.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include "envelope_generated.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     const std::string& token = {}) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.token = token;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready() || c->closed(); }, 20s));
  return c;
}

// Two healthy clients in `scene`: a writes, b must see it quickly; the store hash is
// whatever the healthy writes make it.
class HealthyPair {
 public:
  HealthyPair(TestServer& server, const std::string& scene)
      : a_(Join(server.tcp_url(), scene)), b_(Join(server.tcp_url(), scene)) {}
  // One write through a, seen by b within the deadline.
  void RoundTrip() {
    std::vector<uint8_t> dcl;
    ++ts_;
    AppendPut(dcl, 3000, ts_, static_cast<float>(ts_));
    sent_.push_back(dcl);
    a_->SendCrdt(dcl);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(b_->PollUntil(
        [&] {
          const auto* t = b_->store().FindTransform(3000);
          return t && t->position.x == static_cast<float>(ts_);
        },
        10s));
    ASSERT_TRUE(a_->PollUntil([&] { return a_->pending_frames() == 0; }, 10s));
    EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  }
  std::string ExpectedHash() const { return ReplayHash(sent_); }
  client::Client& b() { return *b_; }

 private:
  std::unique_ptr<client::Client> a_, b_;
  std::vector<std::vector<uint8_t>> sent_;
  uint32_t ts_ = 0;
};

std::vector<uint8_t> CrdtFrame(std::span<const uint8_t> dcl, uint64_t fs = 1) {
  session::Crdt c;
  c.frame_sequence = fs;
  c.data = dcl;
  return session::BuildFrame(c);
}

TEST(ServerBadInputTest, EachViolationGetsItsTypedRefusalAndHarmsNoOne) {
  TestServer server;
  HealthyPair healthy(server, "arena");
  healthy.RoundTrip();
  const uint16_t port = server.get().tcp_port();

  struct Case {
    const char* name;
    std::function<void(RawConnection&)> send;
    ErrorCode expected;
    bool fatal;
  };
  std::vector<uint8_t> nan_put;
  {
    protocol::Transform t;
    t.position.x = std::numeric_limits<float>::quiet_NaN();
    protocol::AppendTransformPut(3000, 1000, t, nan_put);
  }
  std::vector<uint8_t> bad_dcl;
  AppendPut(bad_dcl, 3000, 1000, 1.0f);
  bad_dcl[0] = 7;  // length 7 < 8
  std::vector<uint8_t> cut_dcl;
  AppendPut(cut_dcl, 3000, 1000, 1.0f);
  cut_dcl.resize(40);

  const std::vector<Case> cases = {
      {"garbage bytes",
       [](RawConnection& c) {
         std::vector<uint8_t> junk = {24, 0, 0, 0};
         for (int i = 0; i < 24; ++i) junk.push_back(static_cast<uint8_t>(i * 37 + 11));
         c.Send(junk);
       },
       ErrorCode::kEnvelopeInvalid, true},
      {"truncated envelope",
       [](RawConnection& c) {
         auto f = session::BuildFrame(session::Hello{"arena", "", std::nullopt, ""});
         f.resize(f.size() - 6);
         const uint32_t body = static_cast<uint32_t>(f.size() - 4);
         std::memcpy(f.data(), &body, 4);
         c.Send(f);
       },
       ErrorCode::kEnvelopeInvalid, true},
      {"oversized frame",
       [](RawConnection& c) {
         const std::vector<uint8_t> prefix = {0, 0, 0, 4};  // 64 MiB
         c.Send(prefix);
       },
       ErrorCode::kFrameTooLarge, true},
      {"verification failure",
       [](RawConnection& c) {
         auto f = session::BuildFrame(session::Hello{"arena", "", std::nullopt, ""});
         f[8] = 0xFF;  // root offset far out of the buffer
         f[9] = 0xFF;
         c.Send(f);
       },
       ErrorCode::kEnvelopeInvalid, true},
      {"wrong protocol version",
       [](RawConnection& c) {
         flatbuffers::FlatBufferBuilder b;
         auto hello = session::fb::CreateHello(b, b.CreateString("arena"));
         auto env = session::fb::CreateEnvelope(b, 99, session::fb::Payload::Hello, hello.Union());
         b.FinishSizePrefixed(env, session::fb::EnvelopeIdentifier());
         c.Send(std::span<const uint8_t>(b.GetBufferPointer(), b.GetSize()));
       },
       ErrorCode::kProtocolVersion, true},
      {"crdt before hello", [&](RawConnection& c) { c.Send(CrdtFrame(nan_put)); },
       ErrorCode::kUnexpectedPayload, true},
      {"malformed DCL stream",
       [&](RawConnection& c) {
         c.Join("arena");
         c.Send(CrdtFrame(bad_dcl));
       },
       ErrorCode::kLengthTooSmall, true},
      {"DCL stream cut inside a message",
       [&](RawConnection& c) {
         c.Join("arena");
         c.Send(CrdtFrame(cut_dcl));
       },
       ErrorCode::kTruncated, true},
      {"non-finite Transform",
       [&](RawConnection& c) {
         c.Join("arena");
         c.Send(CrdtFrame(nan_put, 7));
       },
       ErrorCode::kNonFiniteTransform, false},
      {"Hello twice",
       [&](RawConnection& c) {
         c.Join("arena");
         c.SendFrame(session::Hello{"arena", "", std::nullopt, ""});
       },
       ErrorCode::kUnexpectedPayload, true},
  };
  const std::string before = server.SceneHash("arena");
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    RawConnection bad(port);
    ASSERT_TRUE(bad.connected());
    k.send(bad);
    auto error = bad.ReadError();
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, k.expected) << error->text;
    EXPECT_EQ(error->fatal, k.fatal);
    if (k.fatal) {
      EXPECT_TRUE(bad.WaitClosed());
    }
    EXPECT_EQ(server.SceneHash("arena"), before) << "a refused frame touched the store";
  }
  // A frame cut by the peer closing mid-way: nothing to answer, nothing changes.
  {
    RawConnection cut(port);
    auto f = CrdtFrame(nan_put);
    cut.Send(std::span<const uint8_t>(f).first(10));
  }
  healthy.RoundTrip();
  EXPECT_EQ(server.SceneHash("arena"), healthy.ExpectedHash());
  EXPECT_EQ(healthy.b().store().StateHashHex(), healthy.ExpectedHash());
}

// The scene's batch limits (entities, tombstones) come from the one admission path of both
// protocols: an envelope frame is refused whole with its typed Error, a raw-DCL chunk is
// dropped whole and counted; neither touches the store, and both sessions stay joined.
TEST(ServerSceneLimitsTest, EntityAndTombstoneLimitsRefuseWholeFramesOnBothPaths) {
  auto config = TestServer::Config();
  config.limits.max_entities = 3;
  config.limits.max_tombstones = 2;
  TestServer server(config);
  auto writer = Join(server.tcp_url(), "cap");
  std::vector<uint8_t> two;
  AppendPut(two, 3000, 1, 1.0f);
  AppendPut(two, 3001, 1, 1.0f);
  writer->SendCrdt(two);
  const std::string before = ReplayHash({two});
  ASSERT_TRUE(WaitUntil([&] { return server.SceneHash("cap") == before; }));

  std::vector<uint8_t> two_more;  // 2 + 2 > 3 entities, although one of them alone would fit
  AppendPut(two_more, 3002, 1, 2.0f);
  AppendPut(two_more, 3003, 1, 2.0f);
  std::vector<uint8_t> three_deletes;  // 3 > 2 tombstones
  for (uint32_t e : {3000u, 3001u, 3004u}) {
    protocol::CrdtMessage m;
    m.type = protocol::MessageType::kDeleteEntity;
    m.entity = e;
    protocol::AppendMessage(m, three_deletes);
  }
  RawConnection envelope(server.get().tcp_port());
  ASSERT_TRUE(envelope.Join("cap").has_value());
  DclSocket raw(server.get().http_port(), "/dcl/cap");
  ASSERT_TRUE(raw.Receive().has_value());
  struct Case {
    const std::vector<uint8_t>* dcl;
    uint32_t messages;
    ErrorCode code;
  };
  const std::vector<Case> cases = {{&two_more, 2, ErrorCode::kTooManyEntities},
                                   {&three_deletes, 3, ErrorCode::kTooManyTombstones}};
  uint64_t fs = 10;
  for (const auto& [dcl, messages, code] : cases) {
    SCOPED_TRACE(ErrorCodeName(code));
    ASSERT_TRUE(envelope.Send(CrdtFrame(*dcl, ++fs)));
    auto error = envelope.ReadError();
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, code) << error->text;
    EXPECT_FALSE(error->fatal);
    EXPECT_EQ(error->frame_sequence, fs);
    ASSERT_TRUE(raw.Send(*dcl));
    const std::string series = std::string("scenecrdt_dcl_dropped_messages_total{reason=\"") +
                               ErrorCodeName(code) + "\"} " + std::to_string(messages);
    EXPECT_TRUE(WaitUntil([&] {
      return server.get().metrics().RenderPrometheus().find(series) != std::string::npos;
    })) << series;
    EXPECT_EQ(server.SceneHash("cap"), before) << "a refused batch touched the store";
  }
  // Both sessions are still joined and may write what fits.
  std::vector<uint8_t> one_more;
  AppendPut(one_more, 3002, 1, 3.0f);
  ASSERT_TRUE(raw.Send(one_more));
  ASSERT_TRUE(
      writer->PollUntil([&] { return writer->store().FindTransform(3002) != nullptr; }, 10s));
  EXPECT_EQ(server.SceneHash("cap"), ReplayHash({two, one_more}));
  ASSERT_TRUE(envelope.Send(CrdtFrame(two, ++fs)));
  bool acked = false;
  while (!acked) {
    auto frame = envelope.ReadFrameBytes(10s);
    ASSERT_TRUE(frame.has_value()) << "the envelope session was closed";
    auto read = session::ReadFrame(*frame);
    ASSERT_TRUE(read.has_value());
    const auto* ack = std::get_if<session::Ack>(&read.value());
    acked = ack && ack->frame_sequence == fs;
  }
}

TEST(ServerAuthTest, ReadOnlyAndWrongTokensAreRefused) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  std::ofstream(auth) << R"({"tokens":[{"token":"w","scenes":["*"],"role":"write"},)"
                      << R"({"token":"r","scenes":["lobby"],"role":"read"}]})";
  auto config = TestServer::Config();
  config.access.auth_file = auth;
  TestServer server(config);
  auto writer = Join(server.tcp_url(), "lobby", "w");
  auto reader = Join(server.tcp_url(), "lobby", "r");
  ASSERT_TRUE(reader->state_ready());
  EXPECT_FALSE(reader->welcome()->can_write);
  // The read-only session writes: refused, nothing reaches the store or the writer.
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 4000, 1, 1.0f);
  const uint64_t fs = reader->SendCrdt(dcl);
  ASSERT_TRUE(reader->PollUntil([&] { return reader->pending_frames() == 0; }, 10s));
  auto refusals = reader->TakeRefusals();
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].code, ErrorCode::kReadOnly);
  EXPECT_EQ(refusals[0].frame_sequence, fs);
  EXPECT_EQ(server.SceneHash("lobby"), runtime::CrdtStore().StateHashHex());
  // The writer's changes reach the reader.
  std::vector<uint8_t> good;
  AppendPut(good, 4001, 1, 2.0f);
  writer->SendCrdt(good);
  ASSERT_TRUE(reader->PollUntil([&] { return reader->store().FindTransform(4001); }, 10s));
  writer->Poll();
  EXPECT_EQ(writer->store().FindTransform(4000), nullptr);
  // Wrong token, and a token not granted for the scene.
  for (auto [token, scene] : {std::pair{"nope", "lobby"}, std::pair{"r", "other"}}) {
    auto c = Join(server.tcp_url(), scene, token);
    EXPECT_TRUE(c->closed());
    auto r = c->TakeRefusals();
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(r[0].code, ErrorCode::kUnauthorized);
  }
  // Without --auth, non-loopback addresses are refused at start.
  server::ServerConfig open = TestServer::Config();
  open.tcp_listen = "0.0.0.0:0";
  open.data_dir = dir.path() + "/open";
  server::Server s(open);
  auto started = s.Start(false);
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error().code, ErrorCode::kUnauthorized);
}

// A reload of the credentials (what SIGHUP does): new joins use the new table, joined sessions
// whose token lost the scene (or writing) are closed, the others stay; a file that does not
// load keeps the previous credentials, counted and logged.
TEST(ServerAuthReloadTest, RevokedAndDemotedTokensAreCutOthersStay) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  std::ofstream(auth) << R"({"tokens":[{"token":"old","scenes":["*"],"role":"write"},)"
                      << R"({"token":"stay","scenes":["*"],"role":"write"},)"
                      << R"({"token":"demoted","scenes":["*"],"role":"write"}]})";
  auto config = TestServer::Config();
  config.access.auth_file = auth;
  TestServer server(config);
  auto old_token = Join(server.tcp_url(), "lobby", "old");
  auto stay = Join(server.tcp_url(), "lobby", "stay");
  auto demoted = Join(server.tcp_url(), "lobby", "demoted");
  ASSERT_TRUE(old_token->state_ready() && stay->state_ready() && demoted->state_ready());

  std::ofstream(auth, std::ios::trunc)
      << R"({"tokens":[{"token":"stay","scenes":["*"],"role":"write"},)"
      << R"({"token":"demoted","scenes":["*"],"role":"read"},)"
      << R"({"token":"new","scenes":["lobby"],"role":"write"}]})";
  ASSERT_TRUE(server.get().ReloadAccess());
  for (auto* c : {&old_token, &demoted}) {
    ASSERT_TRUE((*c)->PollUntil([&] { return (*c)->closed(); }, 10s));
    auto r = (*c)->TakeRefusals();
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(r.back().code, ErrorCode::kUnauthorized);
  }
  // The session still granted stays and writes.
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 4100, 1, 1.0f);
  const uint64_t fs = stay->SendCrdt(dcl);
  ASSERT_TRUE(stay->PollUntil([&] { return stay->acked_frame_sequence() >= fs; }, 10s));
  EXPECT_FALSE(stay->closed());
  EXPECT_TRUE(Join(server.tcp_url(), "lobby", "new")->state_ready());
  auto gone = Join(server.tcp_url(), "lobby", "old");
  EXPECT_TRUE(gone->closed());

  // A table that does not parse: refused, the previous credentials stay.
  std::ofstream(auth, std::ios::trunc) << "{not json";
  EXPECT_FALSE(server.get().ReloadAccess());
  EXPECT_TRUE(Join(server.tcp_url(), "lobby", "new")->state_ready());
  EXPECT_FALSE(stay->closed());
  const std::string metrics = HttpGet(server.get().http_port(), "/metrics");
  EXPECT_EQ(Metric(metrics, "scenecrdt_auth_reloads_total"), 1) << metrics;
  EXPECT_EQ(Metric(metrics, "scenecrdt_auth_reload_failures_total"), 1) << metrics;
}

TEST(ServerRateLimitTest, FloodOverTheBudgetIsRefusedPerFrame) {
  auto config = TestServer::Config();
  config.limits.messages_per_second = 100;
  config.limits.message_burst = 100;
  TestServer server(config);
  HealthyPair healthy(server, "flood");
  auto flooder = Join(server.tcp_url(), "flood");
  for (uint32_t i = 0; i < 50; ++i) {
    std::vector<uint8_t> dcl;
    for (uint32_t k = 0; k < 10; ++k) AppendPut(dcl, 5000 + k, i + 1, static_cast<float>(i));
    flooder->SendCrdt(dcl);
  }
  ASSERT_TRUE(flooder->PollUntil([&] { return flooder->pending_frames() == 0; }, 20s));
  std::size_t limited = 0;
  for (const auto& r : flooder->TakeRefusals()) {
    EXPECT_EQ(r.code, ErrorCode::kRateLimited);
    EXPECT_FALSE(r.fatal);
    ++limited;
  }
  EXPECT_GE(limited, 30u);  // 500 messages against a 100-message bucket
  EXPECT_FALSE(flooder->closed());
  healthy.RoundTrip();
}

TEST(ServerBackpressureTest, ConsumerThatNeverReadsIsBoundedThenDropped) {
  auto config = TestServer::Config();
  config.limits.slow_consumer_ms = 1000;
  TestServer server(config);
  HealthyPair healthy(server, "slow");
  RawConnection stuck(server.get().tcp_port(), 4096);
  ASSERT_TRUE(stuck.Join("slow").has_value());
  // Never read again. Write ~16 KB components on 64 entities, over and over (~1 MB each
  // round) while the healthy pair keeps its round trips.
  auto writer = Join(server.tcp_url(), "slow");
  std::vector<uint8_t> payload(15000, 0xAB);
  int64_t max_queued = 0;
  for (uint32_t round = 1; round <= 24; ++round) {
    std::vector<uint8_t> dcl;
    for (uint32_t e = 0; e < 64; ++e) {
      payload[0] = static_cast<uint8_t>(round);
      protocol::CrdtMessage m;
      m.type = protocol::MessageType::kPutComponent;
      m.entity = 6000 + e;
      m.component = 1234;
      m.timestamp = round;
      m.data = payload;
      protocol::AppendMessage(m, dcl);
    }
    // 64 messages per frame: keep under the default rate budget (burst 4000).
    writer->SendCrdt(dcl);
    ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 20s));
    healthy.RoundTrip();
    max_queued = std::max<int64_t>(max_queued, server.get().metrics().queued_bytes.load());
  }
  // At most one coalesced scene frame (<= the scene state, ~1 MB) per session in flight.
  EXPECT_LT(max_queued, 8 << 20);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return server.get().metrics().sessions_closed.load() >= 1 &&
               server.get().metrics().sessions.load() == 3;
      },
      20s))
      << "the stuck session was not dropped";
}

// A fatal refusal while the peer still sends: the server reads on after its goodbye and FIN
// (a lingering close), so the peer's next writes are taken, not answered with a reset that
// could destroy the goodbye in the peer's kernel before the peer read it (a writing client
// once lost the kShuttingDown goodbye this way).
TEST(ServerCloseTest, AGoodbyeOverUnreadBytesEndsInAFinNotAReset) {
  TestServer server;
  RawConnection raw(server.get().tcp_port());
  ASSERT_TRUE(raw.Join("linger").has_value());
  // An empty frame (fatal) and then 32 KiB the server will never parse.
  std::vector<uint8_t> bytes(4 + 32 * 1024, 0x5a);
  bytes[0] = 4;
  bytes[1] = bytes[2] = bytes[3] = 0;
  ASSERT_TRUE(raw.Send(bytes));
  auto goodbye = raw.ReadError();
  ASSERT_TRUE(goodbye.has_value());
  EXPECT_EQ(goodbye->code, ErrorCode::kEnvelopeInvalid);
  // The peer has not seen the goodbye yet in its own code and writes on.
  EXPECT_TRUE(raw.Send(std::vector<uint8_t>(16 * 1024, 0x5a)));
  EXPECT_EQ(raw.FinishAndReadEnd(), 0);
}

}  // namespace
}  // namespace scenecrdt::testing
