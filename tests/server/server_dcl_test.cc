// SPDX-License-Identifier: Apache-2.0
// Owner: server/. The raw-DCL WebSocket path (/dcl/<scene>) end to end on 127.0.0.1: the
// snapshot as one chunk then live changes as plain chunks, cross traffic with envelope
// sessions and persistence, query-token auth and read-only drops, malformed chunks closing the
// session, refused messages dropped from their chunk, the rate limit as backpressure, and the
// metrics and event lines of docs/SERVER.md.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>

#include "scenecrdt/protocol/crdt_codec.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

std::unique_ptr<client::Client> Join(const std::string& url, const std::string& scene,
                                     std::optional<uint64_t> resume = std::nullopt) {
  client::ClientOptions o;
  o.url = url;
  o.scene = scene;
  o.resume_sequence = resume;
  auto c = std::make_unique<client::Client>(o);
  EXPECT_TRUE(c->Start().has_value());
  EXPECT_TRUE(c->PollUntil([&] { return c->state_ready(); }, 20s)) << "join " << scene;
  return c;
}

void AppendMessage(std::vector<uint8_t>& out, protocol::MessageType type, uint32_t entity,
                   uint32_t component = 0, uint32_t timestamp = 0,
                   std::span<const uint8_t> data = {}) {
  protocol::CrdtMessage m;
  m.type = type;
  m.entity = entity;
  m.component = component;
  m.timestamp = timestamp;
  m.data = data;
  protocol::AppendMessage(m, out);
}

std::vector<uint8_t> Concat(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// Receives chunks into a replica until its hash is `expected` (false on timeout).
bool ReceiveUntilHash(DclSocket& socket, runtime::CrdtStore& replica, const std::string& expected,
                      std::chrono::milliseconds timeout = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (replica.StateHashHex() != expected) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    auto chunk = socket.Receive(left);
    if (!chunk) return false;
    if (!replica.MergeStream(*chunk).has_value()) return false;
  }
  return true;
}

// Collects the server's event lines (the sink runs on io threads).
class LogCapture {
 public:
  std::function<void(std::string_view)> Sink() {
    return [this](std::string_view line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.emplace_back(line);
    };
  }
  // Lines holding every one of `parts`.
  std::size_t Count(std::initializer_list<std::string_view> parts) {
    std::lock_guard<std::mutex> lock(mu_);
    std::size_t n = 0;
    for (const std::string& l : lines_) {
      bool all = true;
      for (std::string_view p : parts) all = all && l.find(p) != std::string::npos;
      n += all ? 1 : 0;
    }
    return n;
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const std::string& l : lines_) out += l;
    return out;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> lines_;
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DclPathTest, SnapshotIsOneChunkThenLiveChangesArriveAsPlainChunks) {
  TestServer server;
  const uint16_t port = server.get().http_port();
  // A new scene: the snapshot is one empty message (the client knows it is joined).
  DclSocket fresh(port, "/dcl/nothing");
  ASSERT_TRUE(fresh.connected()) << fresh.http_status();
  auto empty = fresh.Receive();
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());

  auto writer = Join(server.tcp_url(), "plain");
  std::vector<uint8_t> first;
  AppendPut(first, 600, 1, 1.0f);
  AppendPut(first, 601, 3, 2.0f, 600);
  AppendMessage(first, protocol::MessageType::kDeleteEntity, 700);
  AppendMessage(first, protocol::MessageType::kDeleteComponent, 602, 1, 4);
  writer->SendCrdt(first);
  ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 10s));

  DclSocket raw(port, "/dcl/plain");
  ASSERT_TRUE(raw.connected());
  EXPECT_EQ(raw.http_status(), 101);
  auto snapshot = raw.Receive();
  ASSERT_TRUE(snapshot.has_value());
  std::vector<uint8_t> exported;
  server.get().InspectScene(
      "plain", [&](const runtime::CrdtStore& store, uint64_t) { store.ExportSnapshot(exported); });
  EXPECT_EQ(*snapshot, exported) << "the snapshot is the store's ExportSnapshot, one chunk";
  EXPECT_EQ(ReplayHash({*snapshot}), ReplayHash({first}));

  // Live: the envelope writer's change arrives as exactly its DCL bytes, no envelope.
  std::vector<uint8_t> second;
  AppendPut(second, 600, 2, 5.0f);
  writer->SendCrdt(second);
  auto live = raw.Receive();
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(*live, second);
  EXPECT_EQ(server.get().metrics().dcl_chunks_out.load(), 3u);  // two snapshots, one live
}

