// SPDX-License-Identifier: Apache-2.0
// Owner: server/scene/authority/authority.* (rules mode). `--authority rules` end to end on
// 127.0.0.1 (docs/AUTHORITY.md "Rules mode"): server-only components refused (even to admins) and
// never relayed, admin-only entity ranges, the default for unknown components, `any` components
// writable by everyone on owned entities, and `serve` refusing a missing or bad rules file.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/server/scene/authority/authority_rules.h"
#include "tests/server/authority/authority_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kScene[] = "ruled";
const protocol::EntityId kAlices = protocol::MakeEntityId(600, 0);
const protocol::EntityId kFree = protocol::MakeEntityId(700, 0);
const protocol::EntityId kFurniture = protocol::MakeEntityId(1050, 0);  // admin-only range
constexpr uint32_t kServerOnly = 1001;
constexpr uint32_t kAny = 1002;
constexpr uint32_t kUnknown = 2000;  // default: admin

constexpr char kRules[] = R"({
  "default": "admin",
  "components": {"1": "owner", "1001": "none", "1002": "any"},
  "admin_entities": [[1000, 1099]]})";

void WriteFile(const std::string& path, const char* text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(text, f);
  std::fclose(f);
}

server::ServerConfig RulesConfig(const TempDir& dir) {
  const std::string auth = WritePrincipalsAuthFile(dir);
  server::ServerConfig c = TestServer::Config();
  c.access.auth_file = auth;
  c.authority = server::AuthorityMode::kRules;
  std::string why;
  auto rules = server::AuthorityRules::Parse(kRules, why);
  EXPECT_TRUE(rules.has_value()) << why;
  c.authority_rules = std::make_shared<const server::AuthorityRules>(std::move(*rules));
  return c;
}

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& token) {
  client::ClientOptions o;
  o.url = url;
  o.scene = kScene;
  o.token = token;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join as " << token;
  return c;
}

float XOf(const runtime::CrdtStore& store, protocol::EntityId e) {
  const protocol::Transform* t = store.FindTransform(e);
  return t ? t->position.x : -1e9f;
}

// A Transform write, acknowledged.
void MoveAcked(client::Client& c, protocol::EntityId e, float x) {
  protocol::Transform t = protocol::kIdentityTransform;
  t.position.x = x;
  ASSERT_TRUE(c.WriteTransform(e, t).has_value());
  const uint64_t frame = c.Flush();
  ASSERT_NE(frame, 0u);
  ASSERT_TRUE(c.PollUntil([&] { return c.acked_frame_sequence() >= frame; }, 10s));
}

// A PUT of `component` (3 bytes) at `timestamp`, applied locally and sent; acknowledged.
void PutAcked(client::Client& c, protocol::EntityId e, uint32_t component, uint32_t timestamp) {
  const std::vector<uint8_t> payload = {1, 2, 3};
  protocol::CrdtMessage m;
  m.type = protocol::MessageType::kPutComponent;
  m.entity = e;
  m.component = component;
  m.timestamp = timestamp;
  m.data = payload;
  std::vector<uint8_t> chunk;
  protocol::AppendMessage(m, chunk);
  const uint64_t frame = c.SendCrdt(chunk);
  ASSERT_NE(frame, 0u);
  ASSERT_TRUE(c.PollUntil([&] { return c.acked_frame_sequence() >= frame; }, 10s));
}

// Waits for the client's `n`th refusal and returns the code of the last one.
ErrorCode NthRefusal(client::Client& c, uint64_t n) {
  EXPECT_TRUE(c.PollUntil([&] { return c.stats().refused_writes >= n; }, 10s));
  const auto refusals = c.TakeRefusals();
  return refusals.empty() ? ErrorCode::kOk : refusals.back().code;
}

void ExpectConverged(TestServer& server, client::Client& c) {
  EXPECT_TRUE(
      c.PollUntil([&] { return c.store().StateHashHex() == server.SceneHash(kScene); }, 10s));
}

std::vector<server::OwnerRow> Owners(TestServer& s) {
  return s.get().SceneOwners(kScene).value_or(std::vector<server::OwnerRow>{});
}

TEST(AuthorityRulesServerTest, ServerOnlyComponentsAreRefusedAndNeverRelayed) {
  TempDir dir;
  TestServer server(RulesConfig(dir));
  auto alice = Join(server.tcp_url(), "ta");
  auto bob = Join(server.tcp_url(), "tb");
  auto root = Join(server.tcp_url(), "tr");
  MoveAcked(*alice, kAlices, 1.0f);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}}));

  // The owner of the entity and an admin alike: refused, corrected away in their replicas.
  PutAcked(*alice, kAlices, kServerOnly, 50);
  EXPECT_EQ(NthRefusal(*alice, 1), ErrorCode::kServerOnlyComponent);
  PutAcked(*root, kAlices, kServerOnly, 60);
  EXPECT_EQ(NthRefusal(*root, 1), ErrorCode::kServerOnlyComponent);
  ExpectConverged(server, *alice);
  ExpectConverged(server, *root);
  EXPECT_FALSE(alice->store().HasComponentValue(kServerOnly, kAlices));
  EXPECT_FALSE(root->store().HasComponentValue(kServerOnly, kAlices));

  // Bob never saw the value: a later write of Alice's reaches him after the refused ones.
  MoveAcked(*alice, kAlices, 2.0f);
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store(), kAlices) == 2.0f; }, 10s));
  EXPECT_FALSE(bob->store().HasComponentValue(kServerOnly, kAlices));
  ExpectConverged(server, *bob);
  EXPECT_EQ(bob->stats().refused_writes, 0u);
}

