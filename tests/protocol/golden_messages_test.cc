// SPDX-License-Identifier: Apache-2.0
// Tests the codec against tests/data/golden-messages.jsonl (bytes written by @dcl/ecs 7.28):
// every line decodes to its listed fields, encoding those fields gives exactly its bytes, and the
// inline PUT fast path agrees with the general decoder on every line.
// Also the entity id packing examples of docs/reference/DCL-CRDT.md section 3.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>

#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/entity_id.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/protocol/transform.h"
#include "tests/protocol/test_util.h"

namespace scenecrdt::protocol {
namespace {

using json::AsU32;
using json::Json;
using json::Member;
using test::GoldenMessage;
using test::OwnedMessage;

// An entity as the reference files write it: a u32 or {"number": N, "version": V}.
std::optional<EntityId> ReadEntity(const Json* v) {
  if (v == nullptr) return std::nullopt;
  if (auto id = AsU32(*v)) return *id;
  const Json* number = Member(*v, "number");
  const Json* version = Member(*v, "version");
  if (number == nullptr || version == nullptr) return std::nullopt;
  auto n = AsU32(*number);
  auto ver = AsU32(*version);
  if (!n || !ver || *n > 0xFFFF || *ver > 0xFFFF) return std::nullopt;
  return *n | (*ver << 16);
}

// Reads `count` floats of `key` (rounded double -> float), or the defaults when absent.
bool ReadFloats(const Json& obj, const char* key, std::initializer_list<float> defaults,
                float* out) {
  const Json* v = Member(obj, key);
  std::size_t i = 0;
  if (v == nullptr) {
    for (float d : defaults) out[i++] = d;
    return true;
  }
  if (!v->is_array() || v->size() != defaults.size()) return false;
  for (const Json& item : *v) {
    if (!item.is_number()) return false;
    out[i++] = static_cast<float>(item.get<double>());
  }
  return true;
}

// The message a golden line describes, built from its fields only (never from `hex`).
std::optional<OwnedMessage> ExpectedMessage(const GoldenMessage& g) {
  struct OpType {
    const char* op;
    MessageType type;
  };
  static constexpr OpType kOps[] = {
      {"put", MessageType::kPutComponent},
      {"delete", MessageType::kDeleteComponent},
      {"delete_entity", MessageType::kDeleteEntity},
      {"append", MessageType::kAppendValue},
      {"put_network", MessageType::kPutComponentNetwork},
      {"delete_network", MessageType::kDeleteComponentNetwork},
      {"delete_entity_network", MessageType::kDeleteEntityNetwork},
  };
  OwnedMessage m;
  bool known = false;
  for (const auto& o : kOps) {
    if (g.op == o.op) {
      m.type = o.type;
      known = true;
    }
  }
  if (!known) return std::nullopt;
  auto entity = ReadEntity(Member(g.json, "entity"));
  if (!entity) return std::nullopt;
  m.entity = *entity;
  if (HasComponent(m.type)) {
    const Json* c = Member(g.json, "componentId");
    auto component = c ? AsU32(*c) : std::optional<uint32_t>(kTransformComponentId);
    const Json* ts = Member(g.json, "timestamp");
    auto timestamp = ts ? AsU32(*ts) : std::nullopt;
    if (!component || !timestamp) return std::nullopt;
    m.component = *component;
    m.timestamp = *timestamp;
  }
  if (HasNetworkId(m.type)) {
    const Json* n = Member(g.json, "networkId");
    auto network_id = n ? AsU32(*n) : std::nullopt;
    if (!network_id) return std::nullopt;
    m.network_id = *network_id;
  }
  if (HasData(m.type)) {
    if (const Json* hex = Member(g.json, "dataHex")) {
      auto bytes = hex->is_string() ? FromHex(hex->get<std::string>()) : std::nullopt;
      if (!bytes) return std::nullopt;
      m.data = *bytes;
    } else {
      float position[3], rotation[4], scale[3];
      if (!ReadFloats(g.json, "position", {0, 0, 0}, position) ||
          !ReadFloats(g.json, "rotation", {0, 0, 0, 1}, rotation) ||
          !ReadFloats(g.json, "scale", {1, 1, 1}, scale)) {
        return std::nullopt;
      }
      Transform t;
      t.position = {position[0], position[1], position[2]};
      t.rotation = {rotation[0], rotation[1], rotation[2], rotation[3]};
      t.scale = {scale[0], scale[1], scale[2]};
      if (Member(g.json, "parent") != nullptr) {
        auto parent = ReadEntity(Member(g.json, "parent"));
        if (!parent) return std::nullopt;
        t.parent = *parent;
      }
      const TransformBytes bytes = StoreTransform(t);
      m.data.assign(bytes.begin(), bytes.end());
    }
  }
  return m;
}

class GoldenMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override { golden_ = test::LoadGoldenMessages(); }
  std::vector<GoldenMessage> golden_;
};

TEST_F(GoldenMessagesTest, FileCoversEverySevenTypes) {
  std::vector<std::string> ops;
  for (const auto& g : golden_) ops.push_back(g.op);
  for (const char* op : {"put", "delete", "delete_entity", "append", "put_network",
                         "delete_network", "delete_entity_network"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
}

TEST_F(GoldenMessagesTest, EachLineDecodesToItsFields) {
  for (const auto& g : golden_) {
    SCOPED_TRACE("golden line " + std::to_string(g.line) + " (" + g.op + ")");
    auto expected = ExpectedMessage(g);
    ASSERT_TRUE(expected.has_value()) << "cannot read the line's fields";
    auto decoded = test::DecodeWhole(g.bytes);
    ASSERT_TRUE(decoded.ok) << decoded.error.detail;
    ASSERT_EQ(decoded.messages.size(), 1u);
    EXPECT_EQ(decoded.messages[0], *expected);
    EXPECT_FALSE(decoded.messages[0].legacy_length);
    EXPECT_STREQ(MessageTypeName(decoded.messages[0].type), g.op.c_str());
  }
}

TEST_F(GoldenMessagesTest, EachLineDecodesWithDecodeMessage) {
  for (const auto& g : golden_) {
    SCOPED_TRACE("golden line " + std::to_string(g.line));
    auto step = DecodeMessage(g.bytes, {});
    ASSERT_TRUE(step.has_value());
    ASSERT_EQ(step->kind, DecodeStep::Kind::kMessage);
    EXPECT_EQ(step->size, g.bytes.size());
    EXPECT_EQ(EncodedSize(step->message), g.bytes.size());
    // Payload views point into the input, right after the fixed fields.
    if (HasData(step->message.type)) {
      EXPECT_EQ(step->message.data.data() + step->message.data.size(),
                g.bytes.data() + g.bytes.size());
    }
  }
}

TEST_F(GoldenMessagesTest, EncodingTheFieldsGivesExactlyTheBytes) {
  for (const auto& g : golden_) {
    SCOPED_TRACE("golden line " + std::to_string(g.line) + " (" + g.op + ")");
    auto expected = ExpectedMessage(g);
    ASSERT_TRUE(expected.has_value());
    std::vector<uint8_t> appended;
    AppendMessage(expected->View(), appended);
    EXPECT_EQ(ToHex(appended), ToHex(g.bytes));
    std::vector<uint8_t> buffer(g.bytes.size() + 7, 0xEE);
    ASSERT_EQ(EncodeMessage(expected->View(), buffer), g.bytes.size());
    EXPECT_EQ(ToHex(std::span<const uint8_t>(buffer).first(g.bytes.size())), ToHex(g.bytes));
    // EncodeMessage writes nothing past the message.
    for (std::size_t i = g.bytes.size(); i < buffer.size(); ++i) EXPECT_EQ(buffer[i], 0xEE);
  }
}

TEST_F(GoldenMessagesTest, TransformPutsMatchAppendTransformPut) {
  int transform_puts = 0;
  for (const auto& g : golden_) {
    if (g.op != "put") continue;
    auto decoded = test::DecodeWhole(g.bytes);
    ASSERT_TRUE(decoded.ok);
    const OwnedMessage& m = decoded.messages.at(0);
    ASSERT_EQ(m.component, kTransformComponentId);
    ASSERT_EQ(m.data.size(), Transform::kSize);
    const Transform t = LoadTransform(std::span<const uint8_t, Transform::kSize>(m.data));
    std::vector<uint8_t> bytes;
    AppendTransformPut(m.entity, m.timestamp, t, bytes);
    EXPECT_EQ(ToHex(bytes), ToHex(g.bytes)) << "golden line " << g.line;
    ++transform_puts;
  }
  EXPECT_GE(transform_puts, 2);
}

// The inline PUT fast path agrees with DecodeMessage on every golden message, every cut of
// it, and at every offset of the golden stream (misaligned starts included).
TEST_F(GoldenMessagesTest, PutFastPathAgreesWithDecodeMessage) {
  for (const auto& g : golden_) {
    for (std::size_t cut = 0; cut <= g.bytes.size(); ++cut) {
      EXPECT_EQ(test::FastPathDisagreement(std::span<const uint8_t>(g.bytes).first(cut), {}), "")
          << "golden line " << g.line << " cut at " << cut;
    }
  }
  const std::vector<uint8_t> stream = test::GoldenStream(golden_);
  EXPECT_EQ(test::FastPathDisagreement(stream, {}), "");
  DecodeOptions small;
  small.max_message_bytes = kMinMaxMessageBytes;
  EXPECT_EQ(test::FastPathDisagreement(stream, small), "");
}

TEST_F(GoldenMessagesTest, WholeStreamDecodesInOrderAndReencodes) {
  std::vector<std::size_t> starts;
  const std::vector<uint8_t> stream = test::GoldenStream(golden_, &starts);
  auto decoded = test::DecodeWhole(stream);
  ASSERT_TRUE(decoded.ok);
  ASSERT_EQ(decoded.messages.size(), golden_.size());
  for (std::size_t i = 0; i < golden_.size(); ++i) {
    auto expected = ExpectedMessage(golden_[i]);
    ASSERT_TRUE(expected.has_value());
    EXPECT_EQ(decoded.messages[i], *expected) << "message " << i;
  }
  EXPECT_EQ(ToHex(test::EncodeAll(decoded.messages)), ToHex(stream));
}

TEST_F(GoldenMessagesTest, FirstTransformPutMatchesTheDocumentedBytes) {
  // docs/reference/DCL-CRDT.md section 1 (a): entity 512, timestamp 1, position (1,2,3), rest
  // identity.
  const std::vector<uint8_t> expected =
      test::Words({68, 1, 512, 1, 1, 44, 0x3f800000, 0x40000000, 0x40400000, 0, 0, 0, 0x3f800000,
                   0x3f800000, 0x3f800000, 0x3f800000, 0});
  ASSERT_FALSE(golden_.empty());
  EXPECT_EQ(ToHex(golden_[0].bytes), ToHex(expected));
  Transform t;
  t.position = {1.0f, 2.0f, 3.0f};
  std::vector<uint8_t> bytes;
  AppendTransformPut(512, 1, t, bytes);
  EXPECT_EQ(ToHex(bytes), ToHex(expected));
}

TEST(EntityIdTest, PacksNumberLowAndVersionHigh) {
  EXPECT_EQ(MakeEntityId(512, 1), 66048u);
  EXPECT_EQ(EntityNumber(66048), 512u);
  EXPECT_EQ(EntityVersion(66048), 1u);
  EXPECT_EQ(MakeEntityId(0xFFFF, 0xFFFF), 0xFFFFFFFFu);
  EXPECT_EQ(EntityNumber(0xABCD1234u), 0x1234u);
  EXPECT_EQ(EntityVersion(0xABCD1234u), 0xABCDu);
  // Out-of-range halves are masked, not carried into the other half.
  EXPECT_EQ(MakeEntityId(0x10200, 0), 0x200u);
  EXPECT_EQ(MakeEntityId(1, 0x10001), 0x10001u);
  // On the wire (512, 1) is 00 02 01 00.
  EXPECT_EQ(ToHex(test::Words({MakeEntityId(512, 1)})), "00020100");
}

TEST(EntityIdTest, ReservedRangeIsBelow512) {
  EXPECT_TRUE(IsReservedEntityNumber(0));
  EXPECT_TRUE(IsReservedEntityNumber(511));
  EXPECT_FALSE(IsReservedEntityNumber(512));
  EXPECT_TRUE(IsReservedEntity(MakeEntityId(2, 7)));
  EXPECT_FALSE(IsReservedEntity(MakeEntityId(512, 0)));
  EXPECT_EQ(kRootEntity, 0u);
  EXPECT_EQ(kPlayerEntity, 1u);
  EXPECT_EQ(kCameraEntity, 2u);
}

}  // namespace
}  // namespace scenecrdt::protocol
