// SPDX-License-Identifier: Apache-2.0
// Tests the lease and compaction against a real redis-server: the lease excludes a second
// holder and only its owner renews or releases it; the commit script fences a lost lease and an
// older snapshot; the retention window keeps recent entries; compaction racing concurrent
// appends and a paging reader keeps every state hash and bounds the stream length.
#include "scenecrdt/cluster/compactor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "scenecrdt/cluster/internal/scripts.h"
#include "scenecrdt/cluster/lease.h"
#include "scenecrdt/cluster/scene_log.h"
#include "scenecrdt/cluster/stream_reader.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/cluster/store_sink.h"

namespace scenecrdt::cluster {
namespace {

ClusterConfig Config(const std::string& node) {
  ClusterConfig config;
  config.key_prefix = "test";
  config.node_id = node;
  return config;
}

class CompactorTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.started()) << redis_.log(); }
  RedisOptions Redis() { return testing::TestRedisOptions(redis_.url(), &clock_, &log_); }

  testing::RedisTestServer redis_;
  testing::FakeClock clock_;
  testing::LogCapture log_;
};

TEST_F(CompactorTest, LeaseIsExclusiveAndOwnerChecked) {
  RedisConnection c(Redis());
  Lease a(c, "test:{s}:lease", "node-a", 60000);
  Lease b(c, "test:{s}:lease", "node-b", 60000);
  EXPECT_NE(a.token(), b.token());
  ASSERT_TRUE(*a.TryAcquire());
  EXPECT_FALSE(*b.TryAcquire());
  EXPECT_FALSE(*b.Release());  // not b's to release
  EXPECT_FALSE(*b.Renew());
  EXPECT_TRUE(*a.Renew());
  EXPECT_TRUE(*a.TryAcquire());  // held: renewed
  auto ttl = c.Command({"PTTL", "test:{s}:lease"});
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(ttl->integer, 0);

  // a's lease expires (simulated) and b takes it: a can neither renew nor release b's lease.
  ASSERT_TRUE(c.Command({"DEL", "test:{s}:lease"}).has_value());
  ASSERT_TRUE(*b.TryAcquire());
  EXPECT_FALSE(*a.Renew());
  EXPECT_FALSE(*a.Release());
  auto holder = c.Command({"GET", "test:{s}:lease"});
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(holder->str, b.token());
  EXPECT_TRUE(*b.Release());
  EXPECT_TRUE(c.Command({"GET", "test:{s}:lease"})->is_nil());
}

TEST_F(CompactorTest, LeaseExcludesASecondCompactor) {
  RedisConnection c(Redis());
  SceneLog log(c, Config("writer"));
  runtime::CrdtStore writer;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(log.Append("s", testing::TransformChunk(writer, 600, 2, static_cast<float>(i)))
                    .has_value());
  }
  Lease other(c, "test:{s}:lease", "node-x", 60000);
  ASSERT_TRUE(*other.TryAcquire());
  Compactor compactor(c, Config("node-y"));
  auto busy = compactor.CompactScene("s");
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->outcome, CompactionResult::Outcome::kLeaseHeld);
  EXPECT_EQ(compactor.counters().lease_busy, 1u);
  EXPECT_EQ(*log.StreamLength("s"), 10u);
  EXPECT_FALSE(log.ReadSnapshot("s")->exists);

  ASSERT_TRUE(*other.Release());
  auto done = compactor.CompactScene("s");
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->outcome, CompactionResult::Outcome::kCompacted);
  EXPECT_EQ(done->folded_entries, 10u);
  EXPECT_EQ(compactor.counters().compactions, 1u);
  // The compactor released its lease.
  EXPECT_TRUE(c.Command({"GET", "test:{s}:lease"})->is_nil());
}

TEST_F(CompactorTest, CommitScriptFencesALostLeaseAndAnOlderSnapshot) {
  RedisConnection c(Redis());
  const char* script = internal::kCommitCompactionScript;
  // No lease held by this token: nothing is written.
  auto lost = c.Command({"EVAL", script, "3", "test:{s}:lease", "test:{s}:snap", "test:{s}:log",
                         "token", "5-0", "", "", "node"});
  ASSERT_TRUE(lost.has_value());
  EXPECT_EQ(lost->elements[0].integer, -1);
  EXPECT_TRUE(c.Command({"EXISTS", "test:{s}:snap"})->integer == 0);

  ASSERT_TRUE(c.Command({"SET", "test:{s}:lease", "token"}).has_value());
  ASSERT_TRUE(c.Command({"HSET", "test:{s}:snap", "id", "10-0", "data", ""}).has_value());
  for (const char* covers : {"10-0", "9-5", "9-99999999999"}) {
    auto older = c.Command({"EVAL", script, "3", "test:{s}:lease", "test:{s}:snap", "test:{s}:log",
                            "token", covers, "", "", "node"});
    ASSERT_TRUE(older.has_value());
    EXPECT_EQ(older->elements[0].integer, -2) << covers;
  }
  auto newer = c.Command({"EVAL", script, "3", "test:{s}:lease", "test:{s}:snap", "test:{s}:log",
                          "token", "10-1", "", "", "node"});
  ASSERT_TRUE(newer.has_value());
  EXPECT_EQ(newer->elements[0].integer, 0);
  EXPECT_EQ(c.Command({"HGET", "test:{s}:snap", "id"})->str, "10-1");
}

