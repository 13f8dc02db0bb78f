// SPDX-License-Identifier: Apache-2.0
// Client resilience through the in-process FaultProxy on loopback: reconnect with backoff,
// resume deltas (exact byte counts), resend of unacknowledged frames, writes held before the
// first snapshot and writes made offline (re-stamped only when the resume is newer), snapshot
// fallback after a server restart, corrupted streams, and a long stream of Transform edits
// under random cuts, delays and drops that must end with the client's, the server's and
// `replay`'s state hashes equal and no acknowledged write lost. Every wait is a condition
// with a deadline.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <map>
#include <vector>

#include "scenecrdt/client/client.h"
#include "scenecrdt/client/internal/client_impl.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/client/fault_proxy.h"
#include "tests/client/test_server.h"

namespace scenecrdt::client::test {
namespace {

using namespace std::chrono_literals;
constexpr uint64_t kPutBytes = 68;  // one Transform PUT_COMPONENT

protocol::Transform At(float x, float y = 0.0f) {
  protocol::Transform t;
  t.position = {x, y, 0.0f};
  return t;
}

// Polls every client until done() or the deadline.
bool PollAll(std::initializer_list<Client*> clients, const std::function<bool()>& done,
             std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    for (Client* c : clients) c->Poll();
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    (*clients.begin())->WaitForInput(2ms);
  }
}

// Records what a client sent (every byte, resends included: `replay` is idempotent) and, per
// frame, the (entity, timestamp) pairs it carried, to check that no acknowledged write is lost.
struct SendTap {
  std::vector<uint8_t> bytes;
  std::map<uint64_t, std::vector<std::pair<protocol::EntityId, uint32_t>>> frames;
  uint64_t acked = 0;

  void Attach(Client& c) {
    c.on_send = [this](uint64_t fs, std::span<const uint8_t> dcl, bool resend) {
      bytes.insert(bytes.end(), dcl.begin(), dcl.end());
      if (resend) return;
      auto& carried = frames[fs];
      (void)protocol::DecodeStream(dcl, {}, [&](const protocol::CrdtMessage& m) {
        carried.emplace_back(m.entity, m.timestamp);
      });
    };
    c.on_ack = [this](uint64_t a) { acked = a; };
  }

  // Every write of every acknowledged frame is in the server's scene (at its timestamp or a
  // later one).
  void ExpectAckedPresent(TestServer& server, const std::string& scene) const {
    std::size_t checked = 0;
    server.get().InspectScene(scene, [&](const runtime::CrdtStore& store, uint64_t) {
      for (const auto& [fs, carried] : frames) {
        if (fs > acked) break;
        for (const auto& [entity, ts] : carried) {
          auto r = store.FindRegister(protocol::kTransformComponentId, entity);
          EXPECT_TRUE(r.has_value() && r->timestamp >= ts)
              << "acknowledged frame " << fs << ": entity " << entity << " lost";
          ++checked;
        }
      }
    });
    EXPECT_GT(checked, 0u);
  }
};

class ResilienceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The edit stream below writes faster than the default per-session budget.
    server_.config().limits.messages_per_second = 1000000;
    server_.config().limits.message_burst = 1000000;
    ASSERT_TRUE(server_.Start());
    proxy_ = std::make_unique<FaultProxy>(server_.tcp_port(), /*seed=*/20240611);
    ASSERT_NE(proxy_->port(), 0);
  }

  // A reconnecting client through the proxy: fast backoff, fast keepalive, seeded jitter.
  ClientOptions Resilient(const std::string& scene) {
    ClientOptions o;
    o.url = proxy_->url();
    o.scene = scene;
    o.client_name = "resilient";
    o.reconnect.enabled = true;
    o.reconnect.backoff.initial_delay_ms = 5;
    o.reconnect.backoff.max_delay_ms = 80;
    o.reconnect.backoff.seed = 11;
    o.reconnect.ping_interval_ms = 50;
    o.reconnect.pong_timeout_ms = 600;
    o.log = [this](std::string_view line) { log_.emplace_back(line); };
    return o;
  }
  ClientOptions Direct(const std::string& scene) {
    ClientOptions o;
    o.url = server_.tcp_url();
    o.scene = scene;
    o.client_name = "direct";
    return o;
  }
  std::string Logs() const {
    std::string out;
    for (const auto& l : log_) out += l + "\n";
    return out;
  }
  // Attaches the send taps, starts both clients and waits until both are synced.
  static void StartTapped(Client& other, SendTap& other_tap, Client& w, SendTap& w_tap) {
    other_tap.Attach(other);
    w_tap.Attach(w);
    ASSERT_TRUE(other.Start().has_value());
    ASSERT_TRUE(w.Start().has_value());
    ASSERT_TRUE(PollAll(
        {&w, &other}, [&] { return w.synced() && other.synced(); }, 20s));
  }
  // Quiet: synced, everything sent and acknowledged.
  static bool Quiet(const Client& c) {
    return c.synced() && c.pending_frames() == 0 && c.unsent_writes() == 0;
  }

  TestServer server_;
  std::unique_ptr<FaultProxy> proxy_;
  std::vector<std::string> log_;
};

