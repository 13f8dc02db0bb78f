// SPDX-License-Identifier: Apache-2.0
// Server behaviour end to end on loopback: convergence of concurrent conflicting writers,
// late join and resume (byte counts), durability across kill -9 and SIGTERM of the real
// `scenecrdt serve` process, WebSocket and HTTP endpoints.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     std::optional<uint64_t> resume = std::nullopt,
                                     const std::string& token = {}) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.token = token;
  o.resume_sequence = resume;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join " << scene;
  return c;
}

TEST(ServerConvergenceTest, EightConflictingWritersConvergeToReplayHash) {
  TestServer server;
  constexpr int kClients = 8;
  constexpr int kRounds = 25;
  constexpr uint32_t kEntities = 12;
  std::vector<std::unique_ptr<client::Client>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(Join(server.tcp_url(), "lobby"));
  // Every client writes every entity with the same timestamps and different data: the
  // tie-breaks, not arrival order, decide. Each client runs its own thread.
  std::vector<std::vector<uint8_t>> sent(kClients);
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      client::Client& c = *clients[static_cast<std::size_t>(i)];
      for (int round = 1; round <= kRounds; ++round) {
        std::vector<uint8_t> dcl;
        for (uint32_t e = 0; e < kEntities; ++e) {
          AppendPut(dcl, 600 + e, static_cast<uint32_t>(round + (i % 3)),
                    static_cast<float>(i * 100 + round) + 0.5f * static_cast<float>(e),
                    e % 4 == 0 ? 0 : 600 + e - 1);
        }
        c.SendCrdt(dcl);
        sent[static_cast<std::size_t>(i)].insert(sent[static_cast<std::size_t>(i)].end(),
                                                 dcl.begin(), dcl.end());
        c.Poll();
      }
      EXPECT_TRUE(c.PollUntil([&] { return c.pending_frames() == 0; }, 30s));
      EXPECT_TRUE(c.TakeRefusals().empty());
    });
  }
  for (auto& t : threads) t.join();
  const std::string expected = ReplayHash(sent);
  EXPECT_EQ(server.SceneHash("lobby"), expected);
  for (auto& c : clients) {
    EXPECT_TRUE(c->PollUntil([&] { return c->store().StateHashHex() == expected; }, 20s))
        << "a replica did not converge";
  }
  // A late joiner gets the same state from the snapshot alone.
  auto late = Join(server.tcp_url(), "lobby");
  EXPECT_EQ(late->store().StateHashHex(), expected);
  EXPECT_TRUE(late->welcome().has_value() && !late->welcome()->resumed);
}

TEST(ServerResumeTest, ResumeSendsOnlyTheChangedRegisters) {
  TestServer server;
  auto writer = Join(server.tcp_url(), "resume");
  std::vector<uint8_t> first;
  for (uint32_t e = 0; e < 50; ++e) AppendPut(first, 1000 + e, 1, static_cast<float>(e));
  writer->SendCrdt(first);
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 20s));
  auto reader = Join(server.tcp_url(), "resume");
  EXPECT_EQ(reader->state_bytes(), 50u * 68u);  // the full snapshot
  const uint64_t resume_at = reader->scene_sequence();
  reader->Stop();
  // Five registers change (one of them twice: coalesced to one message).
  std::vector<uint8_t> second;
  for (uint32_t e = 0; e < 5; ++e) AppendPut(second, 1000 + e, 2, 100.0f + static_cast<float>(e));
  AppendPut(second, 1000, 3, 999.0f);
  writer->SendCrdt(second);
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 20s));
  const std::string expected = ReplayHash({first, second});
  auto resumed = Join(server.tcp_url(), "resume", resume_at);
  ASSERT_TRUE(resumed->welcome()->resumed);
  EXPECT_EQ(resumed->state_bytes(), 5u * 68u);  // only the changed registers
  // The old replica's content plus the delta is the scene, as a real resuming client has it.
  std::vector<uint8_t> delta;
  resumed->store().ExportSnapshot(delta);
  EXPECT_EQ(ReplayHash({first, delta}), expected);
  // A resume position from another incarnation or the future gets a full snapshot.
  auto bogus = Join(server.tcp_url(), "resume", resume_at + session::MakeSceneSequence(1, 0));
  EXPECT_FALSE(bogus->welcome()->resumed);
  EXPECT_EQ(bogus->store().StateHashHex(), expected);
}

TEST(ServerEchoTest, WriterIsNotEchoedOthersReceiveAtOnce) {
  auto config = TestServer::Config();
  config.limits.batch_window_us = 2000;  // the timer path of the fan-out
  TestServer server(config);
  auto a = Join(server.tcp_url(), "echo");
  auto b = Join(server.tcp_url(), "echo");
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 700, 1, 1.0f);
  a->SendCrdt(dcl);
  ASSERT_TRUE(b->PollUntil([&] { return b->store().FindTransform(700) != nullptr; }, 10s));
  ASSERT_TRUE(a->PollUntil([&] { return a->pending_frames() == 0; }, 10s));
  a->Poll();
  EXPECT_EQ(a->live_frames(), 0u) << "the sole writer got its own change back";
  EXPECT_EQ(b->live_frames(), 1u);
}

