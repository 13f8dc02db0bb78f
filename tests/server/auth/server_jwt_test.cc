// SPDX-License-Identifier: Apache-2.0
// Owner: server/auth/access_control.*, the session wiring of signed access tokens. End to end on an
// in-process server with keys made by the openssl CLI: a token (over 256 bytes: the envelope's
// limit is 4096) joins the scenes its `scenes` grant names with its `role`; a wrong scene, an
// expired token, `alg: none` and a bad signature are refused with their reason; a session
// whose token expires while connected is closed with unauthorized "token_expired"; the /dcl/
// path takes ?token=; --auth tokens keep working next to JWTs.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tests/server/auth/jwt_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

int64_t WallNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Claims(const std::string& scenes, const std::string& role, int64_t exp,
                   const std::string& sub = "player-42") {
  return R"({"sub":")" + sub + R"(","scenes":)" + scenes + R"(,"role":")" + role + R"(","exp":)" +
         std::to_string(exp) + "}";
}

class ServerJwtTest : public JwtFixture {
 protected:
  static server::ServerConfig JwtConfig() {
    server::ServerConfig config = TestServer::Config();
    config.access.jwt_secret_files = {keys().secret_file};
    config.access.jwt_public_keys = {keys().ed25519_public};
    config.access.jwt_leeway = 0s;
    return config;
  }
  // Hello with `token`: the fatal Error's text ("" when it joined).
  static std::string JoinRefusal(uint16_t port, const std::string& scene,
                                 const std::string& token) {
    RawConnection raw(port);
    if (raw.Join(scene, token)) return "";
    RawConnection again(port);
    session::Hello hello;
    hello.scene = scene;
    hello.token = token;
    if (!again.SendFrame(hello)) return "send failed";
    auto error = again.ReadError(20s);
    return error ? error->text : "no error frame";
  }
};

TEST_F(ServerJwtTest, GrantsDecideSceneAndRole) {
  TestServer server(JwtConfig());
  const uint16_t port = server.get().tcp_port();
  // A long subject makes the token longer than the old 256-byte envelope limit.
  const std::string writer = ValidToken(
      TestSigner::kHs256,
      Claims(R"(["lobby"])", "write", WallNow() + 600, "player-" + std::string(200, 'x')));
  ASSERT_GT(writer.size(), 256u);
  EXPECT_EQ(JoinRefusal(port, "lobby", writer), "");
  EXPECT_EQ(JoinRefusal(port, "arena", writer), "missing_grant");
  const std::string reader =
      ValidToken(TestSigner::kEdDsa, Claims(R"(["*"])", "read", WallNow() + 600));
  // A read-only token may not create a scene: a writer holds "lobby" open for it.
  RawConnection lobby_writer(port);
  ASSERT_TRUE(lobby_writer.Join("lobby", writer).has_value());
  RawConnection read_only(port);
  ASSERT_TRUE(read_only.Join("lobby", reader).has_value());
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 600, 1, 1.0f);
  ASSERT_TRUE(read_only.SendFrame(session::Crdt{1, 0, false, dcl}));
  auto refused = read_only.ReadError(20s);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, ErrorCode::kReadOnly);
  EXPECT_FALSE(refused->fatal);
}

TEST_F(ServerJwtTest, BadTokensAreRefusedWithTheirReason) {
  TestServer server(JwtConfig());
  const uint16_t port = server.get().tcp_port();
  EXPECT_EQ(
      JoinRefusal(port, "lobby",
                  ValidToken(TestSigner::kHs256, Claims(R"(["lobby"])", "write", WallNow() - 10))),
      "expired");
  const std::string unsigned_token =
      SigningInput(R"({"alg":"none","typ":"JWT"})",
                   Claims(R"(["lobby"])", "write", WallNow() + 600)) +
      ".";
  EXPECT_EQ(JoinRefusal(port, "lobby", unsigned_token), "wrong_algorithm");
  std::string forged =
      ValidToken(TestSigner::kHs256, Claims(R"(["lobby"])", "write", WallNow() + 600));
  // A signature character other than the last (whose low bits must stay zero in canonical
  // base64url): still well-formed, no longer the signature.
  char& c = forged[forged.size() - 10];
  c = c == 'A' ? 'B' : 'A';
  EXPECT_EQ(JoinRefusal(port, "lobby", forged), "bad_signature");
  EXPECT_EQ(JoinRefusal(port, "lobby", "not-a-jwt"), "malformed");
  // The server is fine afterwards.
  EXPECT_EQ(
      JoinRefusal(port, "lobby",
                  ValidToken(TestSigner::kHs256, Claims(R"(["lobby"])", "write", WallNow() + 600))),
      "");
}

TEST_F(ServerJwtTest, SessionIsClosedWhenItsTokenExpires) {
  TestServer server(JwtConfig());
  // Valid for 5 more seconds (leeway 0): joins, then is closed at expiry.
  const std::string token =
      ValidToken(TestSigner::kHs256, Claims(R"(["lobby"])", "write", WallNow() + 5));
  RawConnection raw(server.get().tcp_port());
  ASSERT_TRUE(raw.Join("lobby", token).has_value());
  auto error = raw.ReadError(30s);
  ASSERT_TRUE(error.has_value()) << "the session outlived its token";
  EXPECT_EQ(error->code, ErrorCode::kUnauthorized);
  EXPECT_EQ(error->text, "token_expired");
  EXPECT_TRUE(error->fatal);
  EXPECT_TRUE(raw.WaitClosed(20s));
}

TEST_F(ServerJwtTest, DclPathTakesTheTokenInTheQuery) {
  TestServer server(JwtConfig());
  const uint16_t port = server.get().http_port();
  const std::string token =
      ValidToken(TestSigner::kEdDsa, Claims(R"(["lobby"])", "write", WallNow() + 600));
  DclSocket ok(port, "/dcl/lobby?token=" + token);
  EXPECT_TRUE(ok.connected());
  DclSocket other_scene(port, "/dcl/arena?token=" + token);
  EXPECT_FALSE(other_scene.connected());
  EXPECT_EQ(other_scene.http_status(), 403);
  DclSocket no_token(port, "/dcl/lobby");
  EXPECT_FALSE(no_token.connected());
  EXPECT_EQ(no_token.http_status(), 401);
}

TEST_F(ServerJwtTest, AuthFileTokensKeepWorkingBesideJwts) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  FILE* f = std::fopen(auth.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(R"({"tokens":[{"token":"static-writer","scenes":["lobby"],"role":"write"}]})", f);
  std::fclose(f);
  server::ServerConfig config = JwtConfig();
  config.access.auth_file = auth;
  TestServer server(config);
  const uint16_t port = server.get().tcp_port();
  EXPECT_EQ(JoinRefusal(port, "lobby", "static-writer"), "");
  EXPECT_EQ(JoinRefusal(port, "lobby", "static-wrong"), "unknown_token");
  EXPECT_EQ(
      JoinRefusal(port, "lobby",
                  ValidToken(TestSigner::kHs256, Claims(R"(["lobby"])", "write", WallNow() + 600))),
      "");
}

TEST_F(ServerJwtTest, UnreadableKeyFileRefusesToStart) {
  server::ServerConfig config = TestServer::Config();
  TempDir dir;
  config.data_dir = dir.path();
  config.access.jwt_secret_files = {dir.path() + "/missing-secret"};
  server::Server server(config);
  EXPECT_FALSE(server.Start(false).has_value());
  EXPECT_NE(server.start_hint().find("--jwt-secret"), std::string::npos) << server.start_hint();
}

}  // namespace
}  // namespace scenecrdt::testing
