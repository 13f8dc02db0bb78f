// SPDX-License-Identifier: Apache-2.0
// Owner: server/transport/listener.*, server/transport/connection_limiter.*,
// server/transport/accept_backoff.*. With a low `ulimit -n` and many idle connections: the default
// cap (derived from RLIMIT_NOFILE) refuses the excess with an Error frame, /healthz and /metrics
// still answer from the HTTP reserve, refusals are counted; with a cap above what the descriptors
// allow, accept errors (EMFILE) back off instead of spinning a core, and accepting resumes once
// descriptors free up; the per-address cap refuses the connection over it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

// User plus system CPU seconds of process `pid` so far (/proc/PID/stat fields 14 and 15).
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close_paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

#ifdef SCENECRDT_BINARY

TEST(ConnectionLimitsTest, DefaultCapFromUlimitKeepsHealthzAnswering) {
  TempDir dir;
  // 128 descriptors: 64 for the server itself, 16 for the HTTP reserve, 48 connections.
  ServerProcess server(dir.path(), {"--http", "127.0.0.1:0"}, 128);
  ASSERT_TRUE(server.started()) << server.log();
  ASSERT_TRUE(WaitUntil([&] { return server.http_port() != 0; })) << server.log();
  EXPECT_TRUE(WaitUntil([&] {
    return server.log().find("connections: at most 48") != std::string::npos;
  })) << server.log();
  // Joined (not idle before Hello, which the handshake timeout would cut after 10 s).
  std::vector<std::unique_ptr<RawConnection>> held;
  int joined = 0;
  for (int i = 0; i < 100; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(held.back()->connected());
    if (held.back()->Join("full")) ++joined;
  }
  EXPECT_EQ(joined, 48);
  double refused = -1;
  ASSERT_TRUE(WaitUntil([&] {
    refused = Metric(HttpGet(server.http_port(), "/metrics"),
                     "scenecrdt_connections_refused_total{reason=\"max_connections\"}");
    return refused >= 52;
  })) << refused
      << "\n"
      << server.log();
  // The one over the cap is told why.
  RawConnection over(server.port());
  auto error = over.ReadError(20s);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
  EXPECT_NE(error->text.find("--max-connections 48"), std::string::npos) << error->text;
  const std::string health = HttpGet(server.http_port(), "/healthz");
  EXPECT_EQ(health.rfind("HTTP/1.1 200", 0), 0u) << health;
  EXPECT_NE(server.log().find("reason=max_connections"), std::string::npos) << server.log();
  // Places free up when connections go.
  held.clear();
  EXPECT_TRUE(WaitUntil([&] {
    RawConnection next(server.port());
    return next.Join("after").has_value();
  }));
}

TEST(ConnectionLimitsTest, AcceptErrorsBackOffInsteadOfSpinning) {
  TempDir dir;
  // A cap above what 128 descriptors allow: accepts fail with EMFILE.
  ServerProcess server(dir.path(), {"--http", "127.0.0.1:0", "--max-connections", "1000"}, 128);
  ASSERT_TRUE(server.started()) << server.log();
  ASSERT_TRUE(WaitUntil([&] { return server.http_port() != 0; })) << server.log();
  EXPECT_NE(server.log().find("warning: --max-connections 1000"), std::string::npos)
      << server.log();
  std::vector<std::unique_ptr<RawConnection>> idle;
  for (int i = 0; i < 150; ++i) {
    idle.push_back(std::make_unique<RawConnection>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
  }
  ASSERT_TRUE(WaitUntil([&] { return server.log().find("accept_error") != std::string::npos; }))
      << server.log();
  // Saturated for 2 s (a measurement window, not synchronisation): a spinning accept loop
  // burns a core and fails thousands of accepts; backing off (50 ms doubling to 1 s) fails a
  // handful and costs next to no CPU.
  const double cpu_before = CpuSeconds(server.pid());
  std::this_thread::sleep_for(2s);
  const double cpu = CpuSeconds(server.pid()) - cpu_before;
  EXPECT_LT(cpu, 1.0) << "the server used " << cpu << " s of CPU in 2 s while saturated";
  idle.resize(40);  // frees descriptors: accepting resumes within the backoff
  RawConnection honest(server.port());
  EXPECT_TRUE(honest.Join("honest").has_value()) << server.log();
  const double errors =
      Metric(HttpGet(server.http_port(), "/metrics"), "scenecrdt_accept_errors_total");
  EXPECT_GE(errors, 1);
  EXPECT_LT(errors, 100) << "accept errors were retried at once";
}

#endif

TEST(ConnectionLimitsTest, PerAddressCapRefusesTheOneOver) {
  server::ServerConfig config = TestServer::Config();
  config.limits.max_connections_per_ip = 3;
  TestServer server(config);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<RawConnection>(server.get().tcp_port()));
    ASSERT_TRUE(held.back()->Join("cap").has_value());
  }
  RawConnection over(server.get().tcp_port());
  auto error = over.ReadError(20s);
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnavailable);
  EXPECT_NE(error->text.find("--max-connections-per-ip 3"), std::string::npos) << error->text;
  EXPECT_EQ(server.get().metrics().connections_refused_per_ip.load(), 1u);
  held.pop_back();
  EXPECT_TRUE(WaitUntil([&] {
    RawConnection next(server.get().tcp_port());
    return next.Join("cap").has_value();
  }));
}

}  // namespace
}  // namespace scenecrdt::testing
