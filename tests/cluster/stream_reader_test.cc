// SPDX-License-Identifier: Apache-2.0
// Tests StreamReader against a real redis-server: two nodes exchange entries and skip their
// own, per-scene cursors, failure isolation (a wrong-type key, bad entries, a deleted stream
// never stall the other scenes), scenes added and removed while the loop runs on its thread,
// gaps left by compaction repaired with the snapshot (and only then; a refused one again after a
// backoff), Redis outages.
#include "scenecrdt/cluster/stream_reader.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "scenecrdt/cluster/compactor.h"
#include "scenecrdt/cluster/scene_log.h"
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

ReaderOptions Options(uint32_t count = 256) {
  ReaderOptions options;
  options.count = count;
  options.block_ms = 200;
  options.retry_initial_ms = 100;
  options.retry_max_ms = 400;
  return options;
}

class StreamReaderTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.started()) << redis_.log(); }

  RedisOptions Redis() { return testing::TestRedisOptions(redis_.url(), &clock_, &log_); }

  // Appends a Transform chunk for `scene` through `log`, keeps it for the reference.
  StreamId Write(SceneLog& log, const std::string& scene, uint32_t first, float x) {
    runtime::CrdtStore& writer = writers_[log.config().node_id + "/" + scene];
    chunks_[scene].push_back(testing::TransformChunk(writer, first, 2, x));
    auto id = log.Append(scene, chunks_[scene].back());
    EXPECT_TRUE(id.has_value());
    return id.has_value() ? *id : StreamId{};
  }

  testing::RedisTestServer redis_;
  testing::FakeClock clock_;
  testing::LogCapture log_;
  std::map<std::string, runtime::CrdtStore> writers_;
  std::map<std::string, std::vector<std::vector<uint8_t>>> chunks_;
};

TEST_F(StreamReaderTest, TwoNodesExchangeEntriesAndSkipTheirOwn) {
  RedisConnection ca(Redis()), cb(Redis());
  SceneLog a(ca, Config("node-a")), b(cb, Config("node-b"));
  testing::StoreSink sink_a, sink_b;
  StreamReader reader_a(Redis(), Config("node-a"), Options(), sink_a);
  StreamReader reader_b(Redis(), Config("node-b"), Options(), sink_b);
  ASSERT_TRUE(reader_a.AddScene("s", StreamId{}).has_value());
  ASSERT_TRUE(reader_b.AddScene("s", StreamId{}).has_value());

  // Each node merges its own writes locally, then appends them.
  for (int i = 0; i < 5; ++i) {
    Write(a, "s", 600, static_cast<float>(i));
    sink_a.MergeOwn("s", chunks_["s"].back());
    Write(b, "s", 601, static_cast<float>(i));
    sink_b.MergeOwn("s", chunks_["s"].back());
  }
  ASSERT_TRUE(reader_a.RunOnce(0).has_value());
  ASSERT_TRUE(reader_b.RunOnce(0).has_value());
  EXPECT_EQ(sink_a.Ids("s").size(), 5u);
  EXPECT_EQ(sink_b.Ids("s").size(), 5u);
  for (const std::string& node : sink_a.Nodes("s")) EXPECT_EQ(node, "node-b");
  for (const std::string& node : sink_b.Nodes("s")) EXPECT_EQ(node, "node-a");
  EXPECT_EQ(reader_a.counters().own_skipped, 5u);
  EXPECT_EQ(reader_a.counters().entries, 5u);
  const std::string reference = testing::ReferenceHash(chunks_["s"]);
  EXPECT_EQ(sink_a.Hash("s"), reference);
  EXPECT_EQ(sink_b.Hash("s"), reference);
  EXPECT_EQ(sink_a.merge_errors(), 0);
}

