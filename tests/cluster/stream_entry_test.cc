// SPDX-License-Identifier: Apache-2.0
// Tests the entry format and reply parsers (cluster/stream_entry.h) on hand-built replies:
// structural refusals first, then per-entry refusals (kBad, the rest still parses), then the
// accepted forms, snapshots and the load page.
#include "scenecrdt/cluster/stream_entry.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "scenecrdt/runtime/crdt_store.h"
#include "tests/cluster/redis_test_server.h"

namespace scenecrdt::cluster {
namespace {

RedisReply Str(std::string s) {
  RedisReply r;
  r.type = RedisReply::Type::kString;
  r.str = std::move(s);
  return r;
}
RedisReply Int(int64_t v) {
  RedisReply r;
  r.type = RedisReply::Type::kInteger;
  r.integer = v;
  return r;
}
RedisReply Nil() { return RedisReply{}; }
RedisReply Arr(std::initializer_list<RedisReply> items) {
  RedisReply r;
  r.type = RedisReply::Type::kArray;
  r.elements = items;
  return r;
}

std::string ValidChunk() {
  runtime::CrdtStore writer;
  const auto bytes = testing::TransformChunk(writer, 600, 2, 1.5f);
  return std::string(bytes.begin(), bytes.end());
}

RedisReply Entry(const std::string& id, std::initializer_list<RedisReply> fields) {
  return Arr({Str(id), Arr(fields)});
}

TEST(StreamEntryTest, StructuralValidity) {
  const protocol::DecodeOptions decode;
  const RedisReply bad[] = {
      Str("x"),
      Int(3),
      Arr({Str("1-1")}),
      Arr({Arr({Str("1-1")})}),
      Arr({Arr({Int(1), Arr({})})}),
      Arr({Entry("nope", {})}),
      Arr({Entry("2-0", {Str("n"), Str("a"), Str("d"), Str(ValidChunk())}),
           Entry("1-0", {Str("n"), Str("a"), Str("d"), Str(ValidChunk())})}),
      Arr({Entry("2-0", {}), Entry("2-0", {})}),
  };
  for (const RedisReply& reply : bad) {
    RedisReply copy = reply;
    auto r = ParseStreamEntries(std::move(copy), decode);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kCorruptData);
  }
  const RedisReply bad_xread[] = {
      Str("x"),
      Arr({Str("key")}),
      Arr({Arr({Str("key")})}),
      Arr({Arr({Int(1), Arr({})})}),
      Arr({Arr({Str("key"), Str("entries")})}),
  };
  for (const RedisReply& reply : bad_xread) {
    RedisReply copy = reply;
    auto r = ParseXreadReply(std::move(copy), decode);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kCorruptData);
  }
}

TEST(StreamEntryTest, BadEntriesAreIsolated) {
  const std::string chunk = ValidChunk();
  const std::string truncated = chunk.substr(0, chunk.size() - 3);
  RedisReply reply = Arr({
      Entry("1-0", {Str("n"), Str("a")}),                                  // no payload
      Entry("1-1", {Str("d"), Str(chunk)}),                                // no node
      Entry("1-2", {Str("n"), Str("bad node"), Str("d"), Str(chunk)}),     // node id chars
      Entry("1-3", {Str("n"), Str("a"), Str("d"), Str(chunk), Str("x")}),  // odd count
      Entry("1-4", {Str("n"), Str("a"), Str("n"), Str("b"), Str("d"), Str(chunk)}),
      Entry("1-5", {Str("n"), Str("a"), Str("d"), Int(5)}),
      Entry("1-6", {Str("n"), Str("a"), Str("d"), Str(chunk), Str("t"), Str("1-0")}),
      Entry("1-7", {Str("n"), Str("a"), Str("d"), Str("")}),
      Entry("1-8", {Str("n"), Str("a"), Str("d"), Str(truncated)}),
      Entry("1-9", {Str("n"), Str("a"), Str("t"), Str("x-y")}),
      Arr({Str("1-10"), Str("not an array")}),
      Entry("1-11", {Str("n"), Str("node-b"), Str("d"), Str(chunk), Str("extra"), Str("kept")}),
  });
  auto r = ParseStreamEntries(std::move(reply), protocol::DecodeOptions{});
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  ASSERT_EQ(r->size(), 12u);
  for (std::size_t i = 0; i < 11; ++i) {
    EXPECT_EQ((*r)[i].kind, StreamEntry::Kind::kBad) << i;
    EXPECT_EQ((*r)[i].error.code, ErrorCode::kCorruptData) << i;
    EXPECT_EQ((*r)[i].id, (StreamId{1, i})) << i;
  }
  EXPECT_TRUE((*r)[8].error.has_offset());  // where the chunk stopped decoding
  const StreamEntry& good = (*r)[11];
  EXPECT_EQ(good.kind, StreamEntry::Kind::kData);
  EXPECT_EQ(good.node, "node-b");
  EXPECT_EQ(good.chunk, chunk);
}

