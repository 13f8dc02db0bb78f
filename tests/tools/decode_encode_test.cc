// SPDX-License-Identifier: Apache-2.0
// Tests `scenecrdt decode` and `scenecrdt encode` as a user runs them (the built binary, files
// and stdin): the golden stream prints the expected JSON lines, decode | encode reproduces
// golden, sample and random streams byte for byte (NaN floats, unknown types, legacy lengths),
// the reference ops file encodes to the bytes the protocol library builds, and malformed
// input prints what came before the fault, exits 2 and names the offset and the reason.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "scenecrdt/protocol/byte_order.h"
#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/hex.h"
#include "scenecrdt/protocol/transform.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

using json::AsU32;
using json::Json;
using json::Member;
using protocol::CrdtMessage;
using protocol::MessageType;

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kDataDir = SCENECRDT_TEST_DATA_DIR;
const std::string kExamplesDir = SCENECRDT_EXAMPLES_DIR;

Json ParseOrFail(const std::string& text) {
  auto r = json::ReadJson(text);
  if (!r.has_value()) {
    ADD_FAILURE() << "not JSON (" << r.error().detail << "): " << text;
    return Json();
  }
  return std::move(r).value();
}

// A reference-file entity: a u32 or {"number","version"}.
uint32_t EntityOf(const Json* v) {
  if (v == nullptr) return 0;
  if (auto id = AsU32(*v)) return *id;
  return protocol::MakeEntityId(AsU32(*Member(*v, "number")).value(),
                                AsU32(*Member(*v, "version")).value());
}

// Floats of a reference op (rounded double -> float), or the defaults.
std::vector<float> FloatsOf(const Json& op, const char* key, std::vector<float> defaults) {
  const Json* v = Member(op, key);
  if (v == nullptr) return defaults;
  std::vector<float> out;
  for (const Json& item : *v) out.push_back(static_cast<float>(item.get<double>()));
  return out;
}

protocol::Transform TransformOf(const Json& op) {
  const auto p = FloatsOf(op, "position", {0, 0, 0});
  const auto r = FloatsOf(op, "rotation", {0, 0, 0, 1});
  const auto s = FloatsOf(op, "scale", {1, 1, 1});
  protocol::Transform t;
  t.position = {p.at(0), p.at(1), p.at(2)};
  t.rotation = {r.at(0), r.at(1), r.at(2), r.at(3)};
  t.scale = {s.at(0), s.at(1), s.at(2)};
  t.parent = EntityOf(Member(op, "parent"));
  return t;
}

std::vector<Json> GoldenLines() {
  std::vector<Json> out;
  for (const std::string& line : Lines(ReadText(kDataDir + "/golden-messages.jsonl"))) {
    if (!line.empty()) out.push_back(ParseOrFail(line));
  }
  return out;
}

std::vector<uint8_t> GoldenStream() {
  std::vector<uint8_t> out;
  for (const Json& g : GoldenLines()) {
    auto bytes = protocol::FromHex(Member(g, "hex")->get<std::string>());
    out.insert(out.end(), bytes->begin(), bytes->end());
  }
  return out;
}

class DecodeEncodeTest : public ::testing::Test {
 protected:
  // decode(bytes) | encode must give bytes back.
  void ExpectRoundTrip(const std::vector<uint8_t>& bytes, const std::string& what) {
    SCOPED_TRACE(what);
    const auto in = scratch_.File("in.bin");
    const auto jsonl = scratch_.File("decoded.jsonl");
    const auto out = scratch_.File("out.bin");
    WriteBytes(in, bytes);
    const RunResult decoded = RunProcess(kCli, {"decode", in.string()}, scratch_);
    ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
    EXPECT_EQ(decoded.err, "");
    WriteText(jsonl, decoded.out);
    const RunResult encoded =
        RunProcess(kCli, {"encode", jsonl.string(), "-o", out.string()}, scratch_);
    ASSERT_EQ(encoded.exit_code, 0) << encoded.err;
    EXPECT_EQ(protocol::ToHex(ReadBytes(out)), protocol::ToHex(bytes));
  }

  ScratchDir scratch_;
};