TEST(DclPathTest, RawAndEnvelopeSessionsShareASceneAndRawWritesPersist) {
  TempDir dir;
  std::vector<std::vector<uint8_t>> sent;
  {
    TestServer server(TestServer::Config(), dir.path());
    const uint16_t port = server.get().http_port();
    DclSocket a(port, "/dcl/shared");
    DclSocket b(port, "/dcl/shared");
    ASSERT_TRUE(a.connected() && b.connected());
    ASSERT_TRUE(a.Receive().has_value());  // snapshots
    ASSERT_TRUE(b.Receive().has_value());
    auto tcp = Join(server.tcp_url(), "shared");
    auto ws = Join(server.ws_url(), "shared");

    // Raw -> envelope and raw.
    std::vector<uint8_t> a1;
    for (uint32_t e = 0; e < 3; ++e) AppendPut(a1, 800 + e, 1, static_cast<float>(e), 0);
    ASSERT_TRUE(a.Send(a1));
    sent.push_back(a1);
    auto at_b = b.Receive();
    ASSERT_TRUE(at_b.has_value());
    EXPECT_EQ(*at_b, a1);
    ASSERT_TRUE(tcp->PollUntil([&] { return tcp->store().FindTransform(802) != nullptr; }, 10s));
    ASSERT_TRUE(ws->PollUntil([&] { return ws->store().FindTransform(802) != nullptr; }, 10s));

    // Envelope -> raw; the raw writer was not sent its own batch back, so the next chunk it
    // receives is exactly the envelope client's change.
    std::vector<uint8_t> c1;
    AppendPut(c1, 801, 2, 42.0f, 800);
    tcp->SendCrdt(c1);
    sent.push_back(c1);
    auto at_a = a.Receive();
    ASSERT_TRUE(at_a.has_value());
    EXPECT_EQ(*at_a, c1);

    // A tie between a raw and an envelope writer: the @dcl/ecs rule decides, not the order.
    std::vector<uint8_t> a2;
    std::vector<uint8_t> w2;
    AppendPut(a2, 802, 7, 1.0f);
    AppendPut(w2, 802, 7, 2.0f);
    ASSERT_TRUE(a.Send(a2));
    ws->SendCrdt(w2);
    sent.push_back(a2);
    sent.push_back(w2);
    ASSERT_TRUE(ws->PollUntil([&] { return ws->pending_frames() == 0; }, 10s));
    const std::string expected = ReplayHash(sent);
    ASSERT_TRUE(WaitUntil([&] { return server.SceneHash("shared") == expected; }, 10s));
    runtime::CrdtStore replica_b;
    (void)replica_b.MergeStream(*at_b);
    EXPECT_TRUE(ReceiveUntilHash(b, replica_b, expected)) << "a raw replica did not converge";
    EXPECT_TRUE(tcp->PollUntil([&] { return tcp->store().StateHashHex() == expected; }, 10s));
    a.Close();
    EXPECT_EQ(server.Stop(), 0);
  }
  // A raw session has no Ack, but its changes went through the group commit all the same.
  TestServer restarted(TestServer::Config(), dir.path());
  EXPECT_EQ(restarted.SceneHash("shared"), ReplayHash(sent));
}

