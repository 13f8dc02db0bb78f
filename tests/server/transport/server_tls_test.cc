// SPDX-License-Identifier: Apache-2.0
// Owner: server/transport/tls_context.*, the TLS streams of server/transport/tcp_transport.cc,
// http_session.cc, websocket_transport.h, and client/connection.cc. Certificates are made by the
// openssl CLI in the test. tls:// and wss:// clients (trusting the test CA with
// ConnectionOptions::ca_file, as `--ca` does) join and exchange writes; https:// answers /healthz;
// a plain client on the TLS port and a client that does not trust the certificate fail with a clear
// error; a reload (what SIGHUP does) serves the new certificate to new connections while open
// sessions go on; a non-loopback bind without TLS is refused unless --insecure-no-tls.
#include <gtest/gtest.h>

#include <csignal>
#include <memory>
#include <string>

#include "scenecrdt/client/url.h"
#include "scenecrdt/net/tls.h"
#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& ca,
                                     const std::string& scene = "secure", bool zstd = false) {
  client::ClientOptions options;
  options.url = url;
  options.scene = scene;
  options.connection.ca_file = ca;
  options.connection.zstd = zstd;
  auto c = std::make_unique<client::Client>(options);
  if (!c->Start().has_value()) return nullptr;
  c->PollUntil([&] { return c->state_ready() || c->closed(); }, 30s);
  return c;
}

class ServerTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cert_ = MakeCert(dir_.path(), "server");
    server::ServerConfig config = TestServer::Config();
    config.tls_cert_file = cert_.cert;
    config.tls_key_file = cert_.key;
    server_.emplace(config);
  }
  std::string tls_url() { return "tls://127.0.0.1:" + std::to_string(server_->get().tcp_port()); }
  std::string wss_url() { return "wss://127.0.0.1:" + std::to_string(server_->get().http_port()); }

  TempDir dir_;
  TestCert cert_;
  std::optional<TestServer> server_;
};

TEST_F(ServerTlsTest, TlsAndWssClientsJoinAndSeeEachOthersWrites) {
  auto a = Join(tls_url(), cert_.cert);
  auto b = Join(wss_url(), cert_.cert);
  ASSERT_TRUE(a && a->state_ready()) << (a ? a->close_error().detail : "");
  ASSERT_TRUE(b && b->state_ready()) << (b ? b->close_error().detail : "");
  protocol::Transform t;
  t.position = {1.0f, 2.0f, 3.0f};
  ASSERT_TRUE(a->WriteTransform(protocol::EntityId{700}, t).has_value());
  a->Flush();
  EXPECT_TRUE(WaitUntil(
      [&] {
        a->Poll();
        b->Poll();
        return a->acked_frame_sequence() >= 1 &&
               b->store().StateHashHex() == a->store().StateHashHex();
      },
      30s));
  EXPECT_EQ(b->store().StateHashHex(), a->store().StateHashHex());
  EXPECT_EQ(server_->SceneHash("secure"), a->store().StateHashHex());
}

// Compression inside TLS (docs/SERVER.md "Compression"): a tls:// client that offers zstd
// gets zstd frames inside the TLS records, and its replica converges with a plain one.
TEST_F(ServerTlsTest, TlsClientsNegotiateZstdInsideTls) {
  auto a = Join(tls_url(), cert_.cert, "zs", /*zstd=*/true);
  auto b = Join(tls_url(), cert_.cert, "zs");
  ASSERT_TRUE(a && a->state_ready()) << (a ? a->close_error().detail : "");
  ASSERT_TRUE(b && b->state_ready()) << (b ? b->close_error().detail : "");
  for (uint32_t k = 0; k < 50; ++k) {
    protocol::Transform t;
    t.position = {static_cast<float>(k), 2.0f, 3.0f};
    ASSERT_TRUE(b->WriteTransform(protocol::EntityId{800 + k}, t).has_value());
  }
  b->Flush();
  EXPECT_TRUE(WaitUntil(
      [&] {
        a->Poll();
        b->Poll();
        return b->acked_frame_sequence() >= 1 &&
               a->store().StateHashHex() == b->store().StateHashHex();
      },
      30s));
  EXPECT_EQ(a->store().StateHashHex(), server_->SceneHash("zs"));
  // Only `a` offered zstd: the server compressed its frames inside TLS.
  const auto& m = server_->get().metrics();
  EXPECT_GT(m.compression_plain_bytes.load(), 0u);
  EXPECT_GT(m.compression_wire_bytes.load(), 0u);
}

TEST_F(ServerTlsTest, HttpsAnswersHealthz) {
  net::asio::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.load_verify_file(cert_.cert);
  ctx.set_verify_mode(net::ssl::verify_peer);
  net::ssl::stream<net::tcp::socket> stream(ioc, ctx);
  net::error_code ec;
  stream.next_layer().connect(
      net::tcp::endpoint(net::asio::ip::address_v4::loopback(), server_->get().http_port()), ec);
  ASSERT_FALSE(ec) << ec.message();
  stream.set_verify_callback(net::ssl::host_name_verification("127.0.0.1"));
  stream.handshake(net::ssl::stream_base::client, ec);
  ASSERT_FALSE(ec) << ec.message();
  namespace http = net::beast::http;
  http::request<http::empty_body> req(http::verb::get, "/healthz", 11);
  req.set(http::field::host, "127.0.0.1");
  http::write(stream, req, ec);
  ASSERT_FALSE(ec) << ec.message();
  net::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_EQ(res.body(), "ok\n");
}

