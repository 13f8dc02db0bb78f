// SPDX-License-Identifier: Apache-2.0
// Owns WaitUntil, shared by the test fixtures (tests/server, tests/cluster): polling a
// condition with a deadline, for state with no event to wait on.
#pragma once

#include <chrono>
#include <functional>

namespace scenecrdt::testing {

// Polls `done` every 2 ms until true or the deadline; true when it became true.
bool WaitUntil(const std::function<bool()>& done,
               std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace scenecrdt::testing
