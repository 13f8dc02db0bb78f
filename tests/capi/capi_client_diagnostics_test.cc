// SPDX-License-Identifier: Apache-2.0
// The C client's diagnostics (docs/C-ABI.md, "Client diagnostics") against an in-process
// server on loopback, one test per failure kind: tcp:// to the HTTP port (the server's refusal
// naming the right port reaches the C client), a refusal with the server's reason, the give-up
// policy, and sc_client_destroy saying goodbye (the server counts `client_closed`, not
// `peer_gone`).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "scenecrdt/scenecrdt.h"
#include "tests/client/test_server.h"

namespace scenecrdt::capi_test {
namespace {

using namespace std::chrono_literals;

// Polls until done() or 10 s; the last poll status in *status.
template <class Done>
bool PollUntil(sc_client* c, Done done, int* status) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    *status = sc_client_poll(c, 10);
    if (done()) return true;
  }
  return false;
}

std::string LastError(const sc_client* c, uint32_t* code) {
  size_t len = 0;
  EXPECT_EQ(sc_client_last_error(c, code, nullptr, 0, &len), SC_E_BUFFER_TOO_SMALL);
  std::string text(len, '\0');
  EXPECT_EQ(sc_client_last_error(c, code, text.data(), text.size(), &len), SC_OK);
  text.resize(len - 1);
  return text;
}

double Metric(server::Server& s, const std::string& series) {
  std::istringstream in(s.metrics().RenderPrometheus());
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

TEST(CapiClientDiagnosticsTest, TcpToTheHttpPortNamesTheRightPort) {
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  const std::string url = "tcp://" + server.ws_url().substr(std::strlen("ws://"));
  sc_client* c = sc_client_connect(url.c_str(), "diag", nullptr);
  ASSERT_NE(c, nullptr) << sc_last_error();
  uint32_t code = 0;
  size_t len = 0;
  ASSERT_EQ(sc_client_last_error(c, &code, nullptr, 0, &len), SC_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(len, 1u);  // nothing failed yet: the empty text
  EXPECT_EQ(code, 0u);
  int status = 0;
  ASSERT_TRUE(PollUntil(
      c, [&] { return status == SC_E_CLOSED; }, &status));
  const std::string closed_text = sc_last_error();  // before the size query below sets it
  EXPECT_EQ(sc_client_state(c), SC_CLIENT_REFUSED);
  // The server's refusal names the right port; sc_last_error carries it too.
  const std::string right = "tcp://HOST:" + std::to_string(server.tcp_port());
  EXPECT_NE(LastError(c, &code).find(right), std::string::npos) << LastError(c, &code);
  EXPECT_EQ(code, 66u);  // ErrorCode::kBadRequest
  EXPECT_NE(closed_text.find(right), std::string::npos) << closed_text;
  sc_client_destroy(c);
}

TEST(CapiClientDiagnosticsTest, ARefusalReachesTheCClientWithItsReason) {
  client::test::TestServer server;
  const std::string auth =
      (std::filesystem::temp_directory_path() / ("capi-diag-auth-" + std::to_string(getpid())))
          .string();
  std::ofstream(auth) << R"({"tokens":[{"token":"good","scenes":["diag"],"role":"write"}]})";
  server.config().access.auth_file = auth;
  ASSERT_TRUE(server.Start());
  sc_client* c = sc_client_connect(server.tcp_url().c_str(), "diag", "bad");
  ASSERT_NE(c, nullptr) << sc_last_error();
  int status = 0;
  ASSERT_TRUE(PollUntil(
      c, [&] { return status == SC_E_CLOSED; }, &status));
  std::filesystem::remove(auth);
  EXPECT_NE(std::string(sc_last_error()).find("the server refused: unauthorized"),
            std::string::npos)
      << sc_last_error();
  EXPECT_EQ(sc_client_state(c), SC_CLIENT_REFUSED);
  EXPECT_STREQ(sc_client_state_name(sc_client_state(c)), "refused");
  uint32_t code = 0;
  EXPECT_EQ(LastError(c, &code).rfind("unauthorized: ", 0), 0u);
  EXPECT_EQ(code, 60u);  // ErrorCode::kUnauthorized (docs/PROTOCOL.md)
  sc_client_destroy(c);
}

TEST(CapiClientDiagnosticsTest, GivesUpAfterMaxAttempts) {
  sc_client* c = sc_client_connect("tcp://127.0.0.1:1", "diag", nullptr);  // nothing there
  ASSERT_NE(c, nullptr) << sc_last_error();
  ASSERT_EQ(sc_client_set_give_up(c, 2, 0), SC_OK);
  int status = 0;
  ASSERT_TRUE(PollUntil(
      c, [&] { return status == SC_E_CLOSED; }, &status));
  EXPECT_EQ(sc_client_state(c), SC_CLIENT_CLOSED);
  EXPECT_NE(std::string(sc_last_error()).find("gave up: too many failed attempts"),
            std::string::npos)
      << sc_last_error();
  sc_client_destroy(c);
}

TEST(CapiClientDiagnosticsTest, DestroySaysGoodbyeCountedAsClientClosed) {
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  sc_client* c = sc_client_connect(server.tcp_url().c_str(), "diag", nullptr);
  ASSERT_NE(c, nullptr) << sc_last_error();
  int status = 0;
  ASSERT_TRUE(PollUntil(
      c, [&] { return sc_client_state(c) == SC_CLIENT_JOINED; }, &status));
  sc_client_destroy(c);
  const std::string closed = "scenecrdt_session_closes_total{reason=\"client_closed\"}";
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Metric(server.get(), closed) < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(Metric(server.get(), closed), 1);
  EXPECT_EQ(Metric(server.get(), "scenecrdt_session_closes_total{reason=\"peer_gone\"}"), 0);
}

}  // namespace
}  // namespace scenecrdt::capi_test
