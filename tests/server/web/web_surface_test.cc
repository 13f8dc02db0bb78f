// SPDX-License-Identifier: Apache-2.0
// Owner: issue 23's web surface: server/auth/origin_policy.* (the Host check), server/
// connection_limiter.* + http_session.cc (the /healthz reserve), server/web/scene_directory.*,
// server/storage/persistence.* (scene_names) and server/web/web_routes.* (the scene list, the asset
// 404). A rebinding Host is refused on every path; slow and half-open connections cannot hold the
// reserve that /healthz needs; the scene list is bounded, rate-limited per address and read
// from the scene_names table (filled for an old database, kept by the writes); a missing
// asset's 404 does not show the web root; /view/<scene> opens only scenes that exist.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

// Collects the server's event lines (thread-safe).
struct LogLines {
  std::mutex mu;
  std::string text;
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu);
      text.append(line);
    };
  }
  bool Has(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu);
    return text.find(what) != std::string::npos;
  }
};

// A raw request with the given Host (and extra header lines); the whole answer.
std::string Request(uint16_t port, const std::string& path, const std::string& host,
                    const std::string& extra = {}) {
  RawConnection raw(port);
  if (!raw.connected()) return {};
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\n" + extra + "Connection: close\r\n\r\n";
  if (!raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()})) return {};
  return raw.ReadUntilClosed(20s);
}

bool StartsWith(const std::string& text, const std::string& head) {
  return text.rfind(head, 0) == 0;
}

std::string Body(const std::string& answer) {
  const auto at = answer.find("\r\n\r\n");
  return at == std::string::npos ? std::string() : answer.substr(at + 4);
}

TEST(HostCheckTest, RebindingHostIsRefusedOnEveryPath) {
  LogLines log;
  server::ServerConfig config = TestServer::Config();
  config.log_sink = log.sink();
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  const std::string evil = "evil.example:" + std::to_string(port);
  // The issue's attack: a page on evil.example, rebound to 127.0.0.1, is same-origin with
  // its own name.
  const std::string upgrade =
      "Origin: http://" + evil +
      "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n";
  for (const std::string path : {"/scene/lobby", "/dcl/lobby"}) {
    RawConnection raw(port);
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: " + evil + "\r\n" + upgrade + "\r\n";
    ASSERT_TRUE(raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()}));
    const std::string answer = raw.ReadUntilClosed(20s);
    EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 403")) << path << ": " << answer;
  }
  for (const std::string path : {"/api/scenes", "/metrics", "/", "/healthz"}) {
    const std::string answer = Request(port, path, evil);
    EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 403")) << path << ": " << answer;
    EXPECT_NE(answer.find("--allowed-hosts"), std::string::npos) << answer;
  }
  // Loopback names and IP literals are this machine whatever DNS says.
  const std::string at = ":" + std::to_string(port);
  for (const std::string& host : std::vector<std::string>{
           "localhost" + at, "127.0.0.1", "app.localhost", "[::1]" + at, "LocalHost."}) {
    EXPECT_TRUE(StartsWith(Request(port, "/api/scenes", host), "HTTP/1.1 200")) << host;
  }
  const std::string metrics = HttpGet(port, "/metrics");
  EXPECT_EQ(Metric(metrics, "scenecrdt_http_host_refused_total"), 6) << metrics;
  EXPECT_TRUE(log.Has("reason=host_not_allowed"));
  EXPECT_TRUE(log.Has("detail=\"Host evil.example:"));
}

TEST(HostCheckTest, AllowedHostsAddsNamesAndDomains) {
  server::ServerConfig config = TestServer::Config();
  config.allowed_hosts = "scenes.example, .corp.example";
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  for (const std::string host : {"scenes.example:7601", "corp.example", "a.b.corp.example"}) {
    EXPECT_TRUE(StartsWith(Request(port, "/healthz", host), "HTTP/1.1 200")) << host;
  }
  for (const std::string host : {"evil.example", "scenes.example.evil", "xcorp.example"}) {
    EXPECT_TRUE(StartsWith(Request(port, "/healthz", host), "HTTP/1.1 403")) << host;
  }
  // The same-origin rule reads the Host, which is now checked.
  DclSocket same(port, "/scene/lobby", 10s, "http://127.0.0.1");
  EXPECT_TRUE(same.connected());
}

