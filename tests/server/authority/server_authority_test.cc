// SPDX-License-Identifier: Apache-2.0
// Owner: server/scene/authority/authority.*. `--authority owner` end to end on 127.0.0.1
// (docs/AUTHORITY.md): principals from --auth names (and sessions without auth), the creator
// owning its entities, other writers' writes refused with a typed Refusal and corrected so
// that their replicas converge within one round trip (envelope clients and raw-DCL sockets),
// deletes refused, admins writing and deleting anything, ownership ending with the entity,
// ownership surviving a restart, and `open` mode unchanged.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/server/auth/jwt_verifier.h"
#include "tests/server/auth/jwt_test_util.h"
#include "tests/server/authority/authority_test_util.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;
using protocol::MessageType;

constexpr char kScene[] = "owned";
const protocol::EntityId kEntity = protocol::MakeEntityId(600, 0);

server::ServerConfig OwnerConfig(const std::string& auth_file) {
  server::ServerConfig c = TestServer::Config();
  c.access.auth_file = auth_file;
  c.authority = server::AuthorityMode::kOwner;
  return c;
}

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& token) {
  client::ClientOptions o;
  o.url = url;
  o.scene = kScene;
  o.token = token;
  o.reconnect.enabled = true;  // a refused own deletion rejoins for a snapshot
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join as " << token;
  return c;
}

protocol::Transform At(float x) {
  protocol::Transform t = protocol::kIdentityTransform;
  t.position.x = x;
  return t;
}

// The x of the entity's Transform in `store`, NaN-free sentinel -1e9 when it has none.
float XOf(const runtime::CrdtStore& store, protocol::EntityId e = kEntity) {
  const protocol::Transform* t = store.FindTransform(e);
  return t ? t->position.x : -1e9f;
}

// Writes and waits for the Ack of the write's frame.
void WriteAcked(client::Client& c, float x, protocol::EntityId e = kEntity) {
  ASSERT_TRUE(c.WriteTransform(e, At(x)).has_value());
  const uint64_t frame = c.Flush();
  ASSERT_NE(frame, 0u);
  ASSERT_TRUE(c.PollUntil([&] { return c.acked_frame_sequence() >= frame; }, 10s));
}

std::vector<server::OwnerRow> Owners(TestServer& s) {
  return s.get().SceneOwners(kScene).value_or(std::vector<server::OwnerRow>{});
}

TEST(AuthorityTest, OwnerRefusesOthersAndTheirReplicasConverge) {
  TempDir dir;
  TestServer server(OwnerConfig(WritePrincipalsAuthFile(dir)));
  auto alice = Join(server.tcp_url(), "ta");
  auto bob = Join(server.tcp_url(), "tb");
  WriteAcked(*alice, 1.0f);
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store()) == 1.0f; }, 10s));
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}}));

  // Bob's write is refused; his replica shows Alice's value again within one round trip.
  ASSERT_TRUE(bob->WriteTransform(kEntity, At(2.0f)).has_value());
  EXPECT_EQ(XOf(bob->store()), 2.0f);  // shown at once, as any local write
  ASSERT_NE(bob->Flush(), 0u);
  ASSERT_TRUE(bob->PollUntil(
      [&] { return bob->stats().refused_writes == 1 && XOf(bob->store()) == 1.0f; }, 10s));
  const auto refusals = bob->TakeRefusals();
  ASSERT_FALSE(refusals.empty());
  EXPECT_EQ(refusals.back().code, ErrorCode::kNotOwner);
  // Every replica and the scene hold one state: Alice's value (re-stamped by the correction).
  ASSERT_TRUE(alice->PollUntil(
      [&] { return alice->store().StateHashHex() == server.SceneHash(kScene); }, 10s));
  ASSERT_TRUE(
      bob->PollUntil([&] { return bob->store().StateHashHex() == server.SceneHash(kScene); }, 10s));
  EXPECT_EQ(XOf(alice->store()), 1.0f);

  // Alice still writes her entity (her timestamps go on above the correction).
  WriteAcked(*alice, 3.0f);
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store()) == 3.0f; }, 10s));

  // Bob cannot delete it: the scene keeps it.
  ASSERT_TRUE(bob->DeleteEntity(kEntity).has_value());
  const uint64_t frame = bob->Flush();
  ASSERT_NE(frame, 0u);
  ASSERT_TRUE(bob->PollUntil([&] { return bob->stats().refused_writes == 2; }, 10s));
  ASSERT_TRUE(bob->PollUntil([&] { return bob->acked_frame_sequence() >= frame; }, 10s));
  const std::string hash = server.SceneHash(kScene);
  EXPECT_EQ(alice->store().StateHashHex(), hash);
  EXPECT_EQ(XOf(alice->store()), 3.0f);
  // Bob's replica had tombstoned it: the client rejoined for a snapshot that rebuilt it.
  ASSERT_TRUE(bob->PollUntil(
      [&] { return bob->stats().resyncs == 1 && bob->store().StateHashHex() == hash; }, 10s));
  EXPECT_EQ(XOf(bob->store()), 3.0f);

  // An admin writes and deletes anything; the deletion ends the ownership.
  auto root = Join(server.tcp_url(), "tr");
  WriteAcked(*root, 4.0f);
  ASSERT_TRUE(alice->PollUntil([&] { return XOf(alice->store()) == 4.0f; }, 10s));
  ASSERT_TRUE(root->DeleteEntity(kEntity).has_value());
  const uint64_t deleted = root->Flush();
  ASSERT_TRUE(root->PollUntil([&] { return root->acked_frame_sequence() >= deleted; }, 10s));
  ASSERT_TRUE(
      alice->PollUntil([&] { return alice->store().FindTransform(kEntity) == nullptr; }, 10s));
  EXPECT_TRUE(Owners(server).empty());
  EXPECT_EQ(root->stats().refused_writes, 0u);

  // The next version of the number is whoever creates it first: Bob now.
  const protocol::EntityId next = protocol::MakeEntityId(600, 1);
  WriteAcked(*bob, 5.0f, next);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "bob"}}));
  ASSERT_TRUE(alice->WriteTransform(next, At(6.0f)).has_value());
  ASSERT_NE(alice->Flush(), 0u);
  ASSERT_TRUE(alice->PollUntil(
      [&] { return alice->stats().refused_writes == 1 && XOf(alice->store(), next) == 5.0f; },
      10s));
}

