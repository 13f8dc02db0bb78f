// SPDX-License-Identifier: Apache-2.0
// Interpolation through the C ABI on a simulated clock: the options and stats mirror the C++
// structs field by field; a session of timed batches and frames gives the C++ runtime's
// presentation bit for bit (matrices, changed / added / removed lists, stats); a 20 Hz mover
// drawn at 60 Hz moves every frame where the replica repeats frames; reparents snap; turning
// it off returns every interpolated read to the replica.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"
#include "tests/capi/capi_test_util.h"

namespace scenecrdt::capi_test {
namespace {

constexpr int64_t kFrameUs = 16'667;
constexpr int64_t kSendUs = 50'000;

// A sender's batches with its own Lamport timestamps.
class Sender {
 public:
  void Put(uint32_t e, float x, uint32_t parent = 0) {
    protocol::Transform t;
    t.position = {x, 0.5f * x, 0.0f};
    t.parent = parent;
    protocol::AppendTransformPut(e, ++lamport_[e], t, bytes_);
  }
  void DeleteTransform(uint32_t e) {
    protocol::AppendMessage({protocol::MessageType::kDeleteComponent,
                             e,
                             protocol::kTransformComponentId,
                             ++lamport_[e],
                             0,
                             {}},
                            bytes_);
  }
  std::vector<uint8_t> Take() {
    std::vector<uint8_t> out;
    out.swap(bytes_);
    return out;
  }

 private:
  std::map<uint32_t, uint32_t> lamport_;
  std::vector<uint8_t> bytes_;
};

// The batch sent at tick `tick`: a mover, its child, a reparent at tick 30, a removal at 40, an
// appearance at 45.
std::vector<uint8_t> Tick(Sender& sender, int tick) {
  const float x = 0.25f * static_cast<float>(tick);
  sender.Put(512, x);
  if (tick < 40) sender.Put(513, 1.0f, tick < 30 ? 512 : 0);
  if (tick == 40) sender.DeleteTransform(513);
  if (tick >= 45) sender.Put(514, -x, 512);
  return sender.Take();
}

// Jittered receive time of tick `tick` (+-15 ms, deterministic).
int64_t Arrival(int tick) {
  static const int kJitterMs[] = {3, -11, 14, -6, 0, 9, -15, 5, -2, 12, -9, 7};
  return 40'000 + tick * kSendUs + 1'000 * kJitterMs[tick % 12];
}

TEST(CapiInterpolationTest, OptionsMirrorTheRuntime) {
  sc_interpolation_options c;
  SC_ASSERT_OK(sc_interpolation_options_default(&c));
  const runtime::InterpolationOptions cpp;
  EXPECT_EQ(c.struct_size, sizeof(c));
  EXPECT_EQ(c.snap_distance, cpp.snap_distance);
  EXPECT_EQ(c.fixed_delay_us, cpp.fixed_delay_us);
  EXPECT_EQ(c.initial_delay_us, cpp.initial_delay_us);
  EXPECT_EQ(c.min_delay_us, cpp.min_delay_us);
  EXPECT_EQ(c.max_delay_us, cpp.max_delay_us);
  EXPECT_EQ(c.interval_multiple, cpp.interval_multiple);
  EXPECT_EQ(c.jitter_multiple, cpp.jitter_multiple);
  EXPECT_EQ(c.catch_up, cpp.catch_up);
  EXPECT_EQ(c.slow_down, cpp.slow_down);
  EXPECT_EQ(c.max_extrapolation_us, cpp.max_extrapolation_us);
  EXPECT_EQ(c.max_interval_us, cpp.max_interval_us);
}

// Runs the same session through the C handle and a C++ Runtime and compares every frame.
TEST(CapiInterpolationTest, SessionGivesTheRuntimesPresentation) {
  sc_interpolation_options c_options;
  SC_ASSERT_OK(sc_interpolation_options_default(&c_options));
  c_options.snap_distance = 3.0f;
  c_options.max_extrapolation_us = 100'000;
  runtime::InterpolationOptions cpp_options;
  cpp_options.snap_distance = 3.0f;
  cpp_options.max_extrapolation_us = 100'000;

  RuntimePtr rt = MakeRuntime();
  SC_ASSERT_OK(sc_runtime_enable_interpolation(rt.get(), &c_options));
  EXPECT_EQ(sc_runtime_interpolation_enabled(rt.get()), 1);
  runtime::Runtime reference;
  ASSERT_TRUE(reference.EnableInterpolation(cpp_options).has_value());

  Sender sender;
  int tick = 0;
  uint64_t snaps = 0, added = 0, removed = 0;
  std::vector<uint32_t> ids(16);
  std::vector<float> matrices(16 * 16);
  for (int frame = 0; frame < 240; ++frame) {
    const int64_t render_us = 100'000 + frame * kFrameUs;
    // Batches lost between ticks 50 and 53 (extrapolation, hold, return).
    while (tick < 70 && Arrival(tick) <= render_us) {
      const std::vector<uint8_t> batch = Tick(sender, tick);
      if (tick < 50 || tick > 53) {
        SC_ASSERT_OK(sc_runtime_apply_at(rt.get(), batch.data(), batch.size(), Arrival(tick),
                                         SC_NO_SENDER_TIME));
        ASSERT_TRUE(reference.ApplyCrdt(batch, runtime::BatchTime{Arrival(tick)}).has_value());
      }
      ++tick;
    }
    SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), render_us));
    ASSERT_TRUE(reference.UpdateInterpolated(render_us).has_value());

