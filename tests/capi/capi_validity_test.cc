// SPDX-License-Identifier: Apache-2.0
// Every invalid input of every C entry point (ozz JobValidity): NULL handles and pointers,
// bad struct_size, too-small buffers (which report the size needed and write nothing), unknown
// entities, out-of-range times, malformed streams (which apply nothing), refused writes, and
// read-only views. Each failure must name the function in sc_last_error().
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "scenecrdt/capi/internal/runtime_handle.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"
#include "tests/capi/capi_test_util.h"

namespace scenecrdt::capi_test {
namespace {

// The status, and sc_last_error() starting with the function's name.
void ExpectFailure(int status, int expected, const char* function) {
  EXPECT_EQ(status, expected) << sc_error_name(status) << ": " << sc_last_error();
  EXPECT_EQ(std::string(sc_last_error()).rfind(std::string(function) + ": ", 0), 0u)
      << sc_last_error();
}

sc_transform Identity(uint32_t parent = 0) {
  return sc_transform{{0, 0, 0}, {0, 0, 0, 1}, {1, 1, 1}, parent};
}

TEST(CapiValidityTest, LibraryFunctions) {
  EXPECT_EQ(sc_abi_version(), SC_ABI_VERSION);
  EXPECT_NE(sc_last_error(), nullptr);
  EXPECT_STREQ(sc_error_name(SC_OK), "SC_OK");
  EXPECT_STREQ(sc_error_name(SC_E_INVALID_ARGUMENT), "SC_E_INVALID_ARGUMENT");
  EXPECT_STREQ(sc_error_name(SC_E_NOT_FOUND), "SC_E_NOT_FOUND");
  EXPECT_STREQ(sc_error_name(SC_E_BUFFER_TOO_SMALL), "SC_E_BUFFER_TOO_SMALL");
  EXPECT_STREQ(sc_error_name(SC_E_DECODE), "SC_E_DECODE");
  EXPECT_STREQ(sc_error_name(SC_E_REFUSED), "SC_E_REFUSED");
  EXPECT_STREQ(sc_error_name(SC_E_READ_ONLY), "SC_E_READ_ONLY");
  EXPECT_STREQ(sc_error_name(SC_E_NO_MEMORY), "SC_E_NO_MEMORY");
  EXPECT_STREQ(sc_error_name(SC_E_BROKEN), "SC_E_BROKEN");
  EXPECT_STREQ(sc_error_name(SC_E_INTERNAL), "SC_E_INTERNAL");
  EXPECT_STREQ(sc_error_name(SC_E_CLOSED), "SC_E_CLOSED");
  EXPECT_STREQ(sc_error_name(SC_E_UNSUPPORTED), "SC_E_UNSUPPORTED");
  EXPECT_STREQ(sc_error_name(SC_E_FULL), "SC_E_FULL");
  EXPECT_STREQ(sc_error_name(SC_E_GROW_ONLY), "SC_E_GROW_ONLY");
  EXPECT_STREQ(sc_error_name(-14), "SC_E_UNKNOWN");
  EXPECT_STREQ(sc_error_name(1), "SC_E_UNKNOWN");
  const int64_t a = sc_now_us();
  const int64_t b = sc_now_us();
  EXPECT_LE(a, b);
  ExpectFailure(sc_interpolation_options_default(nullptr), SC_E_INVALID_ARGUMENT,
                "sc_interpolation_options_default");
}

TEST(CapiValidityTest, NullRuntime) {
  float m[16];
  uint32_t ids[4];
  size_t count = 7;
  size_t len = 0;
  uint8_t msg[SC_WRITE_MAX_BYTES];
  char hash[SC_STATE_HASH_CHARS];
  const uint8_t byte = 0;
  const sc_transform t = Identity();
  sc_node_info info{sizeof(sc_node_info), 0, 0, 0, 0};
  sc_apply_stats apply{};
  apply.struct_size = sizeof(apply);
  sc_interpolation_stats stats{};
  stats.struct_size = sizeof(stats);
  const int k = SC_E_INVALID_ARGUMENT;
  sc_runtime_destroy(nullptr);  // a no-op
  ExpectFailure(sc_runtime_apply(nullptr, &byte, 0), k, "sc_runtime_apply");
  ExpectFailure(sc_runtime_apply_at(nullptr, &byte, 0, 0, SC_NO_SENDER_TIME), k,
                "sc_runtime_apply_at");
  ExpectFailure(sc_runtime_apply_stats(nullptr, &apply), k, "sc_runtime_apply_stats");
  ExpectFailure(sc_runtime_update(nullptr), k, "sc_runtime_update");
  EXPECT_EQ(sc_runtime_entity_count(nullptr), 0u);
  EXPECT_STREQ(sc_last_error(), "sc_runtime_entity_count: rt is NULL");
  ExpectFailure(sc_runtime_world_matrix(nullptr, 512, m), k, "sc_runtime_world_matrix");
  ExpectFailure(sc_runtime_copy_world(nullptr, ids, m, 1, &count), k, "sc_runtime_copy_world");
  ExpectFailure(sc_runtime_copy_changed(nullptr, ids, 4, &count), k, "sc_runtime_copy_changed");
  ExpectFailure(sc_runtime_copy_changed_world(nullptr, ids, m, 1, &count), k,
                "sc_runtime_copy_changed_world");
  ExpectFailure(sc_runtime_copy_added(nullptr, ids, 4, &count), k, "sc_runtime_copy_added");
  ExpectFailure(sc_runtime_copy_removed(nullptr, ids, 4, &count), k, "sc_runtime_copy_removed");
  sc_transform out_t;
  ExpectFailure(sc_runtime_get_transform(nullptr, 512, &out_t), k, "sc_runtime_get_transform");
  ExpectFailure(sc_runtime_node_info(nullptr, 512, &info), k, "sc_runtime_node_info");
  ExpectFailure(sc_runtime_state_hash(nullptr, hash, sizeof(hash)), k, "sc_runtime_state_hash");
  ExpectFailure(sc_runtime_write_transform(nullptr, 512, &t, msg, sizeof(msg), &len), k,
                "sc_runtime_write_transform");
  ExpectFailure(sc_runtime_delete_transform(nullptr, 512, msg, sizeof(msg), &len), k,
                "sc_runtime_delete_transform");
  ExpectFailure(sc_runtime_delete_entity(nullptr, 512, msg, sizeof(msg), &len), k,
                "sc_runtime_delete_entity");
  ExpectFailure(sc_runtime_enable_interpolation(nullptr, nullptr), k,
                "sc_runtime_enable_interpolation");
  ExpectFailure(sc_runtime_disable_interpolation(nullptr), k, "sc_runtime_disable_interpolation");
  ExpectFailure(sc_runtime_interpolation_enabled(nullptr), k, "sc_runtime_interpolation_enabled");
  ExpectFailure(sc_runtime_update_interpolated(nullptr, 0), k, "sc_runtime_update_interpolated");
  EXPECT_EQ(sc_runtime_interpolated_entity_count(nullptr), 0u);
  EXPECT_STREQ(sc_last_error(), "sc_runtime_interpolated_entity_count: rt is NULL");
  ExpectFailure(sc_runtime_interpolated_world_matrix(nullptr, 512, m), k,
                "sc_runtime_interpolated_world_matrix");
  ExpectFailure(sc_runtime_copy_interpolated_world(nullptr, ids, m, 1, &count), k,
                "sc_runtime_copy_interpolated_world");
  ExpectFailure(sc_runtime_copy_interpolated_changed(nullptr, ids, 4, &count), k,
                "sc_runtime_copy_interpolated_changed");
  ExpectFailure(sc_runtime_copy_interpolated_changed_world(nullptr, ids, m, 1, &count), k,
                "sc_runtime_copy_interpolated_changed_world");
  ExpectFailure(sc_runtime_copy_interpolated_added(nullptr, ids, 4, &count), k,
                "sc_runtime_copy_interpolated_added");
  ExpectFailure(sc_runtime_copy_interpolated_removed(nullptr, ids, 4, &count), k,
                "sc_runtime_copy_interpolated_removed");
  ExpectFailure(sc_runtime_interpolation_stats(nullptr, &stats), k,
                "sc_runtime_interpolation_stats");
  EXPECT_EQ(count, 7u);  // untouched by every refused copy
}

TEST(CapiValidityTest, NullOutputs) {
  RuntimePtr rt = MakeRuntime();
  const std::vector<uint8_t> put = TransformPut(512, 1, 1.0f);
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), put.data(), put.size()));
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  const int k = SC_E_INVALID_ARGUMENT;
  const sc_transform t = Identity();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  uint32_t ids[4];
  float m[64];
  ExpectFailure(sc_runtime_apply(rt.get(), nullptr, 4), k, "sc_runtime_apply");
  ExpectFailure(sc_runtime_apply_at(rt.get(), nullptr, 4, 0, SC_NO_SENDER_TIME), k,
                "sc_runtime_apply_at");
  ExpectFailure(sc_runtime_apply_stats(rt.get(), nullptr), k, "sc_runtime_apply_stats");
  ExpectFailure(sc_runtime_world_matrix(rt.get(), 512, nullptr), k, "sc_runtime_world_matrix");
  ExpectFailure(sc_runtime_interpolated_world_matrix(rt.get(), 512, nullptr), k,
                "sc_runtime_interpolated_world_matrix");
  ExpectFailure(sc_runtime_get_transform(rt.get(), 512, nullptr), k, "sc_runtime_get_transform");
  ExpectFailure(sc_runtime_node_info(rt.get(), 512, nullptr), k, "sc_runtime_node_info");
  ExpectFailure(sc_runtime_state_hash(rt.get(), nullptr, SC_STATE_HASH_CHARS), k,
                "sc_runtime_state_hash");
  ExpectFailure(sc_runtime_interpolation_stats(rt.get(), nullptr), k,
                "sc_runtime_interpolation_stats");
  // Writes: NULL transform, message buffer or length; nothing is merged.
  ExpectFailure(sc_runtime_write_transform(rt.get(), 513, nullptr, msg, sizeof(msg), &len), k,
                "sc_runtime_write_transform");
  ExpectFailure(sc_runtime_write_transform(rt.get(), 513, &t, nullptr, sizeof(msg), &len), k,
                "sc_runtime_write_transform");
  ExpectFailure(sc_runtime_write_transform(rt.get(), 513, &t, msg, sizeof(msg), nullptr), k,
                "sc_runtime_write_transform");
  ExpectFailure(sc_runtime_delete_transform(rt.get(), 512, nullptr, sizeof(msg), &len), k,
                "sc_runtime_delete_transform");
  ExpectFailure(sc_runtime_delete_entity(rt.get(), 512, msg, sizeof(msg), nullptr), k,
                "sc_runtime_delete_entity");
  sc_transform read;
  EXPECT_EQ(sc_runtime_get_transform(rt.get(), 513, &read), SC_E_NOT_FOUND);
  SC_ASSERT_OK(sc_runtime_get_transform(rt.get(), 512, &read));
  // Bulk copies: NULL count; NULL arrays with a capacity.
  ExpectFailure(sc_runtime_copy_world(rt.get(), ids, m, 4, nullptr), k, "sc_runtime_copy_world");
  ExpectFailure(sc_runtime_copy_world(rt.get(), nullptr, m, 4, &len), k, "sc_runtime_copy_world");
  ExpectFailure(sc_runtime_copy_world(rt.get(), ids, nullptr, 4, &len), k, "sc_runtime_copy_world");
  ExpectFailure(sc_runtime_copy_changed(rt.get(), nullptr, 4, &len), k, "sc_runtime_copy_changed");
  ExpectFailure(sc_runtime_copy_changed(rt.get(), ids, 4, nullptr), k, "sc_runtime_copy_changed");
  ExpectFailure(sc_runtime_copy_changed_world(rt.get(), ids, nullptr, 4, &len), k,
                "sc_runtime_copy_changed_world");
  ExpectFailure(sc_runtime_copy_added(rt.get(), nullptr, 4, &len), k, "sc_runtime_copy_added");
  ExpectFailure(sc_runtime_copy_removed(rt.get(), ids, 4, nullptr), k, "sc_runtime_copy_removed");
  ExpectFailure(sc_runtime_copy_interpolated_world(rt.get(), nullptr, m, 4, &len), k,
                "sc_runtime_copy_interpolated_world");
  ExpectFailure(sc_runtime_copy_interpolated_changed(rt.get(), ids, 4, nullptr), k,
                "sc_runtime_copy_interpolated_changed");
  ExpectFailure(sc_runtime_copy_interpolated_changed_world(rt.get(), nullptr, m, 4, &len), k,
                "sc_runtime_copy_interpolated_changed_world");
  ExpectFailure(sc_runtime_copy_interpolated_added(rt.get(), nullptr, 4, &len), k,
                "sc_runtime_copy_interpolated_added");
  ExpectFailure(sc_runtime_copy_interpolated_removed(rt.get(), nullptr, 4, &len), k,
                "sc_runtime_copy_interpolated_removed");
  // NULL with length 0 is an empty stream, not an error.
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), nullptr, 0));
}

