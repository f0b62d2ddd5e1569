#include "kernel_edge/sampling_session.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "core/files/file_text.h"
#include "core/kernel/cpu_time.h"
#include "core/text/cpu_list.h"
#include "hucprof_abi.h"
#include "kernel_edge/abi_checks.h"
#include "kernel_edge/kernel_facts.h"
#include "kernel_edge/map_reader.h"
#include "kernel_edge/map_sizing.h"
#include "kernel_edge/rodata_ranges.h"
#include "sampler.skel.h"
#include "sampler_compat.skel.h"

namespace hucprof {

namespace {

// A period, not a frequency: each CPU's own (cpu_clock_period_ns_on), which the kernel would
// otherwise compute as NSEC_PER_SEC / frequency for all of them alike.
int open_cpu_clock(int cpu, uint64_t period_ns) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.sample_period = period_ns;
  // Enabled once the program is attached (libbpf does), so the event's count, which tells the
  // samples it owed, starts with the program's runs.
  attr.disabled = 1;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

// The kernel refuses a frequency above kernel.perf_event_max_sample_rate, but not the period
// that frequency stands for: hucprof keeps the administrator's limit itself. "" when within it
// (or the limit cannot be read: then the kernel's own throttling is all there is).
std::string above_max_sample_rate(uint32_t frequency_hz) {
  static constexpr const char* kPath = "/proc/sys/kernel/perf_event_max_sample_rate";
  const auto text = read_file_text(kPath);
  if (!text) return "";
  char* end = nullptr;
  const unsigned long max = std::strtoul(text->c_str(), &end, 10);
  if (end == text->c_str() || frequency_hz <= max) return "";
  return "--sample-frequency " + std::to_string(frequency_hz) + " Hz is above the kernel's " +
         "limit of " + std::to_string(max) + " samples a second per CPU (" + kPath +
         "; the kernel lowers it when sampling interrupts take too long)";
}

}  // namespace

SamplingSession::~SamplingSession() {
  links_.clear();
  sampler_bpf__destroy(skel_);
}

SamplingSession::Loaded SamplingSession::load(const AttachPlan& plan) {
  Loaded out;
  if (!plan.sampling) {
    out.error = plan.sampling_reason;
    return out;
  }
  std::unique_ptr<SamplingSession> self(new SamplingSession());
  // The build the plan chose from the kernel's features: the compat one is sampler's skeleton
  // over the other object's bytes (bpf/CMakeLists.txt).
  self->skel_ =
      plan.sampler_build == SamplerBuild::Loop
          ? sampler_bpf__open()
          : open_skeleton_over<sampler_bpf, sampler_bpf__create_skeleton, sampler_bpf__destroy>(
                sampler_compat_bpf__elf_bytes);
  if (!self->skel_) {
    out.error = std::string("cannot open the sampler BPF object: ") + strerror(errno);
    return out;
  }
  if (auto mismatch = check_sampler_abi(self->skel_->obj); !mismatch.empty()) {
    out.error = "BPF/daemon ABI mismatch: " + mismatch;
    return out;
  }
  auto* rodata = self->skel_->rodata;
  set_rodata_ranges(rodata->check_ranges, &rodata->nr_check_ranges, plan.dispatcher_ranges);
  set_rodata_ranges(rodata->interrupt_ranges, &rodata->nr_interrupt_ranges,
                    plan.interrupt_ranges.ranges);
  set_rodata_follow(*rodata, plan.follow);
  rodata->task_stack_size = plan.task_stack_size;
  rodata->label_pids = plan.sample_pids ? 1 : 0;
  const MapSizing sizing[] = {
      {self->skel_->maps.samples, plan.maps.max_keys, MapSizing::Preallocated},
      // One key per workload that ran on a sampled CPU in an interval: far fewer than stacks,
      // so allocated on use where the kernel lets a perf_event program do that.
      {self->skel_->maps.busy_samples, plan.maps.max_keys,
       plan.maps.stacks_on_demand ? MapSizing::OnDemand : MapSizing::Preallocated},
      {self->skel_->maps.sample_stacks, plan.maps.max_stacks,
       plan.maps.stacks_on_demand ? MapSizing::OnDemand : MapSizing::Preallocated},
  };
  if (auto error = apply_map_sizing(sizing); !error.empty()) {
    out.error = error;
    return out;
  }
  if (int err = sampler_bpf__load(self->skel_); err) {
    out.error = std::string("cannot load the sampler BPF program (") +
                sampler_build_name(plan.sampler_build) + "): " + strerror(-err) +
                " (every feature it uses is there; run with --log.level=debug for the verifier "
                "log)";
    return out;
  }
  self->possible_cpus_ = libbpf_num_possible_cpus();
  self->cpus_ = plan.follow.cpus;
  out.session = std::move(self);
  return out;
}

SamplingSession::Started SamplingSession::attach(Loaded loaded, uint32_t frequency_hz) {
  Started out;
  if (!loaded.session) {
    out.error = loaded.error;
    return out;
  }
  auto online_text = read_file_text("/sys/devices/system/cpu/online");
  auto online = online_text ? parse_cpu_list(*online_text) : std::nullopt;
  if (!online || online->empty()) {
    out.error = "cannot read the online CPU list from /sys/devices/system/cpu/online";
    return out;
  }
  if (auto refused = above_max_sample_rate(frequency_hz); !refused.empty()) {
    out.error = refused;
    return out;
  }
  std::unique_ptr<SamplingSession> self = std::move(loaded.session);
  // `record -C`: no event on the other CPUs at all (the program's CPU test is then moot).
  const std::vector<int>& cpus = self->cpus_.empty() ? *online : self->cpus_;
  int last_errno = 0;
  for (size_t i = 0; i < cpus.size(); ++i) {
    const int cpu = cpus[i];
    const uint64_t period_ns = cpu_clock_period_ns_on(frequency_hz, i);
    int fd = open_cpu_clock(cpu, period_ns);
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
    self->events_.push_back({cpu, fd, period_ns});
    out.min_period_ns = out.min_period_ns ? std::min(out.min_period_ns, period_ns) : period_ns;
    out.max_period_ns = std::max(out.max_period_ns, period_ns);
  }
  if (self->links_.empty()) {
    out.error =
        "perf_event_open(cpu-clock) failed on every CPU: " + perf_permission_words(last_errno);
    return out;
  }
  out.cpus = self->links_.size();
  self->skipped_.emplace();
  out.session = std::move(self);
  return out;
}

void SamplingSession::retire_generation() {
  hucprof::retire_generation(generation_, skel_->bss->generation);
}

void SamplingSession::drain(RawDrain& out) {
  out.sampling = true;
  const int stacks_fd = bpf_map__fd(skel_->maps.sample_stacks);
  drain_retired<huc_sample_key, uint64_t>(
      bpf_map__fd(skel_->maps.samples), generation_,
      [&](const huc_sample_key& key, uint64_t count) {
        out.samples.push_back({key, count});
        read_stack<huc_stack>(stacks_fd, key.stack_id, key.generation, out.sample_stacks);
      });
  delete_retired_stacks(stacks_fd, generation_);
  drain_retired<huc_busy_key, uint64_t>(bpf_map__fd(skel_->maps.busy_samples), generation_,
                                        [&](const huc_busy_key& key, uint64_t count) {
                                          out.busy.push_back({key, count});
                                        });
  add_percpu_array(bpf_map__fd(skel_->maps.contexts), possible_cpus_, out.contexts);
  add_percpu_array(bpf_map__fd(skel_->maps.sample_drops), possible_cpus_, out.drops);
  add_percpu_array(bpf_map__fd(skel_->maps.sample_excluded), possible_cpus_, out.excluded);
  add_object_costs(skel_->obj, out);
  RawMisses samples;
  samples.program = bpf_program__name(skel_->progs.huc_sample);
  samples.what = MissedWhat::samples;
  const auto cpus = read_sampled_cpus();
  if (const MissedCoverage coverage = samples_coverage(cpus && skipped_); coverage.counted) {
    samples.skipped = skipped_->update(*cpus);
  } else {
    samples.uncounted = coverage.uncounted;
  }
  out.misses.push_back(std::move(samples));
}

MissedCoverage SamplingSession::sample_misses_coverage() const {
  return samples_coverage(read_sampled_cpus().has_value());
}

std::optional<std::vector<SampledCpu>> SamplingSession::read_sampled_cpus() const {
  std::vector<SampledCpu> out;
  // The counts first, then the runs: a run that comes between belongs to a period the count
  // already owed (SkippedSamples settles the rest).
  for (const Event& e : events_) {
    uint64_t count = 0;
    if (read(e.fd, &count, sizeof(count)) != static_cast<ssize_t>(sizeof(count))) {
      return std::nullopt;
    }
    out.push_back({e.cpu, count, 0, e.period_ns});
  }
  // Every followed run counts one context, every other one sample_unfollowed (hucprof_abi.h).
  std::vector<uint64_t> runs(static_cast<size_t>(possible_cpus_));
  if (!add_percpu_slots_by_cpu(bpf_map__fd(skel_->maps.contexts), HUC_CTX_COUNT, runs) ||
      !add_percpu_slots_by_cpu(bpf_map__fd(skel_->maps.sample_unfollowed), 1, runs)) {
    return std::nullopt;
  }
  for (SampledCpu& c : out) {
    if (c.cpu < 0 || c.cpu >= possible_cpus_) return std::nullopt;
    c.runs = runs[static_cast<size_t>(c.cpu)];
  }
  return out;
}

}  // namespace hucprof
