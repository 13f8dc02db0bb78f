// SPDX-License-Identifier: Apache-2.0
// Owns the C ABI suites' stream generator and the replay reference (capi_test_util.h).
#include "tests/capi/capi_test_util.h"

#include <cstring>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/crdt_message.h"
#include "scenecrdt/runtime/runtime.h"

namespace scenecrdt::capi_test {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t Below(uint32_t n) { return static_cast<uint32_t>(Next() % n); }
  float Unit() { return static_cast<float>(Next() >> 40) * 0x1.0p-24f * 2.0f - 1.0f; }

 private:
  uint64_t state_;
};

void AppendRaw(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

RuntimePtr MakeRuntime() {
  RuntimePtr rt(sc_runtime_create());
  EXPECT_NE(rt, nullptr) << sc_last_error();
  return rt;
}

std::vector<uint8_t> TransformPut(uint32_t entity, uint32_t timestamp, float x, uint32_t parent) {
  protocol::Transform t;
  t.position = {x, 0.0f, 0.0f};
  t.parent = parent;
  std::vector<uint8_t> out;
  protocol::AppendTransformPut(entity, timestamp, t, out);
  return out;
}

std::vector<uint8_t> RandomStream(uint64_t seed, int messages) {
  Rng rng(seed);
  constexpr uint32_t kNumbers = 24;  // entity numbers 512..535: loops and ties are frequent
  std::vector<uint8_t> out;
  for (int i = 0; i < messages; ++i) {
    const uint32_t number = 512 + rng.Below(kNumbers);
    // Newer versions retire older ones: kept to the last few numbers, so loops survive.
    const uint32_t version = number >= 530 && rng.Below(4) == 0 ? 1 + rng.Below(2) : 0;
    const uint32_t entity = number | (version << 16);
    const uint32_t timestamp = rng.Below(12);  // small: equal timestamps (ties) happen
    const uint32_t kind = rng.Below(100);
    if (kind < 70) {
      protocol::Transform t;
      t.position = {4.0f * rng.Unit(), 4.0f * rng.Unit(), 4.0f * rng.Unit()};
      const float qx = rng.Unit(), qy = rng.Unit(), qz = rng.Unit(), qw = rng.Unit() + 1.5f;
      t.rotation = {qx, qy, qz, qw};  // not normalised: the pipeline uses it as given
      t.scale = {0.5f + rng.Unit() * 0.25f, 1.0f + rng.Unit() * 0.5f, 1.0f};
      const uint32_t p = rng.Below(kNumbers + 6);
      // Parents: the root, other entities (loops), entities that never get a Transform
      // (placeholders), and now and then a versioned id.
      t.parent = p < 4 ? 0 : p < kNumbers + 4 ? 512 + (p - 4) : 600 + p;
      if (t.parent != 0 && rng.Below(10) == 0) t.parent |= 1u << 16;
      protocol::AppendTransformPut(entity, timestamp, t, out);
    } else if (kind < 80) {
      protocol::CrdtMessage m;
      m.type = protocol::MessageType::kDeleteComponent;
      m.entity = entity;
      m.component = protocol::kTransformComponentId;
      m.timestamp = timestamp;
      protocol::AppendMessage(m, out);
    } else if (kind < 82) {
      protocol::CrdtMessage m;
      m.type = protocol::MessageType::kDeleteEntity;
      m.entity = entity;
      protocol::AppendMessage(m, out);
    } else if (kind < 92) {
      // An opaque component, and now and then a Transform with the wrong size (refused).
      const uint8_t data[3] = {static_cast<uint8_t>(i), 1, 2};
      protocol::CrdtMessage m;
      m.type = protocol::MessageType::kPutComponent;
      m.entity = entity;
      m.component = rng.Below(4) == 0 ? protocol::kTransformComponentId : 1000 + rng.Below(3);
      m.timestamp = timestamp;
      m.data = data;
      protocol::AppendMessage(m, out);
    } else {
      // An unknown type: skipped by the decoder's length, refused by the store.
      AppendRaw(out, 12);
      AppendRaw(out, 99);
      AppendRaw(out, entity);
    }
  }
  return out;
}

Reference Replay(const std::vector<uint8_t>& stream) {
  std::vector<protocol::CrdtMessage> messages;
  const Result<void> decoded =
      protocol::DecodeStream(stream, protocol::DecodeOptions{},
                             [&](const protocol::CrdtMessage& m) { messages.push_back(m); });
  EXPECT_TRUE(decoded.has_value());
  runtime::Runtime replica;
  for (const protocol::CrdtMessage& m : messages) (void)replica.ApplyMessage(m);
  replica.Update();
  Reference ref;
  ref.state_hash = replica.store().StateHashHex();
  for (const runtime::NodeInfo& n : replica.transforms().Nodes()) {
    WorldNode w;
    w.entity = n.entity;
    w.parent = n.effective_parent;
    w.parked = n.parked;
    w.placeholder = n.placeholder;
    std::memcpy(w.matrix.data(), &replica.world_matrices()[n.index][0][0], sizeof(w.matrix));
    ref.world.push_back(w);
  }
  return ref;
}

Reference ReadBack(const sc_runtime* rt) {
  Reference ref;
  size_t count = 0;
  const int query = sc_runtime_copy_world(rt, nullptr, nullptr, 0, &count);
  EXPECT_EQ(query, count == 0 ? SC_OK : SC_E_BUFFER_TOO_SMALL);
  std::vector<uint32_t> entities(count);
  std::vector<float> matrices(16 * count);
  EXPECT_EQ(sc_runtime_copy_world(rt, entities.data(), matrices.data(), count, &count), SC_OK)
      << sc_last_error();
  for (size_t i = 0; i < count; ++i) {
    WorldNode w;
    w.entity = entities[i];
    sc_node_info info{};
    info.struct_size = sizeof(info);
    EXPECT_EQ(sc_runtime_node_info(rt, w.entity, &info), SC_OK) << sc_last_error();
    w.parent = info.effective_parent;
    w.parked = info.parked != 0;
    w.placeholder = info.placeholder != 0;
    std::memcpy(w.matrix.data(), &matrices[16 * i], sizeof(w.matrix));
    ref.world.push_back(w);
  }
  char hash[SC_STATE_HASH_CHARS];
  EXPECT_EQ(sc_runtime_state_hash(rt, hash, sizeof(hash)), SC_OK) << sc_last_error();
  ref.state_hash = hash;
  return ref;
}

bool SameBits(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace scenecrdt::capi_test