TEST_F(ResilienceTest, HeldWritesBeforeTheFirstSnapshotWinAsTheNextTimestamp) {
  // The scene holds entity 700 at timestamp 5 (js-sdk-toolchain #1437: a client writing 700 at
  // timestamp 1 before it has joined must neither lose nor silently override newer state).
  Client other(Direct("late"));
  ASSERT_TRUE(other.Start().has_value());
  ASSERT_TRUE(other.PollUntil([&] { return other.state_ready(); }, 20s));
  std::vector<uint8_t> dcl;
  protocol::AppendTransformPut(700, 5, At(1.0f), dcl);
  ASSERT_NE(other.SendCrdt(dcl), 0u);
  ASSERT_TRUE(other.PollUntil([&] { return other.pending_frames() == 0; }, 20s));

  // The late client writes before it starts, and its first attempt finds the server "down".
  proxy_->SetAccepting(false);
  ClientOptions o = Resilient("late");
  o.reconnect.retry_first_connect = true;
  Client late(o);
  ASSERT_TRUE(late.WriteTransform(700, At(2.0f)).has_value());
  EXPECT_EQ(late.store().FindTransform(700), nullptr);  // held, not stamped
  ASSERT_TRUE(late.Start().has_value());
  ASSERT_TRUE(late.PollUntil([&] { return late.stats().connect_attempts >= 2; }, 20s));
  EXPECT_FALSE(late.state_ready());
  EXPECT_EQ(late.store().FindTransform(700), nullptr);
  ASSERT_TRUE(late.WriteTransform(700, At(3.0f)).has_value());  // the latest value wins
  proxy_->SetAccepting(true);
  ASSERT_TRUE(late.PollUntil([&] { return late.state_ready() && Quiet(late); }, 20s)) << Logs();

  auto reg = late.store().FindRegister(protocol::kTransformComponentId, 700);
  ASSERT_TRUE(reg.has_value());
  EXPECT_EQ(reg->timestamp, 6u);
  EXPECT_EQ(reg->transform->position.x, 3.0f);
  EXPECT_EQ(server_.TransformOf("late", 700), (std::pair<uint32_t, float>{6u, 3.0f}));
  ASSERT_TRUE(other.PollUntil(
      [&] {
        const auto* t = other.store().FindTransform(700);
        return t && t->position.x == 3.0f;
      },
      20s));
  EXPECT_EQ(late.stats().held_writes, 1u);
  EXPECT_EQ(late.stats().snapshots, 1u);
  EXPECT_EQ(late.store().StateHashHex(), server_.SceneHash("late"));
}

