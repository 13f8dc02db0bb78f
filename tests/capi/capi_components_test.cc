// SPDX-License-Identifier: Apache-2.0
// The component reads of the C ABI (docs/COMPONENTS.md): sc_runtime_get_component, the
// append-value records, the changed / added / removed component lists. Their error paths (NULL,
// size queries, too small a buffer writing nothing, absent keys, grow-only sets, a broken or a
// read-only handle), equality with the C++ runtime on random streams, and the golden stream of
// a real @dcl/ecs Engine: the bytes its schemas serialized and the lists of its own diff.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "scenecrdt/capi/internal/runtime_handle.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/runtime/runtime.h"
#include "scenecrdt/scenecrdt.h"
#include "tests/capi/capi_test_util.h"
#include "tests/runtime/ecs_components_golden.h"

namespace scenecrdt::capi_test {
namespace {

using protocol::MessageType;
using Bytes = std::vector<uint8_t>;
using Pairs = std::vector<std::pair<uint32_t, uint32_t>>;

Bytes Msg(MessageType type, uint32_t e, uint32_t c, uint32_t ts, Bytes data = {}) {
  Bytes out;
  protocol::AppendMessage({type, e, c, ts, 0, data}, out);
  return out;
}

void ExpectStatus(int status, int expected, const char* function) {
  EXPECT_EQ(status, expected) << sc_error_name(status) << ": " << sc_last_error();
  EXPECT_EQ(std::string(sc_last_error()).rfind(std::string(function) + ": ", 0), 0u)
      << sc_last_error();
}

// The value through a size query, then the copy.
std::optional<Bytes> GetComponent(const sc_runtime* rt, uint32_t e, uint32_t c) {
  size_t len = 12345;
  const int query = sc_runtime_get_component(rt, e, c, nullptr, 0, &len);
  if (query == SC_E_NOT_FOUND || query == SC_E_GROW_ONLY) return std::nullopt;
  EXPECT_TRUE(query == SC_OK || query == SC_E_BUFFER_TOO_SMALL) << sc_last_error();
  Bytes out(len);
  size_t got = 0;
  EXPECT_EQ(sc_runtime_get_component(rt, e, c, out.data(), out.size(), &got), SC_OK);
  EXPECT_EQ(got, len);
  return out;
}

// The append-value records, parsed: (timestamp, bytes) in order.
std::vector<std::pair<uint32_t, Bytes>> AppendValues(const sc_runtime* rt, uint32_t e, uint32_t c) {
  size_t len = 0;
  const int query = sc_runtime_copy_append_values(rt, e, c, nullptr, 0, &len);
  if (query == SC_E_NOT_FOUND) return {};
  EXPECT_EQ(query, SC_E_BUFFER_TOO_SMALL) << sc_last_error();  // a set has one value at least
  Bytes buf(len);
  EXPECT_EQ(sc_runtime_copy_append_values(rt, e, c, buf.data(), buf.size(), &len), SC_OK);
  std::vector<std::pair<uint32_t, Bytes>> out;
  std::size_t at = 0;
  const auto u32 = [&](std::size_t p) {
    return static_cast<uint32_t>(buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16 |
                                 static_cast<uint32_t>(buf[p + 3]) << 24);
  };
  while (at + SC_APPEND_RECORD_HEADER_BYTES <= buf.size()) {
    const uint32_t ts = u32(at), n = u32(at + 4);
    at += SC_APPEND_RECORD_HEADER_BYTES;
    EXPECT_LE(at + n, buf.size());
    out.emplace_back(
        ts, Bytes(buf.begin() + static_cast<long>(at), buf.begin() + static_cast<long>(at + n)));
    at += n;
  }
  EXPECT_EQ(at, buf.size());
  return out;
}

using PairCopy = int (*)(const sc_runtime*, uint32_t*, uint32_t*, size_t, size_t*);

Pairs CopyPairs(const sc_runtime* rt, PairCopy copy) {
  size_t n = 0;
  const int query = copy(rt, nullptr, nullptr, 0, &n);
  EXPECT_TRUE(query == SC_OK || query == SC_E_BUFFER_TOO_SMALL) << sc_last_error();
  std::vector<uint32_t> e(n), c(n);
  EXPECT_EQ(copy(rt, e.data(), c.data(), n, &n), SC_OK) << sc_last_error();
  Pairs out;
  for (size_t i = 0; i < n; ++i) out.emplace_back(e[i], c[i]);
  return out;
}

Pairs FromRefs(std::span<const runtime::ComponentRef> refs) {
  Pairs out;
  for (const runtime::ComponentRef& r : refs) out.emplace_back(r.entity, r.component);
  return out;
}

TEST(CapiComponentsTest, ValuesSizeQueriesAndErrors) {
  RuntimePtr rt = MakeRuntime();
  Bytes stream = Msg(MessageType::kPutComponent, 512, 1018, 1, {1, 2, 3, 4, 5});
  const Bytes empty = Msg(MessageType::kPutComponent, 513, 1018, 1, {});
  const Bytes append = Msg(MessageType::kAppendValue, 512, 1063, 0, {9, 9});
  stream.insert(stream.end(), empty.begin(), empty.end());
  stream.insert(stream.end(), append.begin(), append.end());
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  // Before any update.
  uint8_t buf[8];
  std::memset(buf, 0xEE, sizeof(buf));
  size_t len = 0;
  ExpectStatus(sc_runtime_get_component(rt.get(), 512, 1018, nullptr, 0, &len),
               SC_E_BUFFER_TOO_SMALL, "sc_runtime_get_component");
  EXPECT_EQ(len, 5u);
  ExpectStatus(sc_runtime_get_component(rt.get(), 512, 1018, buf, 4, &len), SC_E_BUFFER_TOO_SMALL,
               "sc_runtime_get_component");
  EXPECT_EQ(len, 5u);
  for (uint8_t b : buf) EXPECT_EQ(b, 0xEE);  // nothing written
  SC_ASSERT_OK(sc_runtime_get_component(rt.get(), 512, 1018, buf, sizeof(buf), &len));
  EXPECT_EQ(len, 5u);
  EXPECT_EQ(Bytes(buf, buf + 5), (Bytes{1, 2, 3, 4, 5}));
  EXPECT_EQ(buf[5], 0xEE);
  // An empty payload: SC_OK with len 0, even for a size query.
  len = 99;
  SC_ASSERT_OK(sc_runtime_get_component(rt.get(), 513, 1018, nullptr, 0, &len));
  EXPECT_EQ(len, 0u);
  // Absent, grow-only, bad arguments.
  ExpectStatus(sc_runtime_get_component(rt.get(), 514, 1018, buf, sizeof(buf), &len),
               SC_E_NOT_FOUND, "sc_runtime_get_component");
  ExpectStatus(sc_runtime_get_component(rt.get(), 512, 1063, buf, sizeof(buf), &len),
               SC_E_GROW_ONLY, "sc_runtime_get_component");
  EXPECT_NE(std::string(sc_last_error()).find("sc_runtime_copy_append_values"), std::string::npos);
  ExpectStatus(sc_runtime_get_component(rt.get(), 512, 1018, nullptr, 4, &len),
               SC_E_INVALID_ARGUMENT, "sc_runtime_get_component");
  ExpectStatus(sc_runtime_get_component(rt.get(), 512, 1018, buf, sizeof(buf), nullptr),
               SC_E_INVALID_ARGUMENT, "sc_runtime_get_component");
  ExpectStatus(sc_runtime_get_component(nullptr, 512, 1018, buf, sizeof(buf), &len),
               SC_E_INVALID_ARGUMENT, "sc_runtime_get_component");
  // The Transform reads as its wire bytes.
  const Bytes put = TransformPut(600, 1, 2.5f, 512);
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), put.data(), put.size()));
  const std::optional<Bytes> transform = GetComponent(rt.get(), 600, 1);
  ASSERT_TRUE(transform.has_value());
  EXPECT_EQ(*transform, Bytes(put.end() - 44, put.end()));
}

