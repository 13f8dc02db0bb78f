// SPDX-License-Identifier: Apache-2.0
// Owner: tools/cli/remote/cmd_pull.cc (--owners), server/web/admin_routes.cc (GET
// /admin/scenes/<name>/owners) and server/storage/db_salvage.cc (the owners table): the owner
// table of --authority owner as the tools show and keep it (docs/AUTHORITY.md "Showing
// owners", "Durability").
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <string>

#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/server/storage/db_salvage.h"
#include "scenecrdt/server/storage/persistence.h"
#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kScene[] = "owned";
constexpr char kAdminToken[] = "admin-token-0123456789abcdef";
const protocol::EntityId kEntity = protocol::MakeEntityId(600, 0);

std::string WriteFile(const TempDir& dir, const char* name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

std::string AuthFile(const TempDir& dir) {
  return WriteFile(dir, "auth.json", R"({"tokens":[
    {"token":"ta","scenes":["*"],"role":"write","name":"alice"},
    {"token":"tb","scenes":["*"],"role":"write","name":"bob"}]})");
}

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& token,
                                     const std::string& ca_file = "") {
  client::ClientOptions o;
  o.url = url;
  o.scene = kScene;
  o.token = token;
  o.connection.ca_file = ca_file;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join as " << token;
  return c;
}

void MoveAcked(client::Client& c, float x) {
  protocol::Transform t = protocol::kIdentityTransform;
  t.position.x = x;
  ASSERT_TRUE(c.WriteTransform(kEntity, t).has_value());
  const uint64_t frame = c.Flush();
  ASSERT_NE(frame, 0u);
  ASSERT_TRUE(c.PollUntil([&] { return c.acked_frame_sequence() >= frame; }, 10s));
}

TEST(AuthorityToolsTest, PullOwnersReadsTheAdminApi) {
  TempDir dir;
  const std::string token_file = WriteFile(dir, "admin.token", std::string(kAdminToken) + "\n");
  ServerProcess server(dir.path(), {"--authority", "owner", "--auth", AuthFile(dir), "--http",
                                    "127.0.0.1:0", "--admin-token-file", token_file});
  ASSERT_TRUE(server.started()) << server.log();
  auto alice = Join(server.tcp_url(), "ta");
  MoveAcked(*alice, 1.0f);

  const std::string http = "127.0.0.1:" + std::to_string(server.http_port());
  const std::string pull = std::string(SCENECRDT_BINARY) + " pull --scene " + kScene +
                           " --token tb --owners --admin-token-file " + token_file;
  const auto over_tcp = RunCommand(pull + " --server " + server.tcp_url() + " --http " + http);
  EXPECT_EQ(over_tcp.status, 0) << over_tcp.output;
  EXPECT_NE(over_tcp.output.find(R"("owners":{"600":"alice"})"), std::string::npos)
      << over_tcp.output;
  EXPECT_NE(over_tcp.output.find("\"stateHash\""), std::string::npos) << over_tcp.output;
  // A ws:// server URL is the same listener: no --http needed.
  const auto over_ws = RunCommand(pull + " --server ws://" + http);
  EXPECT_EQ(over_ws.status, 0) << over_ws.output;
  EXPECT_NE(over_ws.output.find(R"("owners":{"600":"alice"})"), std::string::npos)
      << over_ws.output;

  // A wrong admin token: exit 1, the server's answer shown; no token file: bad usage.
  const std::string wrong = WriteFile(dir, "wrong.token", "not-the-admin-token-at-all");
  const auto refused =
      RunCommand(std::string(SCENECRDT_BINARY) + " pull --scene " + kScene + " --token tb" +
                 " --owners --admin-token-file " + wrong + " --server ws://" + http);
  EXPECT_EQ(refused.status, 1) << refused.output;
  EXPECT_NE(refused.output.find("answered 401"), std::string::npos) << refused.output;
  const auto usage = RunCommand(std::string(SCENECRDT_BINARY) + " pull --scene " + kScene +
                                " --token tb --owners --server " + server.tcp_url());
  EXPECT_EQ(usage.status, 2) << usage.output;
}

