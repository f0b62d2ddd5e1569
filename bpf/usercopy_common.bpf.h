/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Kernel-side helpers shared by probe.bpf.c and sampler.bpf.c. */
#ifndef HUCPROF_USERCOPY_COMMON_BPF_H
#define HUCPROF_USERCOPY_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "arch_reads.bpf.h"
#include "hucprof_abi.h"
#include "kernel_ranges.h"

#define HUC_PF_IO_WORKER 0x00000010
#define HUC_PF_KTHREAD 0x00200000

/*
 * Map shapes both objects use (each object gets its own instance). Counters are one hash shared
 * by every CPU and added to atomically: a per-CPU hash keeps a copy of every value for every
 * possible CPU, which made the maps grow by ~1.5 MiB per CPU. Capacities are set by the daemon
 * before load; stack maps also get BPF_F_NO_PREALLOC there where the kernel allows it.
 */
#define HUC_COUNTERS(name, key_type, value_type)                       \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__uint(max_entries, HUC_DEFAULT_MAX_KEYS);               \
		__type(key, key_type);                                   \
		__type(value, value_type);                               \
	} name SEC(".maps")

#define HUC_STACKS(name, value_type)                                    \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_HASH);                         \
		__uint(max_entries, HUC_DEFAULT_MAX_STACKS);             \
		__type(key, struct huc_stack_key);                       \
		__type(value, value_type);                               \
	} name SEC(".maps")

/* One per-CPU counter per index (drop reasons, sample contexts). */
#define HUC_PERCPU_SLOTS(name, slots)                                   \
	struct {                                                         \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                 \
		__uint(max_entries, slots);                              \
		__type(key, __u32);                                      \
		__type(value, __u64);                                    \
	} name SEC(".maps")

/* Highest syscall number we accept from the saved registers; larger values are not syscalls. */
#define HUC_MAX_SYSCALL_NR 1023

/*
 * The current task, two ways, one per object build (bpf/CMakeLists.txt):
 *   default                  bpf_get_current_task_btf() (5.11): a BTF pointer, its fields read by
 *                            direct (CO-RE relocated) loads, no helper call on the per-check path;
 *                            its user registers from bpf_task_pt_regs() (5.15)
 *   HUC_TASK_READS_BY_HELPER bpf_get_current_task() (4.8): a plain address, its fields read with
 *                            bpf_probe_read_kernel(), the user registers found where the kernel's
 *                            task_pt_regs() puts them on x86_64 and arm64: the last struct pt_regs
 *                            of the task's stack area (task_stack_size below)
 * The daemon loads the second where the kernel lacks either helper (5.10 to 5.14).
 */
#if defined(HUC_TASK_READS_BY_HELPER)
#define HUC_TASK_FIELD(task, field) BPF_CORE_READ(task, field)
static __always_inline struct task_struct *huc_current_task(void)
{
	return (struct task_struct *)bpf_get_current_task();
}
#else
#define HUC_TASK_FIELD(task, field) ((task)->field)
static __always_inline struct task_struct *huc_current_task(void)
{
	return bpf_get_current_task_btf();
}
#endif

/* THREAD_SIZE, the size of a task's stack area, set before load from kallsyms
 * (__end_init_task - __start_init_task: the first task's stack, which the linker script sizes to
 * THREAD_SIZE); 0 when unknown. Read only by the HUC_TASK_READS_BY_HELPER builds, defined in every
 * build so that all share one skeleton. */
const volatile __u32 task_stack_size = 0;

/* What `hucprof record` follows (core/workload/record_target.h), set at load; each program counts
 * only what it follows, as if the rest of the machine did not exist. follow_cgroup_id: the tasks
 * of this cgroup v2 id (COMMAND's own, or -G's; 0: any); follow_tgids: the tasks of these
 * processes (-p; none: any); follow_cpu_mask: these CPUs (-C; follow_cpus false: any). */
const volatile __u64 follow_cgroup_id = 0;
const volatile __u32 follow_tgids[HUC_MAX_FOLLOW_TGIDS] = {};
const volatile __u32 nr_follow_tgids = 0;
const volatile __u64 follow_cpu_mask[HUC_MAX_FOLLOW_CPUS / 64] = {};
const volatile bool follow_cpus = false;

/* Whether the current task on this CPU is followed; cgroup_id: bpf_get_current_cgroup_id() where
 * the caller has it, else 0 (then it is asked here, only when a cgroup is followed). Every test
 * is on constants set before load, so what is not followed costs nothing. */
