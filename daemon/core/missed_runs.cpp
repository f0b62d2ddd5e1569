#include "core/missed_runs.h"

namespace hucprof {

const char* missed_what_name(MissedWhat what) {
  switch (what) {
    case MissedWhat::checks:
      return "checks";
    case MissedWhat::subchecks:
      return "subchecks";
    case MissedWhat::latency:
      return "latency";
    case MissedWhat::samples:
      return "samples";
  }
  return "unknown";
}

MissedWhat missed_what_of(TargetProgram program) {
  switch (program) {
    case TargetProgram::Check:
      return MissedWhat::checks;
    case TargetProgram::CheckReturn:
      return MissedWhat::latency;
    case TargetProgram::Slab:
    case TargetProgram::Vmalloc:
    case TargetProgram::Heap:
    case TargetProgram::Page:
    case TargetProgram::Stack:
    case TargetProgram::Text:
      return MissedWhat::subchecks;
  }
  return MissedWhat::subchecks;
}

MissedCounts MissedRuns::update(const std::vector<RawMisses>& programs) {
  MissedCounts out;
  for (const RawMisses& p : programs) {
    const std::string what = missed_what_name(p.what);
    for (const auto& [reason, total] :
         {std::pair{kMissRecursion, p.recursion}, std::pair{kMissKprobe, p.kprobe_missed}}) {
      if (!total) continue;
      out[{what, reason}] += last_.update({p.program, reason}, *total);
    }
  }
  return out;
}

MissedCoverages missed_coverage(const std::vector<RawMisses>& programs) {
  MissedCoverages out;
  for (const RawMisses& p : programs) {
    auto [it, first] = out.try_emplace(missed_what_name(p.what), MissedCoverage{true, ""});
    if (!p.recursion && !p.kprobe_missed && it->second.counted) {
      it->second = {false, p.uncounted.empty() ? "the kernel does not count them" : p.uncounted};
    }
  }
  return out;
}

std::map<std::string, uint64_t> missed_checks_by_reason(const MissedCounts& counts) {
  std::map<std::string, uint64_t> out;
  for (const auto& [key, n] : counts) {
    if (key.first == missed_what_name(MissedWhat::checks)) out[key.second] += n;
  }
  return out;
}

std::optional<uint64_t> missed_checks(const MissedCounts& counts) {
  std::optional<uint64_t> sum;
  for (const auto& [key, n] : counts) {
    if (key.first == missed_what_name(MissedWhat::checks)) sum = sum.value_or(0) + n;
  }
  return sum;
}

}  // namespace hucprof
