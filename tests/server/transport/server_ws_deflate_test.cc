// SPDX-License-Identifier: Apache-2.0
// Owner: server/transport/ws_message_compression.*, server/transport/websocket_transport.h (issue
// 23 item 5). With permessage-deflate negotiated, a snapshot above kMaxDeflatedMessageBytes goes
// out uncompressed (RSV1 clear) in one frame, so joiners do not each deflate the whole scene; small
// messages (the live batches) are still compressed. Read from a raw socket that offers deflate as
// browsers and node's `ws` do, so the frame header bits are visible.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/server/transport/ws_message_compression.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

struct WsFrame {
  bool fin = false;
  bool rsv1 = false;  // the message is compressed (RFC 7692)
  int opcode = 0;
  std::vector<uint8_t> payload;
};

// A WebSocket client on a raw socket: the upgrade offers permessage-deflate; frames are read
// with their header bits (the server's frames are unmasked).
class RawWebSocket {
 public:
  RawWebSocket(uint16_t port, const std::string& target) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return;
    const std::string request = "GET " + target +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                                "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                                "Sec-WebSocket-Extensions: permessage-deflate; "
                                "client_max_window_bits\r\n\r\n";
    if (send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (response_.find("\r\n\r\n") == std::string::npos) {
      if (!Fill(deadline)) return;
      response_.assign(in_.begin(), in_.end());
    }
    const std::size_t end = response_.find("\r\n\r\n") + 4;
    in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(end));
    response_.resize(end);
  }
  ~RawWebSocket() {
    if (fd_ >= 0) close(fd_);
  }
  const std::string& response() const { return response_; }

  std::optional<WsFrame> ReadFrame(std::chrono::milliseconds timeout = 20s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    if (!Need(2, deadline)) return std::nullopt;
    WsFrame f;
    f.fin = (in_[0] & 0x80) != 0;
    f.rsv1 = (in_[0] & 0x40) != 0;
    f.opcode = in_[0] & 0x0f;
    uint64_t length = in_[1] & 0x7f;
    std::size_t header = 2;
    if (length == 126 || length == 127) {
      const std::size_t bytes = length == 126 ? 2 : 8;
      if (!Need(2 + bytes, deadline)) return std::nullopt;
      length = 0;
      for (std::size_t i = 0; i < bytes; ++i) length = (length << 8) | in_[2 + i];
      header += bytes;
    }
    if (length > (64u << 20) || !Need(header + length, deadline)) return std::nullopt;
    f.payload.assign(in_.begin() + static_cast<std::ptrdiff_t>(header),
                     in_.begin() + static_cast<std::ptrdiff_t>(header + length));
    in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(header + length));
    return f;
  }

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
    uint8_t buf[65536];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) return false;
    in_.insert(in_.end(), buf, buf + n);
    return true;
  }
  bool Need(std::size_t n, std::chrono::steady_clock::time_point deadline) {
    while (in_.size() < n) {
      if (!Fill(deadline)) return false;
    }
    return true;
  }

  int fd_ = -1;
  std::vector<uint8_t> in_;
  std::string response_;
};

TEST(ServerWsDeflateTest, LargeSnapshotGoesUncompressedAndSmallBatchesCompressed) {
  TestServer server;
  // A scene whose snapshot is well above the deflate bound: 3 000 Transforms (~200 KB).
  client::ClientOptions options;
  options.url = server.tcp_url();
  options.scene = "big";
  client::Client writer(options);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.state_ready(); }, 20s));
  std::vector<std::vector<uint8_t>> streams;
  for (uint32_t base = 600; base < 3600; base += 1000) {
    std::vector<uint8_t> dcl;
    for (uint32_t e = base; e < base + 1000; ++e) AppendPut(dcl, e, 1, static_cast<float>(e));
    writer.SendCrdt(dcl);
    streams.push_back(std::move(dcl));
  }
  const std::string expected = ReplayHash(streams);
  ASSERT_TRUE(WaitUntil(
      [&] {
        writer.Poll();
        return server.SceneHash("big") == expected;
      },
      30s));

  RawWebSocket ws(server.get().http_port(), "/dcl/big");
  ASSERT_NE(ws.response().find(" 101 "), std::string::npos) << ws.response();
  ASSERT_NE(ws.response().find("permessage-deflate"), std::string::npos) << ws.response();
  auto snapshot = ws.ReadFrame();
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_FALSE(snapshot->rsv1) << "the snapshot was deflated for this joiner alone";
  EXPECT_TRUE(snapshot->fin) << "an uncompressed message goes as one frame";
  EXPECT_EQ(snapshot->opcode, 2);
  EXPECT_GT(snapshot->payload.size(), server::kMaxDeflatedMessageBytes);
  EXPECT_EQ(ReplayHash({snapshot->payload}), expected) << "the snapshot is the plain DCL chunk";

  // A small batch afterwards is compressed as before.
  std::vector<uint8_t> small;
  AppendPut(small, 600, 2, 42.0f);
  writer.SendCrdt(small);
  std::optional<WsFrame> next;
  ASSERT_TRUE(WaitUntil(
      [&] {
        writer.Poll();
        next = ws.ReadFrame(50ms);
        return next.has_value();
      },
      20s));
  EXPECT_TRUE(next->rsv1) << "small messages keep permessage-deflate";
  EXPECT_LT(next->payload.size(), server::kMaxDeflatedMessageBytes);
}

}  // namespace
}  // namespace scenecrdt::testing
