// SPDX-License-Identifier: Apache-2.0
// Owner: server/auth/origin_policy.*. By default a WebSocket upgrade (and any HTTP request) without
// an Origin header or from a same-origin page is served and another site's page gets 403;
// --allowed-origins adds origins ("*" all); a malformed list refuses to start. The Host check
// (--allowed-hosts) passes loopback names, IP literals and listed names only.
#include "scenecrdt/server/auth/origin_policy.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
using server::OriginPolicy;

TEST(OriginPolicyTest, DefaultAllowsNoOriginAndSameOriginOnly) {
  auto policy = OriginPolicy::Parse("");
  ASSERT_TRUE(policy.has_value());
  EXPECT_TRUE(policy->Allows(std::nullopt, "127.0.0.1:7601"));
  EXPECT_TRUE(policy->Allows("http://127.0.0.1:7601", "127.0.0.1:7601"));
  EXPECT_TRUE(policy->Allows("HTTP://Scenes.Example", "scenes.example"));
  EXPECT_FALSE(policy->Allows("http://127.0.0.1:8000", "127.0.0.1:7601"));  // another port
  EXPECT_FALSE(policy->Allows("https://evil.example", "127.0.0.1:7601"));
  EXPECT_FALSE(policy->Allows("null", "127.0.0.1:7601"));
  EXPECT_FALSE(policy->Allows("", "127.0.0.1:7601"));
  EXPECT_FALSE(policy->Allows("http://127.0.0.1:7601", ""));
}

TEST(OriginPolicyTest, ListedOriginsAndStar) {
  auto policy = OriginPolicy::Parse(" https://game.example , http://localhost:8080/");
  ASSERT_TRUE(policy.has_value());
  EXPECT_TRUE(policy->Allows("https://game.example", "scenes.example"));
  EXPECT_TRUE(policy->Allows("http://localhost:8080", "scenes.example"));
  EXPECT_FALSE(policy->Allows("http://game.example", "scenes.example"));  // scheme differs
  EXPECT_FALSE(policy->Allows("https://game.example.evil", "scenes.example"));
  auto any = OriginPolicy::Parse("*");
  ASSERT_TRUE(any.has_value());
  EXPECT_TRUE(any->Allows("https://anything.example", "x"));
  EXPECT_FALSE(OriginPolicy::Parse("game.example").has_value());
  EXPECT_FALSE(OriginPolicy::Parse("https://game.example/path").has_value());
}

// The DNS-rebinding guard (--allowed-hosts): names are checked, addresses are not.
TEST(OriginPolicyTest, HostCheckAllowsLoopbackNamesAddressesAndListedNames) {
  auto policy = OriginPolicy::Parse("", "scenes.example,.corp.example");
  ASSERT_TRUE(policy.has_value());
  for (const char* host :
       {"", "localhost", "localhost:7601", "LOCALHOST.", "a.localhost:1", "127.0.0.1:7601",
        "10.1.2.3", "[::1]:7601", "[2001:db8::1]", "scenes.example", "Scenes.Example:443",
        "corp.example", "x.corp.example"}) {
    EXPECT_TRUE(policy->AllowsHost(host)) << host;
  }
  for (const char* host : {"evil.example", "evil.example:7601", "localhost.evil", "127.0.0.1.nip",
                           "scenes.example.evil", "xcorp.example", "[::1", "[zz::1]", "::1",
                           "localhost:", "localhost:99999x", "a b", "evil.example@localhost"}) {
    EXPECT_FALSE(policy->AllowsHost(host)) << host;
  }
  auto any = OriginPolicy::Parse("", "*");
  ASSERT_TRUE(any.has_value());
  EXPECT_TRUE(any->AllowsHost("evil.example"));
  EXPECT_FALSE(OriginPolicy::Parse("", "http://scenes.example").has_value());
  EXPECT_FALSE(OriginPolicy::Parse("", "scenes.example:7601").has_value());
  EXPECT_FALSE(OriginPolicy::Parse("", ".").has_value());
}

TEST(OriginPolicyTest, ServerRefusesOtherSitesWith403) {
  TestServer server;
  const uint16_t port = server.get().http_port();
  DclSocket native(port, "/scene/lobby");
  EXPECT_TRUE(native.connected());
  DclSocket same(port, "/scene/lobby", 10s, "http://127.0.0.1");  // Host: 127.0.0.1
  EXPECT_TRUE(same.connected());
  DclSocket evil(port, "/scene/lobby", 10s, "https://evil.example");
  EXPECT_FALSE(evil.connected());
  EXPECT_EQ(evil.http_status(), 403);
  DclSocket evil_dcl(port, "/dcl/lobby", 10s, "https://evil.example");
  EXPECT_EQ(evil_dcl.http_status(), 403);
  // Plain HTTP too.
  RawConnection raw(port);
  const std::string request =
      "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://evil.example\r\n"
      "Connection: close\r\n\r\n";
  ASSERT_TRUE(raw.Send({reinterpret_cast<const uint8_t*>(request.data()), request.size()}));
  EXPECT_EQ(raw.ReadUntilClosed(20s).rfind("HTTP/1.1 403", 0), 0u);
}

TEST(OriginPolicyTest, AllowedOriginsFlagLetsAListedSiteIn) {
  server::ServerConfig config = TestServer::Config();
  config.allowed_origins = "https://game.example";
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  DclSocket game(port, "/scene/lobby", 10s, "https://game.example");
  EXPECT_TRUE(game.connected());
  DclSocket evil(port, "/scene/lobby", 10s, "https://evil.example");
  EXPECT_EQ(evil.http_status(), 403);
}

TEST(OriginPolicyTest, MalformedListRefusesToStart) {
  server::ServerConfig config = TestServer::Config();
  TempDir dir;
  config.data_dir = dir.path();
  config.allowed_origins = "game.example";
  server::Server server(config);
  EXPECT_FALSE(server.Start(false).has_value());
}

}  // namespace
}  // namespace scenecrdt::testing
