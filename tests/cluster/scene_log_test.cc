// SPDX-License-Identifier: Apache-2.0
// Tests SceneLog against a real redis-server: append refusals, entry format on the wire, late
// join (snapshot + tail = the merged log, paged), durability across a kill -9 of Redis (AOF,
// appendfsync always), and load restarts when a trim races the pages.
#include "scenecrdt/cluster/scene_log.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "scenecrdt/cluster/compactor.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "tests/cluster/redis_test_server.h"
#include "tests/cluster/store_sink.h"

namespace scenecrdt::cluster {
namespace {

ClusterConfig Config(const std::string& node, uint32_t page_entries = 1024) {
  ClusterConfig config;
  config.key_prefix = "test";
  config.node_id = node;
  config.page_entries = page_entries;
  return config;
}

// Merges a load as a joining node would: snapshot, then tail.
std::string LoadedHash(const LoadedScene& loaded) {
  runtime::CrdtStore store;
  EXPECT_TRUE(store.MergeStream(loaded.snapshot.bytes()).has_value());
  for (const StreamEntry& e : loaded.tail) EXPECT_TRUE(store.MergeStream(e.bytes()).has_value());
  return store.StateHashHex();
}

class SceneLogTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.started()) << redis_.log(); }

  testing::RedisTestServer redis_;
  testing::FakeClock clock_;
};

TEST_F(SceneLogTest, AppendValidity) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog log(c, Config("node-a"));
  runtime::CrdtStore writer;
  const std::vector<uint8_t> chunk = testing::TransformChunk(writer, 600, 3, 1.0f);

  EXPECT_EQ(log.Append("scene", {}).error().code, ErrorCode::kInvalidArgument);
  const std::vector<uint8_t> truncated(chunk.begin(), chunk.end() - 5);
  EXPECT_EQ(log.Append("scene", truncated).error().code, ErrorCode::kTruncated);
  EXPECT_EQ(log.Append("bad{scene}", chunk).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(log.Append("", chunk).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(log.Append("with space", chunk).error().code, ErrorCode::kInvalidArgument);
  ClusterConfig small = Config("node-a");
  small.max_entry_bytes = 16;
  EXPECT_EQ(SceneLog(c, small).Append("scene", chunk).error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(SceneLog(c, Config("")).Append("scene", chunk).error().code,
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(SceneLog(c, Config("bad node")).LoadScene("scene").error().code,
            ErrorCode::kInvalidArgument);
  auto length = log.StreamLength("scene");
  ASSERT_TRUE(length.has_value());
  EXPECT_EQ(*length, 0u);  // nothing refused reached Redis
}

TEST_F(SceneLogTest, AppendWritesOneTaggedEntry) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog log(c, Config("node-a"));
  runtime::CrdtStore writer;
  const std::vector<uint8_t> first = testing::TransformChunk(writer, 600, 3, 1.0f);
  const std::vector<uint8_t> second = testing::TransformChunk(writer, 600, 3, 2.0f);
  auto id1 = log.Append("scene", first);
  auto id2 = log.Append("scene", second);
  ASSERT_TRUE(id1.has_value() && id2.has_value());
  EXPECT_LT(*id1, *id2);
  auto raw = c.Command({"XRANGE", "test:{scene}:log", "-", "+"});
  ASSERT_TRUE(raw.has_value());
  ASSERT_EQ(raw->elements.size(), 2u);
  const RedisReply& entry = raw->elements[0];
  EXPECT_EQ(entry.elements[0].str, id1->ToString());
  ASSERT_EQ(entry.elements[1].elements.size(), 4u);
  EXPECT_EQ(entry.elements[1].elements[0].str, "n");
  EXPECT_EQ(entry.elements[1].elements[1].str, "node-a");
  EXPECT_EQ(entry.elements[1].elements[2].str, "d");
  EXPECT_EQ(entry.elements[1].elements[3].str, std::string(first.begin(), first.end()));
  EXPECT_EQ(*log.StreamLength("scene"), 2u);
}

TEST_F(SceneLogTest, AppendBatchPipelinesAndFailsPerChunk) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog log(c, Config("node-a"));
  runtime::CrdtStore wa, wb;
  const std::vector<uint8_t> a = testing::TransformChunk(wa, 600, 2, 1.0f);
  const std::vector<uint8_t> b = testing::TransformChunk(wb, 600, 2, 2.0f);
  const std::vector<uint8_t> a2 = testing::TransformChunk(wa, 600, 2, 3.0f);
  const std::vector<uint8_t> bad(a.begin(), a.end() - 1);
  ASSERT_TRUE(c.Command({"SET", "test:{wrong}:log", "x"}).has_value());
  const SceneLog::SceneChunk batch[] = {{"a", a},   {"b", b},  {"wrong", a},
                                        {"a", bad}, {"a", a2}, {"bad{name}", a}};
  const uint64_t commands_before = c.counters().commands;
  auto results = log.AppendBatch(batch);
  ASSERT_TRUE(results.has_value());
  ASSERT_EQ(results->size(), 6u);
  EXPECT_TRUE((*results)[0].has_value());
  EXPECT_TRUE((*results)[1].has_value());
  EXPECT_EQ((*results)[2].error().code, ErrorCode::kCorruptData);  // refused by Redis, alone
  EXPECT_EQ((*results)[3].error().code, ErrorCode::kTruncated);    // refused here
  ASSERT_TRUE((*results)[4].has_value());
  EXPECT_EQ((*results)[5].error().code, ErrorCode::kInvalidArgument);
  EXPECT_LT((*results)[0].value(), (*results)[4].value());
  EXPECT_EQ(c.counters().commands - commands_before, 4u);  // only the valid chunks were sent
  EXPECT_EQ(*log.StreamLength("a"), 2u);
  EXPECT_EQ(*log.StreamLength("b"), 1u);

  redis_.Kill(SIGKILL);
  auto down = log.AppendBatch(batch);
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable);
}