TEST_F(DecodeEncodeTest, DecodePrintsTheGoldenStreamAsJsonLines) {
  const auto golden = GoldenLines();
  ASSERT_EQ(golden.size(), 8u);
  const auto in = scratch_.File("golden.bin");
  WriteBytes(in, GoldenStream());
  const RunResult r = RunProcess(kCli, {"decode", in.string()}, scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), golden.size());

  // The first line, exactly in the format of docs/CLI.md.
  EXPECT_EQ(lines[0],
            R"({"type":"put","entity":512,"number":512,"version":0,"component":1,"timestamp":1,)"
            R"("dataHex":"0000803f00000040000040400000000000000000000000000000803f0000803f)"
            R"(0000803f0000803f00000000","transform":{"position":[1,2,3],"rotation":[0,0,0,1],)"
            R"("scale":[1,1,1],"parent":0}})");

  for (std::size_t i = 0; i < golden.size(); ++i) {
    SCOPED_TRACE(lines[i]);
    const Json& g = golden[i];
    const Json line = ParseOrFail(lines[i]);
    const std::string op = Member(g, "op")->get<std::string>();
    const auto type_code = static_cast<MessageType>(
        protocol::LoadU32Le(protocol::FromHex(Member(g, "hex")->get<std::string>())->data() + 4));
    EXPECT_EQ(Member(line, "type")->get<std::string>(), op);
    const uint32_t entity = EntityOf(Member(g, "entity"));
    EXPECT_EQ(AsU32(*Member(line, "entity")), entity);
    EXPECT_EQ(AsU32(*Member(line, "number")), protocol::EntityNumber(entity));
    EXPECT_EQ(AsU32(*Member(line, "version")), protocol::EntityVersion(entity));
    if (protocol::HasComponent(type_code)) {
      const Json* component = Member(g, "componentId");
      EXPECT_EQ(AsU32(*Member(line, "component")), component ? *AsU32(*component) : 1u);
      EXPECT_EQ(AsU32(*Member(line, "timestamp")), AsU32(*Member(g, "timestamp")));
    } else {
      EXPECT_EQ(Member(line, "component"), nullptr);
      EXPECT_EQ(Member(line, "timestamp"), nullptr);
    }
    if (protocol::HasNetworkId(type_code)) {
      EXPECT_EQ(AsU32(*Member(line, "networkId")), AsU32(*Member(g, "networkId")));
    } else {
      EXPECT_EQ(Member(line, "networkId"), nullptr);
    }
    if (!protocol::HasData(type_code)) {
      EXPECT_EQ(Member(line, "dataHex"), nullptr);
      EXPECT_EQ(Member(line, "transform"), nullptr);
      continue;
    }
    // The payload is the tail of the golden bytes after the fixed fields.
    const std::string hex = Member(g, "hex")->get<std::string>();
    const std::string payload_hex = hex.substr(2 * protocol::BaseSize(type_code));
    EXPECT_EQ(Member(line, "dataHex")->get<std::string>(), payload_hex);
    if (const Json* data = Member(g, "dataHex")) {
      EXPECT_EQ(Member(line, "dataHex")->get<std::string>(), data->get<std::string>());
      EXPECT_EQ(Member(line, "transform"), nullptr);  // APPEND is never shown as a Transform
      continue;
    }
    const Json* t = Member(line, "transform");
    ASSERT_NE(t, nullptr);
    const protocol::Transform expected = TransformOf(g);
    const float want[] = {expected.position.x, expected.position.y, expected.position.z,
                          expected.rotation.x, expected.rotation.y, expected.rotation.z,
                          expected.rotation.w, expected.scale.x,    expected.scale.y,
                          expected.scale.z};
    std::vector<float> got;
    for (const char* key : {"position", "rotation", "scale"}) {
      for (const Json& f : *Member(*t, key)) {
        ASSERT_TRUE(f.is_number()) << key;
        got.push_back(static_cast<float>(f.get<double>()));
      }
    }
    ASSERT_EQ(got.size(), 10u);
    for (std::size_t k = 0; k < 10; ++k) {
      EXPECT_EQ(std::bit_cast<uint32_t>(got[k]), std::bit_cast<uint32_t>(want[k])) << "float " << k;
    }
    EXPECT_EQ(AsU32(*Member(*t, "parent")), expected.parent);
  }
}

