#include "kernel_edge/program_stats.h"

#include <cstddef>
#include <cstring>
#include <string_view>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "core/files/file_text.h"
#include "kernel_edge/btf_members.h"

namespace hucprof {

namespace {

// struct bpf_link_info of a perf link up to perf_event.kprobe.missed, laid out as the kernel's
// uapi has it from 6.7 (the build host's linux/bpf.h may predate it): type, id, prog_id, the
// union at 16; in it perf_event's type, 4 bytes of padding and its own union at 24, whose kprobe
// member is func_name, name_len, offset, addr, missed.
struct PerfLinkKprobeInfo {
  uint32_t type;
  uint32_t id;
  uint32_t prog_id;
  uint32_t pad0;
  uint32_t perf_event_type;
  uint32_t pad1;
  uint64_t func_name;
  uint32_t name_len;
  uint32_t offset;
  uint64_t addr;
  uint64_t missed;
};
static_assert(offsetof(PerfLinkKprobeInfo, perf_event_type) == 16);
static_assert(offsetof(PerfLinkKprobeInfo, func_name) == 24);
static_assert(offsetof(PerfLinkKprobeInfo, missed) == 48);

constexpr uint32_t kLinkTypePerfEvent = 7;   // BPF_LINK_TYPE_PERF_EVENT
constexpr uint32_t kPerfEventKprobe = 3;     // BPF_PERF_EVENT_KPROBE
constexpr uint32_t kPerfEventKretprobe = 4;  // BPF_PERF_EVENT_KRETPROBE

}  // namespace

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

std::optional<uint64_t> program_recursion_misses(int prog_fd) {
  if (prog_fd < 0) return std::nullopt;
  bpf_prog_info info{};
  __u32 length = sizeof(info);
  if (bpf_obj_get_info_by_fd(prog_fd, &info, &length) != 0) return std::nullopt;
  // The kernel fills no more than its own struct: a kernel before 5.12 ends before the field.
  if (length < offsetof(bpf_prog_info, recursion_misses) + sizeof(info.recursion_misses)) {
    return std::nullopt;
  }
  return info.recursion_misses;
}

std::optional<uint64_t> kprobe_link_missed(int link_fd) {
  if (link_fd < 0) return std::nullopt;
  PerfLinkKprobeInfo info{};
  __u32 length = sizeof(info);
  if (bpf_obj_get_info_by_fd(link_fd, &info, &length) != 0) return std::nullopt;
  if (length < sizeof(info) || info.type != kLinkTypePerfEvent) return std::nullopt;
  if (info.perf_event_type != kPerfEventKprobe && info.perf_event_type != kPerfEventKretprobe) {
    return std::nullopt;
  }
  return info.missed;
}

bool kernel_link_info_has_kprobe_missed(const btf* kernel) {
  if (!kernel) return false;
  const int32_t info = btf__find_by_name_kind(kernel, "bpf_link_info", BTF_KIND_STRUCT);
  if (info <= 0) return false;
  const uint32_t perf_event = btf_member_type(kernel, static_cast<uint32_t>(info), "perf_event");
  const uint32_t kprobe = perf_event ? btf_member_type(kernel, perf_event, "kprobe") : 0;
  return kprobe && btf_member_type(kernel, kprobe, "missed") != 0;
}

}  // namespace hucprof
