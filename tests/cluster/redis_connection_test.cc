// SPDX-License-Identifier: Apache-2.0
// Tests RedisConnection against a real redis-server: binary-safe commands, typed error replies,
// pipelines that keep error replies apart, Redis going away (kUnavailable, backoff without
// network attempts) and coming back (reconnect, data intact), AUTH and SELECT over TCP.
#include "scenecrdt/cluster/redis_connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/cluster/redis_test_server.h"

namespace scenecrdt::cluster {
namespace {

class RedisConnectionTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.started()) << redis_.log(); }

  testing::RedisTestServer redis_;
  testing::FakeClock clock_;
  testing::LogCapture log_;
};

TEST_F(RedisConnectionTest, CommandsAreBinarySafe) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  const std::string value("a\0b\r\n\xff", 6);
  auto set = c.Command({"SET", "k", value});
  ASSERT_TRUE(set.has_value()) << set.error().detail;
  EXPECT_EQ(set->type, RedisReply::Type::kStatus);
  auto get = c.Command({"GET", "k"});
  ASSERT_TRUE(get.has_value());
  ASSERT_TRUE(get->is_string());
  EXPECT_EQ(get->str, value);
  auto missing = c.Command({"GET", "nothing"});
  ASSERT_TRUE(missing.has_value());
  EXPECT_TRUE(missing->is_nil());
  const RedisCounters counters = c.counters();
  EXPECT_EQ(counters.commands, 3u);
  EXPECT_EQ(counters.connects, 1u);
  EXPECT_EQ(counters.reconnects, 0u);
  EXPECT_EQ(counters.errors, 0u);
  EXPECT_TRUE(log_.Contains("connected to unix://"));
}

TEST_F(RedisConnectionTest, ErrorRepliesAreTyped) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  ASSERT_TRUE(c.Command({"SET", "k", "v"}).has_value());
  auto wrong = c.Command({"XADD", "k", "*", "f", "v"});
  ASSERT_FALSE(wrong.has_value());
  EXPECT_EQ(wrong.error().code, ErrorCode::kCorruptData);
  EXPECT_NE(c.last_error_text().find("WRONGTYPE"), std::string::npos);
  auto unknown = c.Command({"NOSUCHCOMMAND"});
  ASSERT_FALSE(unknown.has_value());
  EXPECT_EQ(unknown.error().code, ErrorCode::kIo);
  EXPECT_EQ(c.counters().errors, 2u);
  EXPECT_TRUE(log_.Contains("command XADD failed: WRONGTYPE"));
  // An error reply leaves the connection usable.
  EXPECT_TRUE(c.Command({"PING"}).has_value());
  EXPECT_EQ(c.counters().connects, 1u);
}

TEST_F(RedisConnectionTest, PipelineKeepsErrorRepliesApart) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  const std::vector<RedisArgs> commands = {
      {"SET", "a", "1"}, {"XLEN", "a"}, {"INCR", "a"}, {"GET", "a"}};
  auto replies = c.Pipeline(commands);
  ASSERT_TRUE(replies.has_value());
  ASSERT_EQ(replies->size(), 4u);
  EXPECT_EQ((*replies)[0].type, RedisReply::Type::kStatus);
  EXPECT_TRUE((*replies)[1].is_error());
  EXPECT_EQ((*replies)[2].integer, 2);
  EXPECT_EQ((*replies)[3].str, "2");
  EXPECT_EQ(c.counters().commands, 4u);
  EXPECT_EQ(c.counters().errors, 1u);
}

TEST_F(RedisConnectionTest, UnreachableRedisGivesUnavailableThenRecovers) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  ASSERT_TRUE(c.Command({"SET", "kept", "1"}).has_value());
  redis_.Kill(SIGKILL);

  auto lost = c.Command({"GET", "kept"});
  ASSERT_FALSE(lost.has_value());
  EXPECT_EQ(lost.error().code, ErrorCode::kUnavailable);
  EXPECT_FALSE(c.connected());
  EXPECT_TRUE(log_.Contains("lost"));

  auto refused = c.Command({"GET", "kept"});  // the immediate reconnect fails
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(log_.Contains("failed"));
  const uint64_t errors = c.counters().errors;
  EXPECT_EQ(errors, 2u);
  EXPECT_GT(c.retry_in_ms(), 0);

  // Within the backoff: refused at once, no new attempt (no new error counted).
  auto waiting = c.Command({"GET", "kept"});
  ASSERT_FALSE(waiting.has_value());
  EXPECT_EQ(waiting.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(c.counters().errors, errors);

  ASSERT_TRUE(redis_.Restart()) << redis_.log();
  EXPECT_FALSE(c.Command({"GET", "kept"}).has_value());  // still waiting out the backoff
  clock_.Advance(c.options().backoff_max_ms);
  auto back = c.Command({"GET", "kept"});
  ASSERT_TRUE(back.has_value()) << back.error().detail;
  EXPECT_EQ(back->str, "1");  // replayed from the AOF
  EXPECT_EQ(c.counters().connects, 2u);
  EXPECT_EQ(c.counters().reconnects, 1u);
  EXPECT_EQ(c.retry_in_ms(), 0);
}

