// SPDX-License-Identifier: Apache-2.0
// Owner: server/cluster/cluster_owners.* and server/scene/authority/scene_authority.*.
// `serve --redis --authority owner|rules` on two in-process nodes and one real redis-server
// (docs/AUTHORITY.md "Cluster"): two principals creating the same entities at once on
// different nodes end with one owner per entity, the same on every node and on a node that
// loads the scene later, the owner's value everywhere, and every replica converged; another
// node's correction never undoes an owner's acked write; the owner rows' and correction marks'
// encodings refuse what they cannot parse; rules mode works in a cluster; a node that merged a
// snapshot for entries trimmed before it read them knows their owners.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <thread>

#include "scenecrdt/cluster/compactor.h"
#include "scenecrdt/cluster/redis_connection.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/server/cluster/cluster_owners.h"
#include "scenecrdt/server/scene/authority/authority.h"
#include "scenecrdt/server/scene/authority/authority_rules.h"
#include "tests/cluster/cluster_node_util.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/server/authority/authority_test_util.h"
#include "tests/server/server_test_util.h"
#include "tests/wait_until.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kScene[] = "race";
constexpr uint32_t kFirst = 600;
constexpr uint32_t kEntities = 48;

server::ServerConfig AuthorityNode(const RedisTestServer& redis, const std::string& auth,
                                   server::AuthorityMode mode = server::AuthorityMode::kOwner,
                                   uint32_t compact_ms = 0) {
  server::ServerConfig c = NodeConfig(redis, compact_ms, /*retain_ms=*/0);
  c.access.auth_file = auth;
  c.authority = mode;
  return c;
}

protocol::Transform At(float x) {
  protocol::Transform t = protocol::kIdentityTransform;
  t.position.x = x;
  return t;
}

// Both nodes hold one state (each merges the other's entries asynchronously).
bool SameState(TestServer& a, TestServer& b) {
  return WaitUntil([&] { return a.SceneHash(kScene) == b.SceneHash(kScene); }, 20s);
}

std::vector<server::OwnerRow> Owners(TestServer& node) {
  return node.get().SceneOwners(kScene).value_or(std::vector<server::OwnerRow>{});
}

// Whose value an x is: alice writes 1000 + round, bob 2000 + round.
std::string WriterOf(float x) { return x >= 2000.0f ? "bob" : x >= 1000.0f ? "alice" : "?"; }

