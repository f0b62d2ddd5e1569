// snapshot_to_families(): the metric contract (README "Metric reference", docs/design.md), one
// block per family, in the order of the contract table. Every family is emitted even when empty so
// that HELP/TYPE (and with them the set of families a dashboard can rely on) do not depend on the
// mode.
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/base/as_double.h"
#include "core/drain/raw_drain.h"
#include "core/kernel/cpu_time.h"
#include "export/metrics/copy_families.h"
#include "export/metrics/family_builder.h"
#include "export/metrics/latency_buckets.h"
#include "export/metrics/missed_families.h"
#include "export/metrics/prediction_families.h"
#include "export/metrics/program_cost_families.h"
#include "export/metrics/prometheus_exporter.h"
#include "export/metrics/workload_families.h"

namespace hucprof {
namespace {

using prometheus::MetricType;

// ProbeStatus.mode is "" when the target was never attached; as a label that would read as
// "label absent", so it becomes an explicit word.
std::string probe_mode_label(const hucprof::v1::ProbeStatus& probe) {
  return probe.mode().empty() ? "none" : probe.mode();
}

void add_probe_families(const hucprof::v1::Snapshot& snapshot,
                        std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder attached(
      "hucprof_probe_attached",
      "Whether a probe is attached to a kernel target (1) or not (0), by target and attach mode "
      "(mode \"none\": never attached).",
      MetricType::Gauge, {"target", "mode"});
  FamilyBuilder unavailable("hucprof_probe_unavailable_info",
                            "Probes that are not attached, with the reason in words. Always 1.",
                            MetricType::Gauge, {"target", "reason"});
  for (const auto& probe : snapshot.probes()) {
    attached.add({probe.target(), probe_mode_label(probe)}, probe.attached() ? 1 : 0);
    if (!probe.attached()) unavailable.add({probe.target(), probe.reason()}, 1);
  }
  out.push_back(std::move(attached).build());
  out.push_back(std::move(unavailable).build());

  FamilyBuilder subchecks(
      "hucprof_probe_subchecks_info",
      "How probe mode counts the sub-checks (method: classified inside the check's program, "
      "probed at each sub-check function, or not counted) and why, in words. Always 1.",
      MetricType::Gauge, {"method", "reason"});
  if (!snapshot.subcheck_method().empty()) {
    subchecks.add({snapshot.subcheck_method(), snapshot.subcheck_method_reason()}, 1);
  }
  out.push_back(std::move(subchecks).build());

  FamilyBuilder helper_calls(
      "hucprof_probe_helper_calls_total",
      "Checks called from a copy helper (simple_copy_to_iter, ip_generic_getfrag, ...), by how "
      "probe mode found the call site above it: learned_offsets (a few stack reads) or "
      "stack_walk (a bounded stack walk: while learning, or where a frame is not learnable).",
      MetricType::Counter, {"method"});
  FamilyBuilder mismatches(
      "hucprof_probe_offset_mismatches_total",
      "Learned stack offsets that disagreed with a real stack trace and were dropped (their "
      "callers go back to the stack walk).",
      MetricType::Counter, {});
  for (const auto& series : snapshot.helper_walks()) {
    if (series.walk() == helper_walk_name(HUC_WALK_MISMATCH)) {
      mismatches.add({}, as_double(series.count()));
    } else {
      helper_calls.add({series.walk()}, as_double(series.count()));
    }
  }
  out.push_back(std::move(helper_calls).build());
  out.push_back(std::move(mismatches).build());
}

// A sample counter, as a count and in Prometheus base units: samples x the cpu-clock period, so
// sum(rate(usercopy_cpu_seconds_total[5m])) reads as cores spent in the checks. One walk over
// the series fills both families.
struct SampleFamilies {
  uint64_t hz;
  FamilyBuilder samples;
  FamilyBuilder seconds;