TEST_F(RedisConnectionTest, AConnectionRedisClosedIsReestablishedOnUse) {
  RedisConnection idle(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  RedisConnection piped(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  ASSERT_TRUE(idle.Command({"SET", "kept", "1"}).has_value());
  ASSERT_TRUE(piped.Command({"PING"}).has_value());
  // Redis restarts while both sit idle: their sockets are closed, they do not know yet.
  redis_.Kill(SIGKILL);
  ASSERT_TRUE(redis_.Restart()) << redis_.log();
  // The first use finds out, reconnects and answers: nobody is refused.
  auto back = idle.Command({"GET", "kept"});
  ASSERT_TRUE(back.has_value()) << back.error().detail << " " << idle.last_error_text();
  EXPECT_EQ(back->str, "1");
  const std::vector<RedisArgs> commands = {{"INCR", "n"}, {"GET", "kept"}};
  auto replies = piped.Pipeline(commands);
  ASSERT_TRUE(replies.has_value()) << replies.error().detail;
  EXPECT_EQ((*replies)[0].integer, 1);
  EXPECT_EQ((*replies)[1].str, "1");
  for (const RedisConnection* c : {&idle, &piped}) {
    EXPECT_EQ(c->counters().stale + c->counters().retries, 1u);
    EXPECT_EQ(c->counters().reconnects, 1u);
  }
  EXPECT_TRUE(log_.Contains("lost while idle"));
}

TEST_F(RedisConnectionTest, APipelineStopsReadingAtItsReplyBudget) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  const std::string big(300u << 10, 'v');
  ASSERT_TRUE(c.Command({"SET", "big", big}).has_value());
  const std::vector<RedisArgs> two = {{"GET", "big"}, {"GET", "big"}};
  auto fits = c.Pipeline(two, 1u << 20);
  ASSERT_TRUE(fits.has_value());
  EXPECT_GT(c.last_reply_bytes(), 2 * big.size());
  auto over = c.Pipeline(two, 400u << 10);
  ASSERT_FALSE(over.has_value());
  EXPECT_EQ(over.error().code, ErrorCode::kPayloadTooLarge);
  EXPECT_FALSE(c.connected());  // the rest was never read
  EXPECT_LE(c.last_reply_bytes(), (400u << 10) + (64u << 10));
  EXPECT_TRUE(log_.Contains("over the budget"));
  // Not an outage: the next call reconnects at once.
  auto next = c.Command({"STRLEN", "big"});
  ASSERT_TRUE(next.has_value()) << next.error().detail;
  EXPECT_EQ(next->integer, static_cast<int64_t>(big.size()));
}

TEST_F(RedisConnectionTest, BackoffDoublesUpToItsCap) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_, &log_));
  redis_.Kill(SIGKILL);
  int64_t previous = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto r = c.Connect();
    ASSERT_FALSE(r.has_value());
    const int64_t wait = c.retry_in_ms();
    EXPECT_GT(wait, 0);
    EXPECT_LE(wait, c.options().backoff_max_ms);
    if (attempt >= 5) {
      EXPECT_GE(wait, c.options().backoff_max_ms / 2);  // capped, jittered
    }
    if (attempt == 0) {
      EXPECT_LE(wait, c.options().backoff_initial_ms);
    }
    previous = wait;
    clock_.Advance(wait);
  }
  EXPECT_GT(previous, 0);
  EXPECT_EQ(c.counters().errors, 8u);
}

TEST(RedisConnectionNoServerTest, MissingSocketIsUnavailable) {
  testing::LogCapture log;
  RedisConnection c(testing::TestRedisOptions("unix:///nonexistent/scenecrdt.sock", nullptr, &log));
  auto r = c.Command({"PING"});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, ErrorCode::kUnavailable);
  EXPECT_TRUE(log.Contains("connect to unix:///nonexistent/scenecrdt.sock failed"));
  EXPECT_EQ(c.counters().connects, 0u);
}

uint16_t FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

TEST(RedisConnectionTcpTest, PasswordAndDatabase) {
  const uint16_t port = FreeLoopbackPort();
  ASSERT_NE(port, 0);
  testing::RedisTestServer redis(
      {"--port", std::to_string(port), "--bind", "127.0.0.1", "--requirepass", "s3cret"});
  ASSERT_TRUE(redis.started()) << redis.log();
  const std::string base = "redis://:s3cret@127.0.0.1:" + std::to_string(port);

  RedisConnection db2(testing::TestRedisOptions(base + "/2"));
  ASSERT_TRUE(db2.Command({"SET", "where", "db2"}).has_value());
  RedisConnection db0(testing::TestRedisOptions(base));
  auto other = db0.Command({"GET", "where"});
  ASSERT_TRUE(other.has_value());
  EXPECT_TRUE(other->is_nil());  // SELECT 2 put it elsewhere

  testing::FakeClock clock;
  RedisConnection wrong(
      testing::TestRedisOptions("redis://:nope@127.0.0.1:" + std::to_string(port), &clock));
  auto refused = wrong.Command({"PING"});
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnauthorized);
  EXPECT_FALSE(wrong.connected());

  RedisConnection anonymous(testing::TestRedisOptions("redis://127.0.0.1:" + std::to_string(port)));
  auto noauth = anonymous.Command({"GET", "where"});
  ASSERT_FALSE(noauth.has_value());
  EXPECT_EQ(noauth.error().code, ErrorCode::kUnauthorized);
}

}  // namespace
}  // namespace scenecrdt::cluster
