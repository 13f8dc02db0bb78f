// SPDX-License-Identifier: Apache-2.0
// Owner: server/observability/metrics.* and process_stats.* (issue 24 §3): /metrics carries
// scenecrdt_build_info{version,commit}, scenecrdt_start_time_seconds and the standard
// process_* series read from /proc/self, with plausible values.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

double WallNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST(ProcessMetricsTest, BuildInfoStartTimeAndProcessSeriesAreExported) {
  const double before = WallNow();
  TestServer server;
  const std::string text = HttpGet(server.get().http_port(), "/metrics");
  const std::string prefix = "\nscenecrdt_build_info{version=\"";
  const std::size_t at = text.find(prefix);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at - 1);
  const std::string version = server::Metrics::BuildVersion();
  const std::string commit = server::Metrics::BuildCommit();
  EXPECT_EQ(line, "scenecrdt_build_info{version=\"" + version + "\",commit=\"" + commit + "\"} 1");
  EXPECT_EQ(std::count(version.begin(), version.end(), '.'), 2) << version;
  EXPECT_TRUE(
      commit == "unknown" ||
      (commit.size() == 12 && commit.find_first_not_of("0123456789abcdef") == std::string::npos))
      << commit;
  const double start = Metric(text, "scenecrdt_start_time_seconds");
  EXPECT_GE(start, before - 1);
  EXPECT_LE(start, WallNow() + 1);
  const double process_start = Metric(text, "process_start_time_seconds");
  EXPECT_GT(process_start, before - 3600) << "the test binary started within the hour";
  EXPECT_LE(process_start, start + 1);
  EXPECT_GT(Metric(text, "process_cpu_seconds_total"), 0);
  EXPECT_GT(Metric(text, "process_resident_memory_bytes"), 1 << 20);
  EXPECT_GE(Metric(text, "process_virtual_memory_bytes"),
            Metric(text, "process_resident_memory_bytes"));
  const double fds = Metric(text, "process_open_fds");
  EXPECT_GT(fds, 3) << "the listeners and the database are open";
  EXPECT_GE(Metric(text, "process_max_fds"), fds);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);
}

}  // namespace
}  // namespace scenecrdt::testing