TEST(AuthorityTest, OwnershipSurvivesARestart) {
  TempDir dir;
  TempDir data;
  const std::string auth = WritePrincipalsAuthFile(dir);
  {
    TestServer server(OwnerConfig(auth), data.path());
    auto alice = Join(server.tcp_url(), "ta");
    WriteAcked(*alice, 1.0f);
    alice->Stop();
    EXPECT_EQ(server.Stop(), 0);
  }
  TestServer server(OwnerConfig(auth), data.path());
  auto bob = Join(server.tcp_url(), "tb");
  ASSERT_EQ(XOf(bob->store()), 1.0f);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}}));
  ASSERT_TRUE(bob->WriteTransform(kEntity, At(2.0f)).has_value());
  ASSERT_NE(bob->Flush(), 0u);
  ASSERT_TRUE(bob->PollUntil(
      [&] { return bob->stats().refused_writes == 1 && XOf(bob->store()) == 1.0f; }, 10s));
  auto alice = Join(server.tcp_url(), "ta");
  WriteAcked(*alice, 3.0f);
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store()) == 3.0f; }, 10s));
}

TEST(AuthorityTest, WithoutAuthEachSessionIsItsOwnPrincipal) {
  server::ServerConfig config = TestServer::Config();
  config.authority = server::AuthorityMode::kOwner;
  TestServer server(config);
  auto first = Join(server.tcp_url(), "");
  auto second = Join(server.tcp_url(), "");
  WriteAcked(*first, 1.0f);
  ASSERT_TRUE(second->PollUntil([&] { return XOf(second->store()) == 1.0f; }, 10s));
  ASSERT_TRUE(second->WriteTransform(kEntity, At(2.0f)).has_value());
  ASSERT_NE(second->Flush(), 0u);
  ASSERT_TRUE(second->PollUntil(
      [&] { return second->stats().refused_writes == 1 && XOf(second->store()) == 1.0f; }, 10s));
}

TEST(AuthorityTest, OpenModeLetsEveryWriterWrite) {
  TempDir dir;
  server::ServerConfig config = OwnerConfig(WritePrincipalsAuthFile(dir));
  config.authority = server::AuthorityMode::kOpen;
  TestServer server(config);
  auto alice = Join(server.tcp_url(), "ta");
  auto bob = Join(server.tcp_url(), "tb");
  WriteAcked(*alice, 1.0f);
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store()) == 1.0f; }, 10s));
  WriteAcked(*bob, 2.0f);
  ASSERT_TRUE(alice->PollUntil([&] { return XOf(alice->store()) == 2.0f; }, 10s));
  EXPECT_EQ(bob->stats().refused_writes, 0u);
  EXPECT_TRUE(Owners(server).empty());
}

void Append(std::vector<uint8_t>& out, MessageType type, protocol::EntityId entity,
            uint32_t component, uint32_t timestamp, std::span<const uint8_t> data = {}) {
  protocol::CrdtMessage m;
  m.type = type;
  m.entity = entity;
  m.component = component;
  m.timestamp = timestamp;
  m.data = data;
  protocol::AppendMessage(m, out);
}