// --max-connections 2: two idle connections hold the cap, 16 idle ones (slow headers) the
// reserve, and one more idle connection arrives before each probe (an attacker refilling it);
// /healthz must still answer every probe.
TEST(HttpReserveTest, SlowConnectionsCannotHoldTheReserve) {
  server::ServerConfig config = TestServer::Config();
  config.limits.max_connections = 2;
  config.limits.handshake_timeout_ms = 120000;  // the idle ones stay for the whole test
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  std::vector<std::unique_ptr<RawConnection>> idle;
  const auto hold = [&] {
    idle.push_back(std::make_unique<RawConnection>(port));
    const std::string partial = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n";  // never ends
    return idle.back()->connected() &&
           idle.back()->Send({reinterpret_cast<const uint8_t*>(partial.data()), partial.size()});
  };
  for (int i = 0; i < 18; ++i) ASSERT_TRUE(hold());
  int answered = 0;
  for (int i = 0; i < 30; ++i) {
    ASSERT_TRUE(hold());
    if (StartsWith(HttpGet(port, "/healthz"), "HTTP/1.1 200")) ++answered;
  }
  EXPECT_EQ(answered, 30);
  // The probes took the places of the oldest idle ones, which were closed.
  int closed = 0;
  for (auto& c : idle) closed += c->WaitClosed(500ms) ? 1 : 0;
  EXPECT_GE(closed, 28);
  // A reserve connection gets nothing but /healthz and /metrics.
  const std::string list = HttpGet(port, "/api/scenes");
  EXPECT_TRUE(StartsWith(list, "HTTP/1.1 503")) << list;
  EXPECT_NE(list.find("only /healthz and /metrics"), std::string::npos) << list;
  const std::string metrics = HttpGet(port, "/metrics");
  EXPECT_GE(Metric(metrics, "scenecrdt_http_reserve_evictions_total"), 28) << metrics;
  EXPECT_GE(Metric(metrics, "scenecrdt_http_reserve_refused_total"), 1) << metrics;
}

// An HTTPS GET of `path` (Connection: close): the status, 0 when none came.
int HttpsStatus(uint16_t port, const std::string& ca, const std::string& path) {
  net::asio::io_context ioc;
  net::ssl::context ctx(net::ssl::context::tls_client);
  ctx.load_verify_file(ca);
  ctx.set_verify_mode(net::ssl::verify_peer);
  net::ssl::stream<net::tcp::socket> stream(ioc, ctx);
  net::error_code ec;
  stream.next_layer().connect(net::tcp::endpoint(net::asio::ip::address_v4::loopback(), port), ec);
  if (ec) return 0;
  stream.handshake(net::ssl::stream_base::client, ec);
  if (ec) return 0;
  namespace http = net::beast::http;
  http::request<http::empty_body> req(http::verb::get, path, 11);
  req.set(http::field::host, "127.0.0.1");
  req.keep_alive(false);
  http::write(stream, req, ec);
  if (ec) return 0;
  net::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res, ec);
  return ec ? 0 : static_cast<int>(res.result_int());
}

TEST(HttpReserveTest, HalfOpenTlsHandshakesCannotHoldTheReserve) {
  TempDir dir;
  const TestCert cert = MakeCert(dir.path(), "server");
  server::ServerConfig config = TestServer::Config();
  config.tls_cert_file = cert.cert;
  config.tls_key_file = cert.key;
  config.limits.max_connections = 2;
  config.limits.handshake_timeout_ms = 120000;
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  // TCP connections that never start their TLS handshake.
  std::vector<std::unique_ptr<RawConnection>> half_open;
  for (int i = 0; i < 18; ++i) {
    half_open.push_back(std::make_unique<RawConnection>(port));
    ASSERT_TRUE(half_open.back()->connected());
  }
  int answered = 0;
  for (int i = 0; i < 30; ++i) answered += HttpsStatus(port, cert.cert, "/healthz") == 200;
  EXPECT_EQ(answered, 30);
}

// The issue's old schema: the three row tables without scene_names (a database of an
// earlier server).
void WriteOldDatabase(const std::string& dir, int scenes) {
  std::filesystem::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir + "/scenes.sqlite3").c_str(), &db), SQLITE_OK);
  std::string sql = R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE registers(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  has_data INTEGER NOT NULL, data BLOB,
  PRIMARY KEY(scene, component, entity)) WITHOUT ROWID;
