// SPDX-License-Identifier: Apache-2.0
// Client fail-over across `scenecrdt serve --redis` nodes (docs/CLUSTER.md "Fail-over"): three
// real node processes on one real redis-server; C++ clients given the URL list of every node
// write on the first one, which is killed with -9 while they write. The clients must move to
// another node by themselves (one that did not host the scene before, so it loads the scene
// from Redis as they arrive), get a resume delta there (not a snapshot), resend the frames the
// dead node never acknowledged, and every surviving node must end with the state hash of
// `scenecrdt replay` of everything sent, so no acknowledged write was lost.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <fstream>
#include <string_view>

#include "tests/cluster/redis_test_server.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kWriters = 3;
constexpr uint32_t kShared = 1999;  // written by every writer: ties decided by the data

std::unique_ptr<client::Client> Watcher(const std::string& url, const std::string& scene) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Join(60s).has_value()) << "join " << url;
  return c;
}

// A writer that knows every node, the first one preferred; reconnects on its own.
std::unique_ptr<client::Client> Writer(const std::vector<std::string>& urls,
                                       const std::string& scene, uint64_t seed) {
  client::ClientOptions o;
  o.url = urls[0];
  o.urls.assign(urls.begin() + 1, urls.end());
  o.scene = scene;
  o.reconnect.enabled = true;
  o.reconnect.backoff.seed = seed;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Join(60s).has_value()) << "join " << urls[0];
  return c;
}

// The stateHash `scenecrdt replay FILE` prints for `streams` written to one file in order.
std::string ReplayBinaryHash(const std::string& dir,
                             const std::vector<std::vector<uint8_t>>& streams) {
  const std::string path = dir + "/sent.dcl";
  {
    std::ofstream out(path, std::ios::binary);
    for (const auto& s : streams) {
      out.write(reinterpret_cast<const char*>(s.data()), static_cast<std::streamsize>(s.size()));
    }
  }
  const CommandResult r = RunCommand(std::string(SCENECRDT_BINARY) + " replay " + path);
  // Not std::regex: g++ 12 warns inside <regex> under the asan preset (-Werror).
  constexpr std::string_view kKey = "\"stateHash\":\"";
  const std::size_t at = r.output.find(kKey);
  const std::size_t end = at == std::string::npos ? at : r.output.find('"', at + kKey.size());
  if (r.status != 0 || end == std::string::npos) return "replay failed: " + r.output;
  return r.output.substr(at + kKey.size(), end - at - kKey.size());
}

TEST(ServerFailoverTest, ClientsOfAKilledNodeFailOverResumeAndResendWhatWasNotAcknowledged) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::vector<std::string> args = {"--redis", redis.url(), "--compact-interval-ms", "0"};
  ServerProcess a(dir.path(), args);
  ServerProcess b(dir.path(), args);
  ServerProcess c(dir.path(), args);
  ASSERT_TRUE(a.started() && b.started() && c.started()) << a.log() << b.log() << c.log();
  const std::string scene = "failover";
  // A reader on c: c hosts the scene before the writes start. b hosts nobody until the
  // writers arrive: it loads the scene from Redis then, and must still answer with a resume
  // delta.
  auto on_c = Watcher(c.tcp_url(), scene);
  std::vector<std::unique_ptr<client::Client>> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.push_back(Writer({a.tcp_url(), b.tcp_url(), c.tcp_url()}, scene, 100 + w));
    ASSERT_EQ(writers.back()->current_server(), 0u);
  }

  std::vector<std::vector<uint8_t>> sent;
  const auto write_round = [&](uint32_t round) {
    for (int w = 0; w < kWriters; ++w) {
      std::vector<uint8_t> dcl;
      AppendPut(dcl, 2000 + static_cast<uint32_t>(w) * 100 + round % 40, round,
                static_cast<float>(round) + 0.5f * static_cast<float>(w));
      AppendPut(dcl, kShared, round, static_cast<float>(w * 1000 + round));
      ASSERT_NE(writers[static_cast<std::size_t>(w)]->SendCrdt(dcl), 0u);
      sent.push_back(std::move(dcl));
    }
  };
  // 1. Writes on node a, some acknowledged.
  for (uint32_t round = 1; round <= 60; ++round) {
    write_round(round);
    for (auto& w : writers) w->Poll();
  }
  for (auto& w : writers) {
    ASSERT_TRUE(w->PollUntil([&] { return w->acked_frame_sequence() >= 20; }, 60s));
  }
  // 2. Node a stops (SIGSTOP) so that the next frames are certainly not acknowledged, then
  //    dies with -9 while they are in flight.
  a.Kill(SIGSTOP);
  int status = 0;
  ASSERT_EQ(waitpid(a.pid(), &status, WUNTRACED), a.pid());
  ASSERT_TRUE(WIFSTOPPED(status));
  for (uint32_t round = 61; round <= 80; ++round) write_round(round);
  std::vector<std::size_t> unacked_at_kill;
  for (auto& w : writers) {
    w->Poll();
    unacked_at_kill.push_back(w->pending_frames());
    EXPECT_GE(w->pending_frames(), 20u);
  }
  a.Kill(SIGKILL);
  // 3. Writes go on while the clients move.
  for (uint32_t round = 81; round <= 140; ++round) {
    write_round(round);
    for (auto& w : writers) w->Poll();
  }
  for (std::size_t i = 0; i < writers.size(); ++i) {
    client::Client& w = *writers[i];
    EXPECT_TRUE(w.PollUntil([&] { return w.pending_frames() == 0; }, 90s))
        << "writer " << i << ": " << w.pending_frames() << " frames never acknowledged";
    const client::ClientStats s = w.stats();
    EXPECT_NE(w.current_server(), 0u) << "writer " << i << " is not on a surviving node";
    EXPECT_GE(s.failovers, 1u);
    EXPECT_EQ(s.snapshots, 1u) << "writer " << i << ": the fail-over sent a snapshot";
    EXPECT_EQ(s.resyncs, 0u);
    EXPECT_GE(s.resumes, 1u) << "writer " << i << " did not resume";
    ASSERT_TRUE(w.welcome().has_value());
    EXPECT_TRUE(w.welcome()->resumed);
    EXPECT_GE(s.resent_frames, unacked_at_kill[i]) << "writer " << i;
    EXPECT_EQ(w.acked_frame_sequence(), w.last_frame_sequence());
    EXPECT_TRUE(w.TakeRefusals().empty());
  }
  // 4. Every write is acknowledged now, each by a or a survivor: the survivors hold them all.
  const std::string expected = ReplayHash(sent);
  EXPECT_EQ(ReplayBinaryHash(dir.path(), sent), expected);
  EXPECT_TRUE(on_c->PollUntil([&] { return on_c->store().StateHashHex() == expected; }, 60s))
      << "the replica of node c did not converge";
  // Fresh joins read each survivor's own state (entries of the other node may still be on
  // their way through its read loop: live updates follow the snapshot).
  for (const ServerProcess* node : {&b, &c}) {
    auto fresh = Watcher(node->tcp_url(), scene);
    EXPECT_TRUE(fresh->PollUntil([&] { return fresh->store().StateHashHex() == expected; }, 60s))
        << "a fresh join of " << node->tcp_url() << " did not reach the replay hash";
  }
  for (auto& w : writers) {
    EXPECT_TRUE(w->PollUntil([&] { return w->store().StateHashHex() == expected; }, 60s));
  }
}

}  // namespace
}  // namespace scenecrdt::testing
