// SPDX-License-Identifier: Apache-2.0
// Owner: server/ (and client/connection.cc). What a user hits first, against the real
// `scenecrdt serve` binary: tcp:// dialled at the HTTP port and ws:// dialled at the framed-TCP
// port each get a message naming the other scheme and port (on the wire and through the
// `scenecrdt` commands); a client reaching any other HTTP server says so; `serve --help` and
// the "listening" line name the raw-DCL path /dcl/<scene>.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

#ifdef SCENECRDT_BINARY

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class PortHintTest : public ::testing::Test {
 protected:
  PortHintTest() : server_(dir_.path(), {"--http", "127.0.0.1:0"}) {}
  void SetUp() override {
    ASSERT_TRUE(server_.started()) << server_.log();
    tcp_ = server_.port();
    ASSERT_TRUE(WaitUntil([&] { return server_.http_port() != 0; })) << server_.log();
    http_ = server_.http_port();
  }
  std::string Pull(const std::string& url) {
    const std::string bin = SCENECRDT_BINARY;
    last_ = RunCommand(bin + " pull --timeout 10 --server " + url + " --scene hints");
    return last_.output;
  }

  TempDir dir_;
  ServerProcess server_;
  uint16_t tcp_ = 0;
  uint16_t http_ = 0;
  CommandResult last_;
};

TEST_F(PortHintTest, TcpClientOnTheHttpPortIsToldTheTcpPort) {
  // On the wire: the Hello where a request line should be gets a fatal Error frame.
  RawConnection raw(http_);
  ASSERT_TRUE(raw.connected());
  ASSERT_TRUE(raw.SendFrame(session::Hello{"hints", "", std::nullopt, ""}));
  auto error = raw.ReadError();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(error->fatal);
  EXPECT_TRUE(Contains(error->text, "tcp://HOST:" + std::to_string(tcp_))) << error->text;
  EXPECT_TRUE(Contains(error->text, "ws://HOST:" + std::to_string(http_))) << error->text;
  EXPECT_TRUE(raw.WaitClosed());
  // Through the command line.
  const std::string out = Pull("tcp://127.0.0.1:" + std::to_string(http_));
  EXPECT_NE(last_.status, 0);
  EXPECT_TRUE(Contains(out, "tcp://HOST:" + std::to_string(tcp_))) << out;
  EXPECT_TRUE(Contains(out, "HTTP port")) << out;
  // The server stays up for everyone else.
  EXPECT_EQ(Pull(server_.tcp_url()).find("stateHash") != std::string::npos, true) << last_.output;
  EXPECT_EQ(last_.status, 0);
}

TEST_F(PortHintTest, WebSocketClientOnTheFramedTcpPortIsToldTheHttpPort) {
  // On the wire: an HTTP request where a size prefix should be gets an HTTP 400.
  RawConnection raw(tcp_);
  ASSERT_TRUE(raw.connected());
  const std::string request =
      "GET /scene/hints HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Sec-WebSocket-Version: 13\r\n\r\n";
  ASSERT_TRUE(raw.Send(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(request.data()), request.size())));
  const std::string response = raw.ReadUntilClosed();
  EXPECT_EQ(response.rfind("HTTP/1.1 400 ", 0), 0u) << response;
  EXPECT_TRUE(Contains(response, session::kFramedTcpPortHeader)) << response;
  EXPECT_TRUE(Contains(response, "ws://HOST:" + std::to_string(http_))) << response;
  // Through the command line.
  const std::string out = Pull("ws://127.0.0.1:" + std::to_string(tcp_));
  EXPECT_NE(last_.status, 0);
  EXPECT_TRUE(Contains(out, "framed-TCP port")) << out;
  EXPECT_TRUE(Contains(out, "use tcp://")) << out;
  // Both refusals are counted and logged as such.
  EXPECT_TRUE(WaitUntil([&] { return Contains(server_.log(), "reason=bad_request"); }));
}

TEST(ClientPortHintTest, TcpClientAnsweredInHttpByAnotherServerSaysSo) {
  // A foreign HTTP server on an ephemeral loopback port: answers one request, then closes.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const uint16_t port = ntohs(addr.sin_port);
  std::thread http([listener] {
    pollfd p{listener, POLLIN, 0};
    if (poll(&p, 1, 20000) <= 0) return;
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char buf[1024];
    pollfd in{fd, POLLIN, 0};
    if (poll(&in, 1, 20000) > 0) (void)recv(fd, buf, sizeof buf, 0);
    const std::string answer = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
    (void)send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(fd);
  });
  const CommandResult result =
      RunCommand(std::string(SCENECRDT_BINARY) +
                 " pull --timeout 10 --scene s --server tcp://127.0.0.1:" + std::to_string(port));
  http.join();
  close(listener);
  EXPECT_NE(result.status, 0);
  EXPECT_TRUE(Contains(result.output, "tcp:// reached an HTTP port")) << result.output;
  EXPECT_TRUE(Contains(result.output, "ws://")) << result.output;
}

TEST(ServeTextsTest, HelpAndListeningLineNameTheRawDclPath) {
  const CommandResult help = RunCommand(std::string(SCENECRDT_BINARY) + " serve --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(Contains(help.output, "/dcl/<scene>")) << help.output;
  EXPECT_TRUE(Contains(help.output, "/scene/<name>")) << help.output;
  TempDir dir;
  ServerProcess server(dir.path(), {"--http", "127.0.0.1:0"});
  ASSERT_TRUE(server.started()) << server.log();
  ASSERT_TRUE(WaitUntil([&] { return server.http_port() != 0; })) << server.log();
  const std::string log = server.log();
  const auto line = log.find("listening ws://");
  ASSERT_NE(line, std::string::npos) << log;
  EXPECT_TRUE(Contains(log.substr(line, log.find('\n', line) - line), "/dcl/<scene>")) << log;
}

#endif  // SCENECRDT_BINARY

}  // namespace
}  // namespace scenecrdt::testing