TEST(CapiValidityTest, StructSizes) {
  RuntimePtr rt = MakeRuntime();
  sc_node_info info{};
  const std::vector<uint8_t> put = TransformPut(512, 1, 1.0f);
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), put.data(), put.size()));
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  info.struct_size = sizeof(info) - 1;
  ExpectFailure(sc_runtime_node_info(rt.get(), 512, &info), SC_E_INVALID_ARGUMENT,
                "sc_runtime_node_info");
  EXPECT_NE(std::string(sc_last_error()).find("struct_size"), std::string::npos);
  sc_apply_stats apply{};
  ExpectFailure(sc_runtime_apply_stats(rt.get(), &apply), SC_E_INVALID_ARGUMENT,
                "sc_runtime_apply_stats");
  sc_interpolation_stats stats{};
  stats.struct_size = 4;
  ExpectFailure(sc_runtime_interpolation_stats(rt.get(), &stats), SC_E_INVALID_ARGUMENT,
                "sc_runtime_interpolation_stats");
  sc_interpolation_options options;
  SC_ASSERT_OK(sc_interpolation_options_default(&options));
  EXPECT_EQ(options.struct_size, sizeof(options));
  options.struct_size = 8;
  ExpectFailure(sc_runtime_enable_interpolation(rt.get(), &options), SC_E_INVALID_ARGUMENT,
                "sc_runtime_enable_interpolation");
  options.struct_size = sizeof(options) + 8;  // a newer header's struct: refused, not ignored
  ExpectFailure(sc_runtime_enable_interpolation(rt.get(), &options), SC_E_INVALID_ARGUMENT,
                "sc_runtime_enable_interpolation");
  EXPECT_NE(std::string(sc_last_error()).find("newer"), std::string::npos);
  EXPECT_EQ(sc_runtime_interpolation_enabled(rt.get()), 0);

  // An output struct from a newer header (larger): the known part is written and
  // struct_size says how much; the caller's extra bytes are left alone.
  struct Newer {
    sc_node_info v1;
    uint32_t later_field;
  } newer{};
  newer.v1.struct_size = sizeof(Newer);
  newer.later_field = 0xABCD;
  SC_ASSERT_OK(sc_runtime_node_info(rt.get(), 512, &newer.v1));
  EXPECT_EQ(newer.v1.struct_size, sizeof(sc_node_info));
  EXPECT_EQ(newer.later_field, 0xABCDu);
}

