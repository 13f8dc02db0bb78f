// SPDX-License-Identifier: Apache-2.0
// Tests the streaming state writer of `replay`/`pull` (replay/state_json.h): on random
// stores (Transforms with NaN, infinities, -0 and denormals, removed registers, opaque
// components of every size, append sets, tombstones, reserved and versioned entities) its text
// is byte for byte the text of the former string-building writer kept below as the reference,
// and its state hash is CrdtStore::StateHashHex; its float text is json::AppendFloat's.
#include "scenecrdt/replay/state_json.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/replay/chunked_text.h"
#include "scenecrdt/replay/message_json.h"
#include "scenecrdt/replay/state_hash.h"

namespace scenecrdt::tools::test {
namespace {

using protocol::CrdtMessage;
using protocol::MessageType;

// The writer as it was before it streamed (std::string concatenation, std::to_string,
// CrdtStore::SortedRegisters and CrdtStore::StateHashHex): the reference text.
void AppendEntityFields(protocol::EntityId e, std::string& out) {
  out += "\"entity\":" + std::to_string(e) +
         ",\"number\":" + std::to_string(protocol::EntityNumber(e)) +
         ",\"version\":" + std::to_string(protocol::EntityVersion(e));
}

std::string ReferenceStateJson(const runtime::CrdtStore& store,
                               std::span<const protocol::EntityId> entities) {
  std::string out;
  const std::vector<runtime::RegisterView> registers = store.SortedRegisters();
  out += "{\"transforms\":[";
  bool first = true;
  for (const auto& r : registers) {
    if (r.component != protocol::kTransformComponentId || !r.transform) continue;
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + ',';
    replay::AppendTransformJsonFields(*r.transform, out);
    out += ",\"dataHex\":\"";
    protocol::AppendHex(protocol::StoreTransform(*r.transform), out);
    out += "\"}";
  }
  out += "],\"deletedTransforms\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component != protocol::kTransformComponentId || r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + '}';
  }
  out += "],\"components\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component == protocol::kTransformComponentId || !r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(r.component) + ',';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + ",\"dataHex\":\"";
    protocol::AppendHex(r.data, out);
    out += "\"}";
  }
  out += "],\"deletedComponents\":[";
  first = true;
  for (const auto& r : registers) {
    if (r.component == protocol::kTransformComponentId || r.has_data) continue;
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(r.component) + ',';
    AppendEntityFields(r.entity, out);
    out += ",\"timestamp\":" + std::to_string(r.timestamp) + '}';
  }
  out += "],\"appendValues\":[";
  first = true;
  for (const auto& s : store.SortedAppendSets()) {
    if (!first) out += ',';
    first = false;
    out += "{\"component\":" + std::to_string(s.component) + ',';
    AppendEntityFields(s.entity, out);
    out += ",\"timestamps\":[";
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      if (i) out += ',';
      out += std::to_string(s.elements[i].timestamp);
    }
    out += "],\"values\":[";
    for (std::size_t i = 0; i < s.elements.size(); ++i) {
      if (i) out += ',';
      out += '"';
      protocol::AppendHex(s.elements[i].data, out);
      out += '"';
    }
    out += "]}";
  }
  out += "],\"entities\":[";
  first = true;
  for (protocol::EntityId e : entities) {
    if (!first) out += ',';
    first = false;
    out += '{';
    AppendEntityFields(e, out);
    out += ",\"state\":\"";
    out += runtime::EntityStateName(store.GetEntityState(e));
    out += "\"}";
  }
  out += "],\"stateHash\":\"" + store.StateHashHex() + '"';
  return out;
}

uint32_t Below(std::mt19937_64& rng, uint32_t n) { return static_cast<uint32_t>(rng() % n); }

// Floats a Transform may carry, the awkward ones often.
float RandomFloat(std::mt19937_64& rng) {
  static const float kSpecial[] = {
      0.0f,
      -0.0f,
      1.0f,
      -1.0f,
      0.1f,
      std::numeric_limits<float>::quiet_NaN(),
      -std::numeric_limits<float>::quiet_NaN(),
      std::bit_cast<float>(0x7fc00001u),
      std::bit_cast<float>(0x7f800001u),  // signalling NaN
      std::bit_cast<float>(0xffffffffu),
      std::numeric_limits<float>::infinity(),
      -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::denorm_min(),
      -std::numeric_limits<float>::denorm_min(),
      std::bit_cast<float>(0x007fffffu),  // largest denormal
      std::numeric_limits<float>::min(),
      std::numeric_limits<float>::max(),
      -std::numeric_limits<float>::max(),
      1e-38f,
      123456789.0f,
      -1.17549435e-38f,
  };
  switch (rng() % 4) {
    case 0:
      return kSpecial[rng() % std::size(kSpecial)];
    case 1:
      return std::bit_cast<float>(static_cast<uint32_t>(rng()));
    default:
      return std::uniform_real_distribution<float>(-1000.0f, 1000.0f)(rng);
  }
}

