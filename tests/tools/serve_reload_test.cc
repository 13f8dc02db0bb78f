// SPDX-License-Identifier: Apache-2.0
// Tests SIGHUP's re-read of `serve --config FILE` on a real `scenecrdt serve` (docs/OPERATIONS.md
// "Reloading"): the reloadable keys apply (log-level: info lines stop), a change to another
// key is logged as needing a restart, a file that no longer reads changes nothing and says
// where it is wrong, and the command line's flags still win over the file.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>

#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

TEST(ServeReloadTest, SighupAppliesReloadableKeysAndNamesTheOthers) {
  ScratchDir scratch;
  const auto conf = scratch.File("serve.toml");
  WriteText(conf, "log-level = \"info\"\nrate = 100\nburst = 300\n");
  ServeProcess serve(kCli, scratch.File("data"), {"--config", conf.string(), "--burst", "500"});
  ASSERT_TRUE(serve.started()) << serve.log();
  ASSERT_TRUE(serve.WaitForLog("per address")) << serve.log();

  // Nothing changed: an info line, nothing reloaded, nothing to restart.
  ASSERT_TRUE(serve.Signal(SIGHUP));
  ASSERT_TRUE(serve.WaitForLog("config_reload ok=yes reloaded=- needs_restart=-")) << serve.log();
  ASSERT_TRUE(serve.WaitForLog("nothing to reload: started without --tls-cert")) << serve.log();

  // log-level applies; rate needs a restart; burst is a flag, which still wins over the file.
  WriteText(conf, "log-level = \"warn\"\nrate = 200\nburst = 9\n");
  ASSERT_TRUE(serve.Signal(SIGHUP));
  ASSERT_TRUE(
      serve.WaitForLog("config_reload ok=yes reloaded=log-level needs_restart=rate "
                       "(changed in the file, ignored until a restart)"))
      << serve.log();
  EXPECT_EQ(serve.log().find("burst"), std::string::npos) << serve.log();

  // A file that no longer reads: an error line naming the place; nothing applies.
  WriteText(conf, "log-level = \"debug\"\nrate = \n");
  ASSERT_TRUE(serve.Signal(SIGHUP));
  ASSERT_TRUE(serve.WaitForLog("config_reload ok=no")) << serve.log();
  EXPECT_NE(serve.log().find("serve.toml:2:"), std::string::npos) << serve.log();
  // The level is warn since the second SIGHUP: its own info line (TLS, nothing to reload) and
  // the third one's were not written (both come before this error line in the same stream).
  EXPECT_TRUE(serve.WaitForLog("nothing to reload: started without --tls-cert", 1, 0));
  EXPECT_FALSE(serve.WaitForLog("nothing to reload: started without --tls-cert", 2, 300))
      << serve.log();
}

TEST(ServeReloadTest, SighupWithoutConfigReloadsWhatItDidBefore) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"));
  ASSERT_TRUE(serve.started()) << serve.log();
  ASSERT_TRUE(serve.Signal(SIGHUP));
  ASSERT_TRUE(serve.WaitForLog("nothing to reload: started without --tls-cert")) << serve.log();
  EXPECT_EQ(serve.log().find("config_reload"), std::string::npos) << serve.log();
}

}  // namespace
}  // namespace scenecrdt::tools::test
