// SPDX-License-Identifier: Apache-2.0
// Owner: the graceful TLS close of server/transport/tcp_transport.cc, http_session.cc and
// websocket_transport.h (docs/SERVER.md "TLS"). A raw TLS client (Asio over OpenSSL, trusting a
// certificate made by the openssl CLI) checks that every graceful close ends with a TLS
// close_notify: its last read ends with eof (SSL_read returned 0 with SSL_ERROR_ZERO_RETURN),
// not ssl::error::stream_truncated (the TCP connection closed without the alert). Covered:
// Error-then-close, no Hello within the handshake timeout, server shutdown, https:// with
// "Connection: close", wss:// after a fatal Error, and a peer that never answers the
// close_notify (the session is cut after the close grace, not held).
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scenecrdt/net/tls.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/server_test_util.h"
#include "tests/wait_until.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

// One TLS connection to 127.0.0.1:port, handshaken.
class RawTlsClient {
 public:
  RawTlsClient(uint16_t port, const std::string& ca)
      : ctx_(net::ssl::context::tls_client), stream_(ioc_, ctx_) {
    ctx_.load_verify_file(ca);
    stream_.set_verify_mode(net::ssl::verify_peer);
    stream_.set_verify_callback(net::ssl::host_name_verification("127.0.0.1"));
    net::error_code ec;
    stream_.next_layer().connect(net::tcp::endpoint(net::asio::ip::address_v4::loopback(), port),
                                 ec);
    if (!ec) stream_.handshake(net::ssl::stream_base::client, ec);
    error_ = ec;
  }
  const net::error_code& error() const { return error_; }
  net::ssl::stream<net::tcp::socket>& stream() { return stream_; }

  bool Write(const std::string& bytes) {
    net::error_code ec;
    net::asio::write(stream_, net::asio::buffer(bytes), ec);
    return !ec;
  }

  // Reads until the connection ends; what was read goes to `bytes`. The error that ended it:
  // eof for a close_notify, ssl::error::stream_truncated for a TCP end without one,
  // timed_out when nothing ended it within `timeout`.
  net::error_code ReadToEnd(std::string& bytes, std::chrono::milliseconds timeout = 20s) {
    std::optional<net::error_code> end;
    std::vector<char> buffer(16384);
    std::function<void()> next = [&] {
      stream_.async_read_some(net::asio::buffer(buffer),
                              [&](const net::error_code& ec, std::size_t n) {
                                bytes.append(buffer.data(), n);
                                if (ec) {
                                  end = ec;
                                  return;
                                }
                                next();
                              });
    };
    next();
    ioc_.restart();
    ioc_.run_for(timeout);
    if (!end) {
      net::error_code ignored;
      stream_.next_layer().close(ignored);
      ioc_.restart();
      ioc_.run_for(5s);  // the read completes with operation_aborted
      return net::asio::error::timed_out;
    }
    return *end;
  }

 private:
  net::asio::io_context ioc_;
  net::ssl::context ctx_;
  net::ssl::stream<net::tcp::socket> stream_;
  net::error_code error_;
};

// "eof (close_notify)" or the error's own words, for failure messages.
std::string Describe(const net::error_code& ec) {
  return ec == net::asio::error::eof ? "eof (close_notify)" : ec.message();
}

class TlsCloseTest : public ::testing::Test {
 protected:
  void Start(uint32_t handshake_timeout_ms = 10000) {
    cert_ = MakeCert(dir_.path(), "server");
    server::ServerConfig config = TestServer::Config();
    config.tls_cert_file = cert_.cert;
    config.tls_key_file = cert_.key;
    config.limits.handshake_timeout_ms = handshake_timeout_ms;
    server_.emplace(config);
  }
  uint16_t tcp_port() { return server_->get().tcp_port(); }
  uint16_t http_port() { return server_->get().http_port(); }
  int64_t sessions() { return server_->get().metrics().sessions.load(); }

  TempDir dir_;
  TestCert cert_;
  std::optional<TestServer> server_;
};

