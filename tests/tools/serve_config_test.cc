// SPDX-License-Identifier: Apache-2.0
// Tests `scenecrdt serve --config FILE` and `--print-config` as a user runs them
// (docs/OPERATIONS.md "The config file"): every flag of `serve --help` and of cmd_serve.cc has
// a key (the check that catches a merged flag without one), flags override the file, the
// printed configuration reads back as the same, and a bad file exits 2 naming FILE:LINE:COL.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;
const std::string kSourceDir = SCENECRDT_SOURCE_DIR;

bool IsMeta(const std::string& flag) {
  return flag == "--config" || flag == "--print-config" || flag == "--help";
}

// "--name" at text[at] (the dashes included), or "" when none starts there.
std::string FlagAt(const std::string& text, std::size_t at) {
  if (text.compare(at, 2, "--") != 0) return "";
  std::size_t end = at + 2;
  while (end < text.size() && ((text[end] >= 'a' && text[end] <= 'z') ||
                               (text[end] >= '0' && text[end] <= '9') || text[end] == '-')) {
    ++end;
  }
  return end > at + 2 ? text.substr(at, end - at) : "";
}

// The keys `serve --print-config` lists ("name = value" lines).
std::set<std::string> PrintedKeys(const std::string& printed) {
  std::set<std::string> keys;
  for (const std::string& line : Lines(printed)) {
    const auto eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    keys.insert(line.substr(0, eq));
  }
  return keys;
}

std::set<std::string> DefaultKeys(const ScratchDir& scratch) {
  const RunResult r = RunProcess(kCli, {"serve", "--print-config"}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return PrintedKeys(r.out);
}

TEST(ServeConfigTest, EveryFlagOfHelpHasAKeyAndEveryKeyAFlag) {
  ScratchDir scratch;
  const RunResult help = RunProcess(kCli, {"serve", "--help"}, scratch);
  ASSERT_EQ(help.exit_code, 0);
  const std::set<std::string> keys = DefaultKeys(scratch);
  ASSERT_GT(keys.size(), 30u);
  // An option line of the help: two spaces, then the flag.
  std::set<std::string> flags;
  for (const std::string& line : Lines(help.out)) {
    const std::string flag = line.rfind("  --", 0) == 0 ? FlagAt(line, 2) : "";
    if (!flag.empty() && !IsMeta(flag)) flags.insert(flag);
  }
  for (const std::string& flag : flags) {
    EXPECT_TRUE(keys.count(flag.substr(2))) << flag << " is in serve --help but has no config key: "
                                            << "declare it in tools/cli/serve/serve_options.cc";
  }
  for (const std::string& key : keys) {
    EXPECT_TRUE(flags.count("--" + key)) << key << " is a key but serve --help has no --" << key;
  }
}

TEST(ServeConfigTest, EveryOptionOfTheTableHasHelpText) {
  // An entry of tools/cli/serve/serve_options.cc without its meta and help (the two last fields)
  // prints a bare "  --name" line in serve --help.
  ScratchDir scratch;
  const RunResult help = RunProcess(kCli, {"serve", "--help"}, scratch);
  ASSERT_EQ(help.exit_code, 0);
  const std::vector<std::string> lines = Lines(help.out);
  std::size_t options = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string flag = lines[i].rfind("  --", 0) == 0 ? FlagAt(lines[i], 2) : "";
    if (flag.empty()) continue;
    ++options;
    // The description follows the flag on its line, or on the next line from column 25.
    const std::size_t text = lines[i].find_first_not_of(' ', lines[i].find("  ", 2));
    const bool on_next = i + 1 < lines.size() && lines[i + 1].size() > 24 &&
                         lines[i + 1].find_first_not_of(' ') == 24;
    EXPECT_TRUE((text != std::string::npos && lines[i].find("  ", 2) != std::string::npos) ||
                on_next)
        << flag << " has no help text: give its entry in tools/cli/serve/serve_options.cc a meta "
        << "and a help string";
  }
  EXPECT_GT(options, 30u);
}

TEST(ServeConfigTest, EveryFlagTheServeSourceReadsHasAKey) {
  // A flag read the old way ("one parse branch") in cmd_serve.cc without a declaration.
  ScratchDir scratch;
  const std::set<std::string> keys = DefaultKeys(scratch);
  const std::string source = ReadText(kSourceDir + "/tools/cli/serve/cmd_serve.cc");
  // Every "--name" literal of the file: scan.Value("--x"), scan.U64("--x"), ...
  std::size_t checked = 0;
  for (std::size_t at = source.find("(\"--"); at != std::string::npos;
       at = source.find("(\"--", at + 1)) {
    const std::string flag = FlagAt(source, at + 2);
    if (flag.empty() || IsMeta(flag)) continue;
    ++checked;
    EXPECT_TRUE(keys.count(flag.substr(2)))
        << "cmd_serve.cc reads " << flag << " but it has no config key: declare it in "
        << "tools/cli/serve/serve_options.cc";
  }
  EXPECT_EQ(checked, 0u) << "cmd_serve.cc reads flags of its own: declare them instead";
}