TEST(AuthorityToolsTest, PullOwnersReadsTheAdminApiOverHttps) {
  TempDir dir;
  const TestCert cert = MakeCert(dir.path(), "server");
  const std::string token_file = WriteFile(dir, "admin.token", std::string(kAdminToken) + "\n");
  ServerProcess server(dir.path(), {"--authority", "owner", "--auth", AuthFile(dir), "--http",
                                    "127.0.0.1:0", "--admin-token-file", token_file, "--tls-cert",
                                    cert.cert, "--tls-key", cert.key});
  ASSERT_TRUE(server.started()) << server.log();
  const std::string http = "127.0.0.1:" + std::to_string(server.http_port());
  auto alice = Join("wss://" + http, "ta", cert.cert);
  MoveAcked(*alice, 2.0f);

  const std::string pull = std::string(SCENECRDT_BINARY) + " pull --scene " + kScene +
                           " --token tb --owners --admin-token-file " + token_file;
  // A wss:// server URL is the https listener: the owners come over TLS, verified with --ca.
  const auto over_wss = RunCommand(pull + " --ca " + cert.cert + " --server wss://" + http);
  EXPECT_EQ(over_wss.status, 0) << over_wss.output;
  EXPECT_NE(over_wss.output.find(R"("owners":{"600":"alice"})"), std::string::npos)
      << over_wss.output;
  // tls:// for the scene, --http https://... for the owners.
  const auto over_tls = RunCommand(pull + " --ca " + cert.cert + " --server tls://127.0.0.1:" +
                                   std::to_string(server.port()) + " --http https://" + http);
  EXPECT_EQ(over_tls.status, 0) << over_tls.output;
  EXPECT_NE(over_tls.output.find(R"("owners":{"600":"alice"})"), std::string::npos)
      << over_tls.output;
  // Without the private CA: exit 1, the certificate named.
  const auto untrusted = RunCommand(pull + " --server wss://" + http);
  EXPECT_EQ(untrusted.status, 1) << untrusted.output;
  EXPECT_NE(untrusted.output.find("not trusted"), std::string::npos) << untrusted.output;
  // A malformed --http: bad usage.
  const auto usage =
      RunCommand(pull + " --ca " + cert.cert + " --server wss://" + http + " --http ftp://" + http);
  EXPECT_EQ(usage.status, 2) << usage.output;
  EXPECT_NE(usage.output.find("expected HOST:PORT"), std::string::npos) << usage.output;
}

TEST(AuthorityToolsTest, InspectShowsAStoredSceneWithItsOwners) {
  TempDir dir;
  ServerProcess server(dir.path(), {"--authority", "owner", "--auth", AuthFile(dir)});
  ASSERT_TRUE(server.started()) << server.log();
  auto alice = Join(server.tcp_url(), "ta");
  MoveAcked(*alice, 3.0f);
  const std::string inspect = std::string(SCENECRDT_BINARY) + " inspect --data " + dir.path();
  // Read-only beside the running server, then after it stopped: the same tree and owners.
  for (int pass = 0; pass < 2; ++pass) {
    const auto shown = RunCommand(inspect + " --scene " + kScene);
    EXPECT_EQ(shown.status, 0) << shown.output;
    EXPECT_NE(shown.output.find("`-- 600  local (3, 0, 0)  world (3, 0, 0)"), std::string::npos)
        << shown.output;
    EXPECT_NE(shown.output.find("owners: 1\n  600  alice\n"), std::string::npos) << shown.output;
    if (pass == 0) {
      alice->Stop();
      server.Kill(SIGTERM);
      ASSERT_EQ(server.WaitExit(30s), 0) << server.log();
    }
  }
  // Nothing stored under that name, no database, half the flags: exit 2, said.
  const auto unknown = RunCommand(inspect + " --scene nothing-here");
  EXPECT_EQ(unknown.status, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("has nothing stored"), std::string::npos) << unknown.output;
  TempDir empty;
  const auto no_db = RunCommand(std::string(SCENECRDT_BINARY) + " inspect --data " + empty.path() +
                                " --scene " + kScene);
  EXPECT_EQ(no_db.status, 2) << no_db.output;
  EXPECT_NE(no_db.output.find("no database"), std::string::npos) << no_db.output;
  EXPECT_FALSE(std::filesystem::exists(empty.path() + "/scenes.sqlite3"));
  EXPECT_EQ(RunCommand(inspect).status, 2);
}

TEST(AuthorityToolsTest, SalvageKeepsTheOwners) {
  TempDir dir;
  server::ServerConfig config = TestServer::Config();
  config.access.auth_file = AuthFile(dir);
  config.authority = server::AuthorityMode::kOwner;
  {
    TestServer before(config, dir.path());
    auto alice = Join(before.tcp_url(), "ta");
    MoveAcked(*alice, 1.0f);
    ASSERT_TRUE(WaitUntil(
        [&] {
          return before.get().SceneOwners(kScene) == std::vector<server::OwnerRow>{{600, "alice"}};
        },
        10s));
    alice->Stop();
    EXPECT_EQ(before.Stop(), 0);
  }
  TempDir salvaged;
  const std::string source = server::Persistence::DatabasePath(dir.path());
  auto report = server::SalvageDatabase(source, server::Persistence::DatabasePath(salvaged.path()));
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(report->complete());
  ASSERT_EQ(report->tables.back().table, "owners");
  EXPECT_EQ(report->tables.back().rows_copied, 1u);

  // The salvaged database keeps Alice's entity hers: Bob is refused there.
  TestServer after(config, salvaged.path());
  auto bob = Join(after.tcp_url(), "tb");
  EXPECT_EQ(after.get().SceneOwners(kScene), (std::vector<server::OwnerRow>{{600, "alice"}}));
  MoveAcked(*bob, 2.0f);
  EXPECT_TRUE(bob->PollUntil([&] { return bob->stats().refused_writes == 1; }, 10s));

  // A database from before the owners table: salvaged whole, no owners.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(source.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DROP TABLE owners;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  TempDir old;
  auto old_report = server::SalvageDatabase(source, server::Persistence::DatabasePath(old.path()));
  ASSERT_TRUE(old_report.has_value());
  EXPECT_TRUE(old_report->complete());
  EXPECT_EQ(old_report->tables.back().rows_copied, 0u);
}

}  // namespace
}  // namespace scenecrdt::testing
