// SPDX-License-Identifier: Apache-2.0
// Owns the entry point of `scenecrdt load --kill-pid`: the fail-over measurement of a cluster
// (docs/CLUSTER.md "Fail-over").
#pragma once

#include "tools/cli/cli_common.h"

namespace scenecrdt::cli {

// True when `args` ask for the fail-over mode (they name --kill-pid).
bool WantsLoadFailover(Args args);
// Runs `load --kill-pid PID ...`; the exit status.
int RunLoadFailover(Args args);

}  // namespace scenecrdt::cli