TEST(CapiComponentsTest, AppendValueRecords) {
  RuntimePtr rt = MakeRuntime();
  Bytes stream;
  for (const Bytes& v : {Bytes{3, 3, 3}, Bytes{1}, Bytes{}}) {
    const Bytes m = Msg(MessageType::kAppendValue, 512, 1063, v.empty() ? 7u : 0u, v);
    stream.insert(stream.end(), m.begin(), m.end());
  }
  const Bytes lww = Msg(MessageType::kPutComponent, 512, 1018, 1, {4});
  stream.insert(stream.end(), lww.begin(), lww.end());
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  const auto values = AppendValues(rt.get(), 512, 1063);
  ASSERT_EQ(values.size(), 3u);  // ascending (timestamp, bytes)
  EXPECT_EQ(values[0], (std::pair<uint32_t, Bytes>{0, {1}}));
  EXPECT_EQ(values[1], (std::pair<uint32_t, Bytes>{0, {3, 3, 3}}));
  EXPECT_EQ(values[2], (std::pair<uint32_t, Bytes>{7, {}}));
  size_t len = 0;
  uint8_t small[27];
  std::memset(small, 0xEE, sizeof(small));
  ExpectStatus(sc_runtime_copy_append_values(rt.get(), 512, 1063, small, sizeof(small), &len),
               SC_E_BUFFER_TOO_SMALL, "sc_runtime_copy_append_values");
  EXPECT_EQ(len, 3 * 8u + 4u);
  for (uint8_t b : small) EXPECT_EQ(b, 0xEE);
  ExpectStatus(sc_runtime_copy_append_values(rt.get(), 512, 1018, nullptr, 0, &len), SC_E_NOT_FOUND,
               "sc_runtime_copy_append_values");
  EXPECT_NE(std::string(sc_last_error()).find("sc_runtime_get_component"), std::string::npos);
  ExpectStatus(sc_runtime_copy_append_values(rt.get(), 513, 1063, nullptr, 0, &len), SC_E_NOT_FOUND,
               "sc_runtime_copy_append_values");
  ExpectStatus(sc_runtime_copy_append_values(rt.get(), 512, 1063, nullptr, 0, nullptr),
               SC_E_INVALID_ARGUMENT, "sc_runtime_copy_append_values");
}

