// SPDX-License-Identifier: Apache-2.0
// Owns allocation-failure injection for the exception-safety tests: capi_tests replaces the
// global operator new (alloc_failure.cc), so every allocation of the process, those inside
// libscenecrdt.so included, can be made to throw std::bad_alloc on the calling thread.
#pragma once

#include <cstdint>

namespace scenecrdt::capi_test {

// From now on, on this thread, the allocation after `successes` more successful ones fails
// (std::bad_alloc, or nullptr for the nothrow forms), and so does every later one until
// StopFailingAllocations().
void FailAllocationsAfter(int64_t successes);
void StopFailingAllocations();
// Whether an allocation was refused since the last FailAllocationsAfter.
bool AllocationWasRefused();

}  // namespace scenecrdt::capi_test