// Receives chunks into `replica` until `done` (false on timeout).
bool ReceiveUntil(DclSocket& socket, runtime::CrdtStore& replica,
                  const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    auto chunk = socket.Receive(1s);
    if (chunk) (void)replica.MergeStream(*chunk);
  }
  return true;
}

TEST(AuthorityTest, RawDclWriteIsCorrectedAboveItsTimestamp) {
  TempDir dir;
  TestServer server(OwnerConfig(WritePrincipalsAuthFile(dir)));
  auto alice = Join(server.tcp_url(), "ta");
  WriteAcked(*alice, 1.0f);
  const uint32_t alice_ts =
      alice->store().FindRegister(protocol::kTransformComponentId, kEntity)->timestamp;

  // Bob's engine: joins, applies its own write locally (as @dcl/ecs does), sends it.
  DclSocket bob(server.get().http_port(), std::string("/dcl/") + kScene + "?token=tb");
  ASSERT_TRUE(bob.connected());
  runtime::CrdtStore engine;
  auto snapshot = bob.Receive();
  ASSERT_TRUE(snapshot.has_value());
  ASSERT_TRUE(engine.MergeStream(*snapshot).has_value());
  const protocol::TransformBytes moved = protocol::StoreTransform(At(9.0f));
  std::vector<uint8_t> chunk;
  const uint32_t bob_ts = alice_ts + 5;
  Append(chunk, MessageType::kPutComponent, kEntity, protocol::kTransformComponentId, bob_ts,
         moved);
  // A component Alice's entity does not have: the correction is a deletion above it.
  const std::vector<uint8_t> payload = {1, 2, 3};
  Append(chunk, MessageType::kPutComponent, kEntity, 1234, 7, payload);
  ASSERT_TRUE(engine.MergeStream(chunk).has_value());
  ASSERT_EQ(XOf(engine), 9.0f);
  ASSERT_TRUE(bob.Send(chunk));

  // The correction wins in the engine: Alice's value, stamped just above Bob's write.
  ASSERT_TRUE(ReceiveUntil(bob, engine, [&] {
    return XOf(engine) == 1.0f && !engine.HasComponentValue(1234, kEntity);
  }));
  EXPECT_EQ(engine.FindRegister(protocol::kTransformComponentId, kEntity)->timestamp, bob_ts + 1);
  EXPECT_EQ(engine.FindRegister(1234, kEntity)->timestamp, 8u);
  EXPECT_EQ(engine.StateHashHex(), server.SceneHash(kScene));
  // Alice's replica gets the same correction (an ordinary write of the scene).
  ASSERT_TRUE(alice->PollUntil(
      [&] { return alice->store().StateHashHex() == server.SceneHash(kScene); }, 10s));
  EXPECT_EQ(XOf(alice->store()), 1.0f);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}}));
}

TEST(AuthorityTest, AdminTransfersOwnershipAndOthersAreRefused) {
  TempDir dir;
  TestServer server(OwnerConfig(WritePrincipalsAuthFile(dir)));
  auto alice = Join(server.tcp_url(), "ta");
  auto bob = Join(server.tcp_url(), "tb");
  auto root = Join(server.tcp_url(), "tr");
  WriteAcked(*alice, 1.0f);

  // A writer may not transfer: a typed refusal, nothing changes.
  ASSERT_TRUE(bob->TransferOwnership(kEntity, "bob").has_value());
  std::vector<client::Refusal> refusals;
  ASSERT_TRUE(bob->PollUntil(
      [&] {
        for (auto& r : bob->TakeRefusals()) refusals.push_back(r);
        return !refusals.empty();
      },
      10s));
  EXPECT_EQ(refusals.front().code, ErrorCode::kNotAdmin);
  EXPECT_EQ(bob->stats().ownership_transfers, 0u);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "alice"}}));

  // An admin may: Bob writes it from now on, Alice is refused.
  ASSERT_TRUE(root->TransferOwnership(kEntity, "bob").has_value());
  ASSERT_TRUE(root->PollUntil([&] { return root->stats().ownership_transfers == 1; }, 10s));
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{600, "bob"}}));
  ASSERT_TRUE(bob->PollUntil([&] { return XOf(bob->store()) == 1.0f; }, 10s));
  WriteAcked(*bob, 2.0f);
  ASSERT_TRUE(alice->PollUntil([&] { return XOf(alice->store()) == 2.0f; }, 10s));
  ASSERT_TRUE(alice->WriteTransform(kEntity, At(3.0f)).has_value());
  ASSERT_NE(alice->Flush(), 0u);
  ASSERT_TRUE(alice->PollUntil(
      [&] { return alice->stats().refused_writes == 1 && XOf(alice->store()) == 2.0f; }, 10s));
}

// HS256 tokens signed with one secret.
constexpr char kSecret[] = "authority-test-secret-authority-test-secret-authority-test-0123";

