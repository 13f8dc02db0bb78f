// SPDX-License-Identifier: Apache-2.0
// Owns the `scenecrdt` entry point: dispatches to the subcommand, prints help and version.
#include <cstdio>
#include <string_view>
#include <vector>

#include "tools/cli/commands.h"

// project(VERSION) in CMakeLists.txt, the one source of the version (tools/CMakeLists.txt
// passes it; tests/package/version_check.sh checks that the packages agree).
#ifndef SCENECRDT_VERSION
#error "SCENECRDT_VERSION is not defined: build with CMake (tools/CMakeLists.txt sets it)"
#endif

namespace {

void PrintUsage() {
  std::printf(
      "usage: scenecrdt <command> [options]   (scenecrdt <command> --help for details)\n\n"
      "Replicates 3D scene transforms with Decentraland SDK7 CRDT messages.\n\ncommands:\n");
  for (const auto& c : scenecrdt::cli::AllCommands()) {
    std::printf("  %-10s %s\n", c.name, c.summary);
  }
  std::printf("\n  --version  print the version\n  --help     print this help\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    PrintUsage();
    return args.empty() ? scenecrdt::cli::kExitBadInput : scenecrdt::cli::kExitOk;
  }
  if (args[0] == "--version") {
    std::printf("scenecrdt %s\n", SCENECRDT_VERSION);
    return 0;
  }
  for (const auto& c : scenecrdt::cli::AllCommands()) {
    if (args[0] == c.name) {
      return c.run(std::span<const std::string_view>(args).subspan(1));
    }
  }
  std::fprintf(stderr, "scenecrdt: unknown command '%.*s' (see 'scenecrdt --help')\n",
               static_cast<int>(args[0].size()), args[0].data());
  return scenecrdt::cli::kExitBadInput;
}
