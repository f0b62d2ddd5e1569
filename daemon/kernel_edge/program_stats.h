#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/drain/program_cost.h"

struct bpf_object;
struct btf;

namespace hucprof {

// Run count and run time of every loaded program of an object, as the kernel keeps them
// (bpf_obj_get_info_by_fd: run_cnt, run_time_ns). Programs not loaded (the attach method not
// chosen, a target absent here) have no descriptor and are left out.
void add_program_costs(const bpf_object* obj, std::vector<ProgramCost>& out);

// /proc/sys/kernel/bpf_stats_enabled, read now: the operator may switch it at any time.
BpfStats read_bpf_stats_enabled();

// The runs of a loaded program the kernel skipped because it was already running on that CPU
// (fentry: the trampoline's per-program guard) or another BPF program was (kprobe, 6.7+), as it
// counts them whatever bpf_stats says (bpf_prog_info recursion_misses, 5.12+). Unset when the
// kernel's bpf_prog_info has no such field, or the descriptor cannot be asked.
std::optional<uint64_t> program_recursion_misses(int prog_fd);

// The hits of a kprobe that the kprobe itself skipped because another kprobe ran on that CPU
// (struct bpf_link_info perf_event.kprobe.missed, 6.7+): for a kprobe attached through a BPF
// perf link. Unset for any other link or a perf event attached by ioctl (no BPF link). A kernel
// whose link info has no such field (kernel_link_info_has_kprobe_missed) answers 0: ask that
// first.
std::optional<uint64_t> kprobe_link_missed(int link_fd);

// Whether the kernel's struct bpf_link_info has perf_event.kprobe.missed (6.7+; the same change
// made a kprobe program count the runs it skips while another BPF program runs on its CPU).
// `kernel` may be null (no BTF): then no.
bool kernel_link_info_has_kprobe_missed(const btf* kernel);

}  // namespace hucprof
