// SPDX-License-Identifier: Apache-2.0
// Tests the replay-family commands through the built binary: replay (in order, shuffled,
// --world, large states, unwritable output), converge (single store and --replicas), gen and
// inspect; and the schedule shrinker behind converge's failure report.
#include <gtest/gtest.h>

#include <algorithm>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "scenecrdt/runtime/crdt_store.h"
#include "scenecrdt/testing/bench_streams.h"
#include "tests/tools/subprocess.h"
#include "tools/cli/stream/schedule_shrink.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kData = SCENECRDT_TEST_DATA_DIR;

// Encodes the reference conflict case (ops JSON) into a stream file.
std::filesystem::path ConflictStream(const ScratchDir& scratch) {
  const auto path = scratch.File("conflicts.dcl");
  const RunResult r =
      RunProcess(kCli, {"encode", kData + "/conflicts.ops.json", "-o", path.string()}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return path;
}

using json::AsU32;
using json::Member;

json::Json Json(const std::string& text) {
  auto v = json::ReadJson(text);
  EXPECT_TRUE(v.has_value());
  return v.has_value() ? *v : json::Json();
}

TEST(ReplayCommandTest, ShuffledReplaysGiveTheSameStateAndWorld) {
  ScratchDir scratch;
  const auto stream = ConflictStream(scratch);
  const RunResult in_order = RunProcess(kCli, {"replay", stream.string(), "--world"}, scratch);
  ASSERT_EQ(in_order.exit_code, 0) << in_order.err;
  const json::Json base = Json(in_order.out);
  ASSERT_NE(Member(base, "world"), nullptr);
  for (int seed = 1; seed <= 5; ++seed) {
    const RunResult r = RunProcess(
        kCli, {"replay", stream.string(), "--world", "--shuffle", std::to_string(seed)}, scratch);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, in_order.out) << "seed " << seed;
  }
  // The loop 603 <-> 604 is parked at the root; 606 hangs under 600.
  int parked = 0;
  for (const auto& node : *Member(base, "world")) {
    const uint32_t entity = *AsU32(*Member(node, "entity"));
    if (entity == 603 || entity == 604) {
      EXPECT_TRUE(Member(node, "parked")->get<bool>());
      EXPECT_EQ(*AsU32(*Member(node, "parent")), 0u);
      ++parked;
    }
    if (entity == 606) {
      EXPECT_EQ(*AsU32(*Member(node, "parent")), 600u);
    }
    EXPECT_EQ(Member(node, "localToWorld")->size(), 16u);
  }
  EXPECT_EQ(parked, 2);
}

