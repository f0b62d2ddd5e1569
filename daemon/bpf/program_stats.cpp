#include "bpf/program_stats.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "core/file_text.h"

namespace hucprof {

void add_program_costs(const bpf_object* obj, std::vector<ProgramCost>& out) {
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    bpf_prog_info info{};
    __u32 length = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &length) != 0) continue;
    out.push_back({bpf_program__name(prog), info.run_cnt, info.run_time_ns});
  }
}

BpfStats read_bpf_stats_enabled() {
  return parse_bpf_stats_enabled(read_file_text("/proc/sys/kernel/bpf_stats_enabled"));
}

}  // namespace hucprof
