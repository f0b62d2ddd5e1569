#pragma once
#include <map>
#include <string>
#include <vector>

#include <prometheus/client_metric.h>
#include <prometheus/metric_family.h>
#include <prometheus/metric_type.h>

namespace hucprof {

// Builds one metric family from plain values. Label values are sanitized here (see
// label_sanitizer.h), and because sanitizing can make two series identical — and a scrape
// with duplicate series is rejected by Prometheus — series with equal labels are merged:
// counters and histograms add up, gauges keep the larger value.
class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, prometheus::MetricType type,
                std::vector<std::string> label_names);

  // Counter or gauge sample; label_values line up with label_names.
  void add(const std::vector<std::string>& label_values, double value);
  // Histogram sample; every histogram of a family must use the same bucket bounds.
  void add(const std::vector<std::string>& label_values,
           const prometheus::ClientMetric::Histogram& histogram);

  prometheus::MetricFamily build() &&;

 private:
  // The series for these labels, and whether it was just created.
  std::pair<prometheus::ClientMetric*, bool> series(const std::vector<std::string>& label_values);

  prometheus::MetricFamily family_;
  std::vector<std::string> label_names_;
  std::map<std::vector<prometheus::ClientMetric::Label>, size_t> index_;
};

}  // namespace hucprof