TEST(ServerMaxRateTest, FramesPerSessionAreCappedAndChangesCoalesce) {
  auto config = TestServer::Config();
  config.limits.max_rate_hz = 10;
  TestServer server(config);
  auto writer = Join(server.tcp_url(), "capped");
  auto reader = Join(server.tcp_url(), "capped");
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t i = 1; i <= 40; ++i) {
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 7000, i, static_cast<float>(i));
    writer->SendCrdt(dcl);
    writer->Poll();
  }
  ASSERT_TRUE(reader->PollUntil(
      [&] {
        const auto* t = reader->store().FindTransform(7000);
        return t && t->position.x == 40.0f;
      },
      20s));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // At most one frame per 100 ms (plus the first); the 40 changes coalesced into them.
  EXPECT_LE(static_cast<double>(reader->live_frames()), seconds * 10.0 + 2.0);
  EXPECT_LT(reader->live_frames(), 40u);
}

TEST(ServerWebSocketTest, WebSocketAndTcpClientsShareAScene) {
  TestServer server;
  auto ws = Join(server.ws_url(), "mixed");
  auto tcp = Join(server.tcp_url(), "mixed");
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 800, 5, 3.0f);
  ws->SendCrdt(dcl);
  ASSERT_TRUE(tcp->PollUntil([&] { return tcp->store().FindTransform(800) != nullptr; }, 10s));
  ASSERT_TRUE(ws->PollUntil([&] { return ws->pending_frames() == 0; }, 10s));
  EXPECT_EQ(server.SceneHash("mixed"), ReplayHash({dcl}));
  // /healthz and /metrics over plain HTTP.
  RawConnection http(server.get().http_port());
  const std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_TRUE(http.Send(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(req.data()), req.size())));
  EXPECT_TRUE(http.WaitClosed());
  EXPECT_GE(server.get().metrics().http_requests.load(), 1u);
  const std::string text = server.get().metrics().RenderPrometheus();
  EXPECT_NE(text.find("scenecrdt_merges_total{outcome="), std::string::npos);
  EXPECT_NE(text.find("scenecrdt_sessions 2"), std::string::npos);
}

TEST(ServerDurabilityTest, RestartRestoresAndResumesFromOtherIncarnationGetSnapshot) {
  TempDir dir;
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 20; ++e) AppendPut(dcl, 900 + e, 7, static_cast<float>(e));
  protocol::CrdtMessage del;
  del.type = protocol::MessageType::kDeleteEntity;
  del.entity = 905;
  protocol::AppendMessage(del, dcl);
  uint64_t seq = 0;
  {
    TestServer first(TestServer::Config(), dir.path());
    auto c = Join(first.tcp_url(), "keep");
    c->SendCrdt(dcl);
    ASSERT_TRUE(c->PollUntil([&] { return c->pending_frames() == 0; }, 20s));
    seq = c->scene_sequence();
    c->Stop();
    EXPECT_EQ(first.Stop(), 0);
  }
  TestServer second(TestServer::Config(), dir.path());
  EXPECT_EQ(second.SceneHash("keep"), ReplayHash({dcl}));
  auto c = Join(second.tcp_url(), "keep", seq);
  EXPECT_FALSE(c->welcome()->resumed);
  EXPECT_EQ(c->store().StateHashHex(), ReplayHash({dcl}));
}

#ifdef SCENECRDT_BINARY
// Writes frames (10 PUTs each, timestamps increasing per entity) until `stop`; records for
// each acked frame what it carried.
struct AckedWriter {
  std::map<uint64_t, std::vector<std::pair<uint32_t, uint32_t>>> frames;  // fs -> (entity, ts)
  std::map<uint32_t, uint32_t> timestamps;

  void Run(client::Client& c, const std::function<bool()>& stop) {
    uint32_t next = 0;
    while (!stop() && !c.closed()) {
      if (c.pending_frames() < 16) {
        std::vector<uint8_t> dcl;
        std::vector<std::pair<uint32_t, uint32_t>> carried;
        for (int i = 0; i < 10; ++i, ++next) {
          const uint32_t e = 2000 + next % 300;
          const uint32_t ts = ++timestamps[e];
          AppendPut(dcl, e, ts, static_cast<float>(next));
          carried.emplace_back(e, ts);
        }
        const uint64_t fs = c.SendCrdt(dcl);
        if (fs) frames.emplace(fs, std::move(carried));
      }
      c.Poll();
      c.WaitForInput(std::chrono::milliseconds(1));
    }
    c.Poll();
  }

