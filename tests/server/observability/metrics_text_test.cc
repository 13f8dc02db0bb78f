// SPDX-License-Identifier: Apache-2.0
// Owner: server/observability/prometheus_text.* (issue 18: one Prometheus text writer). The
// writer over prometheus-cpp's serializer: HELP and TYPE per family, label values escaped
// (a scene name cannot end its label or add a line), histogram buckets cumulative with the
// +Inf bucket equal to _count.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "scenecrdt/server/observability/prometheus_text.h"
#include "tests/server/server_test_util.h"

namespace scenecrdt::testing {
namespace {

TEST(MetricsTextTest, FamiliesLabelsAndEscaping) {
  server::PrometheusText out;
  out.Counter("a_total", "Things.", 3);
  out.Begin("lag_ms", "Lag per scene.", server::PrometheusText::Type::kGauge);
  out.Sample(5, {{"scene", "lobby"}});
  out.Sample(7, {{"scene", "x\"} 1\nforged 2"}});
  const std::string text = out.Text();
  EXPECT_NE(text.find("# HELP a_total Things.\n# TYPE a_total counter\na_total 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE lag_ms gauge\n"), std::string::npos) << text;
  EXPECT_EQ(Metric(text, "lag_ms{scene=\"lobby\"}"), 5);
  EXPECT_NE(text.find(R"(lag_ms{scene="x\"} 1\nforged 2"} 7)"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nforged"), std::string::npos) << "a label value added a line";
}

TEST(MetricsTextTest, HistogramBucketsAreCumulative) {
  server::PrometheusText out;
  const std::array<double, 3> bounds = {0.001, 0.01, 0.1};
  const std::array<uint64_t, 4> counts = {1, 2, 3, 4};
  out.Histogram("h_seconds", "A histogram.", bounds, counts, 1.5);
  const std::string text = out.Text();
  EXPECT_NE(text.find("# TYPE h_seconds histogram\n"), std::string::npos) << text;
  EXPECT_EQ(Metric(text, "h_seconds_bucket{le=\"0.001\"}"), 1);
  EXPECT_EQ(Metric(text, "h_seconds_bucket{le=\"0.01\"}"), 3);
  EXPECT_EQ(Metric(text, "h_seconds_bucket{le=\"0.1\"}"), 6);
  EXPECT_EQ(Metric(text, "h_seconds_bucket{le=\"+Inf\"}"), 10);
  EXPECT_EQ(Metric(text, "h_seconds_count"), 10);
  EXPECT_EQ(Metric(text, "h_seconds_sum"), 1.5);
}

TEST(MetricsTextTest, ServerPageHasOneHelpAndTypePerFamily) {
  TestServer server;
  const std::string text = server.get().metrics().RenderPrometheus();
  std::size_t types = 0;
  for (std::size_t at = text.find("# TYPE "); at != std::string::npos;
       at = text.find("# TYPE ", at + 1)) {
    const std::string name = text.substr(at + 7, text.find(' ', at + 7) - at - 7);
    EXPECT_EQ(text.find("# TYPE " + name + " "), at) << name << " typed twice";
    ++types;
  }
  EXPECT_GT(types, 60u);
  EXPECT_EQ(Metric(text, "scenecrdt_connections_refused_total{reason=\"max_connections\"}"), 0);
  EXPECT_GE(Metric(text, "scenecrdt_commit_seconds_bucket{le=\"+Inf\"}"), 0);
}

// The dashboard's delivery and fan-out panels read these: a write that reaches another member
// is observed once in each; the caps are exported for the alerts.
TEST(MetricsTextTest, DeliveryAndFanOutAreObservedOnAWrite) {
  TestServer server;
  const uint16_t port = server.get().tcp_port();
  RawConnection writer(port);
  RawConnection reader(port);
  ASSERT_TRUE(writer.Join("lobby").has_value());
  ASSERT_TRUE(reader.Join("lobby").has_value());
  std::vector<uint8_t> dcl;
  AppendPut(dcl, 600, 1, 1.0f);
  ASSERT_TRUE(writer.SendFrame(session::Crdt{1, 0, false, dcl}));
  ASSERT_TRUE(reader.ReadFrameBytes(std::chrono::seconds(10)).has_value());
  std::string text;
  ASSERT_TRUE(WaitUntil([&] {
    text = server.get().metrics().RenderPrometheus();
    return Metric(text, "scenecrdt_fanout_seconds_count") >= 1 &&
           Metric(text, "scenecrdt_delivery_seconds_count") >= 1;
  })) << text;
  EXPECT_EQ(Metric(text, "scenecrdt_delivery_seconds_bucket{le=\"+Inf\"}"),
            Metric(text, "scenecrdt_delivery_seconds_count"));
  EXPECT_EQ(Metric(text, "scenecrdt_scenes_max"), 1000);
  EXPECT_GT(Metric(text, "scenecrdt_connections_max"), 0);
}

}  // namespace
}  // namespace scenecrdt::testing
