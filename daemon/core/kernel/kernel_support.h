#pragma once
#include "core/kernel/bpf_features.h"
#include "core/kernel/capability.h"
#include "core/kernel/preemption.h"

namespace hucprof {

// What the running kernel lets hucprof's programs do, found by trying (libbpf-tools style feature
// probes) rather than by guessing from the version, each answer with its reason in words. The
// kernel edge fills it once (KernelFacts::probe) and hands it to the attach plan whole; unit tests
// write it for kernels we do not run on.
struct KernelSupport {
  Capability btf;                // /sys/kernel/btf/vmlinux
  Capability kprobes;            // kprobe PMU or tracefs kprobe_events
  Capability perf_events;        // perf_event_open(cpu-clock)
  BpfFeatureFacts bpf_features;  // every BPF feature the programs use, each probed alone
  // Whether the kernel lets hash maps allocate entries on use in tracing and perf_event
  // programs (bpf_mem_alloc, 6.1+); before that they must be preallocated.
  Capability on_demand_maps;
  Capability syscall_programs;  // BPF_PROG_TYPE_SYSCALL loads and runs (5.14+)
  // Whether a running fentry program can be preempted (core/kernel/preemption.h); unknown counts
  // as preemptible.
  Preemption preemption{.model = "unknown", .programs_preemptible = true, .reason = "not read"};
};

}  // namespace hucprof
