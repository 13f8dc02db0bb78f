// SPDX-License-Identifier: Apache-2.0
// Owns PrometheusText: the one writer of the /metrics page. The server's metrics (metrics.h)
// and the cluster node's (cluster/cluster_node.h) add their families here; prometheus-cpp's
// core TextSerializer writes the exposition format 0.0.4 (its escaping of help text and label
// values, its number format). No other code writes Prometheus text (issue 18; docs/SERVER.md
// "One Prometheus writer").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace scenecrdt::server {

class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;
  enum class Type : uint8_t { kCounter, kGauge };

  PrometheusText();
  ~PrometheusText();
  PrometheusText(const PrometheusText&) = delete;
  PrometheusText& operator=(const PrometheusText&) = delete;

  // A family with one unlabelled sample.
  void Counter(const char* name, const char* help, double value);
  void Gauge(const char* name, const char* help, double value);
  // A family whose samples follow (Sample adds to the last family begun).
  void Begin(const char* name, const char* help, Type type);
  void Sample(double value, Labels labels = {});
  // A histogram: `counts` per bucket (not cumulative), one more than `bounds` (the +Inf one).
  void Histogram(const char* name, const char* help, std::span<const double> bounds,
                 std::span<const uint64_t> counts, double sum);

  // The exposition text of every family added, in order.
  std::string Text() const;

 private:
  struct Families;
  std::unique_ptr<Families> families_;
};

}  // namespace scenecrdt::server
