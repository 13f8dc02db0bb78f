// SPDX-License-Identifier: Apache-2.0
// Owns the entry point of `scenecrdt bench propagate` (cmd_bench_propagate.cc), called by
// `scenecrdt bench` (cmd_bench.cc).
#pragma once

#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

// The usage lines and the description of `bench propagate`, for `scenecrdt bench --help`.
extern const char* const kBenchPropagateUsage;
extern const char* const kBenchPropagateHelp;

// Runs `bench propagate` with the flags left in `scan`; returns the exit status.
int RunBenchPropagate(ArgScanner& scan);

}  // namespace scenecrdt::cli