TEST_F(CompactorTest, RetentionWindowKeepsRecentEntries) {
  RedisConnection c(Redis());
  SceneLog log(c, Config("writer"));
  runtime::CrdtStore writer;
  std::vector<std::vector<uint8_t>> chunks;
  for (int i = 0; i < 12; ++i) {
    chunks.push_back(testing::TransformChunk(writer, 600 + static_cast<uint32_t>(i), 1, 1.0f));
    ASSERT_TRUE(log.Append("s", chunks.back()).has_value());
  }
  CompactionOptions options;
  options.retain_ms = 3'600'000;  // an hour: everything just written stays
  Compactor compactor(c, Config("node-a"), options);
  auto kept = compactor.CompactScene("s");
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->outcome, CompactionResult::Outcome::kCompacted);
  EXPECT_EQ(kept->trimmed, 0u);
  EXPECT_EQ(kept->stream_length, 12u);  // no marker: nothing was removed
  auto snapshot = log.ReadSnapshot("s");
  ASSERT_TRUE(snapshot.has_value());
  EXPECT_EQ(snapshot->covers, kept->covers);

  auto again = compactor.CompactScene("s");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->outcome, CompactionResult::Outcome::kNothingToDo);

  CompactionOptions eager = options;
  eager.min_tail_entries = 5;
  Compactor picky(c, Config("node-a"), eager);
  ASSERT_TRUE(log.Append("s", testing::TransformChunk(writer, 700, 1, 1.0f)).has_value());
  EXPECT_EQ(picky.CompactScene("s")->outcome, CompactionResult::Outcome::kNothingToDo);
}

TEST_F(CompactorTest, CompactionUnderConcurrentAppendsKeepsTheStateAndBoundsTheStream) {
  constexpr int kAppends = 600;
  std::vector<std::vector<uint8_t>> chunks(kAppends);
  std::atomic<int> appended{0};
  std::atomic<bool> append_failed{false};
  std::thread writer_thread([&] {
    RedisConnection c(testing::TestRedisOptions(redis_.url()));
    SceneLog log(c, Config("writer"));
    runtime::CrdtStore w1, w2;  // two replicas writing the same entities: LWW conflicts
    for (int i = 0; i < kAppends; ++i) {
      runtime::CrdtStore& w = i % 2 == 0 ? w1 : w2;
      const uint32_t number = 600 + static_cast<uint32_t>((i * 7) % 40);
      std::vector<uint8_t>& chunk = chunks[static_cast<std::size_t>(i)];
      chunk = testing::TransformChunk(w, number, 3, static_cast<float>(i));
      if (i % 97 == 96) {  // an entity of its own, created and deleted in one chunk
        const uint32_t doomed = 900 + static_cast<uint32_t>(i);
        const std::vector<uint8_t> create = testing::TransformChunk(w, doomed, 1, 1.0f);
        const std::vector<uint8_t> remove =
            testing::DeleteEntityChunk(w, protocol::MakeEntityId(doomed, 0));
        chunk.insert(chunk.end(), create.begin(), create.end());
        chunk.insert(chunk.end(), remove.begin(), remove.end());
      }
      if (!log.Append("busy", chunks[static_cast<std::size_t>(i)]).has_value()) {
        append_failed = true;
      }
      appended.fetch_add(1);
    }
  });

  RedisConnection c(Redis());
  CompactionOptions options;
  options.retain_ms = 0;
  Compactor compactor(c, Config("compactor"), options);
  testing::StoreSink sink;
  ReaderOptions paging;
  paging.count = 16;
  StreamReader reader(Redis(), Config("reader"), paging, sink);
  ASSERT_TRUE(reader.AddScene("busy", StreamId{}).has_value());
  int compactions = 0;
  while (appended.load() < kAppends) {
    auto r = compactor.CompactScene("busy");
    ASSERT_TRUE(r.has_value()) << r.error().detail;
    if (r->outcome == CompactionResult::Outcome::kCompacted) ++compactions;
    ASSERT_TRUE(reader.RunOnce(0).has_value());
  }
  writer_thread.join();
  ASSERT_FALSE(append_failed.load());
  // One more entry, so the final compaction has something to fold whatever the race left.
  runtime::CrdtStore w3;
  chunks.push_back(testing::TransformChunk(w3, 5000, 1, 1.0f));
  ASSERT_TRUE(SceneLog(c, Config("writer")).Append("busy", chunks.back()).has_value());

  auto last = compactor.CompactScene("busy");
  ASSERT_TRUE(last.has_value());
  ASSERT_EQ(last->outcome, CompactionResult::Outcome::kCompacted);
  const std::string reference = testing::ReferenceHash(chunks);
  EXPECT_EQ(runtime::Sha256::ToHex(last->state_hash), reference);
  EXPECT_EQ(last->stream_length, 1u);  // everything folded; only the trim marker remains
  EXPECT_GE(compactor.counters().trimmed, static_cast<uint64_t>(kAppends));
  EXPECT_GE(compactions, 1);

  SceneLog log(c, Config("late-joiner"));
  auto loaded = log.LoadScene("busy");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_TRUE(loaded->tail.empty());
  runtime::CrdtStore joined;
  ASSERT_TRUE(joined.MergeStream(loaded->snapshot.bytes()).has_value());
  EXPECT_EQ(joined.StateHashHex(), reference);

  // The paging reader that raced the compactions reaches the same state.
  for (int i = 0; i < 200 && reader.Cursors()[0].cursor < loaded->last_id; ++i) {
    ASSERT_TRUE(reader.RunOnce(0).has_value());
  }
  EXPECT_EQ(reader.Cursors()[0].cursor, loaded->last_id);
  EXPECT_EQ(sink.Hash("busy"), reference);
  EXPECT_EQ(sink.merge_errors(), 0);
}

}  // namespace
}  // namespace scenecrdt::cluster