TEST_F(TlsCloseTest, ErrorThenCloseEndsWithCloseNotify) {
  Start();
  RawTlsClient c(tcp_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  // A size prefix of 0: an empty frame, a fatal envelope_invalid.
  ASSERT_TRUE(c.Write(std::string(4, '\0')));
  std::string bytes;
  const net::error_code end = c.ReadToEnd(bytes);
  EXPECT_EQ(end, net::asio::error::eof) << Describe(end);
  EXPECT_NE(bytes.find("empty frame"), std::string::npos) << "the Error frame came first";
}

TEST_F(TlsCloseTest, NoHelloInTimeEndsWithCloseNotify) {
  Start(/*handshake_timeout_ms=*/2000);
  RawTlsClient c(tcp_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  std::string bytes;
  const net::error_code end = c.ReadToEnd(bytes);
  EXPECT_EQ(end, net::asio::error::eof) << Describe(end);
  EXPECT_NE(bytes.find("no Hello"), std::string::npos);
}

TEST_F(TlsCloseTest, ServerShutdownEndsWithCloseNotify) {
  Start();
  RawTlsClient c(tcp_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  // Joined: the server finished its side of the TLS handshake (a close before that can only
  // drop the connection).
  const auto hello = session::BuildFrame(session::Hello{"stopping", "", std::nullopt, ""});
  ASSERT_TRUE(c.Write(std::string(hello.begin(), hello.end())));
  ASSERT_TRUE(WaitUntil([&] { return server_->get().num_scenes() == 1; }));
  // Not read meanwhile: the server's close_notify waits in this socket's receive buffer.
  EXPECT_EQ(server_->Stop(), 0);
  std::string bytes;
  const net::error_code end = c.ReadToEnd(bytes);
  EXPECT_EQ(end, net::asio::error::eof) << Describe(end);
  EXPECT_NE(bytes.find("the server is stopping"), std::string::npos);
}

TEST_F(TlsCloseTest, AnUnansweredCloseNotifyDoesNotHoldTheSession) {
  Start();
  RawTlsClient c(tcp_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  ASSERT_TRUE(c.Write(std::string(4, '\0')));
  // This client reads nothing and answers nothing: the server still closes its side (after
  // the close grace) and the session is gone.
  ASSERT_TRUE(WaitUntil([&] { return sessions() == 0; }, 20s));
  std::string bytes;
  const net::error_code end = c.ReadToEnd(bytes);
  EXPECT_EQ(end, net::asio::error::eof) << Describe(end);
}

TEST_F(TlsCloseTest, HttpsConnectionCloseEndsWithCloseNotify) {
  Start();
  RawTlsClient c(http_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  ASSERT_TRUE(c.Write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  std::string bytes;
  const net::error_code end = c.ReadToEnd(bytes);
  EXPECT_EQ(end, net::asio::error::eof) << Describe(end);
  EXPECT_NE(bytes.find("200 OK"), std::string::npos) << bytes;
}

TEST_F(TlsCloseTest, WssCloseAfterAFatalErrorEndsWithCloseNotify) {
  Start();
  RawTlsClient c(http_port(), cert_.cert);
  ASSERT_FALSE(c.error()) << c.error().message();
  namespace websocket = net::beast::websocket;
  websocket::stream<net::ssl::stream<net::tcp::socket>&> ws(c.stream());
  net::error_code ec;
  ws.handshake("127.0.0.1", "/scene/closing", ec);
  ASSERT_FALSE(ec) << ec.message();
  // A text message: refused (binary only), a fatal Error, then the close handshake.
  ws.text(true);
  ws.write(net::asio::buffer(std::string("hello")), ec);
  ASSERT_FALSE(ec) << ec.message();
  net::beast::flat_buffer buffer;
  for (int i = 0; i < 8 && !ec; ++i) ws.read(buffer, ec);
  // Beast answers the close frame and tears TLS down: `closed` when the server's close_notify
  // arrived, stream_truncated when its TCP connection ended without one.
  EXPECT_EQ(ec, websocket::error::closed) << ec.message();
  EXPECT_NE(ws.reason().code, websocket::close_code::normal);
}

}  // namespace
}  // namespace scenecrdt::testing