static __always_inline bool huc_followed(__u64 cgroup_id)
{
	if (follow_cgroup_id &&
	    (cgroup_id ? cgroup_id : bpf_get_current_cgroup_id()) != follow_cgroup_id)
		return false;
	if (follow_cpus) {
		__u32 cpu = bpf_get_smp_processor_id();

		if (cpu >= HUC_MAX_FOLLOW_CPUS || !(follow_cpu_mask[cpu / 64] & (1ULL << (cpu % 64))))
			return false;
	}
	if (nr_follow_tgids) {
		__u32 tgid = bpf_get_current_pid_tgid() >> 32;

		for (__u32 i = 0; i < HUC_MAX_FOLLOW_TGIDS; i++) {
			if (i >= nr_follow_tgids)
				return false;
			if (follow_tgids[i] == tgid)
				return true;
		}
		return false;
	}
	return true;
}

/*
 * The syscall task (the current one, from huc_current_task()) is in, from its saved user
 * registers (arch_reads.bpf.h): O(1) and exact, unlike walking the stack for a sys_* frame.
 * Kernel threads and io_uring workers have zeroed user registers, which would read as syscall 0
 * (read), so they report -1.
 */
static __always_inline __s32 huc_task_syscall_nr(struct task_struct *task)
{
	struct pt_regs *regs;
	long nr;

	/* With a BTF task pointer: direct loads, no probe-read helper calls on this per-check
	 * path. */
	if (HUC_TASK_FIELD(task, flags) & (HUC_PF_KTHREAD | HUC_PF_IO_WORKER))
		return -1;
#if defined(HUC_TASK_READS_BY_HELPER)
	{
		__u64 stack = (__u64)HUC_TASK_FIELD(task, stack);

		if (!stack || !task_stack_size)
			return -1;
		regs = (struct pt_regs *)(stack + task_stack_size -
					  bpf_core_type_size(struct pt_regs));
		nr = huc_regs_syscall_nr_read(regs);
	}
#else
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return -1;
	nr = huc_regs_syscall_nr(regs);
#endif
	if (nr < 0 || nr > HUC_MAX_SYSCALL_NR)
		return -1;
	return (__s32)nr;
}

static __always_inline __s32 huc_current_syscall_nr(void)
{
	return huc_task_syscall_nr(huc_current_task());
}

/* Adds 1 to a per-CPU counter array slot. */
static __always_inline void huc_count(void *array_map, __u32 index)
{
	__u64 *slot = bpf_map_lookup_elem(array_map, &index);

	if (slot)
		*slot += 1;
}

/* Adds delta to a shared hash counter, inserting it first; counts a drop when the map is full. */
static __always_inline void huc_hash_add(void *hash_map, const void *key, __u64 delta,
					 void *drops_map, __u32 full_reason)
{
	__u64 *value = bpf_map_lookup_elem(hash_map, key);

	if (!value) {
		__u64 zero = 0;

		/* -EEXIST here means another CPU inserted it first: fine, look it up again. */
		bpf_map_update_elem(hash_map, key, &zero, BPF_NOEXIST);
		value = bpf_map_lookup_elem(hash_map, key);
		if (!value) {
			huc_count(drops_map, full_reason);
			return;
		}
	}
	__sync_fetch_and_add(value, delta);
}

/*
 * Stores the stack in ips[0..depth) under its content hash in generation gen and returns the id
 * (never 0), or 0 when it could not be stored (counted as stack_map_full). The value is written
 * from per-CPU scratch: stacks are too big for the 512-byte BPF stack. An id that is already
 * there is the same stack (64-bit hash), so inserting is skipped.
 */
static __always_inline __u64 huc_store_stack(void *stack_map, const void *value, const __u64 *ips,
					     __u32 depth, __u32 max_depth, __u8 gen, void *drops_map)
{
	struct huc_stack_key key = {};
	__u64 h = 0x84222325cbf29ce4ULL ^ depth;

	for (__u32 i = 0; i < max_depth; i++) {
		if (i >= depth)
			break;
		h = (h ^ ips[i]) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	key.id = h ? h : 1;
	key.generation = gen;
	if (bpf_map_lookup_elem(stack_map, &key))
		return key.id;
	if (bpf_map_update_elem(stack_map, &key, value, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(stack_map, &key)) {
		huc_count(drops_map, HUC_DROP_STACK_MAP_FULL);
		return 0;
	}
	return key.id;
}

#endif /* HUCPROF_USERCOPY_COMMON_BPF_H */
