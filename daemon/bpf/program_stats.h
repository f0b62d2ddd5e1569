#pragma once
#include <vector>

#include "core/program_cost.h"

struct bpf_object;

namespace hucprof {

// Run count and run time of every loaded program of an object, as the kernel keeps them
// (bpf_obj_get_info_by_fd: run_cnt, run_time_ns). Programs not loaded (the attach method not
// chosen, a target absent here) have no descriptor and are left out.
void add_program_costs(const bpf_object* obj, std::vector<ProgramCost>& out);

// /proc/sys/kernel/bpf_stats_enabled, read now: the operator may switch it at any time.
BpfStats read_bpf_stats_enabled();

}  // namespace hucprof
