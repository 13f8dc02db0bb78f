// SPDX-License-Identifier: Apache-2.0
// Owns the declarations of `scenecrdt serve`'s options: one entry per option, read by the flag
// parser (--NAME), the config file reader (NAME = value, TOML), --print-config and the SIGHUP
// reload, so a flag cannot lack its key (docs/OPERATIONS.md "The config file"). Secrets are
// never values here: only the paths of the files that hold them.
#pragma once

#include <cstdint>
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

// Takes every declared flag from `scan` into `s` (flags override the file). False with `error`
// ("--NAME must be ...") for a value a declaration refuses; the scanner reports the rest.
bool ScanServeFlags(ArgScanner& scan, ServeSettings& s, std::string& error);

// The effective configuration as a TOML file that ReadServeConfigText reads back; a password
// in the redis URL is written as "***".
std::string PrintServeConfig(const ServeSettings& s);

// The options whose values differ between `a` and `b`.
std::vector<const ServeOption*> ChangedServeOptions(const ServeSettings& a, const ServeSettings& b);

}  // namespace scenecrdt::cli