TEST(ServeConfigTest, FlagsOverrideTheFileAndThePrintReadsBackTheSame) {
  ScratchDir scratch;
  WriteText(scratch.File("a.toml"),
            "# a comment\n"
            "rate = 100\n"
            "burst = 300\n"
            "no-fsync = true\n"
            "jwt-secret = [\"/k/one\", \"/k/two\"]\n"
            "max-rate = 2.5\n"
            "tcp = \"off\"\n"
            "log-level = \"warn\"\n");
  const RunResult r = RunProcess(
      kCli, {"serve", "--config", scratch.File("a.toml").string(), "--rate", "7", "--print-config"},
      scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"rate = 7\n", "burst = 300\n", "no-fsync = true\n",
        "jwt-secret = [\"/k/one\", \"/k/two\"]\n", "max-rate = 2.5\n", "tcp = \"off\"\n",
        "log-level = \"warn\"\n", "no-compression = false\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << r.out;
  }
  // What --print-config wrote is a config file that gives the same configuration.
  WriteText(scratch.File("b.toml"), r.out);
  const RunResult again = RunProcess(
      kCli, {"serve", "--config", scratch.File("b.toml").string(), "--print-config"}, scratch);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
}

TEST(ServeConfigTest, BadFilesExit2NamingFileLineAndColumn) {
  ScratchDir scratch;
  struct Case {
    std::string text;
    std::string expect;
  };
  const Case cases[] = {
      {"rate = 10\n\nno-such-key = 1\n", ":3:1: unknown key 'no-such-key'"},
      {"rate = \"fast\"\n", ":1:8: rate must be a non-negative integer"},
      {"rate = -1\n", ":1:8: rate must be a non-negative integer"},
      {"rate = 4294967296\n", ":1:8: rate must be at most 4294967295"},
      {"no-fsync = 1\n", ":1:12: no-fsync must be true or false"},
      {"jwt-secret = \"/one\"\n", ":1:14: jwt-secret must be an array of strings"},
      {"jwt-secret = [1]\n", ":1:14: jwt-secret must be an array of strings"},
      {"log-level = \"loud\"\n", ":1:13: log-level must be debug, info, warn or error"},
      {"[limits]\nrate = 1\n", ":1:2: unknown key 'limits'"},
      {"rate = \n", ":1:"},
      {"redis = \"redis://:hunter2@127.0.0.1\"\n", ":1:9: redis: no password in the URL"},
      {"token = \"abc\"\n", ":1:1: unknown key 'token'"},  // no inline secrets
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    WriteText(scratch.File("bad.toml"), c.text);
    const RunResult r =
        RunProcess(kCli, {"serve", "--config", scratch.File("bad.toml").string()}, scratch);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("bad.toml" + c.expect), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("hunter2"), std::string::npos) << r.err;
  }
  const RunResult missing = RunProcess(
      kCli, {"serve", "--config", scratch.File("none.toml").string(), "--print-config"}, scratch);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("none.toml"), std::string::npos) << missing.err;
}

TEST(ServeConfigTest, PrintConfigRedactsTheRedisPassword) {
  ScratchDir scratch;
  const RunResult r = RunProcess(
      kCli, {"serve", "--redis", "redis://user:hunter2@127.0.0.1:6379/0", "--print-config"},
      scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("hunter2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("redis = \"redis://user:***@127.0.0.1:6379/0\""), std::string::npos)
      << r.out;
}

TEST(ServeConfigTest, ARealServeTakesItsOptionsFromTheFile) {
  ScratchDir scratch;
  WriteText(scratch.File("serve.toml"), "demo = true\ndemo-hz = 5\nmax-connections-per-ip = 77\n");
  ServeProcess serve(kCli, scratch.File("data"), {"--config", scratch.File("serve.toml").string()});
  ASSERT_TRUE(serve.started()) << serve.log();
  // The lines after "listening" (bounded wait: 10 s).
  for (int i = 0; i < 200 && serve.log().find("per address") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(serve.log().find("demo scene \"demo\" animated at 5 Hz"), std::string::npos)
      << serve.log();
  EXPECT_NE(serve.log().find("(77 per address)"), std::string::npos) << serve.log();
}

// The config file the package ships (deploy/scenecrdt.toml, /etc/scenecrdt/scenecrdt.toml):
// every key is there (set or commented out), it reads as it is, and with every key uncommented
// it still reads and gives the defaults (but for data and web-root, which depend on where).
TEST(ServeConfigTest, TheShippedFileListsEveryKeyAndParses) {
  ScratchDir scratch;
  const std::string shipped = kSourceDir + "/deploy/scenecrdt.toml";
  const RunResult as_is =
      RunProcess(kCli, {"serve", "--config", shipped, "--print-config"}, scratch);
  ASSERT_EQ(as_is.exit_code, 0) << as_is.err;
  EXPECT_NE(as_is.out.find("data = \"/var/lib/scenecrdt\"\n"), std::string::npos) << as_is.out;
  const std::string text = ReadText(shipped);
  std::string uncommented;
  for (const std::string& line : Lines(text)) {
    const std::size_t eq = line.find(" = ");
    const bool commented_key =
        line.rfind("# ", 0) == 0 && eq != std::string::npos && line.find(' ', 2) == eq;
    uncommented += (commented_key ? line.substr(2) : line) + "\n";
  }
  const std::set<std::string> keys = DefaultKeys(scratch);
  for (const std::string& key : keys) {
    EXPECT_NE(uncommented.find("\n" + key + " = "), std::string::npos)
        << "deploy/scenecrdt.toml lacks the key " << key;
  }
  WriteText(scratch.File("all.toml"), uncommented);
  const RunResult all = RunProcess(
      kCli, {"serve", "--config", scratch.File("all.toml").string(), "--print-config"}, scratch);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const RunResult defaults = RunProcess(kCli, {"serve", "--print-config"}, scratch);
  const std::vector<std::string> got = Lines(all.out), want = Lines(defaults.out);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::string key = got[i].substr(0, got[i].find(' '));
    if (key == "data" || key == "web-root") continue;
    EXPECT_EQ(got[i], want[i]) << "the value deploy/scenecrdt.toml shows is not the default";
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