    size_t count = 0;
    SC_ASSERT_OK(sc_runtime_copy_interpolated_world(rt.get(), ids.data(), matrices.data(),
                                                    ids.size(), &count));
    const std::vector<runtime::NodeInfo> nodes = reference.interpolated().Nodes();
    ASSERT_EQ(count, nodes.size()) << "frame " << frame;
    EXPECT_EQ(sc_runtime_interpolated_entity_count(rt.get()), nodes.size());
    for (std::size_t i = 0; i < count; ++i) {
      ASSERT_EQ(ids[i], nodes[i].entity);
      const glm::mat4& m = reference.interpolated_world_matrices()[nodes[i].index];
      EXPECT_TRUE(SameBits(&matrices[16 * i], &m[0][0], 16))
          << "frame " << frame << " entity " << ids[i];
      float one[16];
      SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), ids[i], one));
      EXPECT_TRUE(SameBits(one, &m[0][0], 16));
    }
    auto same_list = [&](int status, std::span<const protocol::EntityId> expected) {
      EXPECT_EQ(status, SC_OK) << sc_last_error();
      EXPECT_EQ(std::vector<uint32_t>(ids.begin(), ids.begin() + count),
                std::vector<uint32_t>(expected.begin(), expected.end()))
          << "frame " << frame;
    };
    same_list(sc_runtime_copy_interpolated_changed(rt.get(), ids.data(), ids.size(), &count),
              reference.interpolated_changed_entities());
    same_list(sc_runtime_copy_interpolated_added(rt.get(), ids.data(), ids.size(), &count),
              reference.interpolated_added_entities());
    added += count;
    same_list(sc_runtime_copy_interpolated_removed(rt.get(), ids.data(), ids.size(), &count),
              reference.interpolated_removed_entities());
    removed += count;
    SC_ASSERT_OK(sc_runtime_copy_interpolated_changed_world(rt.get(), ids.data(), matrices.data(),
                                                            ids.size(), &count));
    ASSERT_EQ(count, reference.interpolated_changed_entities().size());
    for (std::size_t i = 0; i < count; ++i) {
      const glm::mat4& m =
          reference.interpolated_world_matrices()[*reference.InterpolatedIndexOf(ids[i])];
      EXPECT_TRUE(SameBits(&matrices[16 * i], &m[0][0], 16));
    }

    sc_interpolation_stats c{};
    c.struct_size = sizeof(c);
    SC_ASSERT_OK(sc_runtime_interpolation_stats(rt.get(), &c));
    const runtime::InterpolationStats s = reference.interpolation_stats();
    EXPECT_EQ(c.struct_size, sizeof(c));
    EXPECT_EQ(c.buffer_depth, s.buffer_depth);
    EXPECT_EQ(c.tracked_entities, s.tracked_entities);
    EXPECT_EQ(c.active_entities, s.active_entities);
    EXPECT_EQ(c.playback_time_us, s.playback_time_us);
    EXPECT_EQ(c.delay_us, s.delay_us);
    EXPECT_EQ(c.target_delay_us, s.target_delay_us);
    EXPECT_EQ(c.interval_us, s.interval_us);
    EXPECT_EQ(c.jitter_us, s.jitter_us);
    EXPECT_EQ(c.frames, s.frames);
    EXPECT_EQ(c.stalled_frames, s.stalled_frames);
    EXPECT_EQ(c.extrapolated_frames, s.extrapolated_frames);
    EXPECT_EQ(c.snaps, s.snaps);
    EXPECT_EQ(c.entities_added, s.entities_added);
    EXPECT_EQ(c.entities_removed, s.entities_removed);
    EXPECT_EQ(c.late_batches, s.late_batches);
    EXPECT_EQ(c.resets, s.resets);
    EXPECT_EQ(c.dropped_samples, s.dropped_samples);
    EXPECT_EQ(c.time_regressions, s.time_regressions);
    EXPECT_EQ(c.frames, static_cast<uint64_t>(frame + 1));
    snaps = c.snaps;
    if (frame == 239) {
      EXPECT_GT(c.stalled_frames, 0u);
      EXPECT_GT(c.extrapolated_frames, 0u);
    }
  }
  EXPECT_GE(snaps, 1u);    // the reparent at tick 30
  EXPECT_EQ(added, 3u);    // 512, 513, then 514
  EXPECT_EQ(removed, 1u);  // 513
  // The replica itself is exact and untouched: the world of a replay of everything applied.
  char a[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), a, sizeof(a)));
  EXPECT_EQ(a, reference.store().StateHashHex());
}

