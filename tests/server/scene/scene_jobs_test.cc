// SPDX-License-Identifier: Apache-2.0
// Owner: the scene's jobs that stand alone (server/scene/: ack_book, snapshot_share,
// fan_out_cache, frame_builder, departures, scene_sequences): their contracts without a scene
// around them. The scene's behaviour through them is covered end to end by server_test.cc and
// friends.
#include <gtest/gtest.h>

#include <array>
#include <deque>
#include <map>
#include <random>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/session/envelope.h"
#include "scenecrdt/protocol/session/sequence.h"
#include "scenecrdt/server/scene/ack_book.h"
#include "scenecrdt/server/scene/departures.h"
#include "scenecrdt/server/scene/fan_out/fan_out_cache.h"
#include "scenecrdt/server/scene/fan_out/frame_builder.h"
#include "scenecrdt/server/scene/fan_out/snapshot_share.h"
#include "scenecrdt/server/scene/scene_sequences.h"

namespace scenecrdt::server {
namespace {

TEST(AckBookTest, OneCumulativeAckPerMemberForWhatIsDurable) {
  AckBook book;
  book.Add(/*store_sequence=*/1, /*member=*/7, /*frame_sequence=*/10);
  book.Add(2, 8, 3);
  book.Add(3, 7, 12);
  book.Submitted(3);  // a commit of everything up to 3
  book.Add(5, 8, 4);
  EXPECT_EQ(book.Waiting(), (std::vector<uint64_t>{7, 8}));
  const auto acks = book.TakeDurable(3);
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0], (std::pair<uint64_t, uint64_t>{7, 12}));
  EXPECT_EQ(acks[1], (std::pair<uint64_t, uint64_t>{8, 3}));
  EXPECT_FALSE(book.empty());  // store sequence 5 is not durable yet
  EXPECT_EQ(book.Waiting(), (std::vector<uint64_t>{8}));
  EXPECT_EQ(book.TakeDurable(5).size(), 1u);
  EXPECT_TRUE(book.empty());
}

// The acks AckBook owes: the old book kept one entry per merged frame (unbounded while commits
// fail); this reference is that book, to compare against on random schedules.
struct EveryFrameBook {
  std::deque<std::array<uint64_t, 3>> pending;  // store sequence, member, frame sequence
  std::map<uint64_t, uint64_t> TakeDurable(uint64_t durable) {
    std::map<uint64_t, uint64_t> acks;
    while (!pending.empty() && pending.front()[0] <= durable) {
      auto& a = acks[pending.front()[1]];
      a = std::max(a, pending.front()[2]);
      pending.pop_front();
    }
    return acks;
  }
};

TEST(AckBookTest, RandomSchedulesAckExactlyWhatAFramePerEntryBookAcks) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);  // 32-bit results
    AckBook book;
    EveryFrameBook reference;
    uint64_t store = 0, durable = 0, in_flight = 0;
    std::map<uint64_t, uint64_t> frame_of;  // member -> last frame sequence
    std::size_t most_checkpoints = 0;
    for (int step = 0; step < 400; ++step) {
      const uint32_t what = static_cast<uint32_t>(rng() % 10);
      if (what < 6) {  // a frame merges (sometimes without changing the store)
        if (rng() % 4 != 0) ++store;
        const uint64_t member = rng() % 5;
        const uint64_t fs = ++frame_of[member];
        book.Add(store, member, fs);
        reference.pending.push_back({store, member, fs});
      } else if (what < 8 && in_flight == 0 && store > durable) {  // a commit is submitted
        in_flight = store;
        book.Submitted(store);
      } else if (what == 8 && in_flight != 0) {  // it succeeds
        durable = in_flight;
        in_flight = 0;
        const auto got = book.TakeDurable(durable);
        const std::map<uint64_t, uint64_t> got_map(got.begin(), got.end());
        ASSERT_EQ(got_map, reference.TakeDurable(durable)) << "seed " << seed;
      } else if (what == 9) {  // it fails (the next one covers everything), or a no-op release
        in_flight = 0;
        const auto got = book.TakeDurable(durable);
        const std::map<uint64_t, uint64_t> got_map(got.begin(), got.end());
        ASSERT_EQ(got_map, reference.TakeDurable(durable)) << "seed " << seed;
      }
      most_checkpoints = std::max(most_checkpoints, book.checkpoints());
      EXPECT_EQ(book.empty(), reference.pending.empty());
    }
    EXPECT_LE(most_checkpoints, 3u * 5u) << "seed " << seed;
  }
}

