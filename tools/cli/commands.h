// SPDX-License-Identifier: Apache-2.0
// Owns the list of `scenecrdt` subcommands: each is a function from its arguments (after the
// subcommand name) to an exit status.
#pragma once

#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(Args args);
};

int RunDecode(Args args);
int RunEncode(Args args);
int RunReplay(Args args);
int RunConverge(Args args);
int RunBench(Args args);
int RunGen(Args args);
int RunInspect(Args args);
int RunServe(Args args);
int RunDbSalvage(Args args);
int RunBackup(Args args);
int RunRestore(Args args);
int RunSend(Args args);
int RunPull(Args args);
int RunOwn(Args args);
int RunWatch(Args args);
int RunRecord(Args args);
int RunLoad(Args args);

// All subcommands, in the order `scenecrdt --help` lists them.
std::span<const Command> AllCommands();

}  // namespace scenecrdt::cli