TEST_F(ResilienceTest, UnackedFramesAreResentResumesCarryOnlyChangesOfflineWritesAreRestamped) {
  Client other(Direct("phases"));
  Client w(Resilient("phases"));
  SendTap other_tap;
  SendTap w_tap;
  ASSERT_NO_FATAL_FAILURE(StartTapped(other, other_tap, w, w_tap));
  // A scene of 200 entities: a snapshot is 200 * 68 bytes.
  for (uint32_t e = 0; e < 200; ++e)
    ASSERT_TRUE(other.WriteTransform(1000 + e, At(1.0f)).has_value());
  other.Flush();
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return Quiet(other) && w.store().FindTransform(1199) != nullptr; }, 20s));

  // 1. The server merges a frame but its Ack never arrives (server -> client stalled), then
  //    the link is cut: the frame is resent as it was, and merges to no change.
  proxy_->Stall(Direction::kToClient, true);
  for (uint32_t e = 0; e < 10; ++e) ASSERT_TRUE(w.WriteTransform(2000 + e, At(5.0f)).has_value());
  w.Poll();
  ASSERT_EQ(w.pending_frames(), 1u);
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return server_.TransformOf("phases", 2009).first == 1u; }, 20s));
  proxy_->CutAll();
  proxy_->Stall(Direction::kToClient, false);
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return w.stats().reconnects >= 1 && Quiet(w); }, 20s))
      << Logs();
  EXPECT_EQ(w.stats().resent_frames, 1u);
  EXPECT_EQ(w.stats().resent_bytes, 10 * kPutBytes);

  // 2. A frame cut before it reached the server is resent and arrives.
  proxy_->Stall(Direction::kToServer, true);
  for (uint32_t e = 0; e < 5; ++e) ASSERT_TRUE(w.WriteTransform(2100 + e, At(6.0f)).has_value());
  w.Poll();
  proxy_->CutAll();
  proxy_->Stall(Direction::kToServer, false);
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return w.stats().reconnects >= 2 && Quiet(w); }, 20s))
      << Logs();
  EXPECT_EQ(w.stats().resent_frames, 2u);
  EXPECT_EQ(server_.TransformOf("phases", 2104), (std::pair<uint32_t, float>{1u, 6.0f}));

  // 3. Resume: only what changed while away comes back. First make w's resume position cover
  //    everything so far (its own writes are not echoed to it; a change of `other` is).
  ASSERT_TRUE(other.WriteTransform(3000, At(7.0f)).has_value());
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return w.store().FindTransform(3000) && Quiet(other); }, 20s));
  proxy_->SetAccepting(false);
  const uint64_t disconnects = w.stats().disconnects;
  proxy_->CutAll();
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return w.stats().disconnects > disconnects; }, 20s));
  for (uint32_t e = 1; e <= 5; ++e)
    ASSERT_TRUE(other.WriteTransform(3000 + e, At(8.0f)).has_value());
  other.Flush();
  ASSERT_TRUE(PollAll(
      {&other}, [&] { return Quiet(other); }, 20s));
  const uint64_t resumes = w.stats().resumes;
  proxy_->SetAccepting(true);
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return w.stats().resumes > resumes && Quiet(w); }, 20s))
      << Logs();
  EXPECT_TRUE(w.welcome()->resumed);
  EXPECT_EQ(w.stats().last_state_bytes, 5 * kPutBytes);  // not the 216-entity snapshot
  EXPECT_NE(w.store().FindTransform(3005), nullptr);

  // 4. Offline writes: one to a key nobody touched meanwhile (sent with its offline stamp), one
  //    to a key that `other` wrote with a newer timestamp meanwhile (re-stamped on top of it).
  proxy_->SetAccepting(false);
  const uint64_t disconnects2 = w.stats().disconnects;
  proxy_->CutAll();
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return w.stats().disconnects > disconnects2; }, 20s));
  ASSERT_FALSE(w.synced());
  ASSERT_TRUE(w.WriteTransform(4000, At(9.0f)).has_value());
  ASSERT_TRUE(w.WriteTransform(3001, At(10.0f)).has_value());
  EXPECT_EQ(w.store().FindTransform(3001)->position.x, 10.0f);  // the renderer sees it now
  const uint32_t offline_ts =
      w.store().FindRegister(protocol::kTransformComponentId, 3001)->timestamp;
  std::vector<uint8_t> newer;
  protocol::AppendTransformPut(3001, offline_ts + 4, At(11.0f), newer);
  ASSERT_NE(other.SendCrdt(newer), 0u);
  ASSERT_TRUE(PollAll(
      {&other}, [&] { return Quiet(other); }, 20s));
  proxy_->SetAccepting(true);
  ASSERT_TRUE(PollAll(
      {&w}, [&] { return Quiet(w) && w.stats().restamped_writes == 1; }, 20s))
      << Logs();
  EXPECT_EQ(w.stats().offline_writes, 2u);
  EXPECT_EQ(server_.TransformOf("phases", 4000), (std::pair<uint32_t, float>{1u, 9.0f}));
  EXPECT_EQ(server_.TransformOf("phases", 3001),
            (std::pair<uint32_t, float>{offline_ts + 5, 10.0f}));

  // Everyone converges on the server's state, which is `replay` of everything sent.
  const std::string expected = server_.SceneHash("phases");
  ASSERT_TRUE(PollAll(
      {&w, &other},
      [&] {
        return w.store().StateHashHex() == expected && other.store().StateHashHex() == expected;
      },
      20s));
  std::vector<uint8_t> sent = other_tap.bytes;
  sent.insert(sent.end(), w_tap.bytes.begin(), w_tap.bytes.end());
  EXPECT_EQ(ReplayHash(sent), expected);
  w_tap.ExpectAckedPresent(server_, "phases");
  const ClientStats s = w.stats();
  EXPECT_EQ(s.snapshots, 1u);
  EXPECT_EQ(s.resumes, s.reconnects);
  EXPECT_EQ(s.resyncs, 0u);
  EXPECT_GT(s.bytes_sent, 0u);
  EXPECT_GT(s.bytes_received, 0u);
}