TEST_F(SceneLogTest, LoadOfAnEmptySceneIsEmpty) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog log(c, Config("node-a"));
  auto loaded = log.LoadScene("nothing-here");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_FALSE(loaded->snapshot.exists);
  EXPECT_TRUE(loaded->tail.empty());
  EXPECT_TRUE(loaded->last_id.is_zero());
}

TEST_F(SceneLogTest, LoadIsSnapshotPlusTailAndEqualsTheMergedLog) {
  RedisConnection ca(testing::TestRedisOptions(redis_.url(), &clock_));
  RedisConnection cb(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog a(ca, Config("node-a", 7));
  SceneLog b(cb, Config("node-b", 7));
  // Two writers with their own replicas write the same entities: LWW conflicts, deletes.
  runtime::CrdtStore wa, wb;
  std::vector<std::vector<uint8_t>> all;
  auto write = [&](SceneLog& log, runtime::CrdtStore& w, uint32_t first, float x) {
    all.push_back(testing::TransformChunk(w, first, 4, x));
    ASSERT_TRUE(log.Append("s", all.back()).has_value());
  };
  for (int i = 0; i < 30; ++i) {
    write(a, wa, 600 + static_cast<uint32_t>(i % 5), static_cast<float>(i));
    write(b, wb, 602 + static_cast<uint32_t>(i % 7), static_cast<float>(-i));
  }
  all.push_back(testing::DeleteEntityChunk(wa, protocol::MakeEntityId(603, 0)));
  ASSERT_TRUE(a.Append("s", all.back()).has_value());

  auto before = a.LoadScene("s");
  ASSERT_TRUE(before.has_value());
  EXPECT_FALSE(before->snapshot.exists);
  EXPECT_EQ(before->tail.size(), all.size());  // paged by 7
  EXPECT_EQ(LoadedHash(*before), testing::ReferenceHash(all));

  CompactionOptions options;
  options.retain_ms = 0;
  Compactor compactor(ca, Config("node-a"), options);
  auto compacted = compactor.CompactScene("s");
  ASSERT_TRUE(compacted.has_value());
  ASSERT_EQ(compacted->outcome, CompactionResult::Outcome::kCompacted);
  EXPECT_EQ(runtime::Sha256::ToHex(compacted->state_hash), testing::ReferenceHash(all));

  for (int i = 0; i < 10; ++i) write(b, wb, 700 + static_cast<uint32_t>(i), 9.0f);
  auto after = b.LoadScene("s");
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->snapshot.exists);
  EXPECT_EQ(after->snapshot.covers, compacted->covers);
  EXPECT_EQ(after->tail.size(), 10u);
  EXPECT_EQ(LoadedHash(*after), testing::ReferenceHash(all));
  EXPECT_EQ(after->last_id, after->tail.back().id);
  EXPECT_EQ(after->attempts, 1u);
}