TEST(AckBookTest, AWriterThroughALongOutageHoldsAtMostThreeCheckpoints) {
  AckBook book;
  uint64_t store = 0;
  for (uint64_t fs = 1; fs <= 100000; ++fs) {
    book.Add(++store, /*member=*/1, fs);
    if (fs % 100 == 0) book.Submitted(store);  // every commit fails: nothing becomes durable
    ASSERT_LE(book.checkpoints(), 3u);
  }
  book.Submitted(store);
  const auto acks = book.TakeDurable(store);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].second, 100000u);
  EXPECT_TRUE(book.empty());
}

TEST(AckBookTest, WaitersRunOnceWhenReleased) {
  AckBook book;
  int runs = 0;
  book.AddWaiter([&] { ++runs; });
  book.AddWaiter([&] { ++runs; });
  EXPECT_TRUE(book.has_waiters());
  book.ReleaseWaiters();
  EXPECT_EQ(runs, 2);
  EXPECT_FALSE(book.has_waiters());
  book.ReleaseWaiters();
  EXPECT_EQ(runs, 2);
}

TEST(SnapshotShareTest, SharedWhileAliveForgottenAtANewSequence) {
  using Form = SnapshotShare::Form;
  SnapshotShare share;
  std::vector<SharedFrame> frames = {MakeShared({1, 2}), MakeShared({3})};
  share.Keep(4, Form::kEnvelope, frames);
  EXPECT_EQ(share.Alive(4, Form::kEnvelope), frames);
  EXPECT_TRUE(share.Alive(4, Form::kZstd).empty());  // each form on its own
  EXPECT_TRUE(share.Alive(4, Form::kRaw).empty());
  frames[1].reset();  // one frame sent and dropped: the set is not shared any more
  EXPECT_TRUE(share.Alive(4, Form::kEnvelope).empty());
  share.Keep(4, Form::kRaw, {frames[0]});
  EXPECT_EQ(share.Alive(4, Form::kRaw).size(), 1u);
  EXPECT_TRUE(share.Alive(5, Form::kRaw).empty());  // a new store sequence forgets it
  EXPECT_TRUE(share.Alive(4, Form::kRaw).empty());
}

TEST(FanOutCacheTest, OneBatchPerCursorPerSequence) {
  FanOutCache cache;
  bool created = false;
  cache.At(10, 3, created).dcl = MakeShared({9});
  EXPECT_TRUE(created);
  EXPECT_NE(cache.At(10, 3, created).dcl, nullptr);
  EXPECT_FALSE(created);
  cache.At(10, 5, created);
  EXPECT_TRUE(created);
  EXPECT_EQ(cache.At(11, 3, created).dcl, nullptr);  // a new sequence: nothing kept
  EXPECT_TRUE(created);
}

