// SPDX-License-Identifier: Apache-2.0
// Tests the bounded-memory reading of stream files (tools/cli/stream/stream_reader.h, MergeFiles in
// stream_files.h): windows cut at every offset of a small stream, through mmap and through
// read(), give exactly what a whole-buffer decode and merge give; truncated and corrupt tails
// fail with the offset of the faulty message; and the --max-memory-mb bound of the commands
// that hold their input (replay --shuffle, converge) is enforced with a clear error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/protocol/crdt_codec.h"
#include "scenecrdt/protocol/transform.h"
#include "scenecrdt/replay/state_json.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "tests/tools/subprocess.h"
#include "tools/cli/stream/stream_files.h"
#include "tools/cli/stream/stream_reader.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

using cli::ForEachMessage;
using cli::WindowOptions;
using protocol::CrdtMessage;
using protocol::MessageType;

// One of every kind: Transform and opaque PUTs, DELETE_COMPONENT, DELETE_ENTITY, APPEND_VALUE,
// a network PUT, an unknown type (skipped, but delivered as unknown).
std::vector<uint8_t> SampleStream() {
  std::vector<uint8_t> out;
  protocol::Transform t = protocol::kIdentityTransform;
  for (uint32_t i = 0; i < 4; ++i) {
    t.position = {static_cast<float>(i), 1.5f, -2.0f};
    protocol::AppendTransformPut(512 + i, 1 + i, t, out);
  }
  const std::vector<uint8_t> blob = {1, 2, 3, 4, 5, 6, 7};
  protocol::AppendMessage({MessageType::kPutComponent, 513, 1100, 3, 0, blob, false}, out);
  protocol::AppendMessage({MessageType::kDeleteComponent, 514, 1, 9, 0, {}, false}, out);
  protocol::AppendMessage({MessageType::kAppendValue, 515, 1200, 2, 0, blob, false}, out);
  protocol::AppendMessage({MessageType::kDeleteEntity, 512, 0, 0, 0, {}, false}, out);
  protocol::AppendMessage({MessageType::kPutComponentNetwork, 516, 1100, 4, 77, blob, false}, out);
  const uint8_t unknown[] = {12, 0, 0, 0, 99, 0, 0, 0, 1, 2, 3, 4};  // type 99, 4-byte body
  out.insert(out.end(), std::begin(unknown), std::end(unknown));
  t.parent = 515;
  protocol::AppendTransformPut(517 | (1u << 16), 2, t, out);
  return out;
}

// A comparable line per message.
std::string Describe(const CrdtMessage& m) {
  std::string s = std::to_string(static_cast<int>(m.type)) + " " + std::to_string(m.entity) + " " +
                  std::to_string(m.component) + " " + std::to_string(m.timestamp) + " " +
                  std::to_string(m.network_id) + " :";
  for (uint8_t b : m.data) s += " " + std::to_string(b);
  return s;
}

std::vector<std::string> WholeBuffer(std::span<const uint8_t> bytes) {
  std::vector<std::string> out;
  EXPECT_TRUE(protocol::DecodeStream(bytes, protocol::DecodeOptions{}, [&](const CrdtMessage& m) {
                out.push_back(Describe(m));
              }).has_value());
  return out;
}

std::string StateJson(const runtime::CrdtStore& store) {
  std::string out;
  replay::AppendStateJsonBody(store, {}, out);
  return out;
}

TEST(StreamWindowsTest, EveryWindowSizeGivesTheWholeBufferResult) {
  ScratchDir scratch;
  const std::vector<uint8_t> bytes = SampleStream();
  const auto file = scratch.File("sample.dcl");
  WriteBytes(file, bytes);
  const std::vector<std::string> expected = WholeBuffer(bytes);
  ASSERT_EQ(expected.size(), 11u);
  runtime::CrdtStore whole;
  ASSERT_TRUE(whole.MergeStream(bytes).has_value());
  const std::string expected_state = StateJson(whole);

  for (const bool force_read : {false, true}) {
    for (std::size_t window = 1; window <= bytes.size() + 1; ++window) {
      SCOPED_TRACE("window " + std::to_string(window) + (force_read ? " read()" : " mmap"));
      const WindowOptions options{window, force_read};
      std::vector<std::string> got;
      auto r = ForEachMessage(file.string(), protocol::DecodeOptions{}, options,
                              [&](const CrdtMessage& m) { got.push_back(Describe(m)); });
      ASSERT_TRUE(r.has_value()) << r.error().detail;
      EXPECT_EQ(got, expected);

      runtime::CrdtStore store;
      cli::LoadError load_error;
      auto merged = cli::MergeFiles(
          {file.string()},
          [&](std::span<const uint8_t> w) -> Result<void> {
            return store.MergeStream(w, protocol::DecodeOptions{},
                                     [](const CrdtMessage&, const runtime::MergeResult&) {});
          },
          &load_error, options);
      ASSERT_TRUE(merged.has_value()) << merged.error().detail;
      EXPECT_EQ(StateJson(store), expected_state);
    }
  }
}

