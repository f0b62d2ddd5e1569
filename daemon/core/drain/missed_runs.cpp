#include "core/drain/missed_runs.h"

#include <algorithm>

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

uint64_t MissedRuns::settled_delta(const RawMisses& p) {
  const uint64_t skips = *p.recursion;
  const uint64_t now = skips - std::min(skips, *p.rescued);
  // A first drain has nothing to agree with: it counts nothing yet.
  Settling& s = settling_[p.program];
  const uint64_t agreed = std::min(s.last, now);
  s.last = now;
  if (agreed <= s.counted) return 0;
  const uint64_t delta = agreed - s.counted;
  s.counted = agreed;
  return delta;
}

MissedCounts MissedRuns::update(const std::vector<RawMisses>& programs) {
  MissedCounts out;
  for (const RawMisses& p : programs) {
    const std::string what = missed_what_name(p.what);
    if (p.recursion && p.rescued) {
      out[{what, kMissRecursion}] += settled_delta(p);
    } else if (p.recursion) {
      out[{what, kMissRecursion}] += last_.update({p.program, kMissRecursion}, *p.recursion);
    }
    if (p.kprobe_missed) {
      out[{what, kMissKprobe}] += last_.update({p.program, kMissKprobe}, *p.kprobe_missed);
    }
    if (p.skipped) {
      out[{what, kMissSamplesSkipped}] +=
          last_.update({p.program, kMissSamplesSkipped}, *p.skipped);
    }
  }
  return out;
}

MissedCoverages missed_coverage(const std::vector<RawMisses>& programs) {
  MissedCoverages out;
  for (const RawMisses& p : programs) {
    auto [it, first] = out.try_emplace(missed_what_name(p.what), MissedCoverage{true, ""});
    if (!p.recursion && !p.kprobe_missed && !p.skipped && it->second.counted) {
      it->second = {false, p.uncounted.empty() ? "the kernel does not count them" : p.uncounted};
    }
  }
  return out;
}

MissedCoverage samples_coverage(bool counts_read) {
  if (counts_read) return {true, ""};
  return {false, kSamplesUncounted};
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

std::optional<uint64_t> skipped_samples(const MissedCounts& counts) {
  auto it = counts.find({missed_what_name(MissedWhat::samples), kMissSamplesSkipped});
  if (it == counts.end()) return std::nullopt;
  return it->second;
}

}  // namespace hucprof
