// SPDX-License-Identifier: Apache-2.0
// Tests what the network commands (send, pull, watch, record, load) do with --server URLs and
// progress output, as a user runs them: the built binary against a `scenecrdt serve` child.
// A ws:// /scene/NAME path names the scene (and must agree with --scene); any other path is
// refused before connecting; `load` draws no '\r' progress on a pipe.
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

// The "stateHash" of a replay/pull document, or "" when there is none.
std::string StateHash(const std::string& document) {
  auto doc = json::ReadJson(document);
  if (!doc.has_value()) return "";
  const json::Json* hash = json::Member(*doc, "stateHash");
  return hash && hash->is_string() ? hash->get<std::string>() : "";
}

// Minimal arguments of each network command besides --server/--scene (a FILE for send, an
// output for record), so that only the URL decides the outcome.
std::vector<std::pair<std::string, std::vector<std::string>>> NetworkCommands(
    const ScratchDir& scratch) {
  return {{"send", {kExamplesDir + "/sample_scene.dcl"}},
          {"pull", {}},
          {"watch", {"--duration", "0"}},
          {"record", {"-o", scratch.File("rec.dcl").string(), "--duration", "0"}},
          {"load", {"--duration", "0.1"}}};
}

TEST(ServerUrlCliTest, ASceneInTheUrlMustAgreeWithSceneForEveryCommand) {
  ScratchDir scratch;
  // Nothing listens on port 1: every refusal below happens before any connection.
  for (const auto& [command, extra] : NetworkCommands(scratch)) {
    SCOPED_TRACE(command);
    std::vector<std::string> args = {command, "--server", "ws://127.0.0.1:1/scene/other", "--scene",
                                     "demo"};
    args.insert(args.end(), extra.begin(), extra.end());
    const RunResult r = RunProcess(kCli, args, scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--server names scene 'other' but --scene says 'demo'"), std::string::npos)
        << r.err;
  }
}

TEST(ServerUrlCliTest, PathsOtherThanSceneAreRefusedForEveryCommand) {
  ScratchDir scratch;
  struct Case {
    std::string url;
    std::string expect;
  };
  const Case cases[] = {
      {"tcp://127.0.0.1:1/scene/demo", "a tcp:// URL has no path"},
      {"ws://127.0.0.1:1/dcl/demo", "/dcl/<scene> is the raw-DCL path"},
      {"ws://127.0.0.1:1/other/demo", "the only ws:// path is /scene/<scene>"},
      {"ws://127.0.0.1:1/scene/demo?token=t", "takes no query"},
      {"ws://127.0.0.1:1/scene/a/b", "the scene in the URL must be"},
      {"ws://127.0.0.1:1/scene/", "the scene in the URL must be"},
  };
  for (const auto& [command, extra] : NetworkCommands(scratch)) {
    for (const Case& c : cases) {
      SCOPED_TRACE(command + " " + c.url);
      std::vector<std::string> args = {command, "--server", c.url, "--scene", "demo"};
      args.insert(args.end(), extra.begin(), extra.end());
      const RunResult r = RunProcess(kCli, args, scratch);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
    }
  }
  // Without a scene anywhere, the message says both ways to give one.
  const RunResult none = RunProcess(kCli, {"pull", "--server", "ws://127.0.0.1:1"}, scratch);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("needs --scene NAME (or a ws://HOST:PORT/scene/NAME URL)"),
            std::string::npos)
      << none.err;
}

TEST(ServerUrlCliTest, TheSceneOfAUrlPathIsTheSceneJoined) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started());
  const std::string stream = kExamplesDir + "/sample_scene.dcl";
  const RunResult replay = RunProcess(kCli, {"replay", stream}, scratch);
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  const std::string want = StateHash(replay.out);
  ASSERT_FALSE(want.empty());

  // send names the scene only in the URL.
  const RunResult send =
      RunProcess(kCli, {"send", "--server", serve.ws_url() + "/scene/fromurl", stream}, scratch);
  ASSERT_EQ(send.exit_code, 0) << send.err << serve.log();
  // That scene holds the stream; the scene --scene alone would have picked does not.
  const RunResult by_flag =
      RunProcess(kCli, {"pull", "--server", serve.tcp_url(), "--scene", "fromurl"}, scratch);
  ASSERT_EQ(by_flag.exit_code, 0) << by_flag.err;
  EXPECT_EQ(StateHash(by_flag.out), want);
  const RunResult by_url =
      RunProcess(kCli, {"pull", "--server", serve.ws_url() + "/scene/fromurl/"}, scratch);
  ASSERT_EQ(by_url.exit_code, 0) << by_url.err;
  EXPECT_EQ(StateHash(by_url.out), want);
  const RunResult both = RunProcess(
      kCli, {"pull", "--server", serve.ws_url() + "/scene/fromurl", "--scene", "fromurl"}, scratch);
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(StateHash(both.out), want);
  const RunResult other =
      RunProcess(kCli, {"pull", "--server", serve.tcp_url(), "--scene", "other"}, scratch);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_NE(StateHash(other.out), want);
}

TEST(LoadProgressTest, APipeGetsNoCarriageReturns) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started());
  const std::vector<std::string> args = {
      "load",     "--server", serve.tcp_url(), "--scene", "pipe",       "--clients", "2",
      "--movers", "2",        "--rate",        "50",      "--duration", "0.3",       "--warmup",
      "0",        "--json"};

  // Default: no progress at all on a pipe, only the summary on stdout.
  RunOptions quiet;
  quiet.pipes = true;
  quiet.env = {"SCENECRDT_PROGRESS"};
  const RunResult r = RunProcess(kCli, args, scratch, quiet);
  ASSERT_EQ(r.exit_code, 0) << r.err << serve.log();
  EXPECT_EQ(r.err.find('\r'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("joined"), std::string::npos) << r.err;
  auto summary = json::ReadJson(r.out);
  ASSERT_TRUE(summary.has_value()) << r.out;
  EXPECT_EQ(json::AsU32(*json::Member(*summary, "connected")), 2u);
  ASSERT_NE(json::Member(*summary, "latency_ms"), nullptr);

  // SCENECRDT_PROGRESS=1: plain lines, each ended, still no '\r'.
  RunOptions lines = quiet;
  lines.env = {"SCENECRDT_PROGRESS=1"};
  const RunResult p = RunProcess(kCli, args, scratch, lines);
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(p.err.find('\r'), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("load: 2/2 joined\n"), std::string::npos) << p.err;
  EXPECT_LE(Lines(p.err).size(), 4u) << p.err;  // a modest rate: one line per 5 s at most
}

}  // namespace
}  // namespace scenecrdt::tools::test