TEST(ClusterAuthorityTest, ConcurrentCreationsOnTwoNodesGetOneOwnerEverywhere) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string auth = WritePrincipalsAuthFile(dir);
  TestServer a_node(AuthorityNode(redis, auth));
  TestServer b_node(AuthorityNode(redis, auth));
  auto alice = Join(a_node.tcp_url(), kScene, std::nullopt, "ta");
  auto bob = Join(b_node.tcp_url(), kScene, std::nullopt, "tb");
  // Both create the entities upwards, a few per frame, at the same time: each group of
  // numbers is claimed by both, on different nodes, at about the same moment.
  constexpr int kRounds = 3;
  const auto writer = [&](client::Client& c, float base, bool up) {
    for (int round = 0; round < kRounds; ++round) {
      for (uint32_t i = 0; i < kEntities; ++i) {
        const uint32_t number = up ? kFirst + i : kFirst + kEntities - 1 - i;
        ASSERT_TRUE(c.WriteTransform(protocol::MakeEntityId(number, 0),
                                     At(base + static_cast<float>(round)))
                        .has_value());
        if (i % 4 == 3) {
          c.Flush();
          c.Poll();
        }
      }
    }
    c.Flush();
    EXPECT_TRUE(c.PollUntil([&] { return c.pending_frames() == 0; }, 30s));
  };
  std::thread ta([&] { writer(*alice, 1000.0f, true); });
  std::thread tb([&] { writer(*bob, 2000.0f, true); });
  ta.join();
  tb.join();

  // One owner per entity, the same on both nodes.
  std::vector<server::OwnerRow> owners;
  ASSERT_TRUE(WaitUntil(
      [&] {
        owners = Owners(a_node);
        return owners.size() == kEntities && owners == Owners(b_node);
      },
      20s))
      << "owners: " << owners.size() << " on node a, " << Owners(b_node).size() << " on node b";
  std::size_t alices = 0;
  for (const auto& [number, principal] : owners) {
    EXPECT_TRUE(principal == "alice" || principal == "bob") << principal;
    alices += principal == "alice" ? 1 : 0;
  }
  // Both nodes and both replicas hold one state, and every entity holds its owner's value.
  ASSERT_TRUE(SameState(a_node, b_node));
  for (auto* c : {alice.get(), bob.get()}) {
    ASSERT_TRUE(
        c->PollUntil([&] { return c->store().StateHashHex() == a_node.SceneHash(kScene); }, 20s))
        << "a replica did not converge";
  }
  ASSERT_TRUE(SameState(a_node, b_node));
  for (const auto& [number, principal] : owners) {
    const protocol::Transform* t = alice->store().FindTransform(protocol::MakeEntityId(number, 0));
    ASSERT_NE(t, nullptr) << number;
    EXPECT_EQ(WriterOf(t->position.x), principal) << "entity " << number << " x " << t->position.x;
  }
  const double lost = NodeMetric(a_node, "scenecrdt_authority_cluster_lost_claims_total") +
                      NodeMetric(b_node, "scenecrdt_authority_cluster_lost_claims_total");
  std::fprintf(stderr, "alice owns %zu of %u entities; refusals: alice %llu, bob %llu; lost %g\n",
               alices, kEntities, static_cast<unsigned long long>(alice->stats().refused_writes),
               static_cast<unsigned long long>(bob->stats().refused_writes), lost);
  // Both wrote every entity: whoever does not own one was refused (typed refusals).
  EXPECT_GT(alice->stats().refused_writes + bob->stats().refused_writes, 0u)
      << "alice owns " << alices;

  // A node that loads the scene from Redis later has the same owners and state.
  TestServer late(AuthorityNode(redis, auth));
  auto watcher = Join(late.tcp_url(), kScene, std::nullopt, "ta");
  EXPECT_EQ(Owners(late), owners);
  EXPECT_EQ(late.SceneHash(kScene), a_node.SceneHash(kScene));

  // After the races, each owner's next write holds on every node and every replica.
  for (const auto& [number, principal] : owners) {
    client::Client& owner = principal == "alice" ? *alice : *bob;
    ASSERT_TRUE(owner
                    .WriteTransform(protocol::MakeEntityId(number, 0),
                                    At(principal == "alice" ? 1500.0f : 2500.0f))
                    .has_value());
  }
  alice->Flush();
  bob->Flush();
  ASSERT_TRUE(alice->PollUntil([&] { return alice->pending_frames() == 0; }, 20s));
  ASSERT_TRUE(bob->PollUntil([&] { return bob->pending_frames() == 0; }, 20s));
  EXPECT_TRUE(SameState(a_node, b_node));
  EXPECT_TRUE(SameState(a_node, late));
  const auto last_writes_hold = [&](client::Client& c) {
    for (const auto& [number, principal] : owners) {
      const protocol::Transform* t = c.store().FindTransform(protocol::MakeEntityId(number, 0));
      if (!t || t->position.x != (principal == "alice" ? 1500.0f : 2500.0f)) return false;
    }
    return true;
  };
  EXPECT_TRUE(alice->PollUntil([&] { return last_writes_hold(*alice); }, 20s));
  EXPECT_TRUE(bob->PollUntil([&] { return last_writes_hold(*bob); }, 20s));
  EXPECT_TRUE(watcher->PollUntil([&] { return last_writes_hold(*watcher); }, 20s));

  // An admin's transfer on node b reaches node a and the Redis hash (a node loading later).
  auto root = Join(b_node.tcp_url(), kScene, std::nullopt, "tr");
  const auto [number, principal] = owners.front();
  const std::string other = principal == "alice" ? "bob" : "alice";
  ASSERT_TRUE(root->TransferOwnership(protocol::MakeEntityId(number, 0), other).has_value());
  ASSERT_TRUE(root->PollUntil([&] { return root->stats().ownership_transfers == 1; }, 20s));
  auto moved = owners;
  moved.front().second = other;
  EXPECT_TRUE(WaitUntil([&] { return Owners(a_node) == moved; }, 20s));
  TestServer later(AuthorityNode(redis, auth));
  auto joiner = Join(later.tcp_url(), kScene, std::nullopt, "ta");
  EXPECT_EQ(Owners(later), moved);
}

