/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe mode's rescue (hucprof_abi.h, "Probe mode's rescue"): where a run of the check's program
 * can be preempted, the trampoline skips the program for a check that comes meanwhile. The check's
 * program marks each of its runs per task (huc_rescue_mark); the rescue program, attached beside
 * it, runs after it on every check and counts the check itself when no run was marked since it
 * last looked.
 */
#ifndef HUCPROF_RESCUE_BPF_H
#define HUCPROF_RESCUE_BPF_H

#include "hot_sites.bpf.h"
#include "probe_globals.bpf.h"
#include "usercopy_classify.bpf.h"
#include "usercopy_objects.bpf.h"

/* The rescue program's own (hucprof_abi.h): written by no other program, so the plain adds of a
 * preempted check's program never race with its. */
struct huc_rescue_slot rescue_slots[HUC_RESCUE_SLOTS];
HUC_PERCPU_SLOTS(rescue_drops, HUC_DROP_REASONS);
HUC_PERCPU_SLOTS(rescued, 1); /* checks the rescue program counted */

/* The rescue's slot of the current task (hucprof_abi.h). */
static __always_inline struct huc_rescue_slot *huc_rescue_slot(__u32 pid)
{
	return &rescue_slots[pid & (HUC_RESCUE_SLOTS - 1)];
}

/* One more run of the check's program for the current task, whatever it counted: the rescue
 * program, which runs after it, then knows this check was seen. Last thing the program does. A
 * slot another task holds is taken over: that task's rescue then sees a stranger and counts
 * nothing, never a check twice. */
static __always_inline void huc_rescue_mark(void)
{
	__u32 pid = HUC_TASK_FIELD(huc_current_task(), pid);
	struct huc_rescue_slot *slot = huc_rescue_slot(pid);

	if (slot->pid != pid) {
		slot->pid = pid;
		slot->seen = slot->runs;
	}
	slot->runs += 1;
}

/* The check's short stack from its immediate caller up: the trace taken in a BPF program starts
 * with the program's and the trampoline's frames, and where the trampoline was jumped to (7.x
 * with an fexit program beside) no frame of __check_object_size follows them, so user space
 * could not tell where the check's callers begin. 0 frames when the caller is not in the trace. */
static __always_inline void huc_stack_from_caller(void *ctx, __u64 caller,
						  struct huc_short_stack *out)
{
	__u64 ips[HUC_SHORT_STACK_DEPTH] = {};
	long got = bpf_get_stack(ctx, ips, sizeof(ips), 0);
	__u32 depth = got > 0 ? got / sizeof(__u64) : 0, start = HUC_SHORT_STACK_DEPTH;

	for (__u32 i = 0; i < HUC_SHORT_STACK_DEPTH; i++) {
		if (i < depth && ips[i] == caller) {
			start = i;
			break;
		}
	}
	out->depth = 0;
	for (__u32 i = 0; i < HUC_SHORT_STACK_DEPTH; i++) {
		if (start + i >= depth || start + i >= HUC_SHORT_STACK_DEPTH)
			break;
		out->ips[i] = ips[start + i];
		out->depth = i + 1;
	}
}

/*
 * A check the trampoline skipped the check's program for, counted by the rescue program: keyed by
 * its short stack (the bounded stack walk, which user space folds to the call site), its syscall,
 * direction and workload, added atomically to its value in the shared `sites` hash, with its
 * sub-checks classified. None of the check's program's per-CPU state is touched: a preempted run
 * of it may be in the middle of updating it. A check it cannot store stays a missed one.
 */
static __always_inline void huc_rescue_count(void *ctx, struct task_struct *task, __u64 n,
					     bool to_user, bool direct)
{
	__u64 caller = huc_fentry_caller(ctx, HUC_CHECK_OBJECT_SIZE_NARGS, direct).ret;
	struct huc_short_stack stack = {};
	struct huc_site_value *value;
	struct huc_site_key key = {};
	__u64 object = 0;
	__u32 zero = 0;
	__u64 *counted;

	key.generation = (__u8)generation_seq;
	key.syscall_nr = huc_task_syscall_nr(task);
	key.direction = to_user ? HUC_DIR_TO_USER : HUC_DIR_FROM_USER;
	if (key_by_cgroup)
		key.cgroup_id = bpf_get_current_cgroup_id();
	if (caller)
		huc_stack_from_caller(ctx, caller, &stack);
	if (stack.depth)
		key.short_stack_id = huc_store_stack(&short_stacks, &stack, stack.ips, stack.depth,
						     HUC_SHORT_STACK_DEPTH, key.generation,
						     &rescue_drops);
	if (!key.short_stack_id)
		key.caller = caller;
	value = bpf_map_lookup_elem(&sites, &key);
	if (!value)
		value = huc_made_site(&key, 0);
	if (!value)
		return;
	__sync_fetch_and_add(&value->calls, 1);
	__sync_fetch_and_add(&value->bytes, n);
	if (classify_subchecks) {
		__u64 slab = 0;
		__u32 end;

		bpf_get_func_arg(ctx, 0, &object);
		end = huc_classify_subchecks(task, object, n, direct, &slab);
		huc_add_end(value, end, true);
		if (count_objects && end == HUC_END_SLAB)
			huc_count_slab_object(&key, slab, object, n, direct);
	}
	counted = bpf_map_lookup_elem(&rescued, &zero);
	if (counted)
		*counted += 1;
}

/* Runs after the check's program on every check (attached first: a trampoline runs the program
 * attached last first). Counts the check when the check's program did not run for the current
 * task since this program last saw it: the trampoline skipped it. A slot of another task, or one
 * taken over since, counts nothing. The task is read as the check's program reads it
 * (usercopy_common.bpf.h), so every build has a rescue needing nothing its check's program does
 * not (tests/unit/kernel_edge/bpf_features_test.cpp holds each build to that). */
static __always_inline int huc_fentry_rescue_check(void *ctx, __u64 n, bool to_user, bool direct)
{
	struct task_struct *task = huc_current_task();
	__u32 pid = HUC_TASK_FIELD(task, pid);
	struct huc_rescue_slot *slot = huc_rescue_slot(pid);
	__u64 runs;

	if (!rescue_enabled || slot->pid != pid)
		return 0;
	runs = slot->runs;
	if (runs != slot->seen) {
		slot->seen = runs;
		return 0;
	}
	if (huc_followed(0))
		huc_rescue_count(ctx, task, n, to_user, direct);
	return 0;
}

#endif /* HUCPROF_RESCUE_BPF_H */
