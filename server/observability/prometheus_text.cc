// SPDX-License-Identifier: Apache-2.0
// Owns building prometheus-cpp MetricFamily values and serializing them with its core
// TextSerializer (Debian prometheus-cpp-dev; the core library only, no HTTP exposer).
#include "scenecrdt/server/observability/prometheus_text.h"

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>
#include <prometheus/text_serializer.h>

#include <sstream>

namespace scenecrdt::server {

struct PrometheusText::Families {
  std::vector<prometheus::MetricFamily> list;
};

PrometheusText::PrometheusText() : families_(std::make_unique<Families>()) {}
PrometheusText::~PrometheusText() = default;

void PrometheusText::Begin(const char* name, const char* help, Type type) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type =
      type == Type::kCounter ? prometheus::MetricType::Counter : prometheus::MetricType::Gauge;
  families_->list.push_back(std::move(family));
}

void PrometheusText::Sample(double value, Labels labels) {
  if (families_->list.empty()) return;
  prometheus::MetricFamily& family = families_->list.back();
  prometheus::ClientMetric metric;
  for (auto& [name, text] : labels) metric.label.push_back({std::move(name), std::move(text)});
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

void PrometheusText::Counter(const char* name, const char* help, double value) {
  Begin(name, help, Type::kCounter);
  Sample(value);
}

void PrometheusText::Gauge(const char* name, const char* help, double value) {
  Begin(name, help, Type::kGauge);
  Sample(value);
}

void PrometheusText::Histogram(const char* name, const char* help, std::span<const double> bounds,
                               std::span<const uint64_t> counts, double sum) {
  prometheus::MetricFamily family;
  family.name = name;
  family.help = help;
  family.type = prometheus::MetricType::Histogram;
  prometheus::ClientMetric metric;
  uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds.size() && i < counts.size(); ++i) {
    cumulative += counts[i];
    metric.histogram.bucket.push_back({cumulative, bounds[i]});
  }
  if (counts.size() > bounds.size()) cumulative += counts[bounds.size()];
  // The serializer writes the +Inf bucket from sample_count.
  metric.histogram.sample_count = cumulative;
  metric.histogram.sample_sum = sum;
  family.metric.push_back(std::move(metric));
  families_->list.push_back(std::move(family));
}

std::string PrometheusText::Text() const {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families_->list);
  return out.str();
}

}  // namespace scenecrdt::server