TEST_F(ResilienceTest, CorruptedBytesAreDetectedInBothDirectionsAndTheClientResumes) {
  Client other(Direct("corrupt"));
  Client w(Resilient("corrupt"));
  ASSERT_TRUE(other.Start().has_value());
  ASSERT_TRUE(w.Start().has_value());
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return w.synced() && other.synced(); }, 20s));
  // Server -> client: two bytes of the next frame vanish; the client's framing breaks.
  proxy_->DropNext(Direction::kToClient, 2);
  ASSERT_TRUE(other.WriteTransform(600, At(1.0f)).has_value());
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return w.stats().reconnects >= 1 && Quiet(w); }, 20s))
      << Logs();
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return w.store().FindTransform(600) != nullptr; }, 20s));
  // Client -> server: the server's framing breaks; the write still arrives, once.
  proxy_->DropNext(Direction::kToServer, 2);
  ASSERT_TRUE(w.WriteTransform(601, At(2.0f)).has_value());
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return w.stats().reconnects >= 2 && Quiet(w); }, 20s))
      << Logs();
  EXPECT_EQ(server_.TransformOf("corrupt", 601), (std::pair<uint32_t, float>{1u, 2.0f}));
  EXPECT_EQ(proxy_->stats().bytes_dropped, 4u);
  const std::string expected = server_.SceneHash("corrupt");
  ASSERT_TRUE(PollAll(
      {&w, &other},
      [&] {
        return w.store().StateHashHex() == expected && other.store().StateHashHex() == expected;
      },
      20s));
  EXPECT_EQ(w.stats().snapshots, 1u);
}