  // Every acked frame's writes are in `store` (at their timestamp or a later one).
  void ExpectAckedPresent(const runtime::CrdtStore& store, uint64_t acked) {
    std::size_t checked = 0;
    for (const auto& [fs, carried] : frames) {
      if (fs > acked) break;
      for (const auto& [e, ts] : carried) {
        auto r = store.FindRegister(protocol::kTransformComponentId, e);
        ASSERT_TRUE(r.has_value()) << "acked frame " << fs << " entity " << e << " lost";
        ASSERT_GE(r->timestamp, ts) << "acked frame " << fs << " entity " << e << " lost";
        ++checked;
      }
    }
    EXPECT_GT(checked, 0u);
  }
};

TEST(ServerProcessTest, KillDashNineKeepsEveryAcknowledgedWrite) {
  TempDir dir;
  AckedWriter writer;
  uint64_t acked = 0;
  {
    ServerProcess proc(dir.path());
    ASSERT_TRUE(proc.started()) << proc.log();
    auto c = Join(proc.tcp_url(), "crash");
    writer.Run(*c, [&] { return c->acked_frame_sequence() >= 60; });
    // Frames are still in flight here: kill without warning.
    proc.Kill(SIGKILL);
    EXPECT_EQ(proc.WaitExit(10s), -1);
    c->Poll();
    acked = c->acked_frame_sequence();
    c->Stop();
  }
  ASSERT_GE(acked, 60u);
  ServerProcess restarted(dir.path());
  ASSERT_TRUE(restarted.started()) << restarted.log();
  auto pull = Join(restarted.tcp_url(), "crash");
  writer.ExpectAckedPresent(pull->store(), acked);
}

TEST(ServerProcessTest, SigtermUnderLoadExitsCleanlyAndLosesNothingAcknowledged) {
  TempDir dir;
  AckedWriter writer;
  uint64_t acked = 0;
  {
    ServerProcess proc(dir.path());
    ASSERT_TRUE(proc.started()) << proc.log();
    auto c = Join(proc.tcp_url(), "term");
    bool signalled = false;
    writer.Run(*c, [&] {
      if (!signalled && c->acked_frame_sequence() >= 40) {
        proc.Kill(SIGTERM);
        signalled = true;
      }
      return c->closed();
    });
    EXPECT_EQ(proc.WaitExit(30s), 0) << proc.log();
    c->Poll();
    acked = c->acked_frame_sequence();
    bool saw_shutdown = false;
    for (const auto& r : c->TakeRefusals()) saw_shutdown |= r.code == ErrorCode::kShuttingDown;
    EXPECT_TRUE(saw_shutdown);
    c->Stop();
  }
  ServerProcess restarted(dir.path());
  ASSERT_TRUE(restarted.started()) << restarted.log();
  auto pull = Join(restarted.tcp_url(), "term");
  writer.ExpectAckedPresent(pull->store(), acked);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ServerCliTest, SendPullWatchAndLoadCommandsWork) {
  TempDir dir;
  ServerProcess proc(dir.path());
  ASSERT_TRUE(proc.started()) << proc.log();
  std::vector<uint8_t> dcl;
  for (uint32_t e = 0; e < 30; ++e)
    AppendPut(dcl, 1500 + e, 3, static_cast<float>(e), e ? 1500 : 0);
  const std::string stream = dir.path() + "/in.dcl";
  std::ofstream(stream, std::ios::binary)
      .write(reinterpret_cast<const char*>(dcl.data()), static_cast<std::streamsize>(dcl.size()));
  const std::string bin = SCENECRDT_BINARY;
  const std::string url = proc.tcp_url();
  const std::string out = dir.path() + "/out.json";
  ASSERT_EQ(std::system((bin + " send --server " + url + " --scene cli " + stream).c_str()), 0);
  ASSERT_EQ(std::system((bin + " pull --world --server " + url + " --scene cli > " + out).c_str()),
            0);
  const std::string json = ReadFile(out);
  EXPECT_NE(json.find("\"stateHash\":\"" + ReplayHash({dcl}) + "\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"world\":["), std::string::npos);
  ASSERT_EQ(std::system(
                (bin + " watch --duration 0.3 --server " + url + " --scene cli > " + out).c_str()),
            0);
  EXPECT_NE(ReadFile(out).find("1501"), std::string::npos);
  ASSERT_EQ(std::system((bin + " load --clients 4 --movers 2 --rate 50 --duration 1 --warmup 0 " +
                         "--json --server " + url + " --scene cliload > " + out + " 2>/dev/null")
                            .c_str()),
            0);
  EXPECT_NE(ReadFile(out).find("\"latency_ms\""), std::string::npos);
  // Refusals reach the command's exit status: a wrong scene name is bad usage.
  EXPECT_NE(
      std::system((bin + " pull --server " + url + " --scene 'bad/name' 2>/dev/null").c_str()), 0);
}
#endif

}  // namespace
}  // namespace scenecrdt::testing