TEST_F(StreamReaderTest, EachSceneHasItsOwnCursor) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  std::vector<StreamId> one, two;
  for (int i = 0; i < 4; ++i) {
    one.push_back(Write(w, "one", 600, static_cast<float>(i)));
    two.push_back(Write(w, "two", 600, static_cast<float>(i)));
  }
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("one", StreamId{}).has_value());
  ASSERT_TRUE(reader.AddScene("two", two[1]).has_value());  // already has the first two
  auto round = reader.RunOnce(0);
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(round->scenes, 2u);
  EXPECT_EQ(round->entries, 6u);
  EXPECT_EQ(sink.Ids("one"), one);
  EXPECT_EQ(sink.Ids("two"), (std::vector<StreamId>{two[2], two[3]}));
  auto cursors = reader.Cursors();
  ASSERT_EQ(cursors.size(), 2u);
  EXPECT_EQ(cursors[0].scene, "one");
  EXPECT_EQ(cursors[0].cursor, one.back());
  EXPECT_EQ(cursors[1].cursor, two.back());
  // Nothing new: a non-blocking round delivers nothing and keeps the cursors.
  auto idle = reader.RunOnce(0);
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->entries, 0u);
  EXPECT_EQ(reader.Cursors()[0].cursor, one.back());
}

TEST_F(StreamReaderTest, WrongTypeKeyIsIsolatedFromTheOtherScenes) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  for (const char* scene : {"a", "b", "c"}) {
    Write(w, scene, 600, 1.0f);
    ASSERT_TRUE(reader.AddScene(scene, StreamId{}).has_value());
  }
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  const StreamId b_cursor = sink.Ids("b").back();

  // Scene b's key is overwritten with a string: Redis fails any XREAD naming it.
  ASSERT_TRUE(c.Command({"SET", "test:{b}:log", "garbage"}).has_value());
  Write(w, "a", 600, 2.0f);
  Write(w, "c", 600, 2.0f);
  auto round = reader.RunOnce(200);
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(sink.Ids("a").size(), 2u);
  EXPECT_EQ(sink.Ids("c").size(), 2u);
  EXPECT_EQ(round->failing_scenes, 1u);
  ASSERT_EQ(sink.Faults().size(), 1u);
  EXPECT_EQ(sink.Faults()[0].scene, "b");
  EXPECT_TRUE(sink.Faults()[0].fault.stream_failed);
  EXPECT_EQ(sink.Faults()[0].fault.error.code, ErrorCode::kCorruptData);
  EXPECT_TRUE(log_.Contains("scene b: stream read failed"));
  EXPECT_TRUE(reader.Cursors()[1].failing);

  // Until its retry is due, b stays out of the shared read; a and c keep flowing.
  Write(w, "a", 600, 3.0f);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.Ids("a").size(), 3u);
  EXPECT_EQ(reader.counters().stream_failures, 1u);

  // A due retry that fails again doubles the wait.
  clock_.Advance(100);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(reader.counters().stream_failures, 2u);

  // Repaired: b is a stream again (an ID after its cursor) and rejoins after its retry.
  ASSERT_TRUE(c.Command({"DEL", "test:{b}:log"}).has_value());
  const std::string next = StreamId{b_cursor.ms + 1, 0}.ToString();
  const std::string data(chunks_["a"][0].begin(), chunks_["a"][0].end());
  ASSERT_TRUE(c.Command({"XADD", "test:{b}:log", next, "n", "writer", "d", data}).has_value());
  clock_.Advance(200);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.Ids("b").size(), 2u);
  EXPECT_FALSE(reader.Cursors()[1].failing);
  EXPECT_TRUE(log_.Contains("scene b: stream readable again"));
}

TEST_F(StreamReaderTest, BadEntriesAreReportedAndSkipped) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("a", StreamId{}).has_value());
  Write(w, "a", 600, 1.0f);
  auto bad1 = c.Command({"XADD", "test:{a}:log", "*", "n", "intruder"});  // no payload
  auto bad2 = c.Command({"XADD", "test:{a}:log", "*", "n", "x", "d", "\x01\x02\x03"});
  ASSERT_TRUE(bad1.has_value() && bad2.has_value());
  Write(w, "a", 601, 2.0f);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.Ids("a").size(), 2u);
  EXPECT_EQ(sink.Hash("a"), testing::ReferenceHash(chunks_["a"]));
  const auto faults = sink.Faults();
  ASSERT_EQ(faults.size(), 2u);
  EXPECT_FALSE(faults[0].fault.stream_failed);
  EXPECT_EQ(faults[0].fault.id.ToString(), bad1->str);
  EXPECT_EQ(faults[1].fault.id.ToString(), bad2->str);
  EXPECT_EQ(reader.counters().bad_entries, 2u);
  EXPECT_TRUE(log_.Contains("skipped entry " + bad2->str));
}

