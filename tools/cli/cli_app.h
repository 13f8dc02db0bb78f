// SPDX-License-Identifier: Apache-2.0
// Owns the one way a subcommand declares and parses its command line: a CLI11 App (Debian
// libcli11-dev) whose option declarations are read by both the parser and the --help printer,
// so help and flags cannot drift apart (docs/CLI.md "Options and --help"). Errors keep the
// project's form: "scenecrdt CMD: WHAT (see 'scenecrdt CMD --help')" on stderr, exit 2.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli/cli_common.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace scenecrdt::cli {

// Set (to anything) in the environment, Parse() prints the declared option names, one per
// line, and returns exit status 0 instead of running the command: tests/tools/cli_usage_test.cc
// checks with it that every flag --help lists is accepted, and that help lists every flag.
inline constexpr const char* kParseOnlyEnv = "SCENECRDT_CLI_PARSE_ONLY";

class CliApp {
 public:
  // `about`: the prose under the usage line; `footer`: the text after the options (it ends
  // with the "exit status: ..." line). Both may hold several lines.
  CliApp(std::string command, std::string about, std::string footer);
  ~CliApp();
  CliApp(const CliApp&) = delete;
  CliApp& operator=(const CliApp&) = delete;

  // The words after "usage: scenecrdt" in --help (default: the command), e.g. "bench merge"
  // for a command whose first argument picks what it does.
  void SetUsageName(std::string name) { usage_name_ = std::move(name); }

  // Options declared after this are listed under `heading` in --help ("options" before).
  void Section(std::string heading);

  // `names`: "--long" or "--long,-s". `meta`: the value's name in --help (FILE, N). `help`:
  // one or more lines ("\n" starts a new, indented line). The outputs are written by Parse.
  // A flag with a value; the last occurrence wins.
  void Value(std::string names, std::string meta, std::string help,
             std::optional<std::string>* out);
  // A repeatable flag: every value, in order.
  void Values(std::string names, std::string meta, std::string help, std::vector<std::string>* out);
  // A flag without a value.
  void Flag(std::string names, std::string help, bool* out);
  // A non-negative integer ("--NAME needs a non-negative integer, got 'x'").
  void U64(std::string names, std::string meta, std::string help, std::optional<uint64_t>* out);
  // A number ("--NAME needs a number, got 'x'").
  void Double(std::string names, std::string meta, std::string help, std::optional<double>* out);
  // Every argument that is not a flag or a flag's value, in order (the command checks how
  // many it takes). Without this declaration a positional is an unknown option.
  void Positionals(std::string meta, std::string help, std::vector<std::string>* out);
  // The same, left out of --help: for a command that refuses positionals with its own words.
  void HiddenPositionals(std::vector<std::string>* out);

  // Parses `args` (after the subcommand name). nullopt: run the command. Otherwise the exit
  // status to return: 0 after printing --help (-h, anywhere), 2 after printing the error (an
  // unknown option, a missing or malformed value).
  std::optional<int> Parse(Args args);

  // The --help text, generated from the declarations.
  std::string Help() const;

  const std::string& command() const { return command_; }

 private:
  enum class Kind : uint8_t { kValue, kValues, kFlag, kU64, kDouble, kPositionals };
  struct Declared {
    Kind kind;
    std::string long_name;
    void* out;
    CLI::Option* option = nullptr;
    std::vector<std::string> results;
  };
  Declared* Declare(Kind kind, std::string names, std::string meta, std::string help, void* out);
  int Fail(const std::string& message) const;

  std::string command_;
  std::string usage_name_;
  std::string about_;
  std::string footer_;
  std::string section_ = "options";
  std::unique_ptr<CLI::App> app_;
  std::deque<Declared> declared_;  // stable addresses: CLI11 writes into `results`
  std::string declaration_error_;  // a bad name (a programming error), reported by Parse
};

}  // namespace scenecrdt::cli
