#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include "hucprof.pb.h"

namespace hucprof {

// Turns the latest Snapshot into the metric contract (docs/design.md) at scrape time (the
// ebpf_exporter way: no prometheus-cpp counters mutated on the hot path, one consistent view per
// scrape). Also exports the process_* metrics users expect from any exporter.
class SnapshotCollectable : public prometheus::Collectable {
 public:
  void update(hucprof::v1::Snapshot snapshot);
  std::vector<prometheus::MetricFamily> Collect() const override;
  // The text format of Collect(): the snapshot's part rendered once per update (it only
  // changes every --interval), the process_* part at each call.
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  hucprof::v1::Snapshot snapshot_;
  mutable std::string snapshot_text_;  // "" until first rendered after an update
};

// Pure rendering of a snapshot into metric families (no process_* metrics): what tests check.
std::vector<prometheus::MetricFamily> snapshot_to_families(const hucprof::v1::Snapshot& snapshot);
// Prometheus text exposition format of the families.
std::string render_text(const std::vector<prometheus::MetricFamily>& families);

}  // namespace hucprof