// The cross-node correction window (docs/AUTHORITY.md "Cluster"): bob, a non-owner on node b,
// keeps writing alice's entity; node b refuses and corrects each write with the value it has,
// stamped above bob's. Meanwhile alice writes the entity on node a, which admits and acks her
// write before it reads node b's correction (the test holds node a's read loop so that it does
// every round: HoldEntriesForTest). The correction is stamped above alice's write with her
// previous value; node a re-stamps her write above it, so every node and replica ends with it.
TEST(ClusterAuthorityTest, AnotherNodesCorrectionNeverUndoesAnAckedOwnerWrite) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string auth = WritePrincipalsAuthFile(dir);
  TestServer a_node(AuthorityNode(redis, auth));
  TestServer b_node(AuthorityNode(redis, auth));
  auto alice = Join(a_node.tcp_url(), kScene, std::nullopt, "ta");
  auto bob = Join(b_node.tcp_url(), kScene, std::nullopt, "tb");
  auto watch_a = Join(a_node.tcp_url(), kScene, std::nullopt, "tr");
  auto watch_b = Join(b_node.tcp_url(), kScene, std::nullopt, "tr");
  auto bob_a = Join(a_node.tcp_url(), kScene, std::nullopt, "tb");  // bob on node a too
  const protocol::EntityId e = protocol::MakeEntityId(800, 0);
  const auto x_of = [&](client::Client& c) {
    const protocol::Transform* t = c.store().FindTransform(e);
    return t ? t->position.x : -1.0f;
  };
  // Every node and replica at one state, holding alice's value `x`.
  const auto converged = [&](float x) {
    for (auto* c : {alice.get(), bob.get(), watch_a.get(), watch_b.get(), bob_a.get()}) {
      const bool ok = c->PollUntil(
          [&] {
            const std::string hash = a_node.SceneHash(kScene);
            return x_of(*c) == x && c->store().StateHashHex() == hash &&
                   hash == b_node.SceneHash(kScene);
          },
          5s);
      if (!ok) {
        ADD_FAILURE() << "a replica holds x " << x_of(*c) << ", alice's acked write is " << x;
        return false;
      }
    }
    return true;
  };
  ASSERT_TRUE(alice->WriteTransform(e, At(1000.0f)).has_value());
  alice->Flush();
  ASSERT_TRUE(alice->PollUntil([&] { return alice->pending_frames() == 0; }, 5s));
  ASSERT_TRUE(converged(1000.0f));
  server::ClusterNode& a_cluster = *a_node.get().cluster();
  constexpr int kRounds = 4;
  for (int round = 1; round <= kRounds; ++round) {
    const float acked = 1000.0f + static_cast<float>(round);
    const float before = acked - 1.0f;
    a_cluster.HoldEntriesForTest(true);
    // Bob's write is refused on node b and corrected there (his replica shows alice's value).
    const uint64_t refused = bob->stats().refused_writes;
    ASSERT_TRUE(bob->WriteTransform(e, At(2000.0f + static_cast<float>(round))).has_value());
    bob->Flush();
    const bool corrected = bob->PollUntil(
        [&] { return bob->stats().refused_writes > refused && x_of(*bob) == before; }, 5s);
    // Alice's write, stamped at or below that correction, is admitted and acked on node a.
    ASSERT_TRUE(alice->WriteTransform(e, At(acked)).has_value());
    alice->Flush();
    const bool acked_a = alice->PollUntil([&] { return alice->pending_frames() == 0; }, 5s);
    a_cluster.HoldEntriesForTest(false);
    ASSERT_TRUE(corrected) << "round " << round;
    ASSERT_TRUE(acked_a) << "round " << round;
    ASSERT_TRUE(converged(acked)) << "round " << round;
  }
  EXPECT_GE(NodeMetric(a_node, "scenecrdt_authority_counter_corrections_total"), kRounds);
  // The other order: node a has merged node b's correction when alice's write, stamped before
  // she saw it, arrives there; it is re-stamped above the correction (the single-node rule).
  for (int round = kRounds + 1; round <= kRounds + 2; ++round) {
    const float acked = 1000.0f + static_cast<float>(round);
    const float before = acked - 1.0f;
    const uint64_t refused = bob->stats().refused_writes;
    ASSERT_TRUE(bob->WriteTransform(e, At(2000.0f + static_cast<float>(round))).has_value());
    bob->Flush();
    ASSERT_TRUE(bob->PollUntil(
        [&] { return bob->stats().refused_writes > refused && x_of(*bob) == before; }, 5s));
    const uint32_t correction =
        bob->store().FindRegister(protocol::kTransformComponentId, e)->timestamp;
    ASSERT_TRUE(alice->PollUntil(
        [&] {
          const auto r = alice->store().FindRegister(protocol::kTransformComponentId, e);
          return r && r->timestamp == correction;
        },
        5s));
    protocol::CrdtMessage m;
    m.type = protocol::MessageType::kPutComponent;
    m.entity = e;
    m.component = protocol::kTransformComponentId;
    m.timestamp = correction - 1;
    const protocol::TransformBytes bytes = protocol::StoreTransform(At(acked));
    m.data = bytes;
    std::vector<uint8_t> chunk;
    protocol::AppendMessage(m, chunk);
    ASSERT_NE(alice->SendCrdt(chunk), 0u);
    ASSERT_TRUE(alice->PollUntil([&] { return alice->pending_frames() == 0; }, 5s));
    ASSERT_TRUE(converged(acked)) << "round " << round;
  }
  // Node a re-stamps alice's write itself first (bob's refused write on node a: a correction
  // carrying her value), then node b's correction, stamped higher, arrives with her previous
  // value: the correction of node a's still carries her admitted write and is countered.
  {
    const int round = kRounds + 3;
    const float acked = 1000.0f + static_cast<float>(round);
    const float before = acked - 1.0f;
    const uint32_t now = bob->store().FindRegister(protocol::kTransformComponentId, e)->timestamp;
    a_cluster.HoldEntriesForTest(true);
    const uint64_t refused = bob->stats().refused_writes;
    protocol::CrdtMessage m;
    m.type = protocol::MessageType::kPutComponent;
    m.entity = e;
    m.component = protocol::kTransformComponentId;
    m.timestamp = now + 10;
    const protocol::TransformBytes bytes = protocol::StoreTransform(At(3000.0f));
    m.data = bytes;
    std::vector<uint8_t> chunk;
    protocol::AppendMessage(m, chunk);
    ASSERT_NE(bob->SendCrdt(chunk), 0u);
    const bool corrected_b = bob->PollUntil(
        [&] { return bob->stats().refused_writes > refused && x_of(*bob) == before; }, 5s);
    ASSERT_TRUE(alice->WriteTransform(e, At(acked)).has_value());
    alice->Flush();
    const bool acked_a = alice->PollUntil([&] { return alice->pending_frames() == 0; }, 5s);
    const bool seen = bob_a->PollUntil([&] { return x_of(*bob_a) == acked; }, 5s);
    const uint64_t refused_a = bob_a->stats().refused_writes;
    ASSERT_TRUE(bob_a->WriteTransform(e, At(3001.0f)).has_value());
    bob_a->Flush();
    const bool corrected_a = bob_a->PollUntil(
        [&] { return bob_a->stats().refused_writes > refused_a && x_of(*bob_a) == acked; }, 5s);
    a_cluster.HoldEntriesForTest(false);
    ASSERT_TRUE(corrected_b && acked_a && seen && corrected_a);
    ASSERT_TRUE(converged(acked)) << "round " << round;
  }
}

