// SPDX-License-Identifier: Apache-2.0
// Tests `scenecrdt backup` and `scenecrdt restore` against a real `scenecrdt serve`
// (docs/OPERATIONS.md "Backup and restore"): a backup taken while a writer runs leaves the
// server serving and the writer unharmed; restore refuses while a server holds the directory,
// and a server started on the restored directory serves the backed-up state (pull's
// stateHash before and after).
#include <gtest/gtest.h>

#include <string>
#include <thread>
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

std::string Pull(const ServeProcess& serve, const std::string& scene, const ScratchDir& scratch) {
  const RunResult r = RunProcess(
      kCli, {"pull", "--server", serve.tcp_url(), "--scene", scene, "--timeout", "20"}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return StateHash(r.out);
}

void Send(const ServeProcess& serve, const std::string& scene, const std::string& file,
          const ScratchDir& scratch) {
  const RunResult r = RunProcess(
      kCli, {"send", "--server", serve.tcp_url(), "--scene", scene, "--timeout", "20", file},
      scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST(ServeBackupTest, BackupWhileAWriterRunsThenRestoreServesTheBackedUpState) {
  ScratchDir scratch;
  const auto data = scratch.File("data");
  const std::string backup = scratch.File("scenes.backup").string();
  std::string before;
  {
    ServeProcess serve(kCli, data);
    ASSERT_TRUE(serve.started()) << serve.log();
    Send(serve, "kept", kExamplesDir + "/sample_scene.dcl", scratch);
    before = Pull(serve, "kept", scratch);
    ASSERT_FALSE(before.empty());
    // A writer on another scene for the whole backup.
    RunResult load;
    RunOptions piped;
    piped.pipes = true;
    std::thread writer([&] {
      load = RunProcess(kCli,
                        {"load", "--server", serve.tcp_url(), "--scene", "busy", "--clients", "4",
                         "--movers", "20", "--rate", "20", "--duration", "3", "--warmup", "0"},
                        scratch, piped);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    const RunResult b =
        RunProcess(kCli, {"backup", "--data", data.string(), "-o", backup}, scratch);
    writer.join();
    ASSERT_EQ(b.exit_code, 0) << b.err;
    EXPECT_NE(b.err.find("scenecrdt backup: " + backup + ": "), std::string::npos) << b.err;
    EXPECT_EQ(load.exit_code, 0) << load.err << load.out;
    // Still serving, and what it serves did not change.
    EXPECT_EQ(Pull(serve, "kept", scratch), before);

    // Changes after the backup, then a restore while the server runs: refused, nothing changed.
    const RunResult gen = RunProcess(kCli,
                                     {"gen", "--shape", "random", "--entities", "50", "--seed", "9",
                                      "-o", scratch.File("more.dcl").string()},
                                     scratch);
    ASSERT_EQ(gen.exit_code, 0) << gen.err;
    Send(serve, "kept", scratch.File("more.dcl").string(), scratch);
    ASSERT_NE(Pull(serve, "kept", scratch), before);
    const RunResult refused =
        RunProcess(kCli, {"restore", "--data", data.string(), "-i", backup}, scratch);
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_NE(refused.err.find("in use by another scenecrdt serve"), std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("stop"), std::string::npos) << refused.err;
  }  // SIGTERM: the server stops
  const RunResult restored =
      RunProcess(kCli, {"restore", "--data", data.string(), "-i", backup}, scratch);
  ASSERT_EQ(restored.exit_code, 0) << restored.err;
  EXPECT_NE(restored.err.find("the replaced database is kept as"), std::string::npos)
      << restored.err;
  ServeProcess again(kCli, data);
  ASSERT_TRUE(again.started()) << again.log();
  EXPECT_EQ(Pull(again, "kept", scratch), before) << again.log();
}

// sample_scene.dcl holds an append value (component 1209): SQLite 3.40's quick_check reported
// "NULL value in appends.number" for its row, and the server refused to start again.
TEST(ServeRestartTest, AServerWithAnAppendValueStoredStartsAgain) {
  ScratchDir scratch;
  const auto data = scratch.File("data");
  std::string before;
  {
    ServeProcess serve(kCli, data);
    ASSERT_TRUE(serve.started()) << serve.log();
    Send(serve, "kept", kExamplesDir + "/sample_scene.dcl", scratch);
    before = Pull(serve, "kept", scratch);
  }
  ServeProcess again(kCli, data);
  ASSERT_TRUE(again.started()) << again.log();
  EXPECT_EQ(Pull(again, "kept", scratch), before);
}

TEST(ServeBackupTest, BadInputsExit2SayingWhatToDo) {
  ScratchDir scratch;
  WriteText(scratch.File("not-a-db"), "hello");
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const Case cases[] = {
      {{"backup", "--data", scratch.File("none").string(), "-o", scratch.File("b").string()},
       "does not exist"},
      {{"backup", "--data", scratch.path().string()}, "give --data DIR and -o FILE"},
      {{"restore", "--data", scratch.File("d").string(), "-i", scratch.File("not-a-db").string()},
       "nothing in --data was changed"},
      {{"restore", "--data", scratch.File("d").string(), "-i", scratch.File("none").string()},
       "does not exist"},
      {{"restore", "-i", "x"}, "give --data DIR and -i FILE"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    const RunResult r = RunProcess(kCli, c.args, scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(scratch.File("b")));
}

}  // namespace
}  // namespace scenecrdt::tools::test