TEST_F(StreamReaderTest, DeletedStreamDoesNotStallTheOthers) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  Write(w, "a", 600, 1.0f);
  Write(w, "b", 600, 1.0f);
  ASSERT_TRUE(reader.AddScene("a", StreamId{}).has_value());
  ASSERT_TRUE(reader.AddScene("b", StreamId{}).has_value());
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  ASSERT_TRUE(c.Command({"DEL", "test:{a}:log"}).has_value());
  Write(w, "b", 600, 2.0f);
  auto round = reader.RunOnce(200);
  ASSERT_TRUE(round.has_value());
  EXPECT_EQ(sink.Ids("b").size(), 2u);
  EXPECT_EQ(round->failing_scenes, 0u);
  EXPECT_TRUE(sink.Faults().empty());
}

TEST_F(StreamReaderTest, ScenesComeAndGoWhileTheLoopRuns) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  ReaderOptions options = Options();
  options.block_ms = 2000;  // added scenes must not wait for the block to end (CLIENT UNBLOCK)
  StreamReader reader(testing::TestRedisOptions(redis_.url(), nullptr, &log_), Config("reader"),
                      options, sink);
  reader.Start();
  ASSERT_TRUE(reader.AddScene("a", StreamId{}).has_value());
  Write(w, "a", 600, 1.0f);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.CountLocked("a") == 1; }));
  ASSERT_TRUE(reader.AddScene("b", StreamId{}).has_value());
  Write(w, "b", 600, 1.0f);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.CountLocked("b") == 1; }));

  reader.RemoveScene("a");
  ASSERT_TRUE(testing::WaitUntil([&] {
    const auto cursors = reader.Cursors();
    return cursors.size() == 1 && cursors[0].scene == "b";
  }));
  Write(w, "a", 600, 2.0f);  // no longer followed
  Write(w, "b", 600, 2.0f);
  ASSERT_TRUE(sink.WaitFor([&] { return sink.CountLocked("b") == 2; }));
  reader.Stop();
  EXPECT_EQ(sink.Ids("a").size(), 1u);
  EXPECT_EQ(sink.Hash("b"), testing::ReferenceHash(chunks_["b"]));
}

TEST_F(StreamReaderTest, TrimmedEntriesAreRecoveredFromTheSnapshot) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("s", StreamId{}).has_value());
  for (int i = 0; i < 50; ++i)
    Write(w, "s", 600 + static_cast<uint32_t>(i % 9), static_cast<float>(i));
  CompactionOptions compaction;
  compaction.retain_ms = 0;
  Compactor compactor(c, Config("writer"), compaction);
  auto compacted = compactor.CompactScene("s");
  ASSERT_TRUE(compacted.has_value());
  ASSERT_EQ(compacted->outcome, CompactionResult::Outcome::kCompacted);
  EXPECT_EQ(compacted->trimmed, 50u);

  // The reader never saw those entries: it finds the marker and merges the snapshot instead.
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_TRUE(sink.Ids("s").empty());
  EXPECT_EQ(sink.snapshots(), 1);
  EXPECT_EQ(reader.counters().snapshot_reloads, 1u);
  EXPECT_EQ(sink.Hash("s"), testing::ReferenceHash(chunks_["s"]));
  EXPECT_TRUE(log_.Contains("entries were trimmed before this node read them"));
}

