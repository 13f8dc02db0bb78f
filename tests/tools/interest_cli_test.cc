// SPDX-License-Identifier: Apache-2.0
// `pull` and `watch` with --interest / --interest-follow (docs/INTEREST.md): bad values exit 2
// before any connection; against a real `serve`, a view that covers the scene prints the
// full state's stateHash, a view far from everything prints a partial replica (entities with
// a Transform left out, its own stateHash). `serve --client-budget-kbps` refuses bad values.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kExamplesDir = SCENECRDT_EXAMPLES_DIR;

std::string StateHash(const std::string& document) {
  auto doc = json::ReadJson(document);
  if (!doc.has_value()) return "";
  const json::Json* hash = json::Member(*doc, "stateHash");
  return hash && hash->is_string() ? hash->get<std::string>() : "";
}

TEST(InterestCliTest, BadInterestValuesExitTwo) {
  ScratchDir scratch;
  const std::vector<std::vector<std::string>> bad = {
      {"--interest", "1,2,3"},          {"--interest", "nan,0,0,5"},
      {"--interest", "0,0,0,-1"},       {"--interest", "0,0,0,inf"},
      {"--interest", "a,b,c,d"},        {"--interest", "0,0,0,5,6"},
      {"--interest", "0,0,0,"},         {"--interest-follow", "x,5"},
      {"--interest-follow", "600,-2"},  {"--interest-follow", "600"},
      {"--interest-follow", "600,nan"}, {"--interest", "0,0,0,5", "--interest-follow", "600,5"}};
  for (const char* command : {"pull", "watch"}) {
    for (const auto& flags : bad) {
      SCOPED_TRACE(std::string(command) + " " + flags[1]);
      // Nothing listens on port 1: the refusal happens before any connection.
      std::vector<std::string> args = {command, "--server", "tcp://127.0.0.1:1", "--scene", "s"};
      args.insert(args.end(), flags.begin(), flags.end());
      const RunResult r = RunProcess(kCli, args, scratch);
      EXPECT_EQ(r.exit_code, 2) << r.err;
      EXPECT_NE(r.err.find("--interest"), std::string::npos) << r.err;
    }
  }
}

// --client-budget-kbps: 0 is none (the default, and what --print-config writes back); a
// negative, not-a-number, infinite, below-1 or absurd value exits 2 naming the flag.
TEST(InterestCliTest, ServeRefusesABadClientBudget) {
  ScratchDir scratch;
  for (const char* bad : {"-1", "nan", "inf", "0.5", "10000001", "1e300", "abc", ""}) {
    SCOPED_TRACE(bad);
    const RunResult r =
        RunProcess(kCli, {"serve", "--client-budget-kbps", bad, "--print-config"}, scratch);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--client-budget-kbps"), std::string::npos) << r.err;
  }
  for (const char* good : {"0", "1", "64", "10000000"}) {
    SCOPED_TRACE(good);
    const RunResult r =
        RunProcess(kCli, {"serve", "--client-budget-kbps", good, "--print-config"}, scratch);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("client-budget-kbps = "), std::string::npos) << r.out;
  }
}

TEST(InterestCliTest, PullPrintsThePartialReplica) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started());
  const std::string stream = kExamplesDir + "/sample_scene.dcl";
  const RunResult send =
      RunProcess(kCli, {"send", "--server", serve.tcp_url(), "--scene", "aoi", stream}, scratch);
  ASSERT_EQ(send.exit_code, 0) << send.err << serve.log();
  const RunResult full =
      RunProcess(kCli, {"pull", "--server", serve.tcp_url(), "--scene", "aoi"}, scratch);
  ASSERT_EQ(full.exit_code, 0) << full.err;
  const std::string full_hash = StateHash(full.out);
  ASSERT_FALSE(full_hash.empty());
  const RunResult wide = RunProcess(kCli,
                                    {"pull", "--server", serve.tcp_url(), "--scene", "aoi",
                                     "--interest", "0,0,0,1000000", "--world"},
                                    scratch);
  ASSERT_EQ(wide.exit_code, 0) << wide.err;
  EXPECT_EQ(StateHash(wide.out), full_hash);
  const RunResult far = RunProcess(kCli,
                                   {"pull", "--server", serve.tcp_url(), "--scene", "aoi",
                                    "--interest", "50000,0,50000,1", "--world"},
                                   scratch);
  ASSERT_EQ(far.exit_code, 0) << far.err;
  EXPECT_NE(StateHash(far.out), full_hash);
  EXPECT_LT(far.out.size(), wide.out.size());
  const RunResult follow = RunProcess(
      kCli,
      {"pull", "--server", serve.tcp_url(), "--scene", "aoi", "--interest-follow", "65000,10"},
      scratch);
  ASSERT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_EQ(StateHash(follow.out), StateHash(far.out));  // both: no entity with a Transform
}

TEST(InterestCliTest, LoadWithAWorldAndInterests) {
  ScratchDir scratch;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--interest-radius", "5"},
        std::vector<std::string>{"--world-size", "-1"},
        std::vector<std::string>{"--world-size", "nan"},
        std::vector<std::string>{"--world-size", "100", "--interest-radius", "-2"}}) {
    std::vector<std::string> args = {"load", "--server", "tcp://127.0.0.1:1", "--scene", "s"};
    args.insert(args.end(), bad.begin(), bad.end());
    const RunResult r = RunProcess(kCli, args, scratch);
    EXPECT_EQ(r.exit_code, 2) << r.err;
  }
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started());
  const RunResult r =
      RunProcess(kCli,
                 {"load", "--server", serve.tcp_url(), "--scene", "world", "--clients", "6",
                  "--movers", "3", "--duration", "0.5", "--warmup", "0.2", "--world-size", "20",
                  "--interest-radius", "1000", "--json"},
                 scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err << serve.log();
  auto doc = json::ReadJson(r.out);
  ASSERT_TRUE(doc.has_value()) << r.out;
  const json::Json* in_view = json::Member(*doc, "entities_in_view_mean");
  ASSERT_NE(in_view, nullptr) << r.out;
  // A 20 m square inside a 1000 m radius: every entity (3 movers, 3 static) is in view.
  EXPECT_EQ(in_view->get<double>(), 6.0);
  const json::Json* received = json::Member(*doc, "received_messages");
  ASSERT_NE(received, nullptr);
  EXPECT_GT(received->get<uint64_t>(), 0u);
}

}  // namespace
}  // namespace scenecrdt::tools::test