TEST(CapiValidityTest, BufferTooSmallReportsTheSizeAndWritesNothing) {
  RuntimePtr rt = MakeRuntime();
  std::vector<uint8_t> stream;
  for (uint32_t e = 512; e < 515; ++e) {
    const std::vector<uint8_t> put = TransformPut(e, 1, static_cast<float>(e));
    stream.insert(stream.end(), put.begin(), put.end());
  }
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  ASSERT_EQ(sc_runtime_entity_count(rt.get()), 3u);
  uint32_t ids[2] = {77, 77};
  float m[32];
  std::fill(std::begin(m), std::end(m), -1.0f);
  size_t count = 0;
  ExpectFailure(sc_runtime_copy_world(rt.get(), ids, m, 2, &count), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_copy_world");
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(ids[0], 77u);
  EXPECT_EQ(m[0], -1.0f);
  // The size query form.
  count = 0;
  EXPECT_EQ(sc_runtime_copy_world(rt.get(), nullptr, nullptr, 0, &count), SC_E_BUFFER_TOO_SMALL);
  EXPECT_EQ(count, 3u);
  ExpectFailure(sc_runtime_copy_changed(rt.get(), ids, 2, &count), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_copy_changed");
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(ids[0], 77u);
  ExpectFailure(sc_runtime_copy_changed_world(rt.get(), ids, m, 1, &count), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_copy_changed_world");
  EXPECT_EQ(count, 3u);
  ExpectFailure(sc_runtime_copy_added(rt.get(), ids, 0, &count), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_copy_added");
  EXPECT_EQ(count, 3u);
  ExpectFailure(sc_runtime_copy_interpolated_world(rt.get(), ids, m, 2, &count),
                SC_E_BUFFER_TOO_SMALL, "sc_runtime_copy_interpolated_world");
  EXPECT_EQ(count, 3u);
  ExpectFailure(sc_runtime_copy_interpolated_changed(rt.get(), ids, 2, &count),
                SC_E_BUFFER_TOO_SMALL, "sc_runtime_copy_interpolated_changed");
  ExpectFailure(sc_runtime_copy_interpolated_changed_world(rt.get(), ids, m, 2, &count),
                SC_E_BUFFER_TOO_SMALL, "sc_runtime_copy_interpolated_changed_world");
  ExpectFailure(sc_runtime_copy_interpolated_added(rt.get(), ids, 2, &count), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_copy_interpolated_added");
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(ids[0], 77u);
  // Empty lists need no room.
  SC_ASSERT_OK(sc_runtime_copy_removed(rt.get(), nullptr, 0, &count));
  EXPECT_EQ(count, 0u);
  SC_ASSERT_OK(sc_runtime_copy_interpolated_removed(rt.get(), nullptr, 0, &count));
  EXPECT_EQ(count, 0u);

  char hash[SC_STATE_HASH_CHARS - 1];
  ExpectFailure(sc_runtime_state_hash(rt.get(), hash, sizeof(hash)), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_state_hash");

  // A write with too small a buffer reports the message size and merges nothing.
  char before[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), before, sizeof(before)));
  const sc_transform t = Identity();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  ExpectFailure(sc_runtime_write_transform(rt.get(), 600, &t, msg, SC_WRITE_MAX_BYTES - 1, &len),
                SC_E_BUFFER_TOO_SMALL, "sc_runtime_write_transform");
  EXPECT_EQ(len, 68u);
  ExpectFailure(sc_runtime_delete_transform(rt.get(), 512, msg, 19, &len), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_delete_transform");
  EXPECT_EQ(len, 20u);
  ExpectFailure(sc_runtime_delete_entity(rt.get(), 512, msg, 11, &len), SC_E_BUFFER_TOO_SMALL,
                "sc_runtime_delete_entity");
  EXPECT_EQ(len, 12u);
  char after[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), after, sizeof(after)));
  EXPECT_STREQ(before, after);
  // The sizes reported are enough.
  SC_ASSERT_OK(sc_runtime_delete_entity(rt.get(), 512, msg, 12, &len));
  EXPECT_EQ(len, 12u);
}

TEST(CapiValidityTest, UnknownEntities) {
  RuntimePtr rt = MakeRuntime();
  const std::vector<uint8_t> put = TransformPut(512, 1, 1.0f, 700);  // 700: a placeholder
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), put.data(), put.size()));
  float m[16];
  // Before the update nothing is in the scene yet; the Transform is already readable.
  ExpectFailure(sc_runtime_world_matrix(rt.get(), 512, m), SC_E_NOT_FOUND,
                "sc_runtime_world_matrix");
  sc_transform t;
  SC_ASSERT_OK(sc_runtime_get_transform(rt.get(), 512, &t));
  EXPECT_EQ(t.parent, 700u);
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 512, m));
  SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 700, m));
  ExpectFailure(sc_runtime_world_matrix(rt.get(), 513, m), SC_E_NOT_FOUND,
                "sc_runtime_world_matrix");
  EXPECT_NE(std::string(sc_last_error()).find("513"), std::string::npos);
  ExpectFailure(sc_runtime_world_matrix(rt.get(), 512 | (1u << 16), m), SC_E_NOT_FOUND,
                "sc_runtime_world_matrix");
  ExpectFailure(sc_runtime_interpolated_world_matrix(rt.get(), 513, m), SC_E_NOT_FOUND,
                "sc_runtime_interpolated_world_matrix");
  // The placeholder has no Transform; the root is not a node but has the identity.
  ExpectFailure(sc_runtime_get_transform(rt.get(), 700, &t), SC_E_NOT_FOUND,
                "sc_runtime_get_transform");
  sc_node_info info{};
  info.struct_size = sizeof(info);
  ExpectFailure(sc_runtime_node_info(rt.get(), 0, &info), SC_E_NOT_FOUND, "sc_runtime_node_info");
  ExpectFailure(sc_runtime_node_info(rt.get(), 9999, &info), SC_E_NOT_FOUND,
                "sc_runtime_node_info");
  SC_ASSERT_OK(sc_runtime_node_info(rt.get(), 700, &info));
  EXPECT_EQ(info.placeholder, 1);
  SC_ASSERT_OK(sc_runtime_world_matrix(rt.get(), 0, m));
  const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  EXPECT_TRUE(SameBits(m, identity, 16));
  SC_ASSERT_OK(sc_runtime_interpolated_world_matrix(rt.get(), 0, m));
  EXPECT_TRUE(SameBits(m, identity, 16));
}

