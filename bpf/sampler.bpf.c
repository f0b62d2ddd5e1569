// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Sampling mode: a perf_event CPU-clock program on every online CPU. Every sample is counted by
 * context (the denominator); only samples whose kernel stack passes through a usercopy check
 * dispatcher keep their stack, so the cost per sample stays small and the stack map holds only
 * what we report. Sampled time includes everything below the check (spinlocks under
 * find_vmap_area, ...): that is the cost of the check. An interrupt or softirq that ran on top
 * of a check is not (kernel_ranges.h): it stays kernel time and is counted as excluded.
 * Busy samples are also counted by the task's cgroup v2 id, and check samples keyed by it, so
 * user space can say which workload pays (docs/design.md, "Which workload"), and by the task's
 * comm (and, recording, its process) so that a report can sort by command.
 */
#include "usercopy_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* __check_object_size (+ .cold) and check_heap_object, sorted, set before load. Sub-checks are
 * only reached through these, so they are enough to recognise a usercopy check on the stack. */
const volatile struct huc_range check_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_check_ranges = 0;

/* Interrupt, exception and softirq entry code, sorted, set before load (the daemon's plan,
 * core/kernel/interrupt_entries.cpp). A check found above it on the stack was interrupted. */
const volatile struct huc_range interrupt_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_interrupt_ranges = 0;

/* Set before load from the plan (AttachPlan::sample_pids): check samples keyed by the process's
 * tgid too. `record` only: a node's daemon would keep a key per process it ever sampled. */
const volatile __u8 label_pids = 0;

/* Written by the daemon only: the generation keys are written in (hucprof_abi.h). */
volatile __u8 generation = 0;

HUC_COUNTERS(samples, struct huc_sample_key, __u64);
HUC_COUNTERS(busy_samples, struct huc_busy_key, __u64);
HUC_STACKS(sample_stacks, struct huc_stack);
HUC_PERCPU_SLOTS(contexts, HUC_CTX_COUNT);
/* Names unique across both objects: they label hucprof_bpf_map_memory_bytes{map}. */
HUC_PERCPU_SLOTS(sample_drops, HUC_DROP_REASONS);
HUC_PERCPU_SLOTS(sample_excluded, HUC_EXCLUDE_REASONS);
/* The runs that return before counting a context (not followed). With contexts, which every
 * other run counts once, they are every run: user space holds that against the runs each CPU's
 * event owed, to count the samples the kernel skipped and counts nowhere (docs/design.md). A
 * counter of its own on the followed runs' hot path would only repeat contexts. */
HUC_PERCPU_SLOTS(sample_unfollowed, 1);

/* Stacks are too big for the 512-byte BPF stack: the scan and the stored stack live here. */
struct sample_scratch {
	__u64 scan[HUC_SAMPLE_SCAN_DEPTH];
	struct huc_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_scratch);
} sample_scratch SEC(".maps");

#if !defined(HUC_NO_BPF_LOOP)
/* The scan's state between bpf_loop's calls of scan_frame. */
struct scan_walk {
	__u32 frames;
	bool interrupted;
	__u8 verdict;
};

static long scan_frame(__u32 i, void *data)
{
	struct scan_walk *walk = data;
	struct sample_scratch *buf;
	__u32 zero = 0;

	if (i >= walk->frames)
		return 1;
	buf = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!buf)
		return 1;
	barrier_var(i); /* the bound below must stay on i itself, where the verifier sees it */
	if (i >= HUC_SAMPLE_SCAN_DEPTH)
		return 1;
	walk->verdict = huc_scan_frame(buf->scan[i], &walk->interrupted, check_ranges,
				       nr_check_ranges, interrupt_ranges, nr_interrupt_ranges);
	return walk->verdict != HUC_SCAN_OUTSIDE;
}

/* Where the sampled kernel stack is: inside a check, an interrupt inside one, or elsewhere.
 * Leaves the stack in buf->scan. */
static __always_inline __u8 scan_kernel_stack(struct bpf_perf_event_data *ctx,
					      struct sample_scratch *buf)
{
	struct scan_walk walk = {};
	long len;

