// SPDX-License-Identifier: Apache-2.0
// Owns WaitUntil (tests/wait_until.h).
#include "tests/wait_until.h"

#include <thread>

namespace scenecrdt::testing {

bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    // Polling a condition, not synchronising by sleeping: the condition decides.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace scenecrdt::testing
