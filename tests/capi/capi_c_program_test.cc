// SPDX-License-Identifier: Apache-2.0
// Runs c_program.c (a C11 translation unit, strict warnings as errors) against
// libscenecrdt.so, and checks the header also compiles as strict C++ (this file is built with
// the project's warnings and -Werror).
#include <gtest/gtest.h>

#include "scenecrdt/scenecrdt.h"
#include "tests/capi/c_program.h"

namespace scenecrdt::capi_test {
namespace {

TEST(CapiCProgramTest, RunsFromC) {
  char error[512] = "";
  EXPECT_EQ(capi_c_program(error, sizeof(error)), 1) << error;
}

}  // namespace
}  // namespace scenecrdt::capi_test