TEST(CapiValidityTest, MalformedStreamsApplyNothing) {
  RuntimePtr rt = MakeRuntime();
  std::vector<uint8_t> stream = TransformPut(512, 1, 1.0f);
  const std::vector<uint8_t> second = TransformPut(513, 1, 2.0f);
  stream.insert(stream.end(), second.begin(), second.end());
  char empty[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), empty, sizeof(empty)));
  // Cut inside the second message: the first is valid but must not be merged.
  ExpectFailure(sc_runtime_apply(rt.get(), stream.data(), stream.size() - 1), SC_E_DECODE,
                "sc_runtime_apply");
  const std::string error = sc_last_error();
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find("offset 68"), std::string::npos) << error;
  EXPECT_NE(error.find("nothing applied"), std::string::npos) << error;
  // A length below the header.
  std::vector<uint8_t> bad = stream;
  bad[68] = 3;
  bad[69] = bad[70] = bad[71] = 0;
  ExpectFailure(sc_runtime_apply_at(rt.get(), bad.data(), bad.size(), 1000, SC_NO_SENDER_TIME),
                SC_E_DECODE, "sc_runtime_apply_at");
  EXPECT_NE(std::string(sc_last_error()).find("length_too_small"), std::string::npos);
  char after[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), after, sizeof(after)));
  EXPECT_STREQ(empty, after);
  sc_transform t;
  EXPECT_EQ(sc_runtime_get_transform(rt.get(), 512, &t), SC_E_NOT_FOUND);
  sc_apply_stats stats{};
  stats.struct_size = sizeof(stats);
  SC_ASSERT_OK(sc_runtime_apply_stats(rt.get(), &stats));
  EXPECT_EQ(stats.decode_errors, 2u);
  EXPECT_EQ(stats.calls, 0u);
  EXPECT_EQ(stats.messages, 0u);
  // The valid stream still applies.
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  SC_ASSERT_OK(sc_runtime_get_transform(rt.get(), 512, &t));
}

