// SPDX-License-Identifier: Apache-2.0
// Tests the `scenecrdt` command line's usage surface: top-level and per-subcommand --help
// (every subcommand `scenecrdt --help` lists, each with its exit statuses), --version, and the
// exit status 2 plus a hint for unknown commands, unknown options and bad arguments.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
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

// The option syntax of every command (tools/cli/cli_app.h, docs/CLI.md "Options and --help"):
// "--name value" and "--name=value", the last of a repeated option, every value of a
// repeatable one, "--name=" an empty value, a positional after an option's value, and the
// one-line errors (exit 2) naming the option.
TEST_F(CliUsageTest, OptionSyntaxAndErrorsAreTheProjectsOwn) {
  const RunResult printed =
      RunProcess(kCli,
                 {"serve", "--rate=5", "--burst", "9", "--rate", "7", "--jwt-secret", "/a",
                  "--jwt-secret=/b", "--allowed-hosts=", "--tcp", "off", "--print-config"},
                 scratch_);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;
  for (const char* line : {"\nrate = 7\n", "\nburst = 9\n", "\njwt-secret = [\"/a\", \"/b\"]\n",
                           "\nallowed-hosts = \"\"\n", "\ntcp = \"off\"\n"}) {
    EXPECT_NE(printed.out.find(line), std::string::npos) << line << printed.out;
  }
  WriteText(scratch_.File("empty.bin"), "");
  const RunResult positional = RunProcess(
      kCli, {"decode", "--max-message-bytes", "100", scratch_.File("empty.bin").string()},
      scratch_);
  EXPECT_EQ(positional.exit_code, 0) << positional.err;
  struct Case {
    std::vector<std::string> args;
    std::string err;  // the whole of stderr
  };
  const Case cases[] = {
      {{"serve", "--no-fsync=1"}, "--no-fsync takes no value"},
      {{"serve", "--tcp", "off", "--data"}, "--data needs a value"},
      {{"serve", "--rate", "x"}, "--rate needs a non-negative integer, got 'x'"},
      {{"serve", "--max-rate=fast"}, "--max-rate needs a number, got 'fast'"},
      {{"serve", "--print-config", "extra"}, "unknown option 'extra'"},
      {{"serve", "--bogus=1", "--rate", "1"}, "unknown option '--bogus'"},
      {{"decode", "-Z"}, "unknown option '-Z'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args[1]);
    const RunResult r = RunProcess(kCli, c.args, scratch_);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "scenecrdt " + c.args[0] + ": " + c.err + " (see 'scenecrdt " + c.args[0] +
                         " --help')\n");
  }
}

// The drift guard (docs/CLI.md "Options and --help"): for every subcommand, the flags its
// --help lists are exactly the flags its parser declares. With SCENECRDT_CLI_PARSE_ONLY set a
// command parses its arguments, prints its declared flags and exits 0 without running; it is
// given every flag of its help at once (a value "1" after each flag that takes one), so an
// unlisted, misspelt or missing declaration fails here. A help may hold several blocks, each
// "usage: scenecrdt WORDS [options]" ... "  -h, --help" (`bench merge`, `bench stream`, ...).
TEST_F(CliUsageTest, EveryFlagOfEveryHelpIsAcceptedAndEveryDeclaredFlagIsListed) {
  const RunResult top = RunProcess(kCli, {"--help"}, scratch_);
  ASSERT_EQ(top.exit_code, 0) << top.err;
  std::size_t blocks = 0;
  for (const std::string& command : ListedCommands(top.out)) {
    SCOPED_TRACE(command);
    const RunResult help = RunProcess(kCli, {command, "--help"}, scratch_);
    ASSERT_EQ(help.exit_code, 0) << help.err;
    const std::vector<std::string> lines = Lines(help.out);
    for (std::size_t usage = 0; usage < lines.size(); ++usage) {
      const std::string& head = lines[usage];
      if (head.rfind("usage: scenecrdt ", 0) != 0) continue;
      const std::size_t words_end = head.find(" [options]");
      ASSERT_NE(words_end, std::string::npos) << head;
      // The invocation: env SCENECRDT_CLI_PARSE_ONLY=1 scenecrdt WORDS --flag [1] ...
      std::vector<std::string> args = {"SCENECRDT_CLI_PARSE_ONLY=1", kCli};
      const std::string words = head.substr(17, words_end - 17);
      for (std::size_t at = 0; at < words.size();) {
        const std::size_t space = std::min(words.find(' ', at), words.size());
        args.push_back(words.substr(at, space - at));
        at = space + 1;
      }
      if (args.size() > 3 && args[3] == "--kill-pid") continue;  // `load` fail-over: a mode
      // The option block: from the last blank line before "  -h, --help" to it.
      std::size_t end = usage;
      while (end < lines.size() && lines[end].rfind("  -h, --help", 0) != 0) ++end;
      ASSERT_LT(end, lines.size()) << help.out;
      std::size_t begin = end;
      while (begin > usage && !lines[begin - 1].empty()) --begin;
      std::set<std::string> listed;
      for (std::size_t i = begin; i < end; ++i) {
        const std::string& line = lines[i];
        // An option line: "  --name META  help", "  -o, --out META  help" or "  --flag  help".
        if (line.rfind("  -", 0) != 0) continue;
        std::string names = line.substr(2, line.find("  ", 2) - 2);
        std::string meta;
        if (const auto space = names.rfind(' ');
            space != std::string::npos && names.compare(space + 1, 1, "-") != 0) {
          meta = names.substr(space + 1);
          names.resize(space);
        }
        listed.insert(names);
        args.push_back(names.substr(names.rfind(' ') + 1));
        if (!meta.empty()) args.push_back("1");
      }
      ++blocks;
      const RunResult parsed = RunProcess("/usr/bin/env", args, scratch_);
      EXPECT_EQ(parsed.exit_code, 0) << head << "\n" << parsed.err;
      EXPECT_EQ(parsed.err, "") << head;
      std::set<std::string> declared;
      for (const std::string& d : Lines(parsed.out)) {
        if (!d.empty()) declared.insert(d);
      }
      for (const std::string& d : declared) {
        EXPECT_TRUE(listed.count(d)) << head << ": " << d << " is parsed but not in --help";
      }
      for (const std::string& l : listed) {
        EXPECT_TRUE(declared.count(l)) << head << ": " << l << " is in --help but not declared";
      }
      EXPECT_GE(declared.size(), 1u) << head;
    }
  }
  EXPECT_GE(blocks, 19u);  // 17 commands, bench's three benchmarks
}

}  // namespace
}  // namespace scenecrdt::tools::test