TEST_F(ResilienceTest, ServerRestartFallsBackToASnapshotThatReplacesTheReplica) {
  Client w(Resilient("restart"));
  ASSERT_TRUE(w.Start().has_value());
  ASSERT_TRUE(w.PollUntil([&] { return w.synced(); }, 20s));
  for (uint32_t e = 0; e < 20; ++e) ASSERT_TRUE(w.WriteTransform(800 + e, At(1.0f)).has_value());
  ASSERT_TRUE(w.PollUntil([&] { return Quiet(w); }, 20s));
  // A change the replica has but the restarted server will not: as if it had been merged
  // and fanned out, then lost with the process before its commit.
  std::vector<uint8_t> ghost;
  protocol::AppendTransformPut(899, 3, At(4.0f), ghost);
  (void)internal::ClientTestPeer::MutableRuntime(w).ApplyCrdt(ghost);
  proxy_->SetAccepting(false);
  server_.Stop();
  ASSERT_TRUE(w.PollUntil([&] { return !w.synced(); }, 20s));
  ASSERT_TRUE(w.WriteTransform(801, At(2.0f)).has_value());  // written while the server is down
  ASSERT_TRUE(server_.Start());
  proxy_->SetUpstream(server_.tcp_port());
  proxy_->SetAccepting(true);
  ASSERT_TRUE(w.PollUntil([&] { return w.stats().snapshots == 2 && Quiet(w); }, 20s)) << Logs();
  EXPECT_FALSE(w.welcome()->resumed);  // another incarnation: no resume possible
  EXPECT_EQ(w.stats().resyncs, 1u);
  EXPECT_EQ(w.store().FindTransform(899), nullptr);  // the replica was rebuilt from the server
  EXPECT_EQ(server_.TransformOf("restart", 801), (std::pair<uint32_t, float>{2u, 2.0f}));
  EXPECT_EQ(w.store().StateHashHex(), server_.SceneHash("restart"));
}

TEST_F(ResilienceTest, TransformStreamConvergesThroughRandomCutsDelaysAndDrops) {
  Client other(Direct("stream"));
  Client w(Resilient("stream"));
  SendTap other_tap;
  SendTap w_tap;
  ASSERT_NO_FATAL_FAILURE(StartTapped(other, other_tap, w, w_tap));
  RandomFaults faults;
  faults.cut_probability = 0.01;
  faults.drop_probability = 0.002;
  faults.min_delay_ms = 0;
  faults.max_delay_ms = 15;
  proxy_->SetRandomFaults(faults);
  constexpr uint32_t kEdits = 2400;
  constexpr uint32_t kEntities = 64;
  uint32_t edit = 0;
  while (edit < kEdits) {
    for (int k = 0; k < 8; ++k, ++edit) {
      // Edits keep coming whatever the link does (the unsent buffer coalesces them).
      ASSERT_TRUE(w.WriteTransform(5000 + (edit * 7) % kEntities, At(static_cast<float>(edit)))
                      .has_value());
    }
    if (edit % 400 == 0) proxy_->CutAll();
    if (edit % 96 == 0) {  // concurrent edits of the same entities by a direct client
      ASSERT_TRUE(
          other.WriteTransform(5000 + edit % kEntities, At(-static_cast<float>(edit))).has_value());
    }
    w.Poll();
    other.Poll();
    w.WaitForInput(1ms);
  }
  proxy_->SetRandomFaults({});
  ASSERT_TRUE(PollAll(
      {&w, &other}, [&] { return Quiet(w) && Quiet(other); }, 30s))
      << Logs();
  const std::string expected = server_.SceneHash("stream");
  ASSERT_TRUE(PollAll(
      {&w, &other},
      [&] {
        return w.store().StateHashHex() == expected && other.store().StateHashHex() == expected;
      },
      20s))
      << Logs();
  std::vector<uint8_t> sent = other_tap.bytes;
  sent.insert(sent.end(), w_tap.bytes.begin(), w_tap.bytes.end());
  EXPECT_EQ(ReplayHash(sent), expected);
  w_tap.ExpectAckedPresent(server_, "stream");
  other_tap.ExpectAckedPresent(server_, "stream");
  const ClientStats s = w.stats();
  // A cut that lands before the Welcome reaches the client is no reconnect (stats count joins):
  // at least half the cuts the proxy was asked for join again (a fresh clone under ASan saw 5
  // of 8).
  EXPECT_GE(s.reconnects, kEdits / 800);
  EXPECT_EQ(s.resumes, s.reconnects);  // the server never restarted: always a resume delta
  EXPECT_EQ(s.snapshots, 1u);
  EXPECT_GT(s.resent_frames + s.restamped_writes + s.offline_writes, 0u);
  const FaultProxyStats p = proxy_->stats();
  EXPECT_GE(p.cuts, kEdits / 400);
  std::printf(
      "stream: %llu edits, %llu reconnects (%llu resumes, %llu resume bytes), %llu "
      "frames sent, %llu resent, %llu offline writes (%llu re-stamped); proxy: %llu "
      "cuts (%llu random), %llu chunks with dropped bytes\n",
      static_cast<unsigned long long>(kEdits), static_cast<unsigned long long>(s.reconnects),
      static_cast<unsigned long long>(s.resumes), static_cast<unsigned long long>(s.resume_bytes),
      static_cast<unsigned long long>(s.frames_sent),
      static_cast<unsigned long long>(s.resent_frames),
      static_cast<unsigned long long>(s.offline_writes),
      static_cast<unsigned long long>(s.restamped_writes), static_cast<unsigned long long>(p.cuts),
      static_cast<unsigned long long>(p.random_cuts),
      static_cast<unsigned long long>(p.chunks_dropped));
}