TEST(StreamEntryTest, DataAndTrimEntries) {
  const std::string chunk = ValidChunk();
  RedisReply reply =
      Arr({Arr({Str("log:{a}"), Arr({
                                    Entry("5-0", {Str("n"), Str("n1"), Str("d"), Str(chunk)}),
                                    Entry("6-0", {Str("t"), Str("4-9"), Str("n"), Str("n2")}),
                                })}),
           Arr({Str("log:{b}"), Arr({})})});
  auto r = ParseXreadReply(std::move(reply), protocol::DecodeOptions{});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].key, "log:{a}");
  ASSERT_EQ((*r)[0].entries.size(), 2u);
  EXPECT_EQ((*r)[0].entries[0].kind, StreamEntry::Kind::kData);
  EXPECT_EQ((*r)[0].entries[0].bytes().size(), chunk.size());
  EXPECT_EQ((*r)[0].entries[1].kind, StreamEntry::Kind::kTrim);
  EXPECT_EQ((*r)[0].entries[1].trimmed_through, (StreamId{4, 9}));
  EXPECT_EQ((*r)[0].entries[1].node, "n2");
  EXPECT_TRUE((*r)[1].entries.empty());

  auto none = ParseXreadReply(Nil(), protocol::DecodeOptions{});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

// The read loop's parse (issue 18 §3): its own entries are kOwn and never decoded (a garbage
// chunk of its own is not even reported), the others arrive decoded once, with their messages
// viewing bytes that moving the entries never relocates.
TEST(StreamEntryTest, ReadLoopParseSkipsOwnEntriesAndKeepsOthersDecoded) {
  const std::string chunk = ValidChunk();
  RedisReply reply = Arr({
      Entry("1-0", {Str("n"), Str("me"), Str("d"), Str(chunk)}),
      Entry("1-1", {Str("n"), Str("me"), Str("d"), Str("\x01garbage"), Str("o"), Str("rows")}),
      Entry("1-2", {Str("n"), Str("other"), Str("d"), Str(chunk), Str("k"), Str("marks")}),
      Entry("1-3", {Str("n"), Str("other"), Str("d"), Str("\x01garbage")}),
      Entry("1-4", {Str("n"), Str("other"), Str("d"), Str(chunk)}),
  });
  EntryOptions options;
  options.own_node = "me";
  options.keep_decoded = true;
  auto r = ParseStreamEntries(std::move(reply), options);
  ASSERT_TRUE(r.has_value()) << r.error().detail;
  ASSERT_EQ(r->size(), 5u);
  std::vector<StreamEntry> entries = std::move(r).value();
  entries.reserve(entries.capacity() * 4);  // relocates the entries, not their chunks
  EXPECT_EQ(entries[0].kind, StreamEntry::Kind::kOwn);
  EXPECT_EQ(entries[1].kind, StreamEntry::Kind::kOwn);  // not kBad: never decoded
  EXPECT_EQ(entries[1].owners, "rows");                 // its owner rows still count
  for (const int i : {0, 1}) {
    EXPECT_TRUE(entries[i].chunk.empty());
    EXPECT_FALSE(entries[i].decoded.bytes);
  }
  EXPECT_EQ(entries[3].kind, StreamEntry::Kind::kBad);
  runtime::CrdtStore plain;
  ASSERT_TRUE(
      plain.MergeStream(std::span(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size()))
          .has_value());
  for (const int i : {2, 4}) {
    const StreamEntry& e = entries[i];
    ASSERT_EQ(e.kind, StreamEntry::Kind::kData) << i;
    EXPECT_TRUE(e.chunk.empty());
    ASSERT_TRUE(e.decoded.bytes);
    EXPECT_EQ(*e.decoded.bytes, chunk);
    EXPECT_EQ(e.decoded.size(), chunk.size());
    runtime::CrdtStore merged;
    for (const protocol::CrdtMessage& m : e.decoded.messages) (void)merged.Merge(m);
    EXPECT_EQ(merged.StateHash(), plain.StateHash()) << i;
  }
  EXPECT_EQ(entries[2].corrections, "marks");
}