TEST(DclAuthTest, QueryTokenGrantsRolesReadOnlyChunksAreDroppedOthersRefused) {
  TempDir dir;
  const std::string auth = dir.path() + "/auth.json";
  std::ofstream(auth) << R"({"tokens":[{"token":"wr!te tok/en","scenes":["lobby"],"role":"write"},)"
                      << R"({"token":"r","scenes":["lobby"],"role":"read"}]})";
  auto config = TestServer::Config();
  config.access.auth_file = auth;
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  // Refused before the upgrade, with an HTTP status.
  for (auto [target, status] :
       {std::pair{"/dcl/lobby", 401}, std::pair{"/dcl/lobby?token=no", 401},
        std::pair{"/dcl/other?token=r", 403}, std::pair{"/dcl/bad%20name?token=r", 400}}) {
    DclSocket refused(port, target);
    EXPECT_FALSE(refused.connected()) << target;
    EXPECT_EQ(refused.http_status(), status) << target;
  }
  // A read-only token for a granted scene with nothing stored: refused before the upgrade
  // (404), not upgraded and then closed.
  {
    DclSocket missing(port, "/dcl/lobby?token=r");
    EXPECT_FALSE(missing.connected());
    EXPECT_EQ(missing.http_status(), 404);
  }
  // The token is percent-decoded ('+' is a space, as URLSearchParams writes it).
  DclSocket writer(port, "/dcl/lobby?token=wr%21te+tok%2Fen");
  ASSERT_TRUE(writer.connected());
  // The writer's join creates the scene first: a read-only token may not create one.
  ASSERT_TRUE(writer.Receive().has_value());
  DclSocket reader(port, "/dcl/lobby?v=1&token=r");
  ASSERT_TRUE(reader.connected());
  ASSERT_TRUE(reader.Receive().has_value());
  // The read-only session's chunk is dropped and counted; the session stays joined.
  std::vector<uint8_t> forbidden;
  AppendPut(forbidden, 4000, 1, 1.0f);
  AppendPut(forbidden, 4002, 1, 1.0f);
  ASSERT_TRUE(reader.Send(forbidden));
  ASSERT_TRUE(WaitUntil([&] {
    return Contains(server.get().metrics().RenderPrometheus(),
                    "scenecrdt_dcl_dropped_messages_total{reason=\"read_only\"} 2");
  }));
  EXPECT_EQ(server.SceneHash("lobby"), runtime::CrdtStore().StateHashHex());
  std::vector<uint8_t> allowed;
  AppendPut(allowed, 4001, 1, 2.0f);
  ASSERT_TRUE(writer.Send(allowed));
  auto at_reader = reader.Receive();
  ASSERT_TRUE(at_reader.has_value()) << "the read-only session was dropped";
  EXPECT_EQ(*at_reader, allowed);
  EXPECT_EQ(server.SceneHash("lobby"), ReplayHash({allowed}));
  const std::string metrics = server.get().metrics().RenderPrometheus();
  // 3 refused tokens and the read-only token for the missing scene; no session was upgraded
  // for any of them.
  EXPECT_TRUE(Contains(metrics, "scenecrdt_refusals_total{reason=\"unauthorized\"} 4"));
  EXPECT_TRUE(Contains(metrics, "scenecrdt_session_closes_total{reason=\"unauthorized\"} 0\n"));
}

