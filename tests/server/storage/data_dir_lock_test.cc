// SPDX-License-Identifier: Apache-2.0
// Owner: server/storage/data_dir_lock.*. One server per data directory: a second `scenecrdt serve`
// on the same --data exits 2 naming the first one's PID (and does not touch its incarnation); in
// one process, a second Server on a held directory refuses to start; after a stop the lock is
// free again.
#include "scenecrdt/server/storage/data_dir_lock.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

using namespace std::chrono_literals;

TEST(DataDirLockTest, SecondLockOnOneDirectoryIsRefusedAndNamesThePid) {
  TempDir dir;
  std::string why;
  auto first = server::DataDirLock::Acquire(dir.path() + "/data", why);
  ASSERT_TRUE(first) << why;
  std::string second_why;
  EXPECT_FALSE(server::DataDirLock::Acquire(dir.path() + "/data", second_why));
  EXPECT_NE(second_why.find("PID " + std::to_string(getpid())), std::string::npos) << second_why;
  first.reset();
  EXPECT_TRUE(server::DataDirLock::Acquire(dir.path() + "/data", why)) << why;
}

TEST(DataDirLockTest, InProcessServerOnAHeldDirectoryDoesNotStart) {
  TempDir dir;
  {
    TestServer first(TestServer::Config(), dir.path());
    server::ServerConfig config = TestServer::Config();
    config.data_dir = dir.path();
    server::Server second(config);
    auto started = second.Start(false);
    ASSERT_FALSE(started.has_value());
    EXPECT_NE(second.start_hint().find("in use by another scenecrdt serve"), std::string::npos)
        << second.start_hint();
    EXPECT_EQ(first.Stop(), 0);
  }
  TestServer again(TestServer::Config(), dir.path());  // the lock went with the stop
  EXPECT_EQ(again.Stop(), 0);
}

#ifdef SCENECRDT_BINARY
TEST(DataDirLockTest, SecondServeExitsTwoNamingTheHolder) {
  TempDir dir;
  ServerProcess first(dir.path());
  ASSERT_TRUE(first.started()) << first.log();
  ServerProcess second(dir.path());
  EXPECT_FALSE(second.started()) << second.log();
  EXPECT_EQ(second.WaitExit(30s), 2) << second.log();
  EXPECT_NE(second.log().find("PID " + std::to_string(first.pid())), std::string::npos)
      << second.log();
  // The first one is untouched and still serves.
  scenecrdt::testing::RawConnection raw(first.port());
  ASSERT_TRUE(raw.connected());
  EXPECT_TRUE(raw.Join("lobby").has_value());
  first.Kill(SIGTERM);
  EXPECT_EQ(first.WaitExit(30s), 0) << first.log();
  ServerProcess third(dir.path());  // free again after the stop
  EXPECT_TRUE(third.started()) << third.log();
}
#endif

}  // namespace
}  // namespace scenecrdt::testing