TEST(ReplayCommandTest, MalformedInputNamesTheFileAndOffset) {
  ScratchDir scratch;
  const auto bad = scratch.File("bad.dcl");
  WriteBytes(bad, std::vector<uint8_t>{0x04, 0, 0, 0, 0x01, 0, 0, 0});
  const RunResult r = RunProcess(kCli, {"replay", bad.string()}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad.dcl"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("byte offset 0"), std::string::npos) << r.err;
}

// A state of some MB leaves in many chunks: the text is whole, valid JSON, and its hash is the
// one of the same messages merged in this process.
TEST(ReplayCommandTest, LargeStatesArePrintedWhole) {
  ScratchDir scratch;
  const auto path = scratch.File("large.dcl");
  const std::vector<uint8_t> bytes = testing::MakeTransformPutStream(6000, 3, 11);
  WriteBytes(path, bytes);
  runtime::CrdtStore store;
  ASSERT_TRUE(store.MergeStream(bytes).has_value());
  const RunResult r = RunProcess(kCli, {"replay", path.string()}, scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.out.size(), std::size_t{1} << 20);
  const json::Json state = Json(r.out);
  ASSERT_TRUE(state.is_object());
  EXPECT_EQ(Member(state, "transforms")->size(), 6000u);
  EXPECT_EQ(Member(state, "entities")->size(), 6000u);
  EXPECT_EQ(Member(state, "stateHash")->get<std::string>(), store.StateHashHex());
}

// Output that cannot be written fails with a reason, not silently.
TEST(ReplayCommandTest, AnUnwritableStdoutIsReported) {
  ScratchDir scratch;
  const auto stream = ConflictStream(scratch);
  const RunResult r = RunProcess(
      "/bin/sh", {"-c", "exec \"$0\" replay \"$1\" > /dev/full", kCli, stream.string()}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot write the state to stdout"), std::string::npos) << r.err;
}

TEST(ConvergeCommandTest, SingleStoreAndReplicaSchedulesConverge) {
  ScratchDir scratch;
  const auto stream = ConflictStream(scratch);
  const RunResult single =
      RunProcess(kCli, {"converge", stream.string(), "--trials", "200", "--seed", "3"}, scratch);
  EXPECT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(single.out.rfind("converged: 200 schedules", 0), 0u) << single.out;
  const RunResult replicas = RunProcess(
      kCli, {"converge", stream.string(), "--replicas", "3", "--trials", "200"}, scratch);
  EXPECT_EQ(replicas.exit_code, 0) << replicas.err;
  EXPECT_NE(replicas.out.find("world matrices bitwise equal"), std::string::npos) << replicas.out;
  // Both report the in-order state hash.
  const RunResult replay = RunProcess(kCli, {"replay", stream.string()}, scratch);
  const std::string hash = Member(Json(replay.out), "stateHash")->get<std::string>();
  EXPECT_NE(single.out.find(hash), std::string::npos);
  EXPECT_NE(replicas.out.find(hash), std::string::npos);
}

TEST(ConvergeCommandTest, RejectsBadProbabilities) {
  ScratchDir scratch;
  const auto stream = ConflictStream(scratch);
  EXPECT_EQ(
      RunProcess(kCli, {"converge", stream.string(), "--duplicate", "1.5"}, scratch).exit_code, 2);
  EXPECT_EQ(RunProcess(kCli, {"converge", stream.string(), "--replicas", "0"}, scratch).exit_code,
            2);
}

TEST(ScheduleShrinkTest, FindsAOneMinimalFailingSubsequence) {
  // Fails when both 7 and 3 are present with 7 before 3.
  auto fails = [](const std::vector<int>& s) {
    auto seven = std::find(s.begin(), s.end(), 7);
    return seven != s.end() && std::find(seven, s.end(), 3) != s.end();
  };
  std::vector<int> schedule;
  for (int i = 0; i < 40; ++i) schedule.push_back(i % 10);
  ASSERT_TRUE(fails(schedule));
  const auto shrunk = cli::ShrinkSchedule(schedule, fails);
  EXPECT_EQ(shrunk, (std::vector<int>{7, 3}));
  // Already minimal input stays as it is.
  EXPECT_EQ(cli::ShrinkSchedule(std::vector<int>{7, 3}, fails), (std::vector<int>{7, 3}));
}

TEST(GenInspectCommandTest, GeneratesShapesAndDrawsThem) {
  ScratchDir scratch;
  const auto stream = scratch.File("deep.dcl");
  ASSERT_EQ(RunProcess(kCli,
                       {"gen", "--shape", "deep", "--entities", "300", "--seed", "2", "-o",
                        stream.string()},
                       scratch)
                .exit_code,
            0);
  EXPECT_EQ(ReadBytes(stream).size(), 300u * 68u);
  const RunResult inspect = RunProcess(
      kCli, {"inspect", stream.string(), "--svg", scratch.File("d.svg").string()}, scratch);
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_EQ(inspect.out.rfind("scene: 300 nodes, 0 parked, 0 placeholders", 0), 0u);
  EXPECT_EQ(Lines(inspect.out).size(), 302u);  // header, root, 300 nodes
  const std::string svg = ReadText(scratch.File("d.svg"));
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 300, true);
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  // Above the DCL entity range: refused with an explanation.
  const RunResult too_many = RunProcess(
      kCli, {"gen", "--shape", "wide", "--entities", "65025", "-o", stream.string()}, scratch);
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("16-bit"), std::string::npos) << too_many.err;
}

}  // namespace
}  // namespace scenecrdt::tools::test