protocol::EntityId RandomEntity(std::mt19937_64& rng, uint32_t numbers) {
  // Reserved numbers (< 512, entity 0 included) sometimes; versions 0..3.
  const uint32_t number = rng() % 8 == 0 ? Below(rng, 512) : 512 + Below(rng, numbers);
  const uint32_t version = rng() % 4 == 0 ? rng() % 4 : 0;
  return (version << 16) | number;
}

// A store built from `messages` random messages of every type over `numbers` entity numbers.
// `payloads` holds the bytes the messages point into.
runtime::CrdtStore RandomStore(uint64_t seed, int messages, uint32_t numbers,
                               std::vector<protocol::EntityId>& seen) {
  std::mt19937_64 rng(seed);
  runtime::CrdtStore store;
  std::vector<uint8_t> payload;
  for (int i = 0; i < messages; ++i) {
    CrdtMessage m;
    m.entity = RandomEntity(rng, numbers);
    m.timestamp = static_cast<uint32_t>(rng() % 6 == 0 ? rng() : rng() % 8);
    seen.push_back(m.entity);
    const int kind = static_cast<int>(rng() % 10);
    payload.clear();
    if (kind <= 3) {
      protocol::Transform t;
      t.position = {RandomFloat(rng), RandomFloat(rng), RandomFloat(rng)};
      t.rotation = {RandomFloat(rng), RandomFloat(rng), RandomFloat(rng), RandomFloat(rng)};
      t.scale = {RandomFloat(rng), RandomFloat(rng), RandomFloat(rng)};
      t.parent = rng() % 3 == 0 ? static_cast<uint32_t>(rng()) : 512 + Below(rng, numbers);
      const protocol::TransformBytes bytes = protocol::StoreTransform(t);
      payload.assign(bytes.begin(), bytes.end());
      m.type = kind == 3 ? MessageType::kPutComponentNetwork : MessageType::kPutComponent;
      m.component = protocol::kTransformComponentId;
    } else if (kind == 4) {
      m.type = MessageType::kDeleteComponent;
      m.component = rng() % 2 ? protocol::kTransformComponentId : Below(rng, 5);
    } else if (kind <= 6) {
      m.type = MessageType::kPutComponent;
      m.component = rng() % 2 ? static_cast<uint32_t>(rng()) : Below(rng, 5);
      if (m.component == protocol::kTransformComponentId) m.component = 0;
      // Empty, small, and larger than the writer's 64 KiB buffer once in hex.
      const std::size_t size = rng() % 20 == 0 ? 40000 + rng() % 1000 : rng() % 40;
      for (std::size_t b = 0; b < size; ++b) payload.push_back(static_cast<uint8_t>(rng()));
    } else if (kind <= 8) {
      m.type = MessageType::kAppendValue;
      m.component = 1000 + Below(rng, 3);
      const std::size_t size = rng() % 30 == 0 ? 20000 : rng() % 12;
      for (std::size_t b = 0; b < size; ++b) payload.push_back(static_cast<uint8_t>(rng()));
    } else {
      m.type = MessageType::kDeleteEntity;
      m.component = 0;
      m.timestamp = 0;
    }
    m.data = payload;
    (void)store.Merge(m);  // refusals (reserved deletes, bad sizes) change nothing
  }
  // Ids never carried, too.
  for (int i = 0; i < 20; ++i) seen.push_back(static_cast<uint32_t>(rng()));
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  return store;
}

TEST(StateJsonTest, StreamingWriterMatchesTheReferenceOnRandomStores) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::vector<protocol::EntityId> ids;
    const int messages = seed % 10 == 0 ? 3000 : static_cast<int>(seed * 7);
    const runtime::CrdtStore store =
        RandomStore(seed, messages, 64 + static_cast<uint32_t>(seed % 200), ids);
    std::string text;
    replay::AppendStateJsonBody(store, ids, text);
    ASSERT_EQ(text, ReferenceStateJson(store, ids)) << "seed " << seed;
  }
}

