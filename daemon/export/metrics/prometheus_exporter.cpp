#include "export/metrics/prometheus_exporter.h"

#include <iterator>
#include <sstream>
#include <utility>

#include <prometheus/text_serializer.h>

#include "export/metrics/process_metrics.h"

namespace hucprof {

void SnapshotCollectable::update(hucprof::v1::Snapshot snapshot) {
  std::lock_guard lock(mutex_);
  snapshot_ = std::move(snapshot);
  snapshot_text_.clear();
}

std::string SnapshotCollectable::render() const {
  std::string text;
  {
    std::lock_guard lock(mutex_);
    if (snapshot_text_.empty()) snapshot_text_ = render_text(snapshot_to_families(snapshot_));
    text = snapshot_text_;
  }
  return text + render_text(process_families());
}

std::vector<prometheus::MetricFamily> SnapshotCollectable::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  {
    // Render under the lock: one scrape sees one snapshot, never half of the next.
    std::lock_guard lock(mutex_);
    families = snapshot_to_families(snapshot_);
  }
  auto process = process_families();
  families.insert(families.end(), std::make_move_iterator(process.begin()),
                  std::make_move_iterator(process.end()));
  return families;
}

std::string render_text(const std::vector<prometheus::MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace hucprof
