// SPDX-License-Identifier: Apache-2.0
// Tests `scenecrdt bench propagate` as a user runs it: every shape on a small scene, all dirty
// and a dirty fraction, on 1 and 3 threads, in text and JSON; bad flags exit 2 with the
// reason. Figures are not checked (timing targets live in docs/PROPAGATION.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

TEST(BenchPropagateTest, EveryShapeReportsJson) {
  ScratchDir scratch;
  for (const char* shape : {"random", "deep", "wide", "chains", "humanoids", "balanced"}) {
    for (const char* threads : {"1", "3"}) {
      SCOPED_TRACE(std::string(shape) + " threads " + threads);
      const RunResult r = RunProcess(kCli,
                                     {"bench", "propagate", "--shape", shape, "--entities", "3000",
                                      "--threads", threads, "--updates", "3", "--json"},
                                     scratch);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto j = nlohmann::json::parse(r.out);
      EXPECT_EQ(j.at("entities").get<int>(), 3000);
      EXPECT_EQ(j.at("threads").get<int>(), std::stoi(threads));
      EXPECT_EQ(j.at("updates").get<int>(), 3);
      EXPECT_GE(j.at("ms_per_update").get<double>(), 0.0);
      EXPECT_LE(j.at("min_ms").get<double>(), j.at("ms_per_update").get<double>());
      EXPECT_EQ(j.at("computed_per_update").get<double>(), 3000.0);  // all dirty
      EXPECT_FALSE(j.at("shape").get<std::string>().empty());
    }
  }
}

TEST(BenchPropagateTest, DirtyFractionComputesFewerEntities) {
  ScratchDir scratch;
  const RunResult r = RunProcess(kCli,
                                 {"bench", "propagate", "--shape", "humanoids", "--entities",
                                  "6700", "--dirty-fraction", "0.001", "--threads", "2", "--json"},
                                 scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("shape").get<std::string>(), "humanoids");
  EXPECT_DOUBLE_EQ(j.at("dirty_fraction").get<double>(), 0.001);
  // 7 random joints per update: each recomputes its subtree (at most one rig of 67).
  EXPECT_GE(j.at("computed_per_update").get<double>(), 1.0);
  EXPECT_LE(j.at("computed_per_update").get<double>(), 7.0 * 67);
}

TEST(BenchPropagateTest, TextOutputNamesTheMedian) {
  ScratchDir scratch;
  const RunResult r = RunProcess(
      kCli, {"bench", "propagate", "--entities", "500", "--updates", "2", "--threads", "1"},
      scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("median"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("propagate random"), std::string::npos) << r.out;
}

TEST(BenchPropagateTest, BadFlagsExitTwoWithTheReason) {
  ScratchDir scratch;
  const std::vector<std::vector<std::string>> bad = {
      {"bench", "propagate", "--shape", "spiral"},
      {"bench", "propagate", "--entities", "0"},
      {"bench", "propagate", "--entities", "99999999999"},
      {"bench", "propagate", "--threads", "65"},
      {"bench", "propagate", "--dirty-fraction", "0"},
      {"bench", "propagate", "--dirty-fraction", "1.5"},
      {"bench", "propagate", "--updates", "0"},
      {"bench", "propagate", "FILE"},
  };
  for (const auto& args : bad) {
    SCOPED_TRACE(args.back());
    const RunResult r = RunProcess(kCli, args, scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("scenecrdt bench"), std::string::npos) << r.err;
  }
  const RunResult help = RunProcess(kCli, {"bench", "--help"}, scratch);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("bench propagate"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace scenecrdt::tools::test