TEST(CapiValidityTest, TimesOutOfRange) {
  RuntimePtr rt = MakeRuntime();
  const std::vector<uint8_t> put = TransformPut(512, 1, 1.0f);
  const int64_t too_late = (int64_t{1} << 60) + 1;
  ExpectFailure(sc_runtime_apply_at(rt.get(), put.data(), put.size(), too_late, SC_NO_SENDER_TIME),
                SC_E_INVALID_ARGUMENT, "sc_runtime_apply_at");
  ExpectFailure(sc_runtime_apply_at(rt.get(), put.data(), put.size(), -too_late, SC_NO_SENDER_TIME),
                SC_E_INVALID_ARGUMENT, "sc_runtime_apply_at");
  ExpectFailure(sc_runtime_apply_at(rt.get(), put.data(), put.size(), 0, too_late),
                SC_E_INVALID_ARGUMENT, "sc_runtime_apply_at");
  sc_transform t;
  EXPECT_EQ(sc_runtime_get_transform(rt.get(), 512, &t), SC_E_NOT_FOUND);  // nothing applied
  ExpectFailure(sc_runtime_update_interpolated(rt.get(), too_late), SC_E_INVALID_ARGUMENT,
                "sc_runtime_update_interpolated");
  SC_ASSERT_OK(sc_runtime_enable_interpolation(rt.get(), nullptr));
  ExpectFailure(sc_runtime_update_interpolated(rt.get(), INT64_MIN), SC_E_INVALID_ARGUMENT,
                "sc_runtime_update_interpolated");
  SC_ASSERT_OK(
      sc_runtime_apply_at(rt.get(), put.data(), put.size(), int64_t{1} << 60, -(int64_t{1} << 60)));
}

