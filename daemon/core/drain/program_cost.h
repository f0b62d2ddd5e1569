#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hucprof.pb.h"

namespace hucprof {

// What hucprof's own BPF programs cost the kernel: the run count and run time the kernel keeps
// per program (bpf_prog_info run_cnt, run_time_ns). The kernel counts them only while
// kernel.bpf_stats_enabled=1 (or a process holds a BPF_ENABLE_STATS descriptor); hucprof never
// turns that on itself, because it adds two clock reads to every run of every BPF program on the
// machine, not only hucprof's.
struct ProgramCost {
  std::string program;  // the program's function name in the BPF object, as bpftool shows it
  uint64_t runs = 0;
  uint64_t run_ns = 0;
};

enum class BpfStats { unknown, off, on };

struct ProgramCosts {
  BpfStats stats = BpfStats::unknown;  // /proc/sys/kernel/bpf_stats_enabled
  std::vector<ProgramCost> programs;   // every loaded program of hucprof's objects
};

// /proc/sys/kernel/bpf_stats_enabled holds "0\n" or "1\n"; anything else (no such file: a kernel
// before 5.8, /proc/sys not mounted) is unknown.
BpfStats parse_bpf_stats_enabled(const std::optional<std::string>& text);

// Carries the stats state into the snapshot, and the programs only while the kernel counts them:
// with stats off run_cnt stays at whatever it was, and a frozen or zero count would read as "this
// program costs nothing". Programs of the same name are summed (one series per name).
void fill_program_costs(const ProgramCosts& costs, hucprof::v1::Snapshot& snapshot);

}  // namespace hucprof