TEST(CapiComponentsTest, ListsAndTheirErrors) {
  RuntimePtr rt = MakeRuntime();
  Bytes stream = Msg(MessageType::kPutComponent, 513, 1018, 1, {1});
  const Bytes second = Msg(MessageType::kPutComponent, 512, 1017, 1, {2});
  stream.insert(stream.end(), second.begin(), second.end());
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
  // Nothing before the first update.
  EXPECT_TRUE(CopyPairs(rt.get(), sc_runtime_copy_changed_components).empty());
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  const Pairs both{{512, 1017}, {513, 1018}};
  EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_changed_components), both);
  EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_added_components), both);
  EXPECT_TRUE(CopyPairs(rt.get(), sc_runtime_copy_removed_components).empty());
  uint32_t e[1] = {77}, c[1] = {77};
  size_t count = 0;
  ExpectStatus(sc_runtime_copy_changed_components(rt.get(), e, c, 1, &count), SC_E_BUFFER_TOO_SMALL,
               "sc_runtime_copy_changed_components");
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(e[0], 77u);
  EXPECT_EQ(c[0], 77u);
  ExpectStatus(sc_runtime_copy_added_components(rt.get(), e, nullptr, 1, &count),
               SC_E_INVALID_ARGUMENT, "sc_runtime_copy_added_components");
  ExpectStatus(sc_runtime_copy_removed_components(rt.get(), e, c, 1, nullptr),
               SC_E_INVALID_ARGUMENT, "sc_runtime_copy_removed_components");
  ExpectStatus(sc_runtime_copy_removed_components(nullptr, e, c, 1, &count), SC_E_INVALID_ARGUMENT,
               "sc_runtime_copy_removed_components");
  const Bytes del = Msg(MessageType::kDeleteEntity, 513, 0, 0);
  SC_ASSERT_OK(sc_runtime_apply(rt.get(), del.data(), del.size()));
  SC_ASSERT_OK(sc_runtime_update(rt.get()));
  EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_removed_components), (Pairs{{513, 1018}}));
  EXPECT_TRUE(CopyPairs(rt.get(), sc_runtime_copy_changed_components).empty());
}

TEST(CapiComponentsTest, ReadOnlyViewsReadComponents) {
  runtime::Runtime owner;
  Bytes out;
  const Bytes payload{5, 6};
  ASSERT_TRUE(owner.WriteComponent(512, 1018, payload, out).has_value());
  owner.Update();
  sc_runtime view(owner);
  EXPECT_EQ(GetComponent(&view, 512, 1018), payload);
  EXPECT_EQ(CopyPairs(&view, sc_runtime_copy_added_components), (Pairs{{512, 1018}}));
}