	len = bpf_get_stack(ctx, buf->scan, sizeof(buf->scan), 0);
	if (len <= 0)
		return HUC_SCAN_OUTSIDE;
	walk.frames = len / sizeof(__u64);
	bpf_loop(HUC_SAMPLE_SCAN_DEPTH, scan_frame, &walk, 0);
	return walk.verdict;
}
#else
/* The same scan for kernels without bpf_loop (5.17; the HUC_NO_BPF_LOOP build, bpf/CMakeLists.txt):
 * a bounded loop (5.3) calling a global function (5.6) per frame (kernel_ranges.h says why). */
__noinline int huc_scan_ip(__u64 ip, int state)
{
	return huc_scan_frame_packed(ip, state, check_ranges, nr_check_ranges, interrupt_ranges,
				     nr_interrupt_ranges);
}

static __always_inline __u8 scan_kernel_stack(struct bpf_perf_event_data *ctx,
					      struct sample_scratch *buf)
{
	long len;

	len = bpf_get_stack(ctx, buf->scan, sizeof(buf->scan), 0);
	if (len <= 0)
		return HUC_SCAN_OUTSIDE;
	return HUC_SCAN_STACK_PACKED(buf->scan, (__u32)(len / sizeof(__u64)), huc_scan_ip);
}
#endif

/* One busy sample of the workload (cgroup) the CPU was running. */
static __always_inline void count_busy(__u64 cgroup_id, __u8 context, bool excluded, __u8 gen)
{
	struct huc_busy_key key = {
		.cgroup_id = cgroup_id,
		.context = context,
		.excluded = excluded,
		.generation = gen,
	};

	huc_hash_add(&busy_samples, &key, 1, &sample_drops, HUC_DROP_BUSY_MAP_FULL);
}

SEC("perf_event")
int huc_sample(struct bpf_perf_event_data *ctx)
{
	struct huc_sample_key key = {};
	struct sample_scratch *buf;
	__u64 cgroup_id = bpf_get_current_cgroup_id();
	__u32 zero = 0;
	__u8 verdict;
	long len;

	if (!huc_followed(cgroup_id)) {
		huc_count(&sample_unfollowed, 0);
		return 0;
	}
	key.generation = generation;
	if (huc_sample_is_user(ctx)) {
		huc_count(&contexts, HUC_CTX_USER);
		count_busy(cgroup_id, HUC_CTX_USER, false, key.generation);
		return 0;
	}
	if ((__u32)bpf_get_current_pid_tgid() == 0) {
		huc_count(&contexts, HUC_CTX_IDLE);
		return 0;
	}
	huc_count(&contexts, HUC_CTX_KERNEL);

	buf = bpf_map_lookup_elem(&sample_scratch, &zero);
	verdict = buf ? scan_kernel_stack(ctx, buf) : HUC_SCAN_OUTSIDE;
	count_busy(cgroup_id, HUC_CTX_KERNEL, verdict == HUC_SCAN_INTERRUPT_IN_CHECK, key.generation);
	if (verdict == HUC_SCAN_INTERRUPT_IN_CHECK)
		huc_count(&sample_excluded, HUC_EXCLUDE_INTERRUPT);
	if (verdict != HUC_SCAN_IN_CHECK || !buf)
		return 0;

	/* Only samples inside a check pay for the full stack. */
	len = bpf_get_stack(ctx, buf->stack.ips, sizeof(buf->stack.ips), 0);
	if (len <= 0) {
		huc_count(&sample_drops, HUC_DROP_STACK_MAP_FULL);
		return 0;
	}
	buf->stack.depth = len / sizeof(__u64);
	key.stack_id = huc_store_stack(&sample_stacks, &buf->stack, buf->stack.ips,
				       buf->stack.depth, HUC_FULL_STACK_DEPTH, key.generation,
				       &sample_drops);
	if (!key.stack_id)
		return 0;
	key.cgroup_id = cgroup_id;
	key.syscall_nr = huc_current_syscall_nr();
	/* Only samples inside a check pay for the comm: a few per thousand busy samples. */
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	if (label_pids)
		key.tgid = bpf_get_current_pid_tgid() >> 32;
	huc_hash_add(&samples, &key, 1, &sample_drops, HUC_DROP_SAMPLES_MAP_FULL);
	return 0;
}
