// SPDX-License-Identifier: Apache-2.0
// Owns the entry point of `scenecrdt bench propagate` (cmd_bench_propagate.cc), called by
// `scenecrdt bench` (cmd_bench.cc).
#pragma once

#include <string>

#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

// `bench propagate`'s part of `scenecrdt bench --help`, ending with `footer`.
std::string BenchPropagateHelp(const char* footer);

// Runs `bench propagate` with its arguments (after "propagate"); returns the exit status.
int RunBenchPropagate(Args args);

}  // namespace scenecrdt::cli