TEST(AuthorityRulesServerTest, AdminRangesUnknownDefaultAndAnyComponents) {
  TempDir dir;
  TestServer server(RulesConfig(dir));
  auto alice = Join(server.tcp_url(), "ta");
  auto bob = Join(server.tcp_url(), "tb");
  auto root = Join(server.tcp_url(), "tr");
  MoveAcked(*alice, kAlices, 1.0f);

  // The admin-only range: a writer's creation is refused (not_admin) and undone in its replica;
  // an admin's is taken, and then a writer may not move it either.
  MoveAcked(*bob, kFurniture, 3.0f);
  EXPECT_EQ(NthRefusal(*bob, 1), ErrorCode::kNotAdmin);
  ASSERT_TRUE(
      bob->PollUntil([&] { return bob->store().FindTransform(kFurniture) == nullptr; }, 10s));
  MoveAcked(*root, kFurniture, 4.0f);
  ASSERT_TRUE(alice->PollUntil([&] { return XOf(alice->store(), kFurniture) == 4.0f; }, 10s));
  MoveAcked(*alice, kFurniture, 5.0f);
  EXPECT_EQ(NthRefusal(*alice, 1), ErrorCode::kNotAdmin);
  ASSERT_TRUE(alice->PollUntil([&] { return XOf(alice->store(), kFurniture) == 4.0f; }, 10s));

  // A component the file does not name follows "default" (admin here), even on one's own
  // entity; an admin writes it.
  PutAcked(*alice, kAlices, kUnknown, 70);
  EXPECT_EQ(NthRefusal(*alice, 2), ErrorCode::kNotAdmin);
  PutAcked(*root, kAlices, kUnknown, 80);
  ASSERT_TRUE(
      bob->PollUntil([&] { return bob->store().HasComponentValue(kUnknown, kAlices); }, 10s));

  // An "any" component: Bob writes it on Alice's entity; writing it claims nothing.
  PutAcked(*bob, kAlices, kAny, 90);
  PutAcked(*bob, kFree, kAny, 91);
  ASSERT_TRUE(alice->PollUntil([&] { return alice->store().HasComponentValue(kAny, kFree); }, 10s));
  EXPECT_TRUE(alice->store().HasComponentValue(kAny, kAlices));
  EXPECT_EQ(bob->stats().refused_writes, 1u);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}, {1050, "root"}}));
  // The "owner" Transform still claims: Alice takes the entity Bob only tagged.
  MoveAcked(*alice, kFree, 6.0f);
  EXPECT_EQ(alice->stats().refused_writes, 2u);
  EXPECT_EQ(Owners(server),
            (std::vector<server::OwnerRow>{{600, "alice"}, {700, "alice"}, {1050, "root"}}));
  for (client::Client* c : {alice.get(), bob.get(), root.get()}) ExpectConverged(server, *c);
}

TEST(AuthorityRulesServerTest, ServeNeedsAGoodRulesFile) {
  TempDir dir;
  ServerProcess missing(dir.path(), {"--authority", "rules"});
  EXPECT_EQ(missing.WaitExit(20s), 2);
  EXPECT_NE(missing.log().find("--authority rules needs --authority-rules FILE"), std::string::npos)
      << missing.log();
  ServerProcess lone(dir.path(), {"--authority-rules", dir.path() + "/none.json"});
  EXPECT_EQ(lone.WaitExit(20s), 2);
  EXPECT_NE(lone.log().find("--authority-rules needs --authority rules"), std::string::npos)
      << lone.log();
  ServerProcess absent(dir.path(),
                       {"--authority", "rules", "--authority-rules", dir.path() + "/none.json"});
  EXPECT_EQ(absent.WaitExit(20s), 2);
  EXPECT_NE(absent.log().find("cannot read --authority-rules"), std::string::npos) << absent.log();
  const std::string typo = dir.path() + "/typo.json";
  WriteFile(typo, R"({"default": "owner", "admin_entites": [[1000, 1099]]})");
  ServerProcess bad(dir.path(), {"--authority", "rules", "--authority-rules", typo});
  EXPECT_EQ(bad.WaitExit(20s), 2);
  EXPECT_NE(bad.log().find("unknown key \"admin_entites\""), std::string::npos) << bad.log();

  // A good file through the config file: the CLI hands the rules to the scenes.
  const std::string rules = dir.path() + "/rules.json";
  WriteFile(rules, kRules);
  const std::string config = dir.path() + "/serve.toml";
  WriteFile(config, ("authority = \"rules\"\nauthority-rules = \"" + rules + "\"\n").c_str());
  ServerProcess good(dir.path(), {"--config", config});
  ASSERT_TRUE(good.started()) << good.log();
  client::ClientOptions o;
  o.url = good.tcp_url();
  o.scene = kScene;
  client::Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.state_ready(); }, 20s));
  PutAcked(c, kAlices, kServerOnly, 5);
  EXPECT_EQ(NthRefusal(c, 1), ErrorCode::kServerOnlyComponent);
}

}  // namespace
}  // namespace scenecrdt::testing