TEST(CapiValidityTest, InvalidInterpolationOptions) {
  RuntimePtr rt = MakeRuntime();
  struct Case {
    const char* field;
    void (*set)(sc_interpolation_options&);
  };
  const Case cases[] = {
      {"snap_distance", [](sc_interpolation_options& o) { o.snap_distance = 0.0f; }},
      {"snap_distance", [](sc_interpolation_options& o) { o.snap_distance = -1.0f; }},
      {"snap_distance", [](sc_interpolation_options& o) { o.snap_distance = NAN; }},
      {"fixed_delay_us", [](sc_interpolation_options& o) { o.fixed_delay_us = -1; }},
      {"initial_delay_us", [](sc_interpolation_options& o) { o.initial_delay_us = -1; }},
      {"max_delay_us", [](sc_interpolation_options& o) { o.max_delay_us = -1; }},
      {"min_delay_us", [](sc_interpolation_options& o) { o.min_delay_us = 2'000'000; }},
      {"interval_multiple", [](sc_interpolation_options& o) { o.interval_multiple = 0.5; }},
      {"jitter_multiple", [](sc_interpolation_options& o) { o.jitter_multiple = -1.0; }},
      {"catch_up", [](sc_interpolation_options& o) { o.catch_up = 0.6; }},
      {"slow_down", [](sc_interpolation_options& o) { o.slow_down = -0.1; }},
      {"max_extrapolation_us", [](sc_interpolation_options& o) { o.max_extrapolation_us = -1; }},
      {"max_interval_us", [](sc_interpolation_options& o) { o.max_interval_us = 0; }},
  };
  for (const Case& c : cases) {
    sc_interpolation_options options;
    SC_ASSERT_OK(sc_interpolation_options_default(&options));
    c.set(options);
    ExpectFailure(sc_runtime_enable_interpolation(rt.get(), &options), SC_E_INVALID_ARGUMENT,
                  "sc_runtime_enable_interpolation");
    EXPECT_NE(std::string(sc_last_error()).find(c.field), std::string::npos)
        << c.field << ": " << sc_last_error();
    EXPECT_EQ(sc_runtime_interpolation_enabled(rt.get()), 0) << c.field;
  }
  // On a running presentation a bad change leaves the options as they were.
  SC_ASSERT_OK(sc_runtime_enable_interpolation(rt.get(), nullptr));
  sc_interpolation_options options;
  SC_ASSERT_OK(sc_interpolation_options_default(&options));
  options.catch_up = 2.0;
  EXPECT_EQ(sc_runtime_enable_interpolation(rt.get(), &options), SC_E_INVALID_ARGUMENT);
  EXPECT_EQ(sc_runtime_interpolation_enabled(rt.get()), 1);
}