TEST(ClusterAuthorityTest, RulesModeRefusesServerOnlyComponentsOnEveryNode) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string auth = WritePrincipalsAuthFile(dir);
  std::string why;
  auto rules =
      server::AuthorityRules::Parse(R"({"default": "owner", "components": {"1001": "none"}})", why);
  ASSERT_TRUE(rules.has_value()) << why;
  auto shared = std::make_shared<const server::AuthorityRules>(std::move(*rules));
  // Compaction folds the stream into snapshots meanwhile: the owners live in their own hash.
  server::ServerConfig config =
      AuthorityNode(redis, auth, server::AuthorityMode::kRules, /*compact_ms=*/100);
  config.authority_rules = shared;
  TestServer a_node(config);
  TestServer b_node(config);
  auto alice = Join(a_node.tcp_url(), kScene, std::nullopt, "ta");
  auto bob = Join(b_node.tcp_url(), kScene, std::nullopt, "tb");
  const protocol::EntityId e = protocol::MakeEntityId(700, 0);
  ASSERT_TRUE(alice->WriteTransform(e, At(1.0f)).has_value());
  ASSERT_NE(alice->Flush(), 0u);
  ASSERT_TRUE(alice->PollUntil([&] { return alice->pending_frames() == 0; }, 20s));
  ASSERT_TRUE(WaitUntil([&] { return Owners(b_node).size() == 1; }, 20s));
  EXPECT_EQ(Owners(b_node), (std::vector<server::OwnerRow>{{700, "alice"}}));
  // Bob, on the other node, may not write Alice's entity; nobody may write component 1001.
  ASSERT_TRUE(bob->PollUntil([&] { return bob->store().FindTransform(e) != nullptr; }, 20s));
  ASSERT_TRUE(bob->WriteTransform(e, At(2.0f)).has_value());
  const uint8_t blob[] = {1, 2, 3};
  protocol::CrdtMessage m;
  m.type = protocol::MessageType::kPutComponent;
  m.entity = e;
  m.component = 1001;
  m.timestamp = 50;
  m.data = blob;
  std::vector<uint8_t> chunk;
  protocol::AppendMessage(m, chunk);
  bob->Flush();
  ASSERT_NE(alice->SendCrdt(chunk), 0u);
  ASSERT_TRUE(bob->PollUntil([&] { return bob->stats().refused_writes >= 1; }, 20s));
  ASSERT_TRUE(alice->PollUntil([&] { return alice->stats().refused_writes >= 1; }, 20s));
  ASSERT_TRUE(SameState(a_node, b_node));
  ASSERT_TRUE(
      bob->PollUntil([&] { return bob->store().StateHashHex() == a_node.SceneHash(kScene); }, 20s));
  EXPECT_EQ(bob->store().FindTransform(e)->position.x, 1.0f);
  // After compaction trimmed the stream, a node loading the scene has the same owner.
  ASSERT_TRUE(WaitUntil([&] { return StreamLength(redis, kScene) <= 2; }, 20s))
      << StreamLength(redis, kScene) << " entries left";
  TestServer late(config);
  auto carol = Join(late.tcp_url(), kScene, std::nullopt, "tb");
  EXPECT_EQ(Owners(late), (std::vector<server::OwnerRow>{{700, "alice"}}));
  EXPECT_EQ(late.SceneHash(kScene), a_node.SceneHash(kScene));
}