// Random component streams (puts, deletes, appends, deleted entities, newer versions) in
// batches: after every update the C ABI's values and lists are the C++ runtime's.
TEST(CapiComponentsTest, RandomStreamsReadAsTheRuntime) {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    std::mt19937 random(seed);
    auto pick = [&](uint32_t n) { return static_cast<uint32_t>(random() % n); };
    RuntimePtr rt = MakeRuntime();
    runtime::Runtime reference;
    for (int batch = 0; batch < 8; ++batch) {
      Bytes stream;
      for (uint32_t i = 0, n = 1 + pick(10); i < n; ++i) {
        const uint32_t e = (512 + pick(4)) | (pick(6) == 0 ? 1u << 16 : 0u);
        const uint32_t c = 1017 + pick(3);
        const Bytes data(pick(4), static_cast<uint8_t>(pick(3)));
        const uint32_t kind = pick(10);
        const MessageType type = kind < 5   ? MessageType::kPutComponent
                                 : kind < 7 ? MessageType::kDeleteComponent
                                 : kind < 9 ? MessageType::kAppendValue
                                            : MessageType::kDeleteEntity;
        const Bytes m =
            Msg(type, e, c, pick(5), type == MessageType::kDeleteComponent ? Bytes{} : data);
        stream.insert(stream.end(), m.begin(), m.end());
      }
      SC_ASSERT_OK(sc_runtime_apply(rt.get(), stream.data(), stream.size()));
      ASSERT_TRUE(reference.ApplyCrdt(stream).has_value());
      SC_ASSERT_OK(sc_runtime_update(rt.get()));
      reference.Update();
      ASSERT_EQ(CopyPairs(rt.get(), sc_runtime_copy_changed_components),
                FromRefs(reference.changed_components()));
      ASSERT_EQ(CopyPairs(rt.get(), sc_runtime_copy_added_components),
                FromRefs(reference.added_components()));
      ASSERT_EQ(CopyPairs(rt.get(), sc_runtime_copy_removed_components),
                FromRefs(reference.removed_components()));
      for (uint32_t e : {512u, 513u, 514u, 515u, 512u | 1u << 16, 515u | 1u << 16}) {
        for (uint32_t c = 1017; c < 1020; ++c) {
          const runtime::ComponentView v = reference.FindComponent(e, c);
          const std::optional<Bytes> got = GetComponent(rt.get(), e, c);
          EXPECT_EQ(got.has_value(), v.kind == runtime::ComponentKind::kValue);
          if (got) {
            EXPECT_EQ(*got, Bytes(v.bytes().begin(), v.bytes().end()));
          }
          const auto values = AppendValues(rt.get(), e, c);
          const auto set = reference.store().FindAppendSet(c, e);
          ASSERT_EQ(values.size(), set.size());
          for (std::size_t i = 0; i < set.size(); ++i) {
            EXPECT_EQ(values[i].first, set[i].timestamp);
            EXPECT_EQ(values[i].second, set[i].data);
          }
        }
      }
    }
  }
}

// The golden @dcl/ecs stream (tests/data/components/, docs/COMPONENTS.md) through the C ABI.
TEST(CapiComponentsTest, GoldenDclEcsStream) {
  const golden::EcsGolden g = golden::LoadEcsGolden();
  ASSERT_EQ(g.frames.size(), 4u);
  RuntimePtr rt = MakeRuntime();
  for (std::size_t f = 0; f < g.frames.size(); ++f) {
    const golden::EcsFrame& frame = g.frames[f];
    SC_ASSERT_OK(sc_runtime_apply(rt.get(), g.stream.data() + frame.offset, frame.length));
    SC_ASSERT_OK(sc_runtime_update(rt.get()));
    for (const auto& [key, bytes] : frame.values) {
      EXPECT_EQ(GetComponent(rt.get(), key.first, key.second), bytes) << "frame " << f;
    }
    for (const auto& [key, values] : frame.grow_only) {
      size_t len = 0;
      ExpectStatus(sc_runtime_get_component(rt.get(), key.first, key.second, nullptr, 0, &len),
                   SC_E_GROW_ONLY, "sc_runtime_get_component");
      std::vector<Bytes> got;
      for (const auto& [ts, v] : AppendValues(rt.get(), key.first, key.second)) {
        EXPECT_EQ(ts, 0u);  // @dcl/ecs appends with timestamp 0
        got.push_back(v);
      }
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, values) << "frame " << f;
    }
    EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_changed_components), frame.changed);
    EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_added_components), frame.added);
    EXPECT_EQ(CopyPairs(rt.get(), sc_runtime_copy_removed_components), frame.removed);
  }
}

}  // namespace
}  // namespace scenecrdt::capi_test