TEST(CapiValidityTest, RefusedWrites) {
  RuntimePtr rt = MakeRuntime();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 99;
  // Reserved numbers (< 512) cannot be deleted.
  ExpectFailure(sc_runtime_delete_entity(rt.get(), 511, msg, sizeof(msg), &len), SC_E_REFUSED,
                "sc_runtime_delete_entity");
  EXPECT_NE(std::string(sc_last_error()).find("reserved_entity"), std::string::npos);
  EXPECT_EQ(len, 99u);
  // A deleted entity takes no more writes.
  SC_ASSERT_OK(sc_runtime_delete_entity(rt.get(), 600, msg, sizeof(msg), &len));
  EXPECT_EQ(len, 12u);
  const sc_transform t = Identity();
  ExpectFailure(sc_runtime_write_transform(rt.get(), 600, &t, msg, sizeof(msg), &len), SC_E_REFUSED,
                "sc_runtime_write_transform");
  // Deleting what a deleted entity no longer has changes nothing: nothing to send.
  SC_ASSERT_OK(sc_runtime_delete_transform(rt.get(), 600, msg, sizeof(msg), &len));
  EXPECT_EQ(len, 0u);
}

// Issue 23 item 13: servers drop non-finite Transforms, so a local write of one would leave
// the writer apart from everyone for good. Refused as sc_client_write_transform refuses it:
// SC_E_INVALID_ARGUMENT, the reason in sc_last_error(), nothing merged, no message.
TEST(CapiValidityTest, NonFiniteTransformWritesAreRefused) {
  RuntimePtr rt = MakeRuntime();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  const sc_transform good = Identity();
  SC_ASSERT_OK(sc_runtime_write_transform(rt.get(), 600, &good, msg, sizeof(msg), &len));
  ASSERT_EQ(len, static_cast<size_t>(SC_WRITE_MAX_BYTES));
  char before[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), before, sizeof(before)));
  const float kBad[] = {NAN, INFINITY, -INFINITY};
  for (float bad : kBad) {
    for (int field = 0; field < 10; ++field) {
      sc_transform t = Identity();
      float* fields[] = {&t.position[0], &t.position[1], &t.position[2], &t.rotation[0],
                         &t.rotation[1], &t.rotation[2], &t.rotation[3], &t.scale[0],
                         &t.scale[1],    &t.scale[2]};
      *fields[field] = bad;
      for (uint32_t entity : {600u, 601u}) {  // an existing entity and a new one
        len = 99;
        ExpectFailure(sc_runtime_write_transform(rt.get(), entity, &t, msg, sizeof(msg), &len),
                      SC_E_INVALID_ARGUMENT, "sc_runtime_write_transform");
        EXPECT_NE(std::string(sc_last_error()).find("non_finite_transform"), std::string::npos)
            << sc_last_error();
        EXPECT_EQ(len, 99u) << "no message to send";
      }
    }
  }
  char after[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(rt.get(), after, sizeof(after)));
  EXPECT_STREQ(after, before) << "nothing merged";
  sc_transform stored;
  EXPECT_EQ(sc_runtime_get_transform(rt.get(), 601, &stored), SC_E_NOT_FOUND);
  SC_ASSERT_OK(sc_runtime_get_transform(rt.get(), 600, &stored));
  EXPECT_EQ(stored.position[0], 0.0f);
  // The runtime still takes finite writes after a refusal.
  sc_transform moved = Identity();
  moved.position[0] = 2.0f;
  SC_ASSERT_OK(sc_runtime_write_transform(rt.get(), 600, &moved, msg, sizeof(msg), &len));
  EXPECT_EQ(len, static_cast<size_t>(SC_WRITE_MAX_BYTES));
}

