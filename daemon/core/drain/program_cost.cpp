#include "core/drain/program_cost.h"

#include <map>
#include <utility>

namespace hucprof {

BpfStats parse_bpf_stats_enabled(const std::optional<std::string>& text) {
  if (!text) return BpfStats::unknown;
  std::string_view value(*text);
  while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) value.remove_suffix(1);
  if (value == "0") return BpfStats::off;
  if (value == "1") return BpfStats::on;
  return BpfStats::unknown;
}

void fill_program_costs(const ProgramCosts& costs, hucprof::v1::Snapshot& snapshot) {
  switch (costs.stats) {
    case BpfStats::unknown:
      snapshot.set_bpf_stats(hucprof::v1::BPF_STATS_UNKNOWN);
      return;
    case BpfStats::off:
      snapshot.set_bpf_stats(hucprof::v1::BPF_STATS_OFF);
      return;
    case BpfStats::on:
      snapshot.set_bpf_stats(hucprof::v1::BPF_STATS_ON);
      break;
  }
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_name;
  for (const ProgramCost& p : costs.programs) {
    auto& [runs, run_ns] = by_name[p.program];
    runs += p.runs;
    run_ns += p.run_ns;
  }
  for (const auto& [name, cost] : by_name) {
    auto* out = snapshot.add_bpf_programs();
    out->set_program(name);
    out->set_runs(cost.first);
    out->set_run_ns(cost.second);
  }
}

}  // namespace hucprof
