#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/drain/delta_tracker.h"
#include "core/kernel/probe_targets.h"

namespace hucprof {

// Runs of hucprof's programs that the kernel skipped: the event happened, the program never saw
// it, and only the kernel's counters say so (docs/design.md, "Checks the program never saw").
//
// - recursion: bpf_prog_info recursion_misses (5.12+), counted whatever bpf_stats says. A BPF
//   trampoline (fentry, fexit) runs a program at most once per CPU at a time: while a run of it is
//   preempted or interrupted on a CPU, every other entry there skips it. A kprobe program is
//   skipped while any BPF program, or a bpf() map operation, is active on the CPU; the kernel
//   counts that only from 6.7.
// - kprobe_missed: the kprobe's own missed count (bpf_link_info, 6.7+): a hit the kprobe skipped
//   because another kprobe handler ran on that CPU.
// - samples_skipped: samples the sampler was owed and never ran for, which no kernel counts:
//   hucprof counts them itself (core/drain/skipped_samples.h).
enum class MissedWhat { checks, subchecks, latency, samples };
const char* missed_what_name(MissedWhat what);
// What a skipped run of a target's program would have counted.
MissedWhat missed_what_of(TargetProgram program);

inline constexpr const char* kMissRecursion = "recursion";
inline constexpr const char* kMissKprobe = "kprobe_missed";
// The sampler's: samples its CPU's cpu-clock event owed the program and it never ran for, which
// hucprof counts itself (core/drain/skipped_samples.h).
inline constexpr const char* kMissSamplesSkipped = "samples_skipped";

// One loaded program and what the kernel counted of its skipped runs, cumulative since it was
// loaded. Unset: the kernel does not count that kind of skip here (then nothing is made up).
struct RawMisses {
  std::string program;  // the BPF function name
  MissedWhat what = MissedWhat::checks;
  std::optional<uint64_t> recursion;
  std::optional<uint64_t> kprobe_missed;
  // All unset: why this program's skipped runs are not counted, in words.
  std::string uncounted = {};
  // The check's program with a rescue program beside it: the skipped runs the rescue counted
  // after all (read before `recursion`), which are no misses.
  std::optional<uint64_t> rescued = {};
  // The sampler: the samples it was owed and never ran for, as hucprof counts them where the
  // kernel counts none (SkippedSamples).
  std::optional<uint64_t> skipped = {};
};

// Whether the kernel counts the skipped runs of the programs counting `what`, and if not why:
// what the outputs say beside their exact counts.
struct MissedCoverage {
  bool counted = false;
  std::string uncounted;  // why not, in words ("" when counted)
};
// By missed_what_name. A what is counted when every program counting it is.
using MissedCoverages = std::map<std::string, MissedCoverage>;
MissedCoverages missed_coverage(const std::vector<RawMisses>& programs);

// Why the samples the kernel skips are not counted, when hucprof cannot read what it counts them
// from: bpf_overflow_handler() drops a sample while bpf_prog_active is held on its CPU and counts
// nothing (docs/design.md).
inline constexpr const char* kSamplesUncounted =
    "the kernel skips a sample while a kprobe or perf_event BPF program, or a bpf() map "
    "operation, is active on its CPU, and counts none of them; hucprof could not read its "
    "cpu-clock events' counts to count them itself";
// How they are counted otherwise, in words (doctor).
inline constexpr const char* kSamplesCounted =
    "the kernel counts none; hucprof counts them as each CPU's cpu-clock count over the period "
    "less the program's runs there: hucprof_dropped_total{reason=\"samples_skipped\"}";

// Whether hucprof counts the samples the kernel skips: only when it could read every sampled
// CPU's event count and program runs. The sampler's drain and doctor both ask this.
MissedCoverage samples_coverage(bool counts_read);

// (what, reason) → count; a key is present exactly for what the kernel counts.
using MissedCounts = std::map<std::pair<std::string, std::string>, uint64_t>;

// The skipped runs of every loaded program since the last drain, by what they would have
// counted and why. Pure: the kernel edge reads the counters, this takes their differences (a
// program loaded again starts from 0).
//
// A rescued check is first a skip (the kernel counts it when the check's program's turn comes),
// then a rescue (the rescue program's turn, a few hundred instructions later, or a time slice
// later if the task is preempted in between). A drain reading both in between counts it as
// missed, and the next drain would take it back; a counter cannot. So the misses of such a
// program are what two successive drains agree on at least: the skips less the rescued, the
// smaller of this drain's and the last one's (0 before the first), never less than already
// counted. They come one drain late.
class MissedRuns {
 public:
  MissedCounts update(const std::vector<RawMisses>& programs);

 private:
  struct Settling {
    uint64_t last = 0;     // skips less rescued at the last drain
    uint64_t counted = 0;  // misses counted so far
  };
  uint64_t settled_delta(const RawMisses& p);
  DeltaTracker<std::pair<std::string, std::string>> last_;  // (program, reason)
  std::map<std::string, Settling> settling_;                // by program
};

// The checks the kernel counted as skipped, of every reason (MissedWhat::checks); nullopt when
// the kernel counts none of them.
std::optional<uint64_t> missed_checks(const MissedCounts& counts);
// The same by reason ("recursion", "kprobe_missed"): empty when the kernel counts none.
std::map<std::string, uint64_t> missed_checks_by_reason(const MissedCounts& counts);
// The samples the sampler was owed and never ran for (MissedWhat::samples); nullopt when hucprof
// could not count them.
std::optional<uint64_t> skipped_samples(const MissedCounts& counts);

}  // namespace hucprof