TEST(DclBadInputTest, MalformedChunkClosesTheSessionRefusedMessagesAreDropped) {
  auto config = TestServer::Config();
  config.limits.max_frame_bytes = 64u << 10;
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  DclSocket watcher(port, "/dcl/arena");
  ASSERT_TRUE(watcher.connected());
  ASSERT_TRUE(watcher.Receive().has_value());
  std::vector<uint8_t> before_dcl;
  AppendPut(before_dcl, 3000, 1, 1.0f);
  {
    DclSocket w(port, "/dcl/arena");
    ASSERT_TRUE(w.Receive().has_value());
    ASSERT_TRUE(w.Send(before_dcl));
    ASSERT_TRUE(watcher.Receive().has_value());
  }
  const std::string before = server.SceneHash("arena");
  ASSERT_EQ(before, ReplayHash({before_dcl}));

  std::vector<uint8_t> valid;
  AppendPut(valid, 3001, 5, 3.0f);
  const auto with = [&](std::vector<uint8_t> bad, bool valid_first) {
    return valid_first ? Concat({valid, bad}) : Concat({bad, valid});
  };
  std::vector<uint8_t> short_length = valid;
  short_length[0] = 7;
  std::vector<uint8_t> cut = valid;
  cut.resize(40);
  std::vector<uint8_t> unknown_type = valid;
  unknown_type[4] = 9;
  std::vector<uint8_t> data_length = valid;
  data_length[20] = 40;
  struct Case {
    const char* name;
    std::vector<uint8_t> chunk;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"length below 8", with(short_length, false), "length_too_small"},
      {"cut inside a message (after a valid one)", with(cut, true), "truncated"},
      {"unknown message type", with(unknown_type, true), "unknown_message_type"},
      {"dataLength mismatch", with(data_length, false), "length_mismatch"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    DclSocket bad(port, "/dcl/arena");
    ASSERT_TRUE(bad.connected());
    ASSERT_TRUE(bad.Receive().has_value());
    ASSERT_TRUE(bad.Send(k.chunk));
    std::string reason;
    const auto code = bad.WaitClose(10s, &reason);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 1007);  // invalid frame payload data
    EXPECT_TRUE(Contains(reason, k.reason)) << reason;
    EXPECT_EQ(server.SceneHash("arena"), before) << "a malformed chunk touched the store";
  }
  {
    // Above --max-frame-bytes: Beast closes with 1009 before buffering it.
    DclSocket big(port, "/dcl/arena");
    ASSERT_TRUE(big.Receive().has_value());
    std::vector<uint8_t> payload(70u << 10, 0x5A);
    (void)big.Send(payload);
    const auto start = std::chrono::steady_clock::now();
    const auto code = big.WaitClose(10s);
    // The close frame can be lost to a TCP reset (the server closes while part of our 70 KiB
    // is still unread): then the connection must still have ended, well before the deadline.
    if (code.has_value()) {
      EXPECT_EQ(*code, 1009);
    } else {
      EXPECT_LT(std::chrono::steady_clock::now() - start, 9s) << "the server kept the session";
    }
  }
  EXPECT_EQ(server.SceneHash("arena"), before);

  // Messages the store would refuse are dropped from their chunk; the rest merges and the
  // session stays joined (there is no Error frame a raw client could act on).
  std::vector<uint8_t> nan_put;
  {
    protocol::Transform t;
    t.position.y = std::numeric_limits<float>::infinity();
    protocol::AppendTransformPut(3002, 1, t, nan_put);
  }
  std::vector<uint8_t> short_transform;
  const std::vector<uint8_t> forty(40, 0);
  AppendMessage(short_transform, protocol::MessageType::kPutComponent, 3003, 1, 1, forty);
  std::vector<uint8_t> reserved;
  AppendMessage(reserved, protocol::MessageType::kDeleteEntity, 5);
  std::vector<uint8_t> later;
  AppendPut(later, 3004, 1, 4.0f);
  DclSocket mixed(port, "/dcl/arena");
  ASSERT_TRUE(mixed.Receive().has_value());
  ASSERT_TRUE(mixed.Send(Concat({nan_put, valid, short_transform, reserved, later})));
  auto forwarded = watcher.Receive();
  ASSERT_TRUE(forwarded.has_value());
  EXPECT_EQ(*forwarded, Concat({valid, later})) << "only the valid messages reach others";
  EXPECT_EQ(server.SceneHash("arena"), ReplayHash({before_dcl, valid, later}));
  const std::string metrics = server.get().metrics().RenderPrometheus();
  for (const char* reason : {"non_finite_transform", "bad_transform_size", "reserved_entity"}) {
    EXPECT_TRUE(Contains(
        metrics, std::string("scenecrdt_dcl_dropped_messages_total{reason=\"") + reason + "\"} 1"))
        << reason;
  }
  EXPECT_TRUE(Contains(metrics, "scenecrdt_drops_total{reason=\"malformed_dcl\"} 4"));
  // Still joined: it receives the next change.
  std::vector<uint8_t> next;
  AppendPut(next, 3001, 6, 6.0f);
  ASSERT_TRUE(watcher.Send(next));
  auto at_mixed = mixed.Receive();
  ASSERT_TRUE(at_mixed.has_value());
  // When its chunk merged while its join state was still being written, the session catches
  // up with a batch that holds its own accepted messages too (idempotent under LWW); under
  // load that happens, so it may come first. Nothing else may.
  if (*at_mixed == Concat({valid, later})) {
    at_mixed = mixed.Receive();
    ASSERT_TRUE(at_mixed.has_value());
  }
  EXPECT_EQ(*at_mixed, next);
}