bool Acked(client::Client& c) {
  c.Flush();
  return c.PollUntil([&] { return c.pending_frames() == 0; }, 5s);
}

// Issue 20 (docs/AUTHORITY.md "Cluster", "After a trimmed gap"): node b's read loop misses
// entries that a compaction trims (it is held: HoldEntriesForTest), so it will merge the
// snapshot, and the owner rows of those entries are in no entry any more. Alice (node a)
// creates 900 (known to node b), then, node b held, 901 (node b's read loop waits with that
// entry), 902..911 and deletes 900 (both unread by node b); the compaction trims all of it.
// `expected`: the owners in the hash. Node b is still held on return.
void TrimWhileNodeBIsHeld(const RedisTestServer& redis, TestServer& a_node, TestServer& b_node,
                          client::Client& alice, std::vector<server::OwnerRow>& expected) {
  const auto create = [&](uint32_t number) {
    ASSERT_TRUE(alice.WriteTransform(protocol::MakeEntityId(number, 0), At(1.0f)).has_value());
    ASSERT_TRUE(Acked(alice)) << number;
  };
  create(900);
  ASSERT_TRUE(WaitUntil([&] { return Owners(b_node).size() == 1; }, 5s));
  server::ClusterNode& b_cluster = *b_node.get().cluster();
  b_cluster.HoldEntriesForTest(true);
  create(901);
  ASSERT_TRUE(WaitUntil([&] { return b_cluster.EntriesHeldForTest(); }, 5s));
  for (uint32_t number = 902; number <= 911; ++number) create(number);
  ASSERT_TRUE(alice.DeleteEntity(protocol::MakeEntityId(900, 0)).has_value());
  ASSERT_TRUE(Acked(alice));
  expected.clear();
  for (uint32_t number = 901; number <= 911; ++number) expected.emplace_back(number, "alice");
  ASSERT_TRUE(WaitUntil([&] { return Owners(a_node) == expected; }, 5s));
  cluster::RedisConnection connection(TestRedisOptions(redis.url()));
  cluster::CompactionOptions compaction;
  compaction.retain_ms = 0;  // every entry folded into the snapshot is trimmed
  cluster::ClusterConfig config;
  config.node_id = "test-compactor";
  cluster::Compactor compactor(connection, config, compaction);
  auto compacted = compactor.CompactScene(kScene);
  ASSERT_TRUE(compacted.has_value());
  ASSERT_EQ(compacted->outcome, cluster::CompactionResult::Outcome::kCompacted);
  ASSERT_GE(compacted->trimmed, 13u);
}

