// SPDX-License-Identifier: Apache-2.0
// Runs a program (the built `scenecrdt`) with posix_spawn, stdin from a file and stdout/stderr
// captured through files in a scratch directory or through pipes, for the command-line tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace scenecrdt::tools::test {

struct RunResult {
  int exit_code = -1;  // the exit status, or -1 when the process did not exit normally
  std::string out;
  std::string err;
};

// A scratch directory removed with everything in it when the object goes away.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path File(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct RunOptions {
  std::filesystem::path stdin_path;  // empty: /dev/null
  // stdout and stderr through pipes instead of files in the scratch folder: what a program
  // sees under `cmd 2>&1 | less` (neither is a terminal either way).
  bool pipes = false;
  // Environment changes: "NAME=VALUE" sets NAME, "NAME" removes it.
  std::vector<std::string> env;
};

// Runs `program` with `args` (argv[1..]) and waits for it (with pipes: at most 120 s, then
// SIGKILL and a test failure).
RunResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                     const ScratchDir& scratch, const RunOptions& options);
// Stdin reads `stdin_path` (or /dev/null when empty); output goes through files in `scratch`.
RunResult RunProcess(const std::string& program, const std::vector<std::string>& args,
                     const ScratchDir& scratch, const std::filesystem::path& stdin_path = {});

// The environment of this process with `changes` applied (RunOptions::env), for posix_spawn.
std::vector<std::string> ChildEnvironment(const std::vector<std::string>& changes);

std::vector<uint8_t> ReadBytes(const std::filesystem::path& path);
std::string ReadText(const std::filesystem::path& path);
void WriteBytes(const std::filesystem::path& path, std::span<const uint8_t> bytes);
void WriteText(const std::filesystem::path& path, const std::string& text);
// Splits on '\n'; a trailing newline does not make an empty last line.
std::vector<std::string> Lines(const std::string& text);

}  // namespace scenecrdt::tools::test
