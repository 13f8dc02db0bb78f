// SPDX-License-Identifier: Apache-2.0
// Owns the declarations of `scenecrdt serve`'s options: one entry per option, read by the flag
// parser (--NAME), the config file reader (NAME = value, TOML), --print-config and the SIGHUP
// reload, so a flag cannot lack its key (docs/OPERATIONS.md "The config file"). Secrets are
// never values here: only the paths of the files that hold them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "scenecrdt/server/config.h"
#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

// What `serve` is run with: the server's configuration and what the command itself reads
// before starting it.
struct ServeSettings {
  server::ServerConfig config;
  std::string redis_password_file;  // read at start (and never printed but as its path)
};

enum class OptionKind : uint8_t {
  kListen,      // "HOST:PORT" or "off"
  kString,      // text (a path, a list, a name)
  kStringList,  // repeatable flag; an array of strings in the file
  kUnsigned,    // a non-negative integer, at most ServeOption::max
  kNumber,      // a number (an integer or a float in the file)
  kFlag,        // a flag without a value; true or false in the file
};

using OptionValue = std::variant<bool, uint64_t, double, std::string, std::vector<std::string>>;

struct ServeOption {
  const char* name;  // "--NAME" on the command line, NAME in the config file
  OptionKind kind;
  uint64_t max;  // kUnsigned only: the largest value accepted
  // Stores a value of the kind; returns nullptr or why the value is refused ("must be ...").
  const char* (*set)(ServeSettings& s, const OptionValue& v);
  OptionValue (*get)(const ServeSettings& s);
  // --help: the value's name ("N", "FILE"; nullptr for a kFlag) and what the option does
  // (lines of at most ~68 characters, "\n" between them). ServeConfigTest checks that every
  // option has both.
  const char* meta = nullptr;
  const char* help = nullptr;
};

// Every option in the order --print-config and the shipped config file list them.
std::span<const ServeOption> ServeOptions();
const ServeOption* FindServeOption(std::string_view name);

// The meta flags that are not keys: --config, --print-config (and --help).
bool IsServeMetaFlag(std::string_view flag);

// Reads a TOML config file (at most kMaxConfigBytes) into `s`. False with `error` naming the
// place, "FILE:LINE:COL: what", for a syntax error, an unknown key, a wrong type or a value out
// of range; a redis URL with a password in it is refused (redis-password-file).
inline constexpr std::size_t kMaxConfigBytes = 1u << 20;
bool ReadServeConfigFile(const std::string& path, ServeSettings& s, std::string& error);
bool ReadServeConfigText(std::string_view text, const std::string& source, ServeSettings& s,
                         std::string& error);

class CliApp;

// The table's flags as parsed: one slot per option, in table order (DeclareServeFlags fills
// the kind's member).
struct ServeFlagValues {
  struct Slot {
    std::optional<std::string> text;
    std::vector<std::string> list;
    std::optional<uint64_t> n;
    std::optional<double> d;
    bool flag = false;
  };
  std::vector<Slot> slots;
};

// Declares every option of the table on `app` as --NAME, with its meta and help, under the
// table's headings: the parser and `serve --help` read the same declarations.
void DeclareServeFlags(CliApp& app, ServeFlagValues& values);

// Applies the flags given over `s` (flags override the file). False with `error` ("--NAME
// must be ...") for a value a declaration refuses.
bool ApplyServeFlags(const ServeFlagValues& values, ServeSettings& s, std::string& error);

// The effective configuration as a TOML file that ReadServeConfigText reads back; a password
// in the redis URL is written as "***".
std::string PrintServeConfig(const ServeSettings& s);

// The options whose values differ between `a` and `b`.
std::vector<const ServeOption*> ChangedServeOptions(const ServeSettings& a, const ServeSettings& b);

}  // namespace scenecrdt::cli