// Node b re-reads the owner hash with the snapshot, and it replaces its owner table: it knows
// that alice owns what she created in the trimmed entries (bob may not delete it through node
// b) and that 900, deleted there, is nobody's any more (bob may create the number again).
TEST(ClusterAuthorityTest, OwnersOfTrimmedEntriesAreKnownAfterASnapshotReload) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string auth = WritePrincipalsAuthFile(dir);
  TestServer a_node(AuthorityNode(redis, auth));  // no periodic compaction: the test compacts
  TestServer b_node(AuthorityNode(redis, auth));
  auto alice = Join(a_node.tcp_url(), kScene, std::nullopt, "ta");
  auto bob = Join(b_node.tcp_url(), kScene, std::nullopt, "tb");
  std::vector<server::OwnerRow> expected;
  ASSERT_NO_FATAL_FAILURE(TrimWhileNodeBIsHeld(redis, a_node, b_node, *alice, expected));

  b_node.get().cluster()->HoldEntriesForTest(false);
  ASSERT_TRUE(SameState(a_node, b_node));
  EXPECT_TRUE(WaitUntil([&] { return Owners(b_node) == expected; }, 5s))
      << Owners(b_node).size() << " owners on node b, " << expected.size() << " on node a";
  EXPECT_GE(NodeMetric(b_node, "scenecrdt_cluster_snapshot_reloads_total"), 1);
  EXPECT_GE(NodeMetric(b_node, "scenecrdt_cluster_owner_rereads_total"), 1);

  // Bob may not delete alice's entity through node b: refused, nothing deleted anywhere.
  const protocol::EntityId e = protocol::MakeEntityId(905, 0);
  ASSERT_TRUE(bob->PollUntil([&] { return bob->store().FindTransform(e) != nullptr; }, 5s));
  const uint64_t refused = bob->stats().refused_writes;
  ASSERT_TRUE(bob->DeleteEntity(e).has_value());
  bob->Flush();
  EXPECT_TRUE(bob->PollUntil([&] { return bob->stats().refused_writes > refused; }, 5s));
  // Ownership of 900 ended with its deletion: bob creates the number again (a new version).
  ASSERT_TRUE(bob->WriteTransform(protocol::MakeEntityId(900, 1), At(2.0f)).has_value());
  EXPECT_TRUE(Acked(*bob));
  EXPECT_EQ(bob->stats().refused_writes, refused + 1);
  expected.insert(expected.begin(), {900, "bob"});
  EXPECT_TRUE(
      WaitUntil([&] { return Owners(a_node) == expected && Owners(b_node) == expected; }, 5s));
  ASSERT_TRUE(SameState(a_node, b_node));
  EXPECT_TRUE(alice->PollUntil(
      [&] {
        return alice->store().FindTransform(e) != nullptr &&
               alice->store().StateHashHex() == a_node.SceneHash(kScene);
      },
      5s))
      << "alice's entity 905 was deleted by bob";
}