  void add(const std::vector<std::string>& labels, uint64_t n) {
    samples.add(labels, as_double(n));
    seconds.add(labels, cpu_clock_seconds(n, hz));
  }
};

}  // namespace

std::vector<prometheus::MetricFamily> snapshot_to_families(const hucprof::v1::Snapshot& snapshot) {
  std::vector<prometheus::MetricFamily> out;

  FamilyBuilder checks(
      "usercopy_checks_total",
      "Hardened-usercopy checks (__check_object_size calls, counted exactly by probes), by kernel "
      "call site, syscall and copy direction.",
      MetricType::Counter, {"callsite", "syscall", "direction"});
  FamilyBuilder bytes(
      "usercopy_check_bytes_total",
      "Bytes copied under hardened-usercopy checks, by kernel call site, syscall and copy "
      "direction.",
      MetricType::Counter, {"callsite", "syscall", "direction"});
  for (const auto& series : snapshot.checks()) {
    checks.add({series.callsite(), series.syscall(), series.direction()},
               as_double(series.calls()));
    bytes.add({series.callsite(), series.syscall(), series.direction()}, as_double(series.bytes()));
  }
  out.push_back(std::move(checks).build());
  out.push_back(std::move(bytes).build());
  add_missed_families(snapshot, out);

  FamilyBuilder subchecks(
      "usercopy_subchecks_total",
      "Steps of the hardened-usercopy checks run, counted exactly, by kernel call site and step "
      "(the function that ran: stack_object, vmap_area, virt_addr_valid, slab_object, ...; "
      "docs/metrics.md).",
      MetricType::Counter, {"callsite", "step"});
  for (const auto& series : snapshot.subchecks()) {
    subchecks.add({series.callsite(), series.step()}, as_double(series.count()));
  }
  out.push_back(std::move(subchecks).build());

  FamilyBuilder objects(
      "usercopy_object_checks_total",
      "Hardened-usercopy checks whose sub-checks probe mode classified, counted exactly, by kernel "
      "call site, the kind of object copied (stack, vmalloc, slab; other: none of these), the "
      "object's identity (a slab object's cache, top-K per call site and other beyond; [unknown] "
      "where hucprof does not know it) and, for slab, whether the copy lay inside the cache's "
      "usercopy region (none for other kinds).",
      MetricType::Counter, {"callsite", "object_kind", "object", "region"});
  for (const auto& series : snapshot.object_checks()) {
    objects.add({series.callsite(), series.object_kind(), series.object(), series.region()},
                as_double(series.count()));
  }
  out.push_back(std::move(objects).build());

  FamilyBuilder duration("usercopy_check_duration_seconds",
                         "Duration of __check_object_size calls, by kernel call site (needs "
                         "--latency; log2 buckets).",
                         MetricType::Histogram, {"callsite"});
  for (const auto& series : snapshot.latency()) {
    const std::span<const uint64_t> slots(series.bucket_counts().data(),
                                          static_cast<size_t>(series.bucket_counts_size()));
    duration.add({series.callsite()}, log2_slots_to_histogram(slots, series.sum_ns()));
  }
  out.push_back(std::move(duration).build());

  const uint64_t hz = snapshot.sample_frequency_hz();
  SampleFamilies cpu{hz,
                     FamilyBuilder("usercopy_cpu_samples_total",
                                   "CPU clock samples taken inside hardened-usercopy check "
                                   "functions, by kernel call site, syscall and step (the "
                                   "innermost check function; entry: __check_object_size's own "
                                   "code).",
                                   MetricType::Counter, {"callsite", "syscall", "step"}),
                     FamilyBuilder("usercopy_cpu_seconds_total",
                                   "CPU time spent inside hardened-usercopy check functions "
                                   "(samples x sampling period, summed over CPUs), by kernel call "
                                   "site, syscall and step (the innermost check function).",
                                   MetricType::Counter, {"callsite", "syscall", "step"})};
  for (const auto& series : snapshot.cpu_samples()) {
    cpu.add({series.callsite(), series.syscall(), series.step()}, series.samples());
  }
  SampleFamilies sampled{hz,
                         FamilyBuilder("usercopy_sampled_cpu_samples_total",
                                       "All CPU clock samples taken, by context (kernel, user, "
                                       "idle): the denominator of usercopy_cpu_samples_total.",
                                       MetricType::Counter, {"context"}),
                         FamilyBuilder("usercopy_sampled_cpu_seconds_total",
                                       "All sampled CPU time (samples x sampling period, summed "
                                       "over CPUs), by context (kernel, user, idle): the "
                                       "denominator of usercopy_cpu_seconds_total.",
                                       MetricType::Counter, {"context"})};
  // While sampling runs every context is exported from the first scrape on, at 0 until it has
  // a sample: rate() and increase() count nothing of a series' first value.
  std::map<std::string, uint64_t> by_context;
  if (hz > 0) by_context = {{"kernel", 0}, {"user", 0}, {"idle", 0}};
  for (const auto& series : snapshot.sampled()) by_context[series.context()] += series.samples();
  for (const auto& [context, n] : by_context) sampled.add({context}, n);
  SampleFamilies all_checks{
      hz,
      FamilyBuilder("usercopy_checks_cpu_samples_total",
                    "CPU clock samples taken inside hardened-usercopy check functions, all call "
                    "sites: the sum of usercopy_cpu_samples_total over the call sites it names "
                    "and those it no longer does. From the first scrape on while sampling runs, "
                    "at 0 until the first: the counter to take a node's rates from.",
                    MetricType::Counter, {}),
      FamilyBuilder("usercopy_checks_cpu_seconds_total",
                    "CPU time spent inside hardened-usercopy check functions, all call sites "
                    "(usercopy_checks_cpu_samples_total x sampling period, summed over CPUs).",
                    MetricType::Counter, {})};
  if (hz > 0) all_checks.add({}, snapshot.check_samples());
  FamilyBuilder excluded("usercopy_excluded_cpu_samples_total",
                         "CPU clock samples with a hardened-usercopy check on the stack that are "
                         "not the check's cost, by reason (interrupt: an interrupt, exception or "
                         "softirq ran on top of the check). Counted in "
                         "usercopy_sampled_cpu_samples_total{context=\"kernel\"}, not in "
                         "usercopy_cpu_samples_total.",
                         MetricType::Counter, {"reason"});
  for (const auto& series : snapshot.excluded()) {
    excluded.add({series.reason()}, as_double(series.samples()));
  }
  out.push_back(std::move(cpu.samples).build());
  out.push_back(std::move(sampled.samples).build());
  out.push_back(std::move(all_checks.samples).build());
  out.push_back(std::move(excluded).build());

  add_prediction_families(snapshot, out);
  out.push_back(std::move(cpu.seconds).build());
  out.push_back(std::move(sampled.seconds).build());
  out.push_back(std::move(all_checks.seconds).build());
  add_copy_families(snapshot, out);
  add_workload_families(snapshot, out);

  FamilyBuilder enabled(
      "usercopy_hardened_enabled",
      "Whether the running kernel performs hardened-usercopy checks (1) or not (0).",
      MetricType::Gauge, {});
  enabled.add({}, snapshot.hardened_usercopy_enabled() ? 1 : 0);
  out.push_back(std::move(enabled).build());

  add_probe_families(snapshot, out);

  FamilyBuilder dropped("hucprof_dropped_total",
                        "Events hucprof could not record (map full, stack-id collision, ...), by "
                        "reason.",
                        MetricType::Counter, {"reason"});
  for (const auto& series : snapshot.drops()) {
    dropped.add({series.reason()}, as_double(series.count()));
  }
  out.push_back(std::move(dropped).build());

  FamilyBuilder build_info("hucprof_build_info",
                           "hucprof version, the libbpf it uses and the running kernel. Always 1.",
                           MetricType::Gauge, {"version", "libbpf", "kernel"});
  build_info.add({snapshot.build().version(), snapshot.build().libbpf(), snapshot.build().kernel()},
                 1);
  out.push_back(std::move(build_info).build());

  FamilyBuilder drains("hucprof_drains_total",
                       "Drains of the BPF maps completed (one per --interval).",
                       MetricType::Counter, {});
  drains.add({}, as_double(snapshot.intervals()));
  out.push_back(std::move(drains).build());

  FamilyBuilder drain_duration(
      "hucprof_drain_duration_seconds",
      "Wall time of the last drain: read the BPF maps, symbolize, fold, aggregate.",
      MetricType::Gauge, {});
  drain_duration.add({}, snapshot.last_drain_seconds());
  out.push_back(std::move(drain_duration).build());

  FamilyBuilder map_memory(
      "hucprof_bpf_map_memory_bytes",
      "Kernel memory charged for each of hucprof's BPF maps (fdinfo memlock, as bpftool shows it), "
      "by map name.",
      MetricType::Gauge, {"map"});
  for (const auto& map : snapshot.bpf_maps()) map_memory.add({map.map()}, as_double(map.bytes()));
  out.push_back(std::move(map_memory).build());

  FamilyBuilder reloads("hucprof_kallsyms_reloads_total",
                        "Times /proc/kallsyms was read again because the kernel's module list "
                        "changed.",
                        MetricType::Counter, {});
  reloads.add({}, as_double(snapshot.kallsyms_reloads()));
  out.push_back(std::move(reloads).build());

  add_program_cost_families(snapshot, out);

  FamilyBuilder frequency("hucprof_sample_frequency_hertz",
                          "CPU clock sampling frequency per CPU; 0 when sampling is off.",
                          MetricType::Gauge, {});
  frequency.add({}, as_double(snapshot.sample_frequency_hz()));
  out.push_back(std::move(frequency).build());

  return out;
}

}  // namespace hucprof
