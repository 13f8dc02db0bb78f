// SPDX-License-Identifier: Apache-2.0
// The replica through the C ABI: for random streams (reparents, loops, placeholders, deletes,
// versions, ties, unknown types) the world matrices, effective parents, flags and state hash
// are those of `scenecrdt replay --world`, bit for bit; streams applied in pieces converge to
// the same; the per-update lists equal the C++ runtime's; local writes return the DCL bytes
// that reproduce them elsewhere.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"
#include "tests/capi/capi_test_util.h"

namespace scenecrdt::capi_test {
namespace {

void ExpectSameWorld(const Reference& expected, const Reference& actual, uint64_t seed) {
  EXPECT_EQ(expected.state_hash, actual.state_hash) << "seed " << seed;
  ASSERT_EQ(expected.world.size(), actual.world.size()) << "seed " << seed;
  for (std::size_t i = 0; i < expected.world.size(); ++i) {
    const WorldNode& e = expected.world[i];
    const WorldNode& a = actual.world[i];
    ASSERT_EQ(e.entity, a.entity) << "seed " << seed;
    EXPECT_EQ(e.parent, a.parent) << "seed " << seed << " entity " << e.entity;
    EXPECT_EQ(e.parked, a.parked) << "seed " << seed << " entity " << e.entity;
    EXPECT_EQ(e.placeholder, a.placeholder) << "seed " << seed << " entity " << e.entity;
    EXPECT_TRUE(SameBits(e.matrix.data(), a.matrix.data(), 16))
        << "seed " << seed << " entity " << e.entity;
  }
}

// Offsets of the message boundaries of a valid stream.
std::vector<std::size_t> Boundaries(const std::vector<uint8_t>& stream) {
  std::vector<std::size_t> out{0};
  std::size_t pos = 0;
  const Result<void> r = protocol::DecodeStream(stream, protocol::DecodeOptions{},
                                                [&](const protocol::CrdtMessage& m) {
                                                  pos += protocol::EncodedSize(m);
                                                  out.push_back(pos);
                                                });
  EXPECT_TRUE(r.has_value());
  return out;
}

TEST(CapiRuntimeTest, RandomStreamsGiveTheWorldOfReplay) {
  int parked = 0, placeholders = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const std::vector<uint8_t> stream = RandomStream(seed, 400);
    RuntimePtr rt = MakeRuntime();
    SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
    SC_ASSERT_OK(sc_runtime_update(rt.get()));
    const Reference expected = Replay(stream);
    const Reference actual = ReadBack(rt.get());
    ExpectSameWorld(expected, actual, seed);
    EXPECT_EQ(sc_runtime_entity_count(rt.get()), expected.world.size());
    for (const WorldNode& n : actual.world) {
      float m[16];
      SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), n.entity, m));
      EXPECT_TRUE(SameBits(m, n.matrix.data(), 16));
      parked += n.parked;
      placeholders += n.placeholder;
    }
  }
  // The streams do reach the interesting cases.
  EXPECT_GT(parked, 10) << parked;
  EXPECT_GT(placeholders, 10) << placeholders;
}

TEST(CapiRuntimeTest, StreamsAppliedInPiecesConverge) {
  for (uint64_t seed = 100; seed < 110; ++seed) {
    const std::vector<uint8_t> stream = RandomStream(seed, 300);
    const std::vector<std::size_t> cuts = Boundaries(stream);
    RuntimePtr rt = MakeRuntime();
    // Pieces of 1..17 messages, updates in between: the incremental path ends where a
    // replay of the whole stream does.
    std::size_t i = 0;
    while (i + 1 < cuts.size()) {
      const std::size_t j = std::min(cuts.size() - 1, i + 1 + (seed * 7 + i) % 17);
      SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data() + cuts[i], cuts[j] - cuts[i]));
      SC_ASSERT_OK(sc_runtime_update(rt.get()));
      i = j;
    }
    ExpectSameWorld(Replay(stream), ReadBack(rt.get()), seed);
  }
}

