// SPDX-License-Identifier: Apache-2.0
// Client diagnostics (docs/CLIENT.md, "Diagnostics") against in-process servers on loopback,
// one test per failure kind: the wrong port for the scheme (both ways: the server's
// refusal or the client's own hint names the right port), a refusal with the
// server's reason, a dead server retried forever but reported, the give-up policy (attempts
// and deadline), and a clean Stop() counted by the server as `client_closed`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "scenecrdt/client/client.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;

ClientOptions Retrying(const std::string& url) {
  ClientOptions o;
  o.url = url;
  o.scene = "diag";
  o.reconnect.enabled = true;
  o.reconnect.retry_first_connect = true;
  o.reconnect.backoff.initial_delay_ms = 5;
  o.reconnect.backoff.max_delay_ms = 20;
  o.connection.connect_timeout_ms = 1000;
  return o;
}

// The value of one series of the server's /metrics text, or -1 when absent.
double Metric(server::Server& s, const std::string& series) {
  std::istringstream in(s.metrics().RenderPrometheus());
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// A port nothing listens on: a server started and stopped.
uint16_t DeadPort() {
  TestServer s;
  if (!s.Start()) return 0;
  const uint16_t port = s.tcp_port();
  s.Stop();
  return port;
}

TEST(ClientDiagnosticsTest, TcpToTheHttpPortNamesTheRightPort) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  const std::string http_port = server.ws_url().substr(std::string("ws://").size());
  Client c(Retrying("tcp://" + http_port));
  EXPECT_EQ(c.state(), ClientState::kConnecting);
  ASSERT_TRUE(c.Start().has_value());
  // The server refuses (bad_request, permanent) with the right ports in the text.
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 10s));
  EXPECT_EQ(c.state(), ClientState::kRefused);
  EXPECT_EQ(c.last_error().code, ErrorCode::kBadRequest);
  EXPECT_TRUE(c.last_error().from_server);
  EXPECT_NE(c.last_error().text.find("tcp://HOST:" + std::to_string(server.tcp_port())),
            std::string::npos)
      << c.last_error().text;
}

TEST(ClientDiagnosticsTest, WsToTheTcpPortNamesTheRightPort) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  ClientOptions o = Retrying("ws://127.0.0.1:" + std::to_string(server.tcp_port()));
  o.reconnect.max_failed_attempts = 1;
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 10s));
  EXPECT_NE(c.last_error().text.find("framed-TCP port"), std::string::npos) << c.last_error().text;
}

TEST(ClientDiagnosticsTest, ARefusalCarriesTheServersReasonAndText) {
  TestServer server;
  const std::string auth =
      (std::filesystem::temp_directory_path() / ("diag-auth-" + std::to_string(getpid()))).string();
  std::ofstream(auth) << R"({"tokens":[{"token":"good","scenes":["diag"],"role":"write"}]})";
  server.config().access.auth_file = auth;
  ASSERT_TRUE(server.Start());
  ClientOptions o = Retrying(server.tcp_url());
  o.token = "bad";
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 10s));
  std::filesystem::remove(auth);
  EXPECT_EQ(c.state(), ClientState::kRefused);
  EXPECT_STREQ(ClientStateName(c.state()), "refused");
  EXPECT_EQ(c.last_error().code, ErrorCode::kUnauthorized);
  EXPECT_TRUE(c.last_error().from_server);
  EXPECT_FALSE(c.last_error().text.empty());
}

TEST(ClientDiagnosticsTest, ADeadServerIsRetriedForeverButReported) {
  const uint16_t port = DeadPort();
  ASSERT_NE(port, 0);
  Client c(Retrying("tcp://127.0.0.1:" + std::to_string(port)));
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.last_error().failed_attempts >= 3; }, 10s));
  EXPECT_FALSE(c.closed());
  EXPECT_EQ(c.state(), ClientState::kConnecting);
  EXPECT_EQ(c.last_error().code, ErrorCode::kIo);
  EXPECT_FALSE(c.last_error().text.empty());
}

TEST(ClientDiagnosticsTest, GivesUpAfterMaxAttempts) {
  const uint16_t port = DeadPort();
  ASSERT_NE(port, 0);
  ClientOptions o = Retrying("tcp://127.0.0.1:" + std::to_string(port));
  o.reconnect.max_failed_attempts = 3;
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 10s));
  EXPECT_EQ(c.state(), ClientState::kClosed);
  EXPECT_EQ(c.last_error().failed_attempts, 3u);
  EXPECT_NE(c.last_error().text.find("gave up: too many failed attempts"), std::string::npos)
      << c.last_error().text;
}

TEST(ClientDiagnosticsTest, GivesUpAfterTheDeadline) {
  const uint16_t port = DeadPort();
  ASSERT_NE(port, 0);
  Client c(Retrying("tcp://127.0.0.1:" + std::to_string(port)));
  ASSERT_TRUE(c.Start().has_value());
  c.SetGiveUp(0, 200);
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 10s));
  EXPECT_EQ(c.state(), ClientState::kClosed);
  EXPECT_NE(c.last_error().text.find("gave up: no join within"), std::string::npos)
      << c.last_error().text;
}

TEST(ClientDiagnosticsTest, AStopSaysGoodbyeAndIsCountedAsClientClosed) {
  TestServer server;
  ASSERT_TRUE(server.Start());
  for (const std::string& url : {server.tcp_url(), server.ws_url()}) {
    Client c(Retrying(url));
    ASSERT_TRUE(c.Join(10s).has_value()) << url;
    EXPECT_EQ(c.state(), ClientState::kJoined);
    c.Stop();
    EXPECT_EQ(c.state(), ClientState::kClosed);
  }
  const std::string closed = "scenecrdt_session_closes_total{reason=\"client_closed\"}";
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Metric(server.get(), closed) < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(Metric(server.get(), closed), 2);
  EXPECT_EQ(Metric(server.get(), "scenecrdt_session_closes_total{reason=\"peer_gone\"}"), 0);
}

}  // namespace
}  // namespace scenecrdt::client::test