// Envelope frames around an export (issue 18 §3: the export is cut by its length headers,
// never decoded again): every frame's chunk decodes whole, none is over the limit unless it is
// one message, together they are the export, and a legacy DELETE_ENTITY_NETWORK (declares 12,
// takes 16) is not cut in two.
TEST(FrameBuilderTest, FramesCutAnExportAtItsMessageBoundaries) {
  std::vector<uint8_t> dcl;
  std::vector<uint8_t> payload;
  std::mt19937 rng(7);
  for (uint32_t i = 0; i < 400; ++i) {
    protocol::CrdtMessage m;
    m.entity = 512 + i;
    m.timestamp = i + 1;
    switch (i % 4) {
      case 0:
        protocol::AppendTransformPut(m.entity, m.timestamp, protocol::Transform{}, dcl);
        continue;
      case 1:
        payload.assign(rng() % 300, static_cast<uint8_t>(i));
        m.type = protocol::MessageType::kPutComponent;
        m.component = 1100;
        m.data = payload;
        break;
      case 2:
        m.type = protocol::MessageType::kDeleteEntityNetwork;
        m.network_id = 9;
        m.legacy_length = true;
        break;
      default:
        m.type = protocol::MessageType::kDeleteComponent;
        m.component = 1100;
        break;
    }
    protocol::AppendMessage(m, dcl);
  }
  Metrics metrics;
  const uint32_t limit = 1000;
  FrameBuilder builder(metrics, limit);
  const auto frames = builder.FromStream(dcl, 3, 9, /*is_state=*/true);
  ASSERT_GT(frames.size(), 10u);
  std::vector<uint8_t> joined;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    auto frame = session::ReadFrame(*frames[i]);
    ASSERT_TRUE(frame.has_value()) << i;
    const auto* crdt = std::get_if<session::Crdt>(&*frame);
    ASSERT_NE(crdt, nullptr) << i;
    EXPECT_EQ(crdt->frame_sequence, frames.size() - 1 - i);
    EXPECT_EQ(crdt->scene_sequence, i + 1 == frames.size() ? 9u : 3u);
    std::size_t messages = 0;
    auto decoded =
        protocol::DecodeStream(crdt->data, {}, [&](const protocol::CrdtMessage&) { ++messages; });
    ASSERT_TRUE(decoded.has_value()) << "frame " << i << ": " << decoded.error().detail;
    EXPECT_TRUE(crdt->data.size() <= limit || messages == 1) << i;
    joined.insert(joined.end(), crdt->data.begin(), crdt->data.end());
  }
  EXPECT_EQ(joined, dcl);
}

TEST(DeparturesTest, ARecentAbnormalEndIsTakenOnce) {
  Departures departures;
  const auto a = net::asio::ip::make_address("192.0.2.1");
  const auto b = net::asio::ip::make_address("192.0.2.2");
  EXPECT_TRUE(Departures::Abnormal(CloseReason::kPeerGone));
  EXPECT_FALSE(Departures::Abnormal(CloseReason::kClientClosed));
  departures.Note(a, SessionKind::kTcp, 1000);
  EXPECT_FALSE(departures.Take(a, SessionKind::kWebSocket, 2000));  // another kind
  EXPECT_FALSE(departures.Take(b, SessionKind::kTcp, 2000));        // another address
  EXPECT_TRUE(departures.Take(a, SessionKind::kTcp, 2000));
  EXPECT_FALSE(departures.Take(a, SessionKind::kTcp, 2000));  // taken
  departures.Note(a, SessionKind::kTcp, 1000);
  EXPECT_FALSE(departures.Take(a, SessionKind::kTcp, 1000 + Departures::kReconnectWindowMs + 1));
  for (int i = 0; i < static_cast<int>(Departures::kMaxDepartures) + 1; ++i) {
    departures.Note(i == 0 ? b : a, SessionKind::kDcl, 5000);
  }
  EXPECT_FALSE(departures.Take(b, SessionKind::kDcl, 5000));  // the oldest went first
}

TEST(SceneSequencesTest, ALocalLogResumesItsOwnIncarnationOnly) {
  const uint64_t base = session::MakeSceneSequence(/*incarnation=*/3, 0);
  SceneSequences sequences(base);
  EXPECT_FALSE(sequences.shared());
  EXPECT_EQ(sequences.Wire(5), base | 5);
  EXPECT_EQ(sequences.ResumeFrom(base | 4, /*store_seq=*/5), std::optional<uint64_t>(4));
  EXPECT_EQ(sequences.ResumeFrom(base | 6, 5), std::nullopt);  // from the future
  EXPECT_EQ(sequences.ResumeFrom(session::MakeSceneSequence(2, 4), 5), std::nullopt);
}

TEST(SceneSequencesTest, ASharedLogNumbersByItsPositions) {
  SceneSequences sequences(session::MakeSceneSequence(3, 0));
  sequences.UseSharedLog();
  EXPECT_TRUE(sequences.shared());
  EXPECT_EQ(sequences.Wire(5), 0u);  // no mark yet
  const cluster::StreamId id{1700000000000, 2};
  sequences.marks().Reset(id, /*store_seq=*/5);
  EXPECT_EQ(sequences.Wire(5), cluster::SceneSequenceFromStreamId(id));
  EXPECT_EQ(sequences.ResumeFrom(cluster::SceneSequenceFromStreamId(id), 7),
            std::optional<uint64_t>(5));
}

}  // namespace
}  // namespace scenecrdt::server
