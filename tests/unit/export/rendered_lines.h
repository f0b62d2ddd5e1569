#pragma once
#include <string>
#include <vector>

#include "export/metrics/prometheus_exporter.h"
#include "text_lines.h"

namespace hucprof {

// A snapshot's /metrics page as lines, the way a scraper receives it.
inline std::vector<std::string> rendered(const v1::Snapshot& snapshot) {
  return text_lines(render_text(snapshot_to_families(snapshot)));
}

}  // namespace hucprof
