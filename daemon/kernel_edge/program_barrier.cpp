#include "kernel_edge/program_barrier.h"

#include <cerrno>
#include <cstring>
#include <thread>

#include <bpf/bpf.h>

#include "kernel_edge/map_reader.h"

namespace hucprof {

namespace {
// BPF programs run for microseconds; a sleep this long covers all but a program preempted on
// a PREEMPT kernel, which is why the map-in-map wait is preferred.
constexpr std::chrono::milliseconds kFallbackWait{100};
}  // namespace

ProgramBarrier::ProgramBarrier() {
  inner_ = UniqueFd(bpf_map_create(BPF_MAP_TYPE_ARRAY, "huc_barrier_in", 4, 4, 1, nullptr));
  if (!inner_) {
    error_ = std::string("cannot create an array map: ") + strerror(errno);
    return;
  }
  LIBBPF_OPTS(bpf_map_create_opts, opts, .inner_map_fd = static_cast<__u32>(inner_.get()));
  outer_ = UniqueFd(bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "huc_barrier", 4, 4, 1, &opts));
  if (!outer_) error_ = std::string("cannot create a map-in-map: ") + strerror(errno);
}

void ProgramBarrier::wait() {
  const uint32_t key = 0;
  const uint32_t value = static_cast<uint32_t>(inner_.get());
  if (outer_ && bpf_map_update_elem(outer_.get(), &key, &value, BPF_ANY) == 0) return;
  std::this_thread::sleep_for(kFallbackWait);
}

void ProgramBarrier::add_map_memory(std::vector<MapMemory>& out) const {
  for (const UniqueFd* fd : {&inner_, &outer_}) {
    if (*fd) out.push_back(map_memory(fd->get()));
  }
}

}  // namespace hucprof