TEST_F(ServerTlsTest, PlainAndUntrustingClientsFailClearly) {
  // tcp:// on the TLS port: the TLS handshake fails, nobody joins.
  auto plain = Join("tcp://127.0.0.1:" + std::to_string(server_->get().tcp_port()), "");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->state_ready());
  // The system trust store does not know the test certificate.
  client::ClientOptions options;
  options.url = tls_url();
  options.scene = "secure";
  options.reconnect.enabled = false;
  client::Client untrusting(options);
  ASSERT_TRUE(untrusting.Start().has_value());
  ASSERT_TRUE(untrusting.PollUntil([&] { return untrusting.closed(); }, 30s));
  EXPECT_NE(std::string(untrusting.close_error().detail).find("not trusted"), std::string::npos)
      << untrusting.close_error().detail;
  EXPECT_GE(server_->get().metrics().tls_handshake_failures.load(), 1u);
}

TEST_F(ServerTlsTest, ReloadServesTheNewCertificateWithoutDroppingSessions) {
  auto before = Join(tls_url(), cert_.cert);
  ASSERT_TRUE(before && before->state_ready());
  const std::string old_ca = dir_.path() + "/old-ca.crt";
  int status = -1;
  RunShell("cp " + cert_.cert + " " + old_ca, status);
  ASSERT_EQ(status, 0);
  // A new key and certificate at the same paths, then the reload SIGHUP triggers.
  MakeCert(dir_.path(), "server");
  ASSERT_TRUE(server_->get().ReloadTls());
  // New connections get the new certificate: the old CA no longer verifies it.
  client::ClientOptions options;
  options.url = tls_url();
  options.scene = "secure";
  options.connection.ca_file = old_ca;
  options.reconnect.enabled = false;
  client::Client stale(options);
  ASSERT_TRUE(stale.Start().has_value());
  EXPECT_TRUE(stale.PollUntil([&] { return stale.closed(); }, 30s));
  EXPECT_FALSE(stale.state_ready());
  auto after = Join(tls_url(), cert_.cert);
  ASSERT_TRUE(after && after->state_ready());
  // The session from before the reload still writes and is acknowledged.
  protocol::Transform t;
  t.position = {4.0f, 5.0f, 6.0f};
  ASSERT_TRUE(before->WriteTransform(protocol::EntityId{701}, t).has_value());
  const uint64_t sent = before->Flush();
  ASSERT_GT(sent, 0u);
  EXPECT_TRUE(before->PollUntil([&] { return before->acked_frame_sequence() >= sent; }, 30s));
  EXPECT_EQ(before->stats().disconnects, 0u);
  EXPECT_TRUE(after->PollUntil(
      [&] { return after->store().StateHashHex() == before->store().StateHashHex(); }, 30s));
}

TEST(TlsUrlTest, TlsAndWssSchemesParse) {
  auto tls = client::ParseServerUrl("tls://scenes.example:7600");
  ASSERT_TRUE(tls.has_value());
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->scheme, client::ServerUrl::Scheme::kTcp);
  auto wss = client::ParseServerUrl("wss://scenes.example:443/scene/lobby");
  ASSERT_TRUE(wss.has_value());
  EXPECT_TRUE(wss->tls);
  EXPECT_EQ(wss->scheme, client::ServerUrl::Scheme::kWebSocket);
  EXPECT_EQ(wss->scene, "lobby");
  auto plain = client::ParseServerUrl("ws://127.0.0.1:7601");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->tls);
  EXPECT_FALSE(client::ParseServerUrl("tls://h:1/scene/x").has_value());
  EXPECT_FALSE(client::ParseServerUrl("https://h:1").has_value());
}

TEST(ServerTlsStartTest, NonLoopbackWithoutTlsIsRefusedUnlessInsecureNoTls) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  FILE* f = std::fopen(auth.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"tokens":[{"token":"w","scenes":["*"],"role":"write"}]})", f);
  std::fclose(f);
  server::ServerConfig config = TestServer::Config();
  config.access.auth_file = auth;
  config.tcp_listen = "0.0.0.0:0";
  config.http_listen = "";
  config.data_dir = dir.path() + "/data";
  {
    server::Server refused(config);
    EXPECT_FALSE(refused.Start(false).has_value());
    EXPECT_NE(refused.start_hint().find("--tls-cert"), std::string::npos) << refused.start_hint();
  }
  config.insecure_no_tls = true;
  TestServer allowed(config, config.data_dir);
  EXPECT_EQ(allowed.Stop(), 0);
}

#ifdef SCENECRDT_BINARY
TEST(ServerTlsProcessTest, SighupReloadsAndKeepsServing) {
  TempDir dir;
  const TestCert cert = MakeCert(dir.path(), "server");
  ServerProcess server(dir.path(), {"--tls-cert", cert.cert, "--tls-key", cert.key});
  ASSERT_TRUE(server.started()) << server.log();
  auto before = Join("tls://127.0.0.1:" + std::to_string(server.port()), cert.cert);
  ASSERT_TRUE(before && before->state_ready()) << server.log();
  server.Kill(SIGHUP);
  EXPECT_TRUE(WaitUntil([&] {
    return server.log().find("tls_reload ok=yes") != std::string::npos;
  })) << server.log();
  auto after = Join("tls://127.0.0.1:" + std::to_string(server.port()), cert.cert);
  EXPECT_TRUE(after && after->state_ready()) << server.log();
  EXPECT_EQ(before->stats().disconnects, 0u);
  server.Kill(SIGTERM);
  EXPECT_EQ(server.WaitExit(30s), 0) << server.log();
}
#endif

}  // namespace
}  // namespace scenecrdt::testing
