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
 * The syscall task (the current one, from bpf_get_current_task_btf()) is in, from its saved user
 * registers (arch_reads.bpf.h): O(1) and exact, unlike walking the stack for a sys_* frame.
 * Kernel threads and io_uring workers have zeroed user registers, which would read as syscall 0
 * (read), so they report -1.
 */
static __always_inline __s32 huc_task_syscall_nr(struct task_struct *task)
{
	struct pt_regs *regs;
	long nr;

	/* Both pointers are BTF-typed: direct (CO-RE relocated) loads, no probe-read helper calls
	 * on this per-check path. */
	if (task->flags & (HUC_PF_KTHREAD | HUC_PF_IO_WORKER))
		return -1;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs)
		return -1;
	nr = huc_regs_syscall_nr(regs);
	if (nr < 0 || nr > HUC_MAX_SYSCALL_NR)
		return -1;
	return (__s32)nr;
}

static __always_inline __s32 huc_current_syscall_nr(void)
{
	return huc_task_syscall_nr(bpf_get_current_task_btf());
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