// The re-read fails (the owner hash is made a string for a while: WRONGTYPE): node b merges
// nothing of the reload, keeps its owner table, logs and counts it, and the read loop retries
// the reload after a backoff until the hash reads again.
TEST(ClusterAuthorityTest, AFailedOwnerReReadKeepsTheTableAndIsRetried) {
  RedisTestServer redis;
  ASSERT_TRUE(redis.started()) << redis.log();
  TempDir dir;
  const std::string auth = WritePrincipalsAuthFile(dir);
  TestServer a_node(AuthorityNode(redis, auth));
  TestServer b_node(AuthorityNode(redis, auth));
  auto alice = Join(a_node.tcp_url(), kScene, std::nullopt, "ta");
  auto bob = Join(b_node.tcp_url(), kScene, std::nullopt, "tb");  // node b hosts the scene
  std::vector<server::OwnerRow> expected;
  ASSERT_NO_FATAL_FAILURE(TrimWhileNodeBIsHeld(redis, a_node, b_node, *alice, expected));
  cluster::RedisConnection c(TestRedisOptions(redis.url()));
  const std::string key =
      server::OwnersKey(*cluster::MakeSceneKeys(cluster::ClusterConfig{}.key_prefix, kScene));
  ASSERT_TRUE(c.Command({"RENAME", key, key + ":saved"}).has_value());
  ASSERT_TRUE(c.Command({"SET", key, "not a hash"}).has_value());

  b_node.get().cluster()->HoldEntriesForTest(false);
  ASSERT_TRUE(WaitUntil(
      [&] { return NodeMetric(b_node, "scenecrdt_cluster_owner_reread_failures_total") >= 2; },
      5s));
  // The table node b had: 900 from before the gap, and 901 when the entries its read loop held
  // were 901's (the loop may have been held on an entry appended before 901's: then 901 went
  // with the trim). None of the hash's rows (902 to 911, without 900) replaced it.
  const std::vector<server::OwnerRow> kept = Owners(b_node);
  const std::vector<server::OwnerRow> with_901 = {{900, "alice"}, {901, "alice"}};
  const std::vector<server::OwnerRow> without_901 = {{900, "alice"}};
  EXPECT_TRUE(kept == with_901 || kept == without_901) << kept.size() << " rows";
  EXPECT_NE(a_node.SceneHash(kScene), b_node.SceneHash(kScene));  // the snapshot waits

  ASSERT_TRUE(c.Command({"DEL", key}).has_value());
  ASSERT_TRUE(c.Command({"RENAME", key + ":saved", key}).has_value());
  ASSERT_TRUE(SameState(a_node, b_node));
  EXPECT_TRUE(WaitUntil([&] { return Owners(b_node) == expected; }, 5s));
  EXPECT_GE(NodeMetric(b_node, "scenecrdt_cluster_owner_rereads_total"), 1);
}