std::string Jwt(const std::string& sub, const std::string& extra = {}) {
  const int64_t exp = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count() +
                      600;
  const std::string claims = R"({"sub":")" + sub + R"(","scenes":"*","role":"write","exp":)" +
                             std::to_string(exp) + extra + "}";
  const std::string input = SigningInput(R"({"alg":"HS256","typ":"JWT"})", claims);
  return JoinToken(input, SignHs256(kSecret, input));
}

TEST(AuthorityTest, RangeGrantsOwnTheirNumbersFromTheStart) {
  TempDir dir;
  const std::string secret_file = dir.path() + "/secret";
  FILE* f = std::fopen(secret_file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs(kSecret, f);
  std::fclose(f);
  server::ServerConfig config = TestServer::Config();
  config.access.jwt_secret_files = {secret_file};
  config.authority = server::AuthorityMode::kOwner;
  TestServer server(config);
  auto carol = Join(server.tcp_url(), Jwt("carol", R"(,"entities":[[1000,1999],[3000,3000]])"));
  auto dave = Join(server.tcp_url(), Jwt("dave"));
  const protocol::EntityId inside = protocol::MakeEntityId(1500, 0);
  const protocol::EntityId outside = protocol::MakeEntityId(2500, 0);
  const protocol::EntityId reserved_for_carol = protocol::MakeEntityId(1600, 0);

  WriteAcked(*carol, 1.0f, inside);
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{1500, "carol"}}));
  // Carol may not create outside her ranges.
  ASSERT_TRUE(carol->WriteTransform(outside, At(2.0f)).has_value());
  ASSERT_NE(carol->Flush(), 0u);
  ASSERT_TRUE(carol->PollUntil([&] { return carol->stats().refused_writes == 1; }, 10s));
  // Dave may not create inside Carol's range (she owns it before writing), only outside.
  ASSERT_TRUE(dave->WriteTransform(reserved_for_carol, At(3.0f)).has_value());
  ASSERT_NE(dave->Flush(), 0u);
  ASSERT_TRUE(dave->PollUntil([&] { return dave->stats().refused_writes == 1; }, 10s));
  WriteAcked(*dave, 4.0f, outside);
  ASSERT_TRUE(carol->PollUntil([&] { return XOf(carol->store(), outside) == 4.0f; }, 10s));
  ASSERT_TRUE(dave->PollUntil(
      [&] { return dave->store().StateHashHex() == server.SceneHash(kScene); }, 10s));
  ASSERT_TRUE(carol->PollUntil(
      [&] { return carol->store().StateHashHex() == server.SceneHash(kScene); }, 10s));
  EXPECT_EQ(Owners(server), (std::vector<server::OwnerRow>{{1500, "carol"}, {2500, "dave"}}));
}

TEST(AuthorityTest, BadEntityRangesRefuseTheToken) {
  auto key = server::JwtKey::FromSecret(kSecret);
  ASSERT_TRUE(key.has_value());
  std::vector<server::JwtKey> keys;
  keys.push_back(std::move(key.value()));
  auto verifier = server::JwtVerifier::Create(std::move(keys));
  ASSERT_TRUE(verifier.has_value());
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  const auto reason = [&](const std::string& extra) -> std::string {
    auto claims = verifier->Verify(Jwt("erin", extra), now);
    return claims.has_value() ? "ok" : claims.error().detail;
  };
  EXPECT_EQ(reason(R"(,"entities":[[600,700]])"), "ok");
  EXPECT_EQ(reason(R"(,"entities":[[700,600]])"), "bad_entities");    // lo > hi
  EXPECT_EQ(reason(R"(,"entities":[[100,700]])"), "bad_entities");    // reserved numbers
  EXPECT_EQ(reason(R"(,"entities":[[600,65535]])"), "bad_entities");  // past the last number
  EXPECT_EQ(reason(R"(,"entities":[[600]])"), "bad_entities");
  EXPECT_EQ(reason(R"(,"entities":[[-1,700]])"), "bad_entities");
  EXPECT_EQ(reason(R"(,"entities":"all")"), "bad_entities");
  auto ok = verifier->Verify(Jwt("erin", R"(,"entities":[[600,700],[900,900]])"), now);
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->entities, (std::vector<std::pair<uint32_t, uint32_t>>{{600, 700}, {900, 900}}));
}

// (--authority owner|rules with --redis is built: tests/cluster/server_cluster_authority_test.cc.)
TEST(AuthorityTest, ServeRefusesUnknownModes) {
  TempDir dir;
  ServerProcess bogus(dir.path(), {"--authority", "everyone"});
  EXPECT_EQ(bogus.WaitExit(20s), 2);
  EXPECT_NE(bogus.log().find("--authority must be open, owner or rules"), std::string::npos)
      << bogus.log();
}

}  // namespace
}  // namespace scenecrdt::testing