TEST(StreamWindowsTest, TruncatedTailsNameTheCutMessage) {
  ScratchDir scratch;
  const std::vector<uint8_t> bytes = SampleStream();
  // Offsets of the last message (a 68-byte Transform PUT) and of the one before it.
  const std::size_t last = bytes.size() - 68;
  for (const std::size_t cut :
       {std::size_t{1}, std::size_t{4}, std::size_t{8}, std::size_t{30}, std::size_t{67}}) {
    const std::vector<uint8_t> truncated(bytes.begin(), bytes.end() - cut);
    const auto file = scratch.File("cut.dcl");
    WriteBytes(file, truncated);
    for (const bool force_read : {false, true}) {
      for (const std::size_t window : {std::size_t{3}, std::size_t{64}, std::size_t{1} << 20}) {
        SCOPED_TRACE("cut " + std::to_string(cut) + " window " + std::to_string(window) +
                     (force_read ? " read()" : " mmap"));
        std::size_t delivered = 0;
        auto r = ForEachMessage(file.string(), protocol::DecodeOptions{},
                                WindowOptions{window, force_read},
                                [&](const CrdtMessage&) { ++delivered; });
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, ErrorCode::kTruncated);
        EXPECT_EQ(r.error().offset, last);
        EXPECT_EQ(delivered, 10u);  // everything before the cut message
      }
    }
  }
  // Through the command: the file, the offset and the reason.
  const auto file = scratch.File("cut.dcl");
  WriteBytes(file, std::vector<uint8_t>(bytes.begin(), bytes.end() - 5));
  const RunResult r = RunProcess(kCli, {"replay", file.string()}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cut.dcl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte offset " + std::to_string(last)), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cut short"), std::string::npos) << r.err;
}

TEST(StreamWindowsTest, CorruptTailsNameTheFaultyMessage) {
  ScratchDir scratch;
  const std::vector<uint8_t> good = SampleStream();
  const std::size_t last = good.size() - 68;
  struct Case {
    const char* name;
    std::size_t at;
    uint8_t value;
    ErrorCode code;
  };
  for (const Case& c : {Case{"length below 8", last, 3, ErrorCode::kLengthTooSmall},
                        Case{"data length", last + 20, 43, ErrorCode::kDataLengthMismatch}}) {
    std::vector<uint8_t> bytes = good;
    bytes[c.at] = c.value;
    const auto file = scratch.File("corrupt.dcl");
    WriteBytes(file, bytes);
    for (const bool force_read : {false, true}) {
      for (const std::size_t window : {std::size_t{5}, std::size_t{100}, std::size_t{1} << 20}) {
        SCOPED_TRACE(std::string(c.name) + " window " + std::to_string(window));
        auto r = ForEachMessage(file.string(), protocol::DecodeOptions{},
                                WindowOptions{window, force_read}, [](const CrdtMessage&) {});
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error().code, c.code);
        EXPECT_EQ(r.error().offset, last);
      }
    }
    const RunResult r = RunProcess(kCli, {"replay", file.string()}, scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("byte offset " + std::to_string(last)), std::string::npos) << r.err;
  }
}

TEST(StreamWindowsTest, StdinStreamsAndHeldInputsAreBounded) {
  ScratchDir scratch;
  // 20 000 Transform PUTs: 1.36 MB, over a 1 MiB bound once held.
  const auto stream = scratch.File("bench.dcl");
  RunResult r = RunProcess(
      kCli, {"bench", "stream", "-o", stream.string(), "--entities", "1000", "--updates", "20"},
      scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const RunResult in_order = RunProcess(kCli, {"replay", stream.string()}, scratch);
  ASSERT_EQ(in_order.exit_code, 0) << in_order.err;
  const RunResult from_stdin = RunProcess(kCli, {"replay", "-"}, scratch, stream);
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  EXPECT_EQ(from_stdin.out, in_order.out);
  // In order the input is never held, so the bound does not apply.
  const RunResult bounded =
      RunProcess(kCli, {"replay", stream.string(), "--max-memory-mb", "1"}, scratch);
  EXPECT_EQ(bounded.exit_code, 0) << bounded.err;
  EXPECT_EQ(bounded.out, in_order.out);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"replay", stream.string(), "--shuffle", "3", "--max-memory-mb",
                                 "1"},
        std::vector<std::string>{"converge", stream.string(), "--trials", "1", "--max-memory-mb",
                                 "1"}}) {
    r = RunProcess(kCli, args, scratch);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_NE(r.err.find("--max-memory-mb 1 "), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << args[0];
  }
  r = RunProcess(kCli, {"replay", stream.string(), "--shuffle", "3", "--max-memory-mb", "4"},
                 scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, in_order.out);
}

}  // namespace
}  // namespace scenecrdt::tools::test