// Authority::ReplaceOwners (the hash after a snapshot reload): the hash's rows win, numbers it
// lacks lose their owner, reserved numbers stay nobody's, and the numbers changed here and not
// known committed (not taken for a commit yet, or in the commit in flight) keep this node's
// value (and are committed, again after a failed commit).
TEST(ClusterAuthorityTest, ReplaceOwnersKeepsUncommittedChangesAndDropsTheRest) {
  server::Authority authority(server::AuthorityMode::kOwner, nullptr);
  authority.SetOwner(600, "alice");
  authority.SetOwner(601, "alice");
  authority.SetOwner(604, "alice");
  const auto note = [&](uint32_t principal, protocol::MessageType type, uint32_t number) {
    protocol::CrdtMessage m;
    m.type = type;
    m.entity = protocol::MakeEntityId(number, 0);
    m.component = protocol::kTransformComponentId;
    m.timestamp = 1;
    authority.Note(principal, m,
                   type == protocol::MessageType::kDeleteEntity
                       ? runtime::MergeOutcome::kEntityDeleted
                       : runtime::MergeOutcome::kUpdatedTimestamp);
  };
  note(authority.Intern("bob"), protocol::MessageType::kPutComponent, 602);  // a creation
  note(0, protocol::MessageType::kDeleteEntity, 601);                        // a release
  std::vector<server::CorrectionMark> marks;
  const std::vector<server::OwnerRow> in_flight = authority.TakeChanges(0, marks);
  note(authority.Intern("bob"), protocol::MessageType::kPutComponent, 606);  // not taken yet
  const std::size_t changed = authority.ReplaceOwners(
      {{600, "carol"}, {601, "alice"}, {602, "alice"}, {603, "alice"}, {5, "mallory"}}, in_flight);
  EXPECT_EQ(changed, 3u);  // 600 changed, 603 learned, 604 dropped
  const std::vector<server::OwnerRow> owners = {
      {600, "carol"}, {602, "bob"}, {603, "alice"}, {606, "bob"}};
  EXPECT_EQ(authority.Owners(), owners);
  authority.Failed(in_flight);  // the commit in flight failed: its rows are written again
  auto rows = authority.TakeChanges(0, marks);
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<server::OwnerRow>{{601, ""}, {602, "bob"}, {606, "bob"}}));
}

TEST(ClusterAuthorityTest, OwnerRowsAndCorrectionMarksRoundTripAndRefuseWhatDoesNotParse) {
  const server::OwnerRows rows = {{600, "alice"}, {601, ""}, {65535, "a,b,c"}};
  server::OwnerRows back;
  ASSERT_TRUE(server::DecodeOwnerRows(server::EncodeOwnerRows(rows), back));
  EXPECT_EQ(back, rows);
  for (const char* bad :
       {"600", "600,5", "600,5,abc", "x,1,a", "70000,1,a", "600,300,", "600,-1,a", ",1,a"}) {
    server::OwnerRows out;
    EXPECT_FALSE(server::DecodeOwnerRows(bad, out)) << bad;
  }
  const std::vector<server::CorrectionMark> marks = {{1, 600, 7, 3}, {0xFFFFFFFF, 1 << 16, 1, 3}};
  std::vector<server::CorrectionMark> marks_back;
  ASSERT_TRUE(server::DecodeCorrectionMarks(server::EncodeCorrectionMarks(marks), 3, marks_back));
  EXPECT_EQ(marks_back, marks);
  for (const char* bad : {"1", "12345678901", "1234567890123"}) {
    std::vector<server::CorrectionMark> out;
    EXPECT_FALSE(server::DecodeCorrectionMarks(bad, 0, out)) << bad;
    EXPECT_TRUE(out.empty());
  }
}

}  // namespace
}  // namespace scenecrdt::testing