// A sink that cannot take a snapshot now (ClusterNode: its owner hash re-read failed) gets the
// whole reload again after a backoff that doubles; entries keep coming meanwhile.
TEST_F(StreamReaderTest, RefusedSnapshotIsRetriedAfterABackoff) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  sink.RefuseSnapshots(2);
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("s", StreamId{}).has_value());
  for (int i = 0; i < 20; ++i)
    Write(w, "s", 600 + static_cast<uint32_t>(i % 5), static_cast<float>(i));
  CompactionOptions compaction;
  compaction.retain_ms = 0;
  Compactor compactor(c, Config("writer"), compaction);
  ASSERT_EQ(compactor.CompactScene("s")->outcome, CompactionResult::Outcome::kCompacted);

  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.refused_snapshots(), 1);
  EXPECT_TRUE(log_.Contains("the snapshot was not taken"));
  Write(w, "s", 700, 1.0f);
  ASSERT_TRUE(reader.RunOnce(0).has_value());  // within the backoff: entries only
  EXPECT_EQ(sink.refused_snapshots(), 1);
  EXPECT_EQ(sink.Ids("s").size(), 1u);
  clock_.Advance(100);
  ASSERT_TRUE(reader.RunOnce(0).has_value());  // refused again: the wait doubles (200 ms)
  EXPECT_EQ(sink.refused_snapshots(), 2);
  clock_.Advance(100);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.snapshots(), 0);
  clock_.Advance(100);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.snapshots(), 1);
  EXPECT_EQ(reader.counters().snapshot_reloads, 1u);
  EXPECT_EQ(sink.Hash("s"), testing::ReferenceHash(chunks_["s"]));
}

TEST_F(StreamReaderTest, CaughtUpReaderIgnoresTrimMarkers) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("s", StreamId{}).has_value());
  for (int i = 0; i < 20; ++i)
    Write(w, "s", 600 + static_cast<uint32_t>(i % 4), static_cast<float>(i));
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  CompactionOptions compaction;
  compaction.retain_ms = 0;
  Compactor compactor(c, Config("writer"), compaction);
  ASSERT_EQ(compactor.CompactScene("s")->outcome, CompactionResult::Outcome::kCompacted);
  Write(w, "s", 700, 5.0f);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.snapshots(), 0);
  EXPECT_EQ(sink.Ids("s").size(), 21u);
  EXPECT_EQ(sink.Hash("s"), testing::ReferenceHash(chunks_["s"]));
}

TEST_F(StreamReaderTest, PagedReaderRecoversFromTrimsBetweenItsPages) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(5), sink);
  ASSERT_TRUE(reader.AddScene("s", StreamId{}).has_value());
  for (int i = 0; i < 40; ++i)
    Write(w, "s", 600 + static_cast<uint32_t>(i % 11), static_cast<float>(i));
  ASSERT_TRUE(reader.RunOnce(0).has_value());  // the first 5 of 40
  EXPECT_EQ(sink.Ids("s").size(), 5u);
  CompactionOptions compaction;
  compaction.retain_ms = 0;
  Compactor compactor(c, Config("writer"), compaction);
  ASSERT_EQ(compactor.CompactScene("s")->outcome, CompactionResult::Outcome::kCompacted);
  for (int i = 0; i < 7; ++i) Write(w, "s", 650, 100.0f + static_cast<float>(i));
  for (int round = 0; round < 20; ++round) ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.snapshots(), 1);
  EXPECT_EQ(sink.Hash("s"), testing::ReferenceHash(chunks_["s"]));
}