TEST(CapiValidityTest, ViewsAreReadOnly) {
  // What sc_client_runtime hands out: a view of a runtime the client owns.
  runtime::Runtime owner;
  std::vector<uint8_t> out;
  protocol::Transform transform;
  transform.position = {3.0f, 0.0f, 0.0f};
  ASSERT_TRUE(owner.WriteTransform(512, transform, out).has_value());
  owner.Update();
  sc_runtime view_object(owner);
  sc_runtime* view = &view_object;
  // Reads work.
  EXPECT_EQ(sc_runtime_entity_count(view), 1u);
  float m[16];
  SC_ASSERT_OK(sc_runtime_world_matrix(view, 512, m));
  EXPECT_EQ(m[12], 3.0f);
  char hash[SC_STATE_HASH_CHARS];
  SC_ASSERT_OK(sc_runtime_state_hash(view, hash, sizeof(hash)));
  EXPECT_EQ(hash, owner.store().StateHashHex());
  sc_apply_stats stats{};
  stats.struct_size = sizeof(stats);
  SC_ASSERT_OK(sc_runtime_apply_stats(view, &stats));
  EXPECT_EQ(stats.calls, 0u);
  // Every change is refused.
  const std::vector<uint8_t> put = TransformPut(513, 1, 1.0f);
  const sc_transform t = Identity();
  uint8_t msg[SC_WRITE_MAX_BYTES];
  size_t len = 0;
  const int k = SC_E_READ_ONLY;
  ExpectFailure(sc_runtime_apply(view, put.data(), put.size()), k, "sc_runtime_apply");
  ExpectFailure(sc_runtime_apply_at(view, put.data(), put.size(), 0, SC_NO_SENDER_TIME), k,
                "sc_runtime_apply_at");
  ExpectFailure(sc_runtime_update(view), k, "sc_runtime_update");
  ExpectFailure(sc_runtime_write_transform(view, 513, &t, msg, sizeof(msg), &len), k,
                "sc_runtime_write_transform");
  ExpectFailure(sc_runtime_delete_transform(view, 512, msg, sizeof(msg), &len), k,
                "sc_runtime_delete_transform");
  ExpectFailure(sc_runtime_delete_entity(view, 512, msg, sizeof(msg), &len), k,
                "sc_runtime_delete_entity");
  ExpectFailure(sc_runtime_enable_interpolation(view, nullptr), k,
                "sc_runtime_enable_interpolation");
  ExpectFailure(sc_runtime_disable_interpolation(view), k, "sc_runtime_disable_interpolation");
  ExpectFailure(sc_runtime_update_interpolated(view, 0), k, "sc_runtime_update_interpolated");
  // Destroying a view is refused too: the client owns it.
  sc_runtime_destroy(view);
  EXPECT_NE(std::string(sc_last_error()).find("read-only view"), std::string::npos);
  EXPECT_EQ(sc_runtime_entity_count(view), 1u);
  EXPECT_EQ(owner.store().StateHashHex(), hash);
}

}  // namespace
}  // namespace scenecrdt::capi_test