TEST(StreamEntryTest, SnapshotFields) {
  const protocol::DecodeOptions decode;
  auto absent = ParseSnapshotFields(Nil(), Nil(), decode);
  ASSERT_TRUE(absent.has_value());
  EXPECT_FALSE(absent->exists);
  EXPECT_TRUE(absent->covers.is_zero());

  auto empty_state = ParseSnapshotFields(Str("9-1"), Str(""), decode);
  ASSERT_TRUE(empty_state.has_value());
  EXPECT_TRUE(empty_state->exists);
  EXPECT_EQ(empty_state->covers, (StreamId{9, 1}));

  const std::string chunk = ValidChunk();
  auto full = ParseSnapshotFields(Str("9-2"), Str(chunk), decode);
  ASSERT_TRUE(full.has_value());
  EXPECT_EQ(full->data, chunk);

  const std::pair<RedisReply, RedisReply> bad[] = {
      {Str("9-1"), Nil()},
      {Nil(), Str(chunk)},
      {Str("x"), Str(chunk)},
      {Int(1), Str(chunk)},
      {Str("9-1"), Str(chunk.substr(1))},
  };
  for (const auto& [id, data] : bad) {
    RedisReply i = id, d = data;
    auto r = ParseSnapshotFields(std::move(i), std::move(d), decode);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, ErrorCode::kCorruptData);
  }
}

TEST(StreamEntryTest, LoadPage) {
  const protocol::DecodeOptions decode;
  const std::string chunk = ValidChunk();
  auto page = ParseLoadPage(Arr({Str("3-0"), Str(chunk),
                                 Arr({Entry("4-0", {Str("n"), Str("a"), Str("d"), Str(chunk)})})}),
                            decode);
  ASSERT_TRUE(page.has_value());
  EXPECT_EQ(page->snapshot.covers, (StreamId{3, 0}));
  ASSERT_EQ(page->entries.size(), 1u);

  auto fresh = ParseLoadPage(Arr({Nil(), Nil(), Arr({})}), decode);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_FALSE(fresh->snapshot.exists);

  const RedisReply bad[] = {
      Arr({Nil(), Nil()}),
      Str("x"),
      Arr({Str("3-0"), Str(chunk),
           Arr({Entry("3-0", {Str("n"), Str("a"), Str("d"), Str(chunk)})})}),
      Arr({Str("3-0"), Str(chunk), Str("entries")}),
  };
  for (const RedisReply& reply : bad) {
    RedisReply copy = reply;
    EXPECT_FALSE(ParseLoadPage(std::move(copy), decode).has_value());
  }
}

}  // namespace
}  // namespace scenecrdt::cluster
