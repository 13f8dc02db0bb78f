// SPDX-License-Identifier: Apache-2.0
// Runs c_client_program.c (a C11 translation unit, strict warnings as errors) against
// libscenecrdt.so and an in-process scenecrdt server on loopback: two C clients join, one
// writes, the other sees it. Also the URL list (a dead server first: fail-over).
#include <gtest/gtest.h>

#include "scenecrdt/scenecrdt.h"
#include "tests/capi/c_client_program.h"
#include "tests/client/test_server.h"

namespace scenecrdt::capi_test {
namespace {

TEST(CapiClientTest, CClientSeesAWriteOfAnotherClient) {
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  char error[512] = "";
  EXPECT_EQ(capi_c_client_program(server.tcp_url().c_str(), "capi", error, sizeof(error)), 1)
      << error;
  EXPECT_EQ(capi_c_client_program((server.ws_url() + "/scene/capi-ws").c_str(), nullptr, error,
                                  sizeof(error)),
            1)
      << error;
}

TEST(CapiClientTest, AListWithADeadServerFailsOverToTheLiveOne) {
  const std::string dead = "tcp://127.0.0.1:1";  // nothing listens there
  client::test::TestServer server;
  ASSERT_TRUE(server.Start());
  const std::string list = dead + "," + server.tcp_url();
  char error[512] = "";
  EXPECT_EQ(capi_c_client_program(list.c_str(), "capi-list", error, sizeof(error)), 1) << error;
}

}  // namespace
}  // namespace scenecrdt::capi_test