TEST_F(SceneLogTest, RedisKilledAndRestartedFromItsAofLosesNoAppendedEntry) {
  std::vector<StreamId> acked;
  std::vector<std::vector<uint8_t>> chunks;
  {
    RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
    SceneLog log(c, Config("node-a"));
    runtime::CrdtStore writer;
    for (int i = 0; i < 200; ++i) {
      chunks.push_back(testing::TransformChunk(writer, 600 + static_cast<uint32_t>(i % 50), 2,
                                               static_cast<float>(i)));
      auto id = log.Append("durable", chunks.back());
      ASSERT_TRUE(id.has_value());
      acked.push_back(*id);
    }
  }
  redis_.Kill(SIGKILL);  // no shutdown, no final fsync: only what appendfsync always wrote
  ASSERT_TRUE(redis_.Restart()) << redis_.log();
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  SceneLog log(c, Config("node-b"));
  auto loaded = log.LoadScene("durable");
  ASSERT_TRUE(loaded.has_value());
  std::vector<StreamId> ids;
  for (const StreamEntry& e : loaded->tail) ids.push_back(e.id);
  EXPECT_EQ(ids, acked);
  EXPECT_EQ(LoadedHash(*loaded), testing::ReferenceHash(chunks));
}

TEST_F(SceneLogTest, LoadRestartsWhenATrimRemovesEntriesBetweenPages) {
  // Simulate a compaction that ran between two pages: a trim marker after the first page names
  // an entry the pages jumped over. The load must notice and start again.
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  runtime::CrdtStore writer;
  const std::vector<uint8_t> chunk = testing::TransformChunk(writer, 600, 1, 1.0f);
  const std::string data(chunk.begin(), chunk.end());
  // Entries 1-1 .. 1-3 survive; a marker says 0-5 (between the snapshot 0-1 and 1-1) was trimmed.
  ASSERT_TRUE(c.Command({"HSET", "test:{s}:snap", "id", "0-1", "data", ""}).has_value());
  for (const char* id : {"1-1", "1-2", "1-3"}) {
    ASSERT_TRUE(c.Command({"XADD", "test:{s}:log", id, "n", "w", "d", data}).has_value());
  }
  ASSERT_TRUE(c.Command({"XADD", "test:{s}:log", "1-4", "n", "w", "t", "0-5"}).has_value());
  SceneLog log(c, Config("node-a", 2));
  auto loaded = log.LoadScene("s");
  ASSERT_FALSE(loaded.has_value());  // the marker never goes away here: every attempt misses
  EXPECT_EQ(loaded.error().code, ErrorCode::kUnavailable);

  // A marker for something the load did read is not a gap.
  ASSERT_TRUE(c.Command({"DEL", "test:{s}:log"}).has_value());
  for (const char* id : {"1-1", "1-2", "1-3"}) {
    ASSERT_TRUE(c.Command({"XADD", "test:{s}:log", id, "n", "w", "d", data}).has_value());
  }
  ASSERT_TRUE(c.Command({"XADD", "test:{s}:log", "1-4", "n", "w", "t", "1-2"}).has_value());
  auto fine = log.LoadScene("s");
  ASSERT_TRUE(fine.has_value());
  EXPECT_EQ(fine->tail.size(), 3u);
  EXPECT_EQ(fine->last_id, (StreamId{1, 4}));
}

TEST_F(SceneLogTest, CorruptSnapshotIsRefusedLoudly) {
  RedisConnection c(testing::TestRedisOptions(redis_.url(), &clock_));
  ASSERT_TRUE(c.Command({"HSET", "test:{s}:snap", "id", "zz", "data", ""}).has_value());
  SceneLog log(c, Config("node-a"));
  EXPECT_EQ(log.LoadScene("s").error().code, ErrorCode::kCorruptData);
  EXPECT_EQ(log.ReadSnapshot("s").error().code, ErrorCode::kCorruptData);
  ASSERT_TRUE(c.Command({"SET", "test:{t}:log", "not a stream"}).has_value());
  EXPECT_EQ(log.LoadScene("t").error().code, ErrorCode::kCorruptData);
  runtime::CrdtStore writer;
  const std::vector<uint8_t> chunk = testing::TransformChunk(writer, 600, 1, 0.0f);
  EXPECT_EQ(log.Append("t", chunk).error().code, ErrorCode::kCorruptData);
}

}  // namespace
}  // namespace scenecrdt::cluster