TEST_F(DecodeEncodeTest, DecodeReadsStdin) {
  const auto in = scratch_.File("golden.bin");
  WriteBytes(in, GoldenStream());
  const RunResult from_file = RunProcess(kCli, {"decode", in.string()}, scratch_);
  const RunResult dash = RunProcess(kCli, {"decode", "-"}, scratch_, in);
  const RunResult no_arg = RunProcess(kCli, {"decode"}, scratch_, in);
  ASSERT_EQ(from_file.exit_code, 0);
  EXPECT_EQ(dash.exit_code, 0) << dash.err;
  EXPECT_EQ(no_arg.exit_code, 0) << no_arg.err;
  EXPECT_EQ(dash.out, from_file.out);
  EXPECT_EQ(no_arg.out, from_file.out);
  // An empty stream is valid and prints nothing.
  const RunResult empty = RunProcess(kCli, {"decode", "-"}, scratch_);
  EXPECT_EQ(empty.exit_code, 0);
  EXPECT_EQ(empty.out, "");
}

TEST_F(DecodeEncodeTest, EncodeWritesStdoutAndReadsStdin) {
  const std::string line = R"({"type":"delete","entity":66048,"component":1,"timestamp":8})"
                           "\n";
  const auto jsonl = scratch_.File("one.jsonl");
  WriteText(jsonl, line);
  const RunResult r = RunProcess(kCli, {"encode", "-", "-o", "-"}, scratch_, jsonl);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(protocol::ToHex(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(r.out.data()),
                                                     r.out.size())),
            "1400000002000000000201000100000008000000");
}

TEST_F(DecodeEncodeTest, GoldenStreamRoundTrips) { ExpectRoundTrip(GoldenStream(), "golden"); }

TEST_F(DecodeEncodeTest, SampleSceneRoundTrips) {
  const auto sample = ReadBytes(kExamplesDir + "/sample_scene.dcl");
  ASSERT_FALSE(sample.empty());
  ExpectRoundTrip(sample, "examples/sample_scene.dcl");
  // The bundled JSON lines are that stream's source.
  const auto out = scratch_.File("sample.bin");
  const RunResult r = RunProcess(
      kCli, {"encode", kExamplesDir + "/sample_scene.jsonl", "-o", out.string()}, scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadBytes(out), sample);
}

// Random valid streams: every type, unknown types, legacy lengths, empty and Transform-sized
// payloads, and Transforms full of NaN payloads, infinities, -0 and subnormals.
std::vector<uint8_t> RandomStream(uint32_t seed) {
  std::mt19937 rng(seed);
  auto u32 = [&] { return static_cast<uint32_t>(rng()); };
  auto below = [&](uint32_t n) { return u32() % n; };
  const uint32_t special_floats[] = {0x7fc00000u, 0x7fc00001u, 0xffc00000u, 0x7f800001u,
                                     0xff812345u, 0x7f800000u, 0xff800000u, 0x80000000u,
                                     0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x3dcccccdu};
  std::vector<uint8_t> stream;
  const uint32_t count = 20 + below(40);
  for (uint32_t i = 0; i < count; ++i) {
    CrdtMessage m;
    std::vector<uint8_t> data;
    const uint32_t kind = below(10);
    m.type = kind < 7 ? static_cast<MessageType>(kind + 1)
                      : static_cast<MessageType>(kind == 7 ? 8 + below(100) : u32() | 0x100);
    if (protocol::IsKnownType(m.type)) m.entity = below(2) ? u32() : 512 + below(64);
    if (protocol::HasComponent(m.type)) {
      m.component = below(3) ? protocol::kTransformComponentId : u32();
      m.timestamp = u32();
    }
    if (protocol::HasNetworkId(m.type)) m.network_id = u32();
    if (m.type == MessageType::kDeleteEntityNetwork) m.legacy_length = below(2) == 0;
    if (protocol::HasData(m.type) || !protocol::IsKnownType(m.type)) {
      const uint32_t shape = below(4);
      const std::size_t size = shape == 0 ? 0 : shape == 1 ? below(70) : protocol::Transform::kSize;
      for (std::size_t k = 0; k < size; ++k) data.push_back(static_cast<uint8_t>(u32()));
      if (size == protocol::Transform::kSize) {
        for (std::size_t f = 0; f < 10; ++f) {
          if (below(3) == 0) {
            protocol::StoreU32Le(data.data() + 4 * f, special_floats[below(12)]);
          }
        }
      }
    }
    m.data = data;
    protocol::AppendMessage(m, stream);
  }
  return stream;
}

