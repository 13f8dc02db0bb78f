// SPDX-License-Identifier: Apache-2.0
// What the authority tests share (docs/AUTHORITY.md): the --auth file of their three
// principals, alice and bob (write; tokens "ta", "tb") and root (admin; token "tr").
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {

// Writes DIR/auth.json with the three principals and returns its path.
inline std::string WritePrincipalsAuthFile(const TempDir& dir) {
  const std::string path = dir.path() + "/auth.json";
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  if (f == nullptr) return path;
  std::fputs(R"({"tokens":[
    {"token":"ta","scenes":["*"],"role":"write","name":"alice"},
    {"token":"tb","scenes":["*"],"role":"write","name":"bob"},
    {"token":"tr","scenes":["*"],"role":"admin","name":"root"}]})",
             f);
  std::fclose(f);
  return path;
}

}  // namespace scenecrdt::testing
