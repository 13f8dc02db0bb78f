// SPDX-License-Identifier: Apache-2.0
// `scenecrdt load` spreads its clients over source addresses in 127.0.0.0/8 (tools/cli/
// load_run.h), so a load larger than a server's --max-connections-per-ip all joins: the built
// binary against a `scenecrdt serve` child with a small cap (real sockets, real processes;
// the default cap of 1024 is crossed the same way by --clients 2000, checked by
// scripts/perf_suite.sh). Without the spread, the clients over the cap are refused and the
// command says so at once.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenecrdt/json/reader.h"
#include "scenecrdt/json/values.h"
#include "tests/tools/serve_process.h"
#include "tests/tools/subprocess.h"

namespace scenecrdt::tools::test {
namespace {

const std::string kCli = SCENECRDT_CLI_PATH;

std::vector<std::string> LoadArgs(const ServeProcess& serve, const std::string& scene,
                                  const std::string& per_ip) {
  return {
      "load",     "--server", serve.tcp_url(),    "--scene", scene,        "--clients", "20",
      "--movers", "4",        "--rate",           "20",      "--duration", "0.3",       "--warmup",
      "0",        "--json",   "--clients-per-ip", per_ip};
}

TEST(LoadSourcesTest, ClientsOverThePerAddressCapAllJoinFromSeveralAddresses) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"), {"--max-connections-per-ip", "8"});
  ASSERT_TRUE(serve.started()) << serve.log();
  const RunResult r = RunProcess(kCli, LoadArgs(serve, "spread", "8"), scratch);
  ASSERT_EQ(r.exit_code, 0) << r.err << serve.log();
  auto summary = json::ReadJson(r.out);
  ASSERT_TRUE(summary.has_value()) << r.out;
  EXPECT_EQ(json::AsU32(*json::Member(*summary, "connected")), 20u);
  EXPECT_EQ(json::AsU32(*json::Member(*summary, "source_addresses")), 3u);  // 8 + 8 + 4
  EXPECT_EQ(json::AsU32(*json::Member(*summary, "refusals")), 0u);
}

TEST(LoadSourcesTest, ClientsFromOneAddressStopAtTheCapAndSaySo) {
  ScratchDir scratch;
  ServeProcess serve(kCli, scratch.File("data"), {"--max-connections-per-ip", "8"});
  ASSERT_TRUE(serve.started()) << serve.log();
  const RunResult r = RunProcess(kCli, LoadArgs(serve, "one", "20"), scratch);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("only 8 of 20 clients joined (12 refused or cut)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("--max-connections-per-ip 8"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 source address(es) from 127.0.0.1, 20 each"), std::string::npos) << r.err;
}

TEST(LoadSourcesTest, SourceFlagsAreChecked) {
  ScratchDir scratch;
  for (const std::vector<std::string>& bad :
       {std::vector<std::string>{"--source-ip", "10.0.0.1"},
        std::vector<std::string>{"--source-ip", "127.255.255.250", "--clients-per-ip", "1"},
        std::vector<std::string>{"--clients-per-ip", "0"}}) {
    std::vector<std::string> args = {"load",      "--server", "tcp://127.0.0.1:9", "--scene", "x",
                                     "--clients", "20"};
    args.insert(args.end(), bad.begin(), bad.end());
    const RunResult r = RunProcess(kCli, args, scratch);
    EXPECT_EQ(r.exit_code, 2) << bad[0] << ": " << r.err;
  }
}

}  // namespace
}  // namespace scenecrdt::tools::test