TEST(CapiInterpolationTest, MoverMovesEveryFrame) {
  RuntimePtr rt = MakeRuntime();
  SC_ASSERT_OK(sc_runtime_enable_interpolation(rt.get(), nullptr));
  Sender sender;
  int tick = 0;
  int repeated_interpolated = 0, repeated_replica = 0, frames = 0;
  float last_interpolated = -1.0f, last_replica = -1.0f;
  for (int frame = 0; frame < 180; ++frame) {
    const int64_t render_us = 100'000 + frame * kFrameUs;
    while (Arrival(tick) <= render_us) {
      sender.Put(512, 0.25f * static_cast<float>(tick));
      const std::vector<uint8_t> batch = sender.Take();
      SC_ASSERT_OK(sc_runtime_apply_at(rt.get(), batch.data(), batch.size(), Arrival(tick),
                                       SC_NO_SENDER_TIME));
      ++tick;
    }
    SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), render_us));
    if (frame < 60) continue;  // the delay settles
    float shown[16], exact[16];
    SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 512, shown));
    SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 512, exact));
    ++frames;
    repeated_interpolated += shown[12] <= last_interpolated;
    repeated_replica += exact[12] <= last_replica;
    last_interpolated = shown[12];
    last_replica = exact[12];
  }
  EXPECT_EQ(repeated_interpolated, 0);
  EXPECT_GT(repeated_replica, frames / 3);  // what the buffer is for
}

TEST(CapiInterpolationTest, OffMeansTheReplica) {
  RuntimePtr rt = MakeRuntime();
  const std::vector<uint8_t> put = TransformPut(512, 1, 2.0f);
  // Off: interpolated reads are the replica's, stats are zero.
  SC_ASSERT_OK(sc_runtime_apply_at(rt.get(), put.data(), put.size(), 1000, SC_NO_SENDER_TIME));
  SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), 2000));
  float a[16], b[16];
  SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 512, a));
  SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 512, b));
  EXPECT_TRUE(SameBits(a, b, 16));
  EXPECT_EQ(a[12], 2.0f);
  uint32_t id = 0;
  size_t count = 0;
  SC_ASSERT_OK(sc_runtime_copy_interpolated_added(rt.get(), &id, 1, &count));
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(id, 512u);
  sc_interpolation_stats stats{};
  stats.struct_size = sizeof(stats);
  stats.frames = 99;
  SC_ASSERT_OK(sc_runtime_interpolation_stats(rt.get(), &stats));
  EXPECT_EQ(stats.frames, 0u);

  // On, a remote move is delayed; a local write shows at once.
  SC_ASSERT_OK(sc_runtime_enable_interpolation(rt.get(), nullptr));
  const std::vector<uint8_t> moved = TransformPut(512, 2, 5.0f);
  SC_ASSERT_OK(sc_runtime_apply_at(rt.get(), moved.data(), moved.size(), 3000, SC_NO_SENDER_TIME));
  SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), 4000));
  SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 512, a));
  SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 512, b));
  EXPECT_EQ(a[12], 5.0f);
  EXPECT_GE(b[12], 2.0f);
  EXPECT_LT(b[12], 5.0f);  // on its way, not there yet
  const sc_transform local{{7, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, 0};
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  SC_ASSERT_OK(sc_runtime_write_transform(rt.get(), 513, &local, msg, sizeof(msg), &len));
  SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), 5000));
  SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 513, b));
  EXPECT_EQ(b[12], 7.0f);
  SC_ASSERT_OK(sc_runtime_interpolation_stats(rt.get(), &stats));
  EXPECT_EQ(stats.frames, 2u);

  // Off again: back to the replica.
  SC_ASSERT_OK(sc_runtime_disable_interpolation(rt.get()));
  EXPECT_EQ(sc_runtime_interpolation_enabled(rt.get()), 0);
  SC_ASSERT_OK(sc_runtime_update_interpolated(rt.get(), 6000));
  SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 512, b));
  EXPECT_EQ(b[12], 5.0f);
  SC_ASSERT_OK(sc_runtime_interpolation_stats(rt.get(), &stats));
  EXPECT_EQ(stats.frames, 0u);
  EXPECT_EQ(sc_runtime_interpolated_entity_count(rt.get()), sc_runtime_entity_count(rt.get()));
}

}  // namespace
}  // namespace scenecrdt::capi_test