TEST_F(StreamReaderTest, ARoundReadsAtMostItsByteBudget) {
  RedisConnection c(Redis());
  ClusterConfig writer_config = Config("writer");
  SceneLog w(c, writer_config);
  testing::StoreSink sink;
  ReaderOptions options = Options(64);
  options.max_round_bytes = 256u << 10;
  StreamReader reader(Redis(), Config("reader"), options, sink);
  ASSERT_TRUE(reader.AddScene("a", StreamId{}).has_value());
  ASSERT_TRUE(reader.AddScene("b", StreamId{}).has_value());
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  // 30 entries of ~40 KB per scene (2.4 MB in all: one XREAD COUNT 64 would take all of it),
  // with an entry over the whole budget in the middle of scene a.
  runtime::CrdtStore& wa = writers_["writer/a"];
  runtime::CrdtStore& wb = writers_["writer/b"];
  StreamId oversized;
  for (uint32_t i = 0; i < 30; ++i) {
    chunks_["a"].push_back(testing::TransformChunk(wa, 600 + i * 600, 600, 1.0f));
    ASSERT_TRUE(w.Append("a", chunks_["a"].back()).has_value());
    chunks_["b"].push_back(testing::TransformChunk(wb, 600 + i * 600, 600, 2.0f));
    ASSERT_TRUE(w.Append("b", chunks_["b"].back()).has_value());
    if (i == 10) {
      auto big = c.Command(
          {"XADD", "test:{a}:log", "*", "n", "intruder", "d", std::string(300u << 10, 'x')});
      ASSERT_TRUE(big.has_value());
      oversized = ParseStreamId(big->str).value();
    }
  }
  for (int round = 0; round < 100 && (sink.Ids("a").size() < 30 || sink.Ids("b").size() < 30);
       ++round) {
    ASSERT_TRUE(reader.RunOnce(0).has_value());
  }
  EXPECT_EQ(sink.Ids("a").size(), 30u);
  EXPECT_EQ(sink.Ids("b").size(), 30u);
  EXPECT_EQ(sink.Hash("a"), testing::ReferenceHash(chunks_["a"]));
  EXPECT_EQ(sink.Hash("b"), testing::ReferenceHash(chunks_["b"]));
  const ReaderCounters counters = reader.counters();
  // The budget, plus at most the one 16 KiB read that went past it.
  EXPECT_LE(counters.largest_read_bytes, options.max_round_bytes + (16u << 10));
  EXPECT_GE(counters.round_overflows, 1u);
  EXPECT_EQ(counters.oversized_entries, 1u);
  bool reported = false;
  for (const auto& f : sink.Faults()) reported = reported || f.fault.id == oversized;
  EXPECT_TRUE(reported) << "the oversized entry was not reported";
  // Caught up: back to the shared XREAD, which reads a new entry of each scene in one round.
  Write(w, "a", 50000, 3.0f);
  Write(w, "b", 50000, 4.0f);
  for (int round = 0; round < 5 && sink.Ids("b").size() < 31; ++round) {
    ASSERT_TRUE(reader.RunOnce(0).has_value());
  }
  auto last = reader.RunOnce(0);
  ASSERT_TRUE(last.has_value());
  EXPECT_EQ(sink.Ids("a").size(), 31u);
  EXPECT_EQ(sink.Ids("b").size(), 31u);
  EXPECT_TRUE(log_.Contains("back to the shared XREAD"));
}

TEST_F(StreamReaderTest, RedisOutageIsAnErrorAndLosesNothing) {
  RedisConnection c(Redis());
  SceneLog w(c, Config("writer"));
  testing::StoreSink sink;
  StreamReader reader(Redis(), Config("reader"), Options(), sink);
  ASSERT_TRUE(reader.AddScene("s", StreamId{}).has_value());
  Write(w, "s", 600, 1.0f);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  Write(w, "s", 600, 2.0f);  // appended (acked), not yet read
  redis_.Kill(SIGKILL);
  auto down = reader.RunOnce(0);
  ASSERT_FALSE(down.has_value());
  EXPECT_EQ(down.error().code, ErrorCode::kUnavailable);
  EXPECT_EQ(reader.counters().read_errors, 1u);
  EXPECT_FALSE(w.Append("s", chunks_["s"].back()).has_value());

  ASSERT_TRUE(redis_.Restart()) << redis_.log();
  clock_.Advance(1000);
  ASSERT_TRUE(reader.RunOnce(0).has_value());
  EXPECT_EQ(sink.Ids("s").size(), 2u);
  EXPECT_EQ(sink.Hash("s"), testing::ReferenceHash(chunks_["s"]));
  EXPECT_GE(reader.redis_counters().reconnects, 1u);
}

}  // namespace
}  // namespace scenecrdt::cluster