CREATE INDEX registers_by_number ON registers(scene, number);
CREATE TABLE tombstones(
  scene TEXT NOT NULL, number INTEGER NOT NULL, version INTEGER NOT NULL,
  PRIMARY KEY(scene, number)) WITHOUT ROWID;
CREATE TABLE appends(
  scene TEXT NOT NULL, component INTEGER NOT NULL, entity INTEGER NOT NULL,
  number INTEGER NOT NULL, version INTEGER NOT NULL, timestamp INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY(scene, component, entity, timestamp, data)) WITHOUT ROWID;
INSERT INTO meta VALUES('incarnation', 7);
BEGIN;
)sql";
  for (int i = 0; i < scenes; ++i) {
    char name[16];
    std::snprintf(name, sizeof(name), "s%04d", i);
    // A tombstone-only scene is stored too.
    sql += i % 10 == 0 ? "INSERT INTO tombstones VALUES('" + std::string(name) + "', 600, 1);"
                       : "INSERT INTO registers VALUES('" + std::string(name) +
                             "', 1, 600, 600, 0, 1, 0, NULL);";
  }
  sql += "COMMIT;";
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << error;
  sqlite3_close(db);
}

nlohmann::json ListJson(uint16_t port) {
  const std::string answer = HttpGet(port, "/api/scenes");
  EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 200")) << answer;
  return nlohmann::json::parse(Body(answer), nullptr, /*allow_exceptions=*/false);
}

TEST(SceneListTest, OldDatabaseIsFilledTheListIsBoundedAndKeptByWrites) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  WriteOldDatabase(data, 1003);
  {
    TestServer server(TestServer::Config(), data);
    const nlohmann::json list = ListJson(server.get().http_port());
    ASSERT_TRUE(list.is_object()) << list;
    ASSERT_EQ(list["scenes"].size(), server::kMaxListedScenes);
    EXPECT_EQ(list["scenes"][0]["name"], "s0000");
    EXPECT_EQ(list["scenes"][999]["name"], "s0999");
    EXPECT_EQ(list["complete"], false);
    const std::string html = HttpGet(server.get().http_port(), "/");
    EXPECT_NE(html.find("The list stops at 1000 scenes"), std::string::npos);
    // A new scene, written now: its name is kept by the writes.
    client::ClientOptions o;
    o.url = server.tcp_url();
    o.scene = "a-new";
    client::Client writer(o);
    ASSERT_TRUE(writer.Start().has_value());
    ASSERT_TRUE(writer.PollUntil([&] { return writer.state_ready(); }, 30s));
    protocol::Transform t;
    ASSERT_TRUE(writer.WriteTransform(protocol::EntityId{700}, t).has_value());
    writer.Flush();
    ASSERT_TRUE(writer.PollUntil([&] { return writer.acked_frame_sequence() >= 1; }, 30s));
    EXPECT_EQ(server.Stop(), 0);
  }
  {
    // A name in scene_names only: listed when the list is read from that table (issue 23 item
    // 4), not when it comes from a scan of the row tables.
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((data + "/scenes.sqlite3").c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, "INSERT INTO scene_names(scene) VALUES('0-named-only');",
                                nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
    sqlite3_close(db);
  }
  // After a restart (nothing in memory): the scene_names table alone lists it.
  TestServer again(TestServer::Config(), data);
  const nlohmann::json list = ListJson(again.get().http_port());
  ASSERT_TRUE(list.is_object());
  ASSERT_GE(list["scenes"].size(), 2u);
  EXPECT_EQ(list["scenes"][0]["name"], "0-named-only") << "the list is not read from scene_names";
  EXPECT_EQ(list["scenes"][1]["name"], "a-new");
  EXPECT_EQ(list["scenes"][1]["in_memory"], false);
  EXPECT_EQ(list["scenes"].size(), server::kMaxListedScenes);
}

