#include "bpf/sampling_session.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bpf/abi_checks.h"
#include "bpf/kernel_facts.h"
#include "bpf/map_reader.h"
#include "core/cpu_list.h"
#include "core/file_text.h"
#include "hucprof_abi.h"
#include "sampler.skel.h"

namespace hucprof {

namespace {

int open_cpu_clock(int cpu, uint32_t frequency_hz) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = frequency_hz;
  return static_cast<int>(
      syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

SamplingSession::~SamplingSession() {
  links_.clear();
  sampler_bpf__destroy(skel_);
}

SamplingSession::Started SamplingSession::start(uint32_t frequency_hz,
                                                const AddressRanges& check_ranges) {
  Started out;
  if (check_ranges.ranges.empty()) {
    out.error = "no usercopy check function in /proc/kallsyms (is CONFIG_HARDENED_USERCOPY off, "
                "or are addresses hidden?)";
    return out;
  }
  auto online_text = read_file_text("/sys/devices/system/cpu/online");
  auto online = online_text ? parse_cpu_list(*online_text) : std::nullopt;
  if (!online || online->empty()) {
    out.error = "cannot read the online CPU list from /sys/devices/system/cpu/online";
    return out;
  }

  std::unique_ptr<SamplingSession> self(new SamplingSession());
  self->skel_ = sampler_bpf__open();
  if (!self->skel_) {
    out.error = std::string("cannot open the sampler BPF object: ") + strerror(errno);
    return out;
  }
  if (auto mismatch = check_sampler_abi(self->skel_->obj); !mismatch.empty()) {
    out.error = "BPF/daemon ABI mismatch: " + mismatch;
    return out;
  }
  auto* rodata = self->skel_->rodata;
  for (size_t i = 0; i < check_ranges.ranges.size(); ++i) {
    rodata->check_ranges[i] = check_ranges.ranges[i];
  }
  rodata->nr_check_ranges = static_cast<__u32>(check_ranges.ranges.size());
  if (int err = sampler_bpf__load(self->skel_); err) {
    out.error = std::string("cannot load the sampler BPF program: ") + strerror(-err);
    return out;
  }

  int last_errno = 0;
  for (int cpu : *online) {
    int fd = open_cpu_clock(cpu, frequency_hz);
    if (fd < 0) {
      last_errno = errno;
      continue;
    }
    bpf_link* link = bpf_program__attach_perf_event(self->skel_->progs.huc_sample, fd);
    if (!link) {
      last_errno = errno;
      close(fd);
      continue;
    }
    self->links_.emplace_back(link);
  }
  if (self->links_.empty()) {
    out.error = "perf_event_open(cpu-clock) failed on every CPU: " +
                perf_permission_words(last_errno);
    return out;
  }
  out.cpus = self->links_.size();
  self->possible_cpus_ = libbpf_num_possible_cpus();
  out.session = std::move(self);
  return out;
}

void SamplingSession::drain(RawDrain& out) {
  out.sampling = true;
  const int cpus = possible_cpus_;
  const int stacks_fd = bpf_map__fd(skel_->maps.sample_stacks);
  read_percpu_counts(bpf_map__fd(skel_->maps.samples), cpus, out.samples);
  for (const auto& sample : out.samples) {
    const int32_t id = sample.key.stack_id;
    if (stack_cache_.contains(id)) continue;
    auto frames = read_stack(stacks_fd, id, HUC_FULL_STACK_DEPTH);
    if (!frames.empty()) stack_cache_.emplace(id, std::move(frames));
  }
  out.sample_stacks = stack_cache_;
  add_percpu_array(bpf_map__fd(skel_->maps.contexts), cpus, out.contexts);
  add_percpu_array(bpf_map__fd(skel_->maps.drops), cpus, out.drops);
}

}  // namespace hucprof