TEST_F(ResilienceTest, ReconnectWaitsForTheBackoffDelayOnTheInjectedClock) {
  std::atomic<int64_t> now_ms{1000};
  ClientOptions o = Resilient("clock");
  o.clock = [&] {
    return std::chrono::steady_clock::time_point(std::chrono::milliseconds(now_ms.load()));
  };
  o.reconnect.retry_first_connect = true;
  o.reconnect.backoff.initial_delay_ms = 1000;
  o.reconnect.backoff.max_delay_ms = 1000;
  o.reconnect.backoff.jitter = 0.0;
  proxy_->SetAccepting(false);
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.stats().disconnects == 1; }, 20s));
  // The next attempt is due at 1000 + 1000 ms on the injected clock, whatever real time does.
  now_ms = 1999;
  c.Poll();
  EXPECT_EQ(c.stats().connect_attempts, 1u);
  proxy_->SetAccepting(true);
  now_ms = 2000;
  c.Poll();
  EXPECT_EQ(c.stats().connect_attempts, 2u);
  ASSERT_TRUE(c.PollUntil([&] { return c.synced(); }, 20s));
  EXPECT_FALSE(c.closed());
}

TEST_F(ResilienceTest, GivesUpAfterMaxFailedAttemptsAndWhenReconnectIsOff) {
  proxy_->SetAccepting(false);
  ClientOptions o = Resilient("giveup");
  o.reconnect.retry_first_connect = true;
  o.reconnect.max_failed_attempts = 3;
  Client c(o);
  ASSERT_TRUE(c.Start().has_value());
  ASSERT_TRUE(c.PollUntil([&] { return c.closed(); }, 20s));
  EXPECT_EQ(c.stats().connect_attempts, 3u);
  // Reconnect off (the default): the first loss closes the client for good.
  proxy_->SetAccepting(true);
  ClientOptions off = Resilient("giveup");
  off.reconnect.enabled = false;
  Client once(off);
  ASSERT_TRUE(once.Start().has_value());
  ASSERT_TRUE(once.PollUntil([&] { return once.synced(); }, 20s));
  proxy_->CutAll();
  ASSERT_TRUE(once.PollUntil([&] { return once.closed(); }, 20s));
  EXPECT_EQ(once.stats().connect_attempts, 1u);
  EXPECT_EQ(once.WriteTransform(600, At(1.0f)).error().code, ErrorCode::kIo);
}

TEST(ClientBuffersTest, UnsentWritesAreBoundedPerEntity) {
  ClientOptions o;
  o.url = "tcp://127.0.0.1:1";
  o.scene = "bounded";
  o.max_unsent_writes = 4;
  Client c(o);  // never started: every write is held
  for (uint32_t e = 0; e < 4; ++e) ASSERT_TRUE(c.WriteTransform(600 + e, At(1.0f)).has_value());
  auto full = c.WriteTransform(700, At(1.0f));
  ASSERT_FALSE(full.has_value());
  EXPECT_EQ(full.error().code, ErrorCode::kRateLimited);
  EXPECT_TRUE(c.WriteTransform(600, At(2.0f)).has_value());  // an entity already buffered
  EXPECT_EQ(c.unsent_writes(), 4u);
  protocol::Transform bad = At(std::numeric_limits<float>::infinity());
  EXPECT_EQ(c.WriteTransform(601, bad).error().code, ErrorCode::kNonFiniteTransform);
}

}  // namespace
}  // namespace scenecrdt::client::test