TEST(CapiRuntimeTest, PerUpdateListsAreTheRuntimes) {
  const std::vector<uint8_t> stream = RandomStream(7, 600);
  const std::vector<std::size_t> cuts = Boundaries(stream);
  RuntimePtr rt = MakeRuntime();
  runtime::Runtime reference;
  int added = 0, removed = 0, changed = 0;
  for (std::size_t i = 0; i + 1 < cuts.size(); i += 20) {
    const std::size_t j = std::min(cuts.size() - 1, i + 20);
    const std::span<const uint8_t> piece(stream.data() + cuts[i], cuts[j] - cuts[i]);
    SC_ASSERT_OK(sc_runtime_apply(rt.get(), piece.data(), piece.size()));
    ASSERT_TRUE(reference.ApplyCrdt(piece).has_value());
    SC_ASSERT_OK(sc_runtime_update(rt.get()));
    reference.Update();
    std::vector<uint32_t> ids(64);
    std::vector<float> matrices(16 * 64);
    size_t count = 0;
    SC_ASSERT_OK(sc_runtime_copy_added(rt.get(), ids.data(), ids.size(), &count));
    EXPECT_EQ(std::vector<uint32_t>(ids.begin(), ids.begin() + count),
              std::vector<uint32_t>(reference.added_entities().begin(),
                                    reference.added_entities().end()));
    added += static_cast<int>(count);
    SC_ASSERT_OK(sc_runtime_copy_removed(rt.get(), ids.data(), ids.size(), &count));
    EXPECT_EQ(std::vector<uint32_t>(ids.begin(), ids.begin() + count),
              std::vector<uint32_t>(reference.removed_entities().begin(),
                                    reference.removed_entities().end()));
    removed += static_cast<int>(count);
    SC_ASSERT_OK(sc_runtime_copy_changed(rt.get(), ids.data(), ids.size(), &count));
    EXPECT_EQ(std::vector<uint32_t>(ids.begin(), ids.begin() + count),
              std::vector<uint32_t>(reference.changed_entities().begin(),
                                    reference.changed_entities().end()));
    changed += static_cast<int>(count);
    SC_ASSERT_OK(
        sc_runtime_copy_changed_world(rt.get(), ids.data(), matrices.data(), ids.size(), &count));
    ASSERT_EQ(count, reference.changed_entities().size());
    for (std::size_t k = 0; k < count; ++k) {
      const glm::mat4& m = reference.world_matrices()[*reference.IndexOf(ids[k])];
      EXPECT_TRUE(SameBits(&matrices[16 * k], &m[0][0], 16)) << "entity " << ids[k];
    }
  }
  EXPECT_GT(added, 0);
  EXPECT_GT(removed, 0);
  EXPECT_GT(changed, 0);
}

