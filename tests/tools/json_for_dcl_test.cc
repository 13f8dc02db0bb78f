// SPDX-License-Identifier: Apache-2.0
// Tests that every command reading a DCL stream (decode, replay, inspect, converge, send,
// bench merge) tells a JSON file given in its place: exit 2, the decoder's error, then "this
// looks like JSON lines; use `scenecrdt encode`"; and that binary garbage gets no such hint.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kExamplesDir = SCENECRDT_EXAMPLES_DIR;
const std::string kDataDir = SCENECRDT_TEST_DATA_DIR;
constexpr const char* kHint = "this looks like JSON lines; use `scenecrdt encode";

// Each command with FILE in its place (send refuses the file before connecting anywhere).
std::vector<std::vector<std::string>> Commands(const std::string& file) {
  return {{"decode", file},
          {"replay", file},
          {"inspect", file},
          {"converge", file, "--trials", "1"},
          {"send", "--server", "tcp://127.0.0.1:1", "--scene", "s", file},
          {"bench", "merge", file, "--repeat", "1"}};
}

TEST(JsonForDclTest, EveryStreamCommandNamesTheMixUp) {
  ScratchDir scratch;
  const auto padded = scratch.File("padded.jsonl");
  WriteText(padded, "\n  \t" + ReadText(kExamplesDir + "/sample_scene.jsonl"));
  for (const std::string& file :
       {kExamplesDir + "/sample_scene.jsonl", kDataDir + "/conflicts.ops.json", padded.string()}) {
    for (const auto& args : Commands(file)) {
      SCOPED_TRACE(args[0] + " " + file);
      const RunResult r = RunProcess(kCli, args, scratch);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_NE(r.err.find("length_too_large"), std::string::npos) << r.err;
      EXPECT_NE(r.err.find(kHint), std::string::npos) << r.err;
    }
  }
  // From stdin too.
  const RunResult piped =
      RunProcess(kCli, {"decode"}, scratch, kExamplesDir + "/sample_scene.jsonl");
  EXPECT_EQ(piped.exit_code, 2);
  EXPECT_NE(piped.err.find(kHint), std::string::npos) << piped.err;
}

TEST(JsonForDclTest, OtherMalformedInputGetsNoHint) {
  ScratchDir scratch;
  const auto garbage = scratch.File("garbage.bin");
  // A text that is not JSON-like, and binary bytes that are not a DCL stream.
  for (const std::string& content :
       {std::string("hello, this is text\n"), std::string("{\x01\x02\x03 binary", 12),
        std::string("\xff\xff\xff\xff\x01\x00\x00\x00", 8)}) {
    WriteText(garbage, content);
    for (const auto& args : Commands(garbage.string())) {
      SCOPED_TRACE(args[0]);
      const RunResult r = RunProcess(kCli, args, scratch);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.err.find(kHint), std::string::npos) << r.err;
    }
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