TEST(DclRateLimitTest, OverTheBudgetIsDelayedNotDropped) {
  auto config = TestServer::Config();
  config.limits.messages_per_second = 2000;
  config.limits.message_burst = 100;
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  DclSocket fast(port, "/dcl/rate");
  ASSERT_TRUE(fast.Receive().has_value());
  std::vector<std::vector<uint8_t>> chunks;
  for (uint32_t round = 1; round <= 5; ++round) {
    std::vector<uint8_t> chunk;
    for (uint32_t e = 0; e < 100; ++e) AppendPut(chunk, 5000 + e, round, static_cast<float>(round));
    ASSERT_TRUE(fast.Send(chunk));
    chunks.push_back(std::move(chunk));
  }
  const std::string expected = ReplayHash(chunks);
  EXPECT_TRUE(WaitUntil([&] { return server.SceneHash("rate") == expected; }, 20s))
      << "throttled chunks were lost";
  EXPECT_GE(server.get().metrics().dcl_throttles.load(), 1u);
  EXPECT_FALSE(Contains(server.get().metrics().RenderPrometheus(),
                        "scenecrdt_refusals_total{reason=\"rate_limited\"} 1"));
}

TEST(DclMetricsTest, JoinsReconnectsResyncsClosesAndEventLinesAreExposed) {
  LogCapture log;
  auto config = TestServer::Config();
  config.log_sink = log.Sink();
  config.limits.slow_consumer_ms = 3000;  // a resync is a delivery that took >= 600 ms
  TestServer server(config);
  const uint16_t port = server.get().http_port();
  {
    DclSocket raw(port, "/dcl/m");
    ASSERT_TRUE(raw.Receive().has_value());
    std::vector<uint8_t> dcl;
    AppendPut(dcl, 900, 1, 1.0f);
    ASSERT_TRUE(raw.Send(dcl));
    raw.Close();
  }
  // A raw session that vanishes without a close frame, then the same address again.
  { DclSocket vanished(port, "/dcl/m"); }
  ASSERT_TRUE(WaitUntil([&] { return server.get().metrics().sessions.load() == 0; }));
  DclSocket back(port, "/dcl/m");
  ASSERT_TRUE(back.Receive().has_value());
  // An envelope client resumes.
  uint64_t resume_at = 0;
  {
    auto first = Join(server.tcp_url(), "m");
    resume_at = first->scene_sequence();
  }
  auto resumed = Join(server.tcp_url(), "m", resume_at);
  EXPECT_TRUE(resumed->welcome()->resumed);
  // A malformed chunk: a drop.
  {
    DclSocket bad(port, "/dcl/m");
    ASSERT_TRUE(bad.Receive().has_value());
    const std::vector<uint8_t> junk = {1, 0, 0, 0, 1, 0, 0, 0};
    ASSERT_TRUE(bad.Send(junk));
    EXPECT_EQ(bad.WaitClose(), std::optional<uint16_t>(1007));
  }
  // A slow consumer: an envelope session that stops reading (small receive buffer) while
  // ~1 MB states pile up, and reads again after 700 ms (that slowness is what is measured).
  {
    RawConnection slow(server.get().tcp_port(), 4096);
    ASSERT_TRUE(slow.Join("m").has_value());
    auto writer = Join(server.tcp_url(), "m");
    std::vector<uint8_t> payload(15000, 0xAB);
    for (uint32_t round = 1; round <= 6; ++round) {
      std::vector<uint8_t> dcl;
      payload[0] = static_cast<uint8_t>(round);
      for (uint32_t e = 0; e < 64; ++e) {
        AppendMessage(dcl, protocol::MessageType::kPutComponent, 6000 + e, 1234, round, payload);
      }
      writer->SendCrdt(dcl);
      ASSERT_TRUE(writer->PollUntil([&] { return writer->pending_frames() == 0; }, 20s));
    }
    const auto stalled_at = std::chrono::steady_clock::now();
    WaitUntil([&] { return std::chrono::steady_clock::now() - stalled_at >= 700ms; }, 2s);
    EXPECT_TRUE(WaitUntil(
        [&] {
          (void)slow.ReadFrameBytes(20ms);
          return server.get().metrics().resyncs.load() >= 1;
        },
        20s))
        << "no resync after a stalled consumer";
  }
  ASSERT_TRUE(WaitUntil([&] { return server.get().metrics().sessions.load() == 2; }));

  const std::string http = HttpGet(port, "/metrics");
  ASSERT_TRUE(Contains(http, "200 OK")) << http.substr(0, 200);
  // Exact where this test alone decides the value; at least one where the envelope clients'
  // own ends (goodbye or not) also count.
  for (auto [series, value] : {
           std::pair{"scenecrdt_sessions_by_kind{kind=\"dcl\"}", 1.0},
           std::pair{"scenecrdt_sessions_by_kind{kind=\"tcp\"}", 1.0},
           std::pair{"scenecrdt_joins_total{kind=\"dcl\",state=\"snapshot\"}", 4.0},
           std::pair{"scenecrdt_joins_total{kind=\"tcp\",state=\"resume\"}", 1.0},
           std::pair{"scenecrdt_joins_total{kind=\"tcp\",state=\"resume_stale\"}", 0.0},
           std::pair{"scenecrdt_reconnects_total{evidence=\"resume\"}", 1.0},
           std::pair{"scenecrdt_drops_total{reason=\"malformed_dcl\"}", 1.0},
           std::pair{"scenecrdt_dcl_chunks_in_total", 2.0},
       }) {
    EXPECT_EQ(Metric(http, series), value) << series;
  }
  for (const char* series : {
           "scenecrdt_reconnects_total{evidence=\"recent_drop\"}",
           "scenecrdt_session_closes_total{reason=\"client_closed\"}",
           "scenecrdt_session_closes_total{reason=\"peer_gone\"}",
           "scenecrdt_resyncs_total",
           "scenecrdt_resync_bytes_total",
       }) {
    EXPECT_GE(Metric(http, series), 1.0) << series;
  }
  // One line per event, with scene and session id.
  EXPECT_EQ(log.Count({" open ", "scene=m", "kind=dcl", "role=write", "state=snapshot"}), 4u)
      << log.All();
  EXPECT_EQ(log.Count({" open ", "kind=dcl", "reconnect=recent_drop"}), 1u) << log.All();
  EXPECT_EQ(log.Count({" open ", "kind=tcp", "state=resume", "reconnect=resume"}), 1u);
  EXPECT_EQ(log.Count({" close ", "scene=m", "kind=dcl", "reason=client_closed"}), 1u);
  EXPECT_EQ(log.Count({" close ", "kind=dcl", "reason=peer_gone"}), 1u);
  EXPECT_EQ(log.Count({" close ", "kind=dcl", "reason=malformed_dcl"}), 1u);
  EXPECT_EQ(log.Count({" refusal ", "scene=m", "reason=length_too_small", "fatal=yes"}), 1u);
  EXPECT_GE(log.Count({" resync ", "scene=m", "kind=tcp", "busy_ms="}), 1u) << log.All();
  EXPECT_EQ(log.Count({"session=", "scene="}), log.Count({"scenecrdt serve: "}));
}

}  // namespace
}  // namespace scenecrdt::testing
