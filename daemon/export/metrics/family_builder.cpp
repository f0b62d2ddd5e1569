#include "export/metrics/family_builder.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "export/metrics/label_sanitizer.h"

namespace hucprof {

FamilyBuilder::FamilyBuilder(std::string name, std::string help, prometheus::MetricType type,
                             std::vector<std::string> label_names)
    : label_names_(std::move(label_names)) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
}

std::pair<prometheus::ClientMetric*, bool> FamilyBuilder::series(
    const std::vector<std::string>& label_values) {
  if (label_values.size() != label_names_.size()) {
    // A programming error in this directory, not a data problem: fail loudly in tests.
    throw std::logic_error(family_.name + ": label count mismatch");
  }
  std::vector<prometheus::ClientMetric::Label> labels;
  labels.reserve(label_names_.size());
  for (size_t i = 0; i < label_names_.size(); ++i) {
    labels.push_back({label_names_[i], sanitize_label_value(label_values[i])});
  }
  const auto [it, created] = index_.try_emplace(labels, family_.metric.size());
  if (created) {
    family_.metric.emplace_back();
    family_.metric.back().label = std::move(labels);
  }
  return {&family_.metric[it->second], created};
}

void FamilyBuilder::add(const std::vector<std::string>& label_values, double value) {
  auto [metric, created] = series(label_values);
  switch (family_.type) {
    case prometheus::MetricType::Counter:
      metric->counter.value += value;
      break;
    case prometheus::MetricType::Gauge:
      // Gauges here are states (attached, enabled, info): a duplicate must not read as "2".
      metric->gauge.value = created ? value : std::max(metric->gauge.value, value);
      break;
    default:
      throw std::logic_error(family_.name + ": scalar sample on a non-scalar family");
  }
}

void FamilyBuilder::add(const std::vector<std::string>& label_values,
                        const prometheus::ClientMetric::Histogram& histogram) {
  if (family_.type != prometheus::MetricType::Histogram) {
    throw std::logic_error(family_.name + ": histogram sample on a non-histogram family");
  }
  auto [metric, created] = series(label_values);
  if (created) {
    metric->histogram = histogram;
    return;
  }
  auto& into = metric->histogram;
  if (into.bucket.size() != histogram.bucket.size()) {
    throw std::logic_error(family_.name + ": histograms with different buckets");
  }
  into.sample_count += histogram.sample_count;
  into.sample_sum += histogram.sample_sum;
  for (size_t i = 0; i < into.bucket.size(); ++i) {
    into.bucket[i].cumulative_count += histogram.bucket[i].cumulative_count;
  }
}

prometheus::MetricFamily FamilyBuilder::build() && { return std::move(family_); }

}  // namespace hucprof
