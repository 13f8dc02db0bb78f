// SPDX-License-Identifier: Apache-2.0
// Tests the `scenecrdt` command line's usage surface: top-level and per-subcommand --help
// (every subcommand `scenecrdt --help` lists, each with its exit statuses), --version, and the
// exit status 2 plus a hint for unknown commands, unknown options and bad arguments.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

// The subcommand names listed under "commands:" in `scenecrdt --help`.
std::vector<std::string> ListedCommands(const std::string& help) {
  std::vector<std::string> names;
  bool in_list = false;
  for (const std::string& line : Lines(help)) {
    if (line == "commands:") {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty()) break;
    const std::size_t start = line.find_first_not_of(' ');
    const std::size_t end = line.find(' ', start);
    if (start == std::string::npos || line.compare(start, 2, "--") == 0) continue;
    names.push_back(line.substr(start, end - start));
  }
  return names;
}

class CliUsageTest : public ::testing::Test {
 protected:
  ScratchDir scratch_;
};

TEST_F(CliUsageTest, HelpListsTheCommandsAndExits0) {
  for (const char* flag : {"--help", "-h", "help"}) {
    const RunResult r = RunProcess(kCli, {flag}, scratch_);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_EQ(r.out.rfind("usage: scenecrdt", 0), 0u) << r.out;
    const auto commands = ListedCommands(r.out);
    EXPECT_NE(std::find(commands.begin(), commands.end(), "decode"), commands.end()) << r.out;
    EXPECT_NE(std::find(commands.begin(), commands.end(), "encode"), commands.end()) << r.out;
  }
}

TEST_F(CliUsageTest, EverySubcommandHasHelp) {
  const RunResult top = RunProcess(kCli, {"--help"}, scratch_);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  const auto commands = ListedCommands(top.out);
  ASSERT_GE(commands.size(), 2u) << top.out;
  for (const std::string& command : commands) {
    for (const char* flag : {"--help", "-h"}) {
      SCOPED_TRACE(command + " " + flag);
      const RunResult r = RunProcess(kCli, {command, flag}, scratch_);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.out.rfind("usage: scenecrdt " + command, 0), 0u) << r.out;
      EXPECT_EQ(r.err, "");
      // Every help says what each exit status means.
      EXPECT_NE(r.out.find("\nexit status: 0 "), std::string::npos) << r.out;
    }
  }
}

TEST_F(CliUsageTest, VersionPrintsTheProjectVersion) {
  const RunResult r = RunProcess(kCli, {"--version"}, scratch_);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, std::string("scenecrdt ") + SCENECRDT_EXPECTED_VERSION + "\n");
}

TEST_F(CliUsageTest, NoArgumentsPrintsUsageAndExits2) {
  const RunResult r = RunProcess(kCli, {}, scratch_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE((r.out + r.err).find("usage: scenecrdt"), std::string::npos);
}

TEST_F(CliUsageTest, UnknownCommandExits2WithAHint) {
  const RunResult r = RunProcess(kCli, {"decodee"}, scratch_);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("decodee"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scenecrdt --help"), std::string::npos) << r.err;
}

TEST_F(CliUsageTest, UnknownOptionsExit2WithAHint) {
  const RunResult top = RunProcess(kCli, {"--help"}, scratch_);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  for (const std::string& command : ListedCommands(top.out)) {
    for (const char* option : {"--no-such-option", "--no-such-option=1", "-Z"}) {
      SCOPED_TRACE(command + " " + option);
      const RunResult r = RunProcess(kCli, {command, option}, scratch_);
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_NE(r.err.find("scenecrdt " + command + " --help"), std::string::npos) << r.err;
    }
  }
  // decode and encode name the option they did not understand.
  for (const char* command : {"decode", "encode"}) {
    const RunResult r = RunProcess(kCli, {command, "--no-such-option", "-o", "x"}, scratch_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("unknown option '--no-such-option'"), std::string::npos) << r.err;
  }
}

TEST_F(CliUsageTest, BadArgumentsExit2WithAHint) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const Case cases[] = {
      {{"decode", "a.bin", "b.bin"}, "decode --help"},
      {{"decode", "--max-message-bytes", "lots"}, "--max-message-bytes"},
      {{"decode", "--max-message-bytes"}, "--max-message-bytes"},
      {{"decode", "/nonexistent/dir/stream.bin"}, "/nonexistent/dir/stream.bin"},
      {{"encode", "in.jsonl"}, "-o"},
      {{"encode", "a", "b", "-o", "out"}, "encode --help"},
      {{"encode", "/nonexistent/in.jsonl", "-o", "out"}, "/nonexistent/in.jsonl"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    const RunResult r = RunProcess(kCli, c.args, scratch_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