TEST(CapiRuntimeTest, LocalWritesReturnTheMessagesToSend) {
  RuntimePtr writer = MakeRuntime();
  RuntimePtr peer = MakeRuntime();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  std::vector<uint8_t> sent;
  auto send = [&] {
    sent.insert(sent.end(), msg, msg + len);
    SC_ASSERT_OK(sc_runtime_apply(peer.get(), msg, len));
  };
  const sc_transform parent{{1, 2, 3}, {0, 0, 0, 1}, {2, 2, 2}, 0};
  const sc_transform child{{1, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 512};
  SC_ASSERT_OK(sc_runtime_write_transform(writer.get(), 512, &parent, msg, sizeof(msg), &len));
  ASSERT_EQ(len, 68u);
  send();
  SC_ASSERT_OK(sc_runtime_write_transform(writer.get(), 513, &child, msg, sizeof(msg), &len));
  send();
  // The same value again changes nothing: nothing to send.
  SC_ASSERT_OK(sc_runtime_write_transform(writer.get(), 513, &child, msg, sizeof(msg), &len));
  EXPECT_EQ(len, 0u);
  // Lamport: the next write of a key carries the stored timestamp + 1.
  const sc_transform moved{{2, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 512};
  SC_ASSERT_OK(sc_runtime_write_transform(writer.get(), 513, &moved, msg, sizeof(msg), &len));
  std::vector<protocol::CrdtMessage> decoded;
  ASSERT_TRUE(protocol::DecodeStream(std::span<const uint8_t>(msg, len), protocol::DecodeOptions{},
                                     [&](const protocol::CrdtMessage& m) { decoded.push_back(m); })
                  .has_value());
  ASSERT_EQ(decoded.size(), 1u);
  EXPECT_EQ(decoded[0].entity, 513u);
  EXPECT_EQ(decoded[0].timestamp, 2u);
  send();
  SC_ASSERT_OK(sc_runtime_update(writer.get()));
  float m[16];
  SC_ASSERT_OK(sc_runtime_world_matrix(writer.get(), 513, m));
  EXPECT_EQ(m[12], 1.0f + 2.0f * 2.0f);  // parent translation + parent scale x child
  EXPECT_EQ(m[13], 2.0f);
  sc_transform read;
  SC_ASSERT_OK(sc_runtime_get_transform(writer.get(), 513, &read));
  EXPECT_EQ(std::memcmp(&read, &moved, sizeof(read)), 0);

  SC_ASSERT_OK(sc_runtime_delete_transform(writer.get(), 512, msg, sizeof(msg), &len));
  EXPECT_EQ(len, 20u);
  send();
  SC_ASSERT_OK(sc_runtime_delete_entity(writer.get(), 600, msg, sizeof(msg), &len));
  EXPECT_EQ(len, 12u);
  send();
  // The peer, fed only what the writer handed out, has the same state; so does a replay.
  char a[SC_STATE_HASH_CHARS], b[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(writer.get(), a, sizeof(a)));
  SC_ASSERT_OK(sc_runtime_state_hash(peer.get(), b, sizeof(b)));
  EXPECT_STREQ(a, b);
  SC_ASSERT_OK(sc_runtime_update(writer.get()));
  ExpectSameWorld(Replay(sent), ReadBack(writer.get()), 0);
  // 512 lost its Transform but keeps a child: a placeholder now.
  sc_node_info info{};
  info.struct_size = sizeof(info);
  SC_ASSERT_OK(sc_runtime_node_info(writer.get(), 512, &info));
  EXPECT_EQ(info.placeholder, 1);
  SC_ASSERT_OK(sc_runtime_node_info(writer.get(), 513, &info));
  EXPECT_EQ(info.effective_parent, 512u);
  EXPECT_EQ(info.declared_parent, 512u);
  EXPECT_EQ(info.parked, 0);
}

TEST(CapiRuntimeTest, ApplyStatsCountOutcomes) {
  RuntimePtr rt = MakeRuntime();
  std::vector<uint8_t> stream = TransformPut(512, 5, 1.0f);
  const std::vector<uint8_t> older = TransformPut(512, 4, 2.0f);  // outdated
  stream.insert(stream.end(), older.begin(), older.end());
  const uint8_t unknown[12] = {12, 0, 0, 0, 99, 0, 0, 0, 0, 2, 0, 0};  // refused by the store
  stream.insert(stream.end(), unknown, unknown + sizeof(unknown));
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  SC_ASSERT_OK(sc_runtime_apply_at(rt.get(), nullptr, 0, 1000, SC_NO_SENDER_TIME));
  sc_apply_stats stats{};
  stats.struct_size = sizeof(stats);
  SC_ASSERT_OK(sc_runtime_apply_stats(rt.get(), &stats));
  EXPECT_EQ(stats.struct_size, sizeof(stats));
  EXPECT_EQ(stats.calls, 2u);
  EXPECT_EQ(stats.messages, 3u);
  EXPECT_EQ(stats.changed, 1u);
  EXPECT_EQ(stats.ignored, 1u);
  EXPECT_EQ(stats.refused, 1u);
  EXPECT_EQ(stats.decode_errors, 0u);
}

}  // namespace
}  // namespace scenecrdt::capi_test
