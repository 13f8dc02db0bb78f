// SPDX-License-Identifier: Apache-2.0
// Owner: server/transport/http_session.cc, server/sessions/envelope_protocol.cc. Requests over the
// HTTP parser's limits get a status before the close (431 for headers or a path over 8 KiB, 400 for
// a GET with a body), never a reset; a Hello sent as a WebSocket text message is refused; after a
// fatal Error the WebSocket closes with a protocol or policy close code, not 1000.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

TEST(HttpLimitsTest, HeadersOverEightKiBGet431) {
  TestServer server;
  RawConnection raw(server.get().http_port());
  ASSERT_TRUE(raw.connected());
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n";
  ASSERT_TRUE(raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()}));
  const std::string answer = raw.ReadUntilClosed(20s);
  EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 431")) << answer.substr(0, 200);
  EXPECT_NE(answer.find("8 KiB"), std::string::npos) << answer;
}

TEST(HttpLimitsTest, OneMiBPathGets431AndIsDrainedNotReset) {
  TestServer server;
  RawConnection raw(server.get().http_port());
  ASSERT_TRUE(raw.connected());
  const std::string request =
      "GET /" + std::string(1u << 20, 'p') + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  // The server answers after 8 KiB while the rest is still on its way: send from a thread.
  bool sent = false;
  std::thread sender([&] {
    sent = raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()});
  });
  const std::string answer = raw.ReadUntilClosed(30s);
  sender.join();
  EXPECT_TRUE(sent) << "the server reset the connection instead of draining the request";
  EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 431")) << answer.substr(0, 200);
}

TEST(HttpLimitsTest, GetWithABodyGets400) {
  TestServer server;
  RawConnection raw(server.get().http_port());
  ASSERT_TRUE(raw.connected());
  const std::string request =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello";
  ASSERT_TRUE(raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()}));
  const std::string answer = raw.ReadUntilClosed(20s);
  EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 400")) << answer.substr(0, 200);
  EXPECT_NE(answer.find("no request bodies"), std::string::npos) << answer;
  // The server still answers the next client.
  RawConnection next(server.get().http_port());
  const std::string health =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  ASSERT_TRUE(next.Send({reinterpret_cast<const uint8_t*>(health.data()), health.size()}));
  EXPECT_TRUE(StartsWith(next.ReadUntilClosed(20s), "HTTP/1.1 200"));
}

// The first Error frame in a WebSocket message (nullopt when the message is not one).
std::optional<session::ErrorFrame> AsError(const std::optional<std::vector<uint8_t>>& message) {
  if (!message) return std::nullopt;
  auto frame = session::ReadFrame(*message, {64u << 20});
  if (!frame.has_value()) return std::nullopt;
  if (auto* e = std::get_if<session::ErrorFrame>(&frame.value())) return *e;
  return std::nullopt;
}

TEST(WebSocketEnvelopeTest, HelloAsTextMessageIsRefusedWithProtocolClose) {
  TestServer server;
  DclSocket ws(server.get().http_port(), "/scene/edge");
  ASSERT_TRUE(ws.connected());
  ws.SetText(true);
  ASSERT_TRUE(ws.Send(session::BuildFrame(session::Hello{"edge", "", std::nullopt, ""})));
  auto error = AsError(ws.Receive(20s));
  ASSERT_TRUE(error.has_value()) << "a text Hello was not refused";
  EXPECT_EQ(error->code, ErrorCode::kBadRequest);
  EXPECT_TRUE(error->fatal);
  std::string reason;
  EXPECT_EQ(ws.WaitClose(20s, &reason), 1002) << reason;
  EXPECT_EQ(server.get().num_scenes(), 0u);  // nobody joined
}

TEST(WebSocketEnvelopeTest, FatalErrorClosesWithPolicyOrProtocolCode) {
  TestServer server;
  {
    // A frame that is not an envelope: protocol error.
    DclSocket ws(server.get().http_port(), "/scene/edge");
    ASSERT_TRUE(ws.connected());
    const std::vector<uint8_t> garbage = {16,  0,   0,   0,   'n', 'o', 't', ' ',
                                          'a', 'n', 'y', 'e', 'n', 'v', 'l', 'p'};
    ASSERT_TRUE(ws.Send(garbage));
    auto error = AsError(ws.Receive(20s));
    ASSERT_TRUE(error.has_value());
    EXPECT_TRUE(error->fatal);
    EXPECT_EQ(ws.WaitClose(20s), 1002);
  }
  {
    // A Crdt before Hello: protocol error too.
    DclSocket ws(server.get().http_port(), "/scene/edge");
    ASSERT_TRUE(ws.connected());
    session::Crdt crdt;
    crdt.frame_sequence = 1;
    ASSERT_TRUE(ws.Send(session::BuildFrame(crdt)));
    auto error = AsError(ws.Receive(20s));
    ASSERT_TRUE(error.has_value());
    EXPECT_EQ(error->code, ErrorCode::kUnexpectedPayload);
    EXPECT_EQ(ws.WaitClose(20s), 1002);
  }
}

TEST(WebSocketEnvelopeTest, UnauthorizedHelloClosesWithPolicyCode) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  {
    FILE* f = std::fopen(auth.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(R"({"tokens":[{"token":"w","scenes":["*"],"role":"write"}]})", f);
    std::fclose(f);
  }
  server::ServerConfig config = TestServer::Config();
  config.access.auth_file = auth;
  TestServer server(config);
  DclSocket ws(server.get().http_port(), "/scene/edge");
  ASSERT_TRUE(ws.connected());
  ASSERT_TRUE(ws.Send(session::BuildFrame(session::Hello{"edge", "wrong", std::nullopt, ""})));
  auto error = AsError(ws.Receive(20s));
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->code, ErrorCode::kUnauthorized);
  EXPECT_EQ(ws.WaitClose(20s), 1008);
}

}  // namespace
}  // namespace scenecrdt::testing