TEST_F(DecodeEncodeTest, RandomValidStreamsRoundTrip) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const auto stream = RandomStream(seed);
    // The generator makes valid streams.
    bool valid = protocol::DecodeStream(stream, {}, [](const CrdtMessage&) {}).has_value();
    ASSERT_TRUE(valid) << "seed " << seed;
    ExpectRoundTrip(stream, "seed " + std::to_string(seed));
  }
}

TEST_F(DecodeEncodeTest, LongStreamsRoundTripAcrossReadChunks) {
  // Well past the 64 KiB read chunk, with messages straddling every chunk boundary.
  std::vector<uint8_t> stream;
  for (uint32_t seed = 100; stream.size() < 200 * 1024; ++seed) {
    const auto part = RandomStream(seed);
    stream.insert(stream.end(), part.begin(), part.end());
  }
  ExpectRoundTrip(stream, "long stream");
}

TEST_F(DecodeEncodeTest, ConflictOpsEncodeToTheProtocolBytes) {
  const std::string path = kDataDir + "/conflicts.ops.json";
  const Json doc = ParseOrFail(ReadText(path));
  const Json* ops = Member(doc, "ops");
  ASSERT_NE(ops, nullptr);
  ASSERT_GT(ops->size(), 5u);
  std::vector<uint8_t> expected;
  for (const Json& op : *ops) {
    const std::string name = Member(op, "op")->get<std::string>();
    const uint32_t entity = EntityOf(Member(op, "entity"));
    if (name == "put") {
      protocol::AppendTransformPut(entity, *AsU32(*Member(op, "timestamp")), TransformOf(op),
                                   expected);
    } else if (name == "delete") {
      CrdtMessage m;
      m.type = MessageType::kDeleteComponent;
      m.entity = entity;
      m.component = protocol::kTransformComponentId;
      m.timestamp = *AsU32(*Member(op, "timestamp"));
      protocol::AppendMessage(m, expected);
    } else {
      ASSERT_EQ(name, "delete_entity");
      CrdtMessage m;
      m.type = MessageType::kDeleteEntity;
      m.entity = entity;
      protocol::AppendMessage(m, expected);
    }
  }
  const auto out = scratch_.File("conflicts.bin");
  const RunResult r = RunProcess(kCli, {"encode", path, "-o", out.string()}, scratch_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(protocol::ToHex(ReadBytes(out)), protocol::ToHex(expected));
  // And it decodes to one line per op.
  const RunResult decoded = RunProcess(kCli, {"decode", out.string()}, scratch_);
  ASSERT_EQ(decoded.exit_code, 0);
  EXPECT_EQ(Lines(decoded.out).size(), ops->size());
}

struct Malformed {
  std::string name;
  std::vector<uint8_t> tail;  // appended after the golden stream
  std::vector<std::string> options;
  std::string reason;  // ErrorCodeName in the message
};

std::vector<uint8_t> LeWords(std::initializer_list<uint32_t> words) {
  std::vector<uint8_t> out;
  for (uint32_t w : words) {
    uint8_t b[4];
    protocol::StoreU32Le(b, w);
    out.insert(out.end(), b, b + 4);
  }
  return out;
}

TEST_F(DecodeEncodeTest, MalformedInputPrintsWhatCameBeforeAndExits2) {
  const auto golden = GoldenStream();
  const RunResult clean = [&] {
    WriteBytes(scratch_.File("clean.bin"), golden);
    return RunProcess(kCli, {"decode", scratch_.File("clean.bin").string()}, scratch_);
  }();
  ASSERT_EQ(clean.exit_code, 0);

  const std::vector<Malformed> cases = {
      {"dataLength mismatch", LeWords({30, 1, 512, 1, 1, 7, 0}), {}, "data_length_mismatch"},
      {"length below header", LeWords({4, 1, 0}), {}, "length_too_small"},
      {"unknown type length 0", LeWords({0, 99, 0}), {}, "length_too_small"},
      {"fixed size mismatch", LeWords({21, 2, 512, 1, 1, 0}), {}, "length_mismatch"},
      {"huge length", LeWords({0xFFFFFFF0u, 1, 512, 1, 1}), {}, "length_too_large"},
      {"above --max-message-bytes",
       LeWords({100, 99, 0}),
       {"--max-message-bytes", "99"},
       "length_too_large"},
      {"unknown with --reject-unknown",
       LeWords({8, 99}),
       {"--reject-unknown"},
       "unknown_message_type"},
      {"truncated", LeWords({20, 2, 512, 1}), {}, "truncated"},
      {"truncated header", {0x14, 0x00}, {}, "truncated"},
  };
  for (const Malformed& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<uint8_t> bytes = golden;
    bytes.insert(bytes.end(), c.tail.begin(), c.tail.end());
    const auto in = scratch_.File("bad.bin");
    WriteBytes(in, bytes);
    std::vector<std::string> args = {"decode", in.string()};
    args.insert(args.end(), c.options.begin(), c.options.end());
    const RunResult r = RunProcess(kCli, args, scratch_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.out, clean.out);  // every message before the fault, nothing after
    EXPECT_NE(r.err.find("byte offset " + std::to_string(golden.size())), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(c.reason), std::string::npos) << r.err;
  }
}

TEST_F(DecodeEncodeTest, MalformedInputBeyondTheFirstReadChunkNamesTheStreamOffset) {
  const auto golden = GoldenStream();
  std::vector<uint8_t> bytes;
  int copies = 0;
  while (bytes.size() < 150 * 1024) {
    bytes.insert(bytes.end(), golden.begin(), golden.end());
    ++copies;
  }
  const std::size_t fault = bytes.size();
  const auto bad = LeWords({13, 2, 512, 1, 1});
  bytes.insert(bytes.end(), bad.begin(), bad.end());
  const auto in = scratch_.File("long-bad.bin");
  WriteBytes(in, bytes);
  const RunResult r = RunProcess(kCli, {"decode", in.string()}, scratch_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(Lines(r.out).size(), static_cast<std::size_t>(copies) * 8);
  EXPECT_NE(r.err.find("byte offset " + std::to_string(fault)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("length_mismatch"), std::string::npos) << r.err;

  // Cut inside the last message instead: the offset is where that message starts.
  bytes.resize(fault - 10);
  WriteBytes(in, bytes);
  const RunResult cut = RunProcess(kCli, {"decode", in.string()}, scratch_);
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_EQ(Lines(cut.out).size(), static_cast<std::size_t>(copies) * 8 - 1);
  EXPECT_NE(cut.err.find("byte offset " + std::to_string(fault - 16)), std::string::npos)
      << cut.err;
  EXPECT_NE(cut.err.find("truncated"), std::string::npos) << cut.err;
}

TEST_F(DecodeEncodeTest, EncodeRefusesBadLinesNamingTheLine) {
  struct Case {
    std::string text;
    std::string expect;
  };
  const Case cases[] = {
      {"{\"type\":\"delete\",\"entity\":1,\"timestamp\":1}\n{\"type\":\"put\",", "line 2"},
      {"{\"type\":\"nope\",\"entity\":1}\n", "line 1"},
      {"{\"type\":\"delete\",\"entity\":1}\n", "timestamp"},
      {"\n\n{\"type\":\"put\",\"entity\":1,\"timestamp\":1,\"dataHex\":\"abc\"}\n", "line 3"},
      {"{\"type\":\"unknown\",\"typeCode\":3,\"bodyHex\":\"\"}\n", "typeCode"},
      {"{\"type\":\"delete\",\"entity\":4294967296,\"timestamp\":1}\n", "line 1"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const auto in = scratch_.File("bad.jsonl");
    const auto out = scratch_.File("bad.bin");
    WriteText(in, c.text);
    const RunResult r = RunProcess(kCli, {"encode", in.string(), "-o", out.string()}, scratch_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