TEST(SceneListTest, ListingsAreRateLimitedPerAddressAndShareReads) {
  LogLines log;
  server::ServerConfig config = TestServer::Config();
  config.log_sink = log.sink();
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  // 8 pollers x 25 polls at once: far more than 20 + 5 a second can refill.
  constexpr int kPollers = 8;
  constexpr int kPolls = 25;
  std::atomic<int> ok{0};
  std::atomic<int> limited{0};
  std::vector<std::thread> pollers;
  for (int p = 0; p < kPollers; ++p) {
    pollers.emplace_back([&, p] {
      for (int i = 0; i < kPolls; ++i) {
        const std::string answer = HttpGet(port, (i + p) % 2 == 0 ? "/api/scenes" : "/");
        ok += StartsWith(answer, "HTTP/1.1 200") ? 1 : 0;
        limited += StartsWith(answer, "HTTP/1.1 429") ? 1 : 0;
      }
    });
  }
  for (auto& t : pollers) t.join();
  EXPECT_GE(ok.load(), 20);
  EXPECT_GE(limited.load(), 1);
  EXPECT_EQ(ok + limited, kPollers * kPolls);
  // Polls close together are served by the same read of the stored names.
  EXPECT_LT(server.get().scene_directory()->reads(), static_cast<uint64_t>(ok.load()));
  const std::string metrics = HttpGet(port, "/metrics");
  EXPECT_EQ(Metric(metrics, "scenecrdt_scene_listings_limited_total"), limited.load()) << metrics;
  EXPECT_TRUE(log.Has("reason=rate_limited"));
  EXPECT_TRUE(log.Has("http=429"));
}

TEST(WebAssetTest, MissingAssetsAnswerWithoutTheWebRootPath) {
  LogLines log;
  TempDir dir;
  server::ServerConfig config = TestServer::Config();
  config.web_root = dir.path() + "/private-web-root";
  config.log_sink = log.sink();
  TestServer server(config);
  for (const std::string path : {"/web/viewer.js", "/view/lobby"}) {
    const std::string answer = HttpGet(server.get().http_port(), path);
    EXPECT_TRUE(StartsWith(answer, "HTTP/1.1 404")) << answer;
    EXPECT_EQ(answer.find("private-web-root"), std::string::npos) << answer;
    EXPECT_NE(answer.find("scripts/build_web.sh"), std::string::npos) << answer;
  }
  EXPECT_TRUE(log.Has("private-web-root"));  // the operator still finds it
}

// Issue 21 ("a true picture"): the page would join the scene it names, which creates it, so a
// typo in /view/<scene> answers 404 "no such scene" with the list and creates nothing.
TEST(ViewRouteTest, UnknownSceneSaysNoSuchSceneWithTheListAndCreatesNothing) {
  TempDir web;
  { std::ofstream(web.path() + "/view.html") << "<!doctype html><title>viewer page</title>\n"; }
  server::ServerConfig config = TestServer::Config();
  config.web_root = web.path();
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  client::ClientOptions o;
  o.url = server.tcp_url();
  o.scene = "lobby";
  client::Client writer(o);
  ASSERT_TRUE(writer.Start().has_value());
  ASSERT_TRUE(writer.PollUntil([&] { return writer.state_ready(); }, 30s));
  protocol::Transform t;
  ASSERT_TRUE(writer.WriteTransform(protocol::EntityId{700}, t).has_value());
  writer.Flush();
  ASSERT_TRUE(writer.PollUntil([&] { return writer.acked_frame_sequence() >= 1; }, 30s));

  const std::string page = HttpGet(port, "/view/lobby");
  EXPECT_TRUE(StartsWith(page, "HTTP/1.1 200")) << page;
  EXPECT_NE(page.find("viewer page"), std::string::npos) << page;
  const std::string typo = HttpGet(port, "/view/lobyy");
  EXPECT_TRUE(StartsWith(typo, "HTTP/1.1 404")) << typo;
  EXPECT_NE(typo.find("no such scene: <b>lobyy</b>"), std::string::npos) << typo;
  EXPECT_NE(typo.find("href=\"/view/lobby\""), std::string::npos) << typo;
  EXPECT_EQ(server.SceneHash("lobyy"), "");
  const nlohmann::json list = ListJson(port);
  ASSERT_TRUE(list.is_object()) << list;
  ASSERT_EQ(list["scenes"].size(), 1u) << list;
  EXPECT_EQ(list["scenes"][0]["name"], "lobby");
}

}  // namespace
}  // namespace scenecrdt::testing