TEST(StateJsonTest, EmptyStore) {
  const runtime::CrdtStore store;
  std::string text;
  replay::AppendStateJsonBody(store, {}, text);
  EXPECT_EQ(text, ReferenceStateJson(store, {}));
}

// A store of Transforms only, large enough for the radix sort, with several versions per
// number so both of its passes run.
TEST(StateJsonTest, LargeTransformOnlyStoreMatchesTheReference) {
  std::mt19937_64 rng(99);
  runtime::CrdtStore store;
  std::vector<protocol::EntityId> ids;
  for (int i = 0; i < 30000; ++i) {
    protocol::Transform t;
    t.position = {RandomFloat(rng), RandomFloat(rng), RandomFloat(rng)};
    const protocol::TransformBytes bytes = protocol::StoreTransform(t);
    CrdtMessage m;
    m.type = rng() % 20 == 0 ? MessageType::kDeleteComponent : MessageType::kPutComponent;
    m.component = protocol::kTransformComponentId;
    m.entity = (Below(rng, 3) << 16) | (512 + Below(rng, 20000));
    m.timestamp = static_cast<uint32_t>(rng() % 4);
    if (m.type == MessageType::kPutComponent) m.data = bytes;
    (void)store.Merge(m);
    ids.push_back(m.entity);
  }
  ASSERT_EQ(store.num_registers(), store.transform_registers().size());
  ASSERT_GT(store.num_registers(), 4096u);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string text;
  replay::AppendStateJsonBody(store, ids, text);
  EXPECT_EQ(text, ReferenceStateJson(store, ids));
  const auto views = replay::SortedRegisterViews(store);
  EXPECT_EQ(replay::CanonicalStateHashHex(store, views, store.SortedAppendSets()),
            store.StateHashHex());
}

TEST(StateJsonTest, FloatTextIsAppendFloats) {
  std::mt19937_64 rng(5);
  char buf[replay::kMaxFloatText];
  std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                                0x7fc00000u, 0xffc00000u, 0x7fc00001u, 0x7f800001u,
                                0x00000001u, 0x80000001u, 0x007fffffu, 0x7f7fffffu,
                                0xff7fffffu, 0x00800000u, 0x80800000u, 0xffffffffu};
  for (int i = 0; i < 200000; ++i) bits.push_back(static_cast<uint32_t>(rng()));
  // Integral values take a shortcut: small ones, trailing zeros either side of where the e-form
  // becomes shorter, random ones up to 2^24 and the neighbours of 2^24.
  auto add_int = [&bits](double v) {
    bits.push_back(std::bit_cast<uint32_t>(static_cast<float>(v)));
    bits.push_back(std::bit_cast<uint32_t>(static_cast<float>(-v)));
  };
  for (int v = 0; v <= 3000; ++v) add_int(v);
  for (double p = 10; p < 2e7; p *= 10) {
    for (int d = 1; d <= 16; ++d) add_int(d * p);
  }
  for (int i = 0; i < 100000; ++i) add_int(static_cast<double>(rng() % (1u << 24)));
  for (double v = 16777200; v <= 16777240; ++v) add_int(v);
  for (uint32_t b : bits) {
    const float f = std::bit_cast<float>(b);
    std::string expected;
    json::AppendFloat(f, expected);
    const char* end = replay::PutFloat(buf, f);
    ASSERT_EQ(std::string_view(buf, static_cast<std::size_t>(end - buf)), expected) << "bits " << b;
  }
}

TEST(StateJsonTest, ChunkedTextHandsOnEveryByteInOrder) {
  std::string got;
  std::size_t chunks = 0;
  replay::ChunkedText text([&](std::string_view c) {
    EXPECT_LE(c.size(), replay::ChunkedText::kCapacity);
    got.append(c);
    ++chunks;
  });
  std::string expected;
  std::vector<uint8_t> bytes(300000);
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  for (int round = 0; round < 3; ++round) {
    text.Put("x");
    expected += "x";
    text.PutHex(bytes);
    protocol::AppendHex(bytes, expected);
    const std::string big(replay::ChunkedText::kCapacity + 1000, static_cast<char>('a' + round));
    text.Put(big);
    expected += big;
    char* p = text.Room(20);
    text.Commit(replay::PutU64(p, 18446744073709551615ull));
    expected += "18446744073709551615";
    text.Put('}');
    expected += '}';
  }
  text.Flush();
  EXPECT_EQ(got, expected);
  EXPECT_GE(chunks, expected.size() / replay::ChunkedText::kCapacity);
}

}  // namespace
}  // namespace scenecrdt::tools::test
