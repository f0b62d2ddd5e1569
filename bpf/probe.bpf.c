// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe mode: exact counts of hardened-usercopy checks per call site.
 *
 * A full kernel stack walk per call costs more than the check itself (docs/design.md). So every
 * call is keyed by its *call site's return address*, read in O(1), plus the syscall number and
 * direction. Usually that is the immediate caller (the return address at the top of the stack).
 * When the caller is a copy helper, the call site lies further up and is found along the
 * helpers' learned stack offsets (learned_offsets.bpf.h). Where those cannot say, the key is the
 * bounded stack walk (HUC_SHORT_STACK_DEPTH frames, keyed by stack id) that user space folds.
 * A full stack is captured once per new key and generation, for flame graphs and pprof.
 *
 * Every target has an fentry and a kprobe flavour; the daemon picks one per target at run time
 * (autoload off for the other) and reports the choice.
 */
#include "learned_offsets.bpf.h"
#include "probe_scratch.bpf.h"
#include "usercopy_classify.bpf.h"
#include "usercopy_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* __check_object_size (+ .cold) and check_heap_object: the only legitimate callers of sub-checks
 * in a usercopy check. */
const volatile struct huc_range dispatcher_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_dispatcher_ranges = 0;
const volatile bool latency_enabled = false;
/* Sub-checks (stack, vmalloc, page, slab) classified inside the check's program
 * (usercopy_classify.bpf.h) instead of probed at their own entries. */
const volatile bool classify_subchecks = false;
/* Some program runs after the check on this CPU and reads its state (cpu_state): a sub-check
 * function's, or the check's exit with --latency. */
const volatile bool check_leaves_state = false;
/* Written by the daemon only: the generation keys are written in (hucprof_abi.h). */
volatile __u8 generation = 0;

HUC_COUNTERS(sites, struct huc_site_key, struct huc_site_value);
HUC_COUNTERS(subchecks, struct huc_subcheck_key, __u64);
/* Created only with --latency (the daemon turns autocreate off otherwise). */
HUC_COUNTERS(latency, struct huc_latency_key, __u64);
HUC_STACKS(short_stacks, struct huc_short_stack);
HUC_STACKS(full_stacks, struct huc_stack);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct huc_cpu_state);
} cpu_state SEC(".maps");

HUC_PERCPU_SLOTS(drops, HUC_DROP_REASONS);

/* The full stack of the current run, stored in full_stacks; its id, or 0 when it could not be
 * taken or stored. */
static __always_inline __u64 huc_full_stack(void *ctx, __u8 gen)
{
	struct huc_scratch *s;
	__u32 zero = 0;
	long n;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	n = bpf_get_stack(ctx, s->full.ips, sizeof(s->full.ips), 0);
	if (n <= 0) {
		huc_count(&drops, HUC_DROP_STACK_MAP_FULL);
		return 0;
	}
	s->full.depth = n / sizeof(__u64);
	return huc_store_stack(&full_stacks, &s->full, s->full.ips, s->full.depth,
			       HUC_FULL_STACK_DEPTH, gen, &drops);
}

/* The fallback: the short stack up from the check is the key; user space folds it. */
static __always_inline void huc_site_by_stack(void *ctx, __u64 caller, struct huc_site_key *key)
{
	struct huc_scratch *s;
	__u32 zero = 0;
	__u64 id = 0;
	long n;

	huc_count(&helper_walks, HUC_WALK_STACK);
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (s) {
		n = bpf_get_stack(ctx, s->short_stack.ips, sizeof(s->short_stack.ips), 0);
		if (n > 0) {
			s->short_stack.depth = n / sizeof(__u64);
			id = huc_store_stack(&short_stacks, &s->short_stack, s->short_stack.ips,
					     s->short_stack.depth, HUC_SHORT_STACK_DEPTH,
					     key->generation, &drops);
		} else {
			huc_count(&drops, HUC_DROP_STACK_MAP_FULL);
		}
	}
	if (id) {
		key->short_stack_id = id;
		key->caller = 0;
	} else {
		key->caller = caller;
	}
}

/* The sub-checks this check runs, charged to its call site: what the sub-check programs would
 * count at their entries, without running them, in the site's own value. */
static __always_inline void huc_count_classified(struct task_struct *task,
						 struct huc_site_value *value, __u64 ptr,
						 __u64 bytes)
{
	__u32 kinds = huc_classify_subchecks(task, ptr, bytes);

	for (__u32 kind = 0; kind < HUC_CHECK_KINDS; kind++) {
		if (kinds & HUC_KIND_BIT(kind))
			__sync_fetch_and_add(&value->classified[kind], 1);
	}
}

/* slot: where the walk along learned offsets starts (arch_reads.bpf.h), slot_in_ctx: see
 * huc_site_by_hops (a constant: the branch is compiled away); caller: the immediate caller's
 * return address (0: unknown); ptr: the object (read only to classify sub-checks). */
static __always_inline int huc_on_check(void *ctx, __u64 slot, bool slot_in_ctx, __u64 caller,
					__u64 ptr,
					__u64 bytes, bool to_user)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct huc_site_key key = {};
	struct huc_site_value *value;
	struct huc_cpu_state *state;
	bool from_hops = false;
	__u32 zero = 0;

	key.generation = generation;
	key.syscall_nr = huc_task_syscall_nr(task);
	key.direction = to_user ? HUC_DIR_TO_USER : HUC_DIR_FROM_USER;
	key.caller = caller;
	if (!caller)
		huc_count(&drops, HUC_DROP_CALLER_UNREADABLE);

	if (caller && huc_caller_is_helper(caller)) {
		from_hops = huc_site_by_hops(ctx, slot, slot_in_ctx, caller, &key);
		if (!from_hops)
			huc_site_by_stack(ctx, caller, &key);
	}

	value = bpf_map_lookup_elem(&sites, &key);
	/* A key from learned offsets that was never seen before (in this generation), and 1 in
	 * HUC_VERIFY_ONE_IN, is checked against a real stack: a wrong offset reads garbage, and
	 * garbage is a new key. */
	if (from_hops && (!value || huc_verify_due())) {
		huc_take_trace(ctx);
		if (!huc_verify_hops(caller)) {
			from_hops = false;
			huc_site_by_stack(ctx, caller, &key);
			value = bpf_map_lookup_elem(&sites, &key);
		}
	}
	if (from_hops)
		huc_count(&helper_walks, HUC_WALK_LEARNED);
	if (!value) {
		struct huc_site_value init = {};

		init.full_stack_id = huc_full_stack(ctx, key.generation);
		bpf_map_update_elem(&sites, &key, &init, BPF_NOEXIST);
		value = bpf_map_lookup_elem(&sites, &key);
		if (!value) {
			huc_count(&drops, HUC_DROP_SITES_MAP_FULL);
			return 0;
		}
	}
	/* One value shared by every CPU. */
	__sync_fetch_and_add(&value->calls, 1);
	__sync_fetch_and_add(&value->bytes, bytes);
	if (classify_subchecks)
		huc_count_classified(task, value, ptr, bytes);
	if (!check_leaves_state)
		return 0;

	state = bpf_map_lookup_elem(&cpu_state, &zero);
	if (state) {
		state->site = key;
		/* The low half of bpf_get_current_pid_tgid(), which the sub-check and return
		 * programs compare it with, loaded from the task at hand instead of by a helper. */
		state->tgid_pid_low = (__u32)task->pid;
		state->active = 1;
		state->entry_ns = latency_enabled ? bpf_ktime_get_ns() : 0;
	}
	return 0;
}

/*
 * A sub-check ran. It belongs to a usercopy check only when it was called from the check
 * dispatcher (find_vmap_area and __virt_addr_valid have many other callers); then it is charged
 * to the call site of the enclosing __check_object_size, recorded in this CPU's state. In the
 * current generation, not the check's: a drain may have retired that one since, and a retired
 * generation is never written again (the daemon folds the key's short stack from the check's
 * own key, drained no later than this one).
 */
static __always_inline int huc_on_subcheck(__u64 caller, __u32 kind)
{
	struct huc_subcheck_key key = {};
	struct huc_cpu_state *state;
	__u32 zero = 0;

	if (!caller || !huc_in_ranges(dispatcher_ranges, nr_dispatcher_ranges, caller))
		return 0;
	state = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!state || !state->active)
		return 0;
	if (state->tgid_pid_low != (__u32)bpf_get_current_pid_tgid()) {
		/* Preempted inside the check and another task's check ran here since. */
		huc_count(&drops, HUC_DROP_SUBCHECK_UNMATCHED);
		return 0;
	}
	key.site = state->site;
	key.site.generation = generation;
	key.kind = kind;
	huc_hash_add(&subchecks, &key, 1, &drops, HUC_DROP_SUBCHECKS_MAP_FULL);
	return 0;
}

static __always_inline __u32 huc_log2(__u64 v)
{
	__u32 r = 0, shift;

	shift = (v > 0xFFFFFFFF) << 5; v >>= shift; r |= shift;
	shift = (v > 0xFFFF) << 4; v >>= shift; r |= shift;
	shift = (v > 0xFF) << 3; v >>= shift; r |= shift;
	shift = (v > 0xF) << 2; v >>= shift; r |= shift;
	shift = (v > 0x3) << 1; v >>= shift; r |= shift;
	r |= (v >> 1);
	return r;
}

static __always_inline int huc_on_check_return(void)
{
	struct huc_latency_key key = {};
	struct huc_cpu_state *state;
	__u32 zero = 0, slot;

	if (!latency_enabled)
		return 0;
	state = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!state || !state->entry_ns ||
	    state->tgid_pid_low != (__u32)bpf_get_current_pid_tgid())
		return 0;
	slot = huc_log2(bpf_ktime_get_ns() - state->entry_ns);
	state->entry_ns = 0;
	key.site = state->site;
	key.site.generation = generation;
	key.slot = slot < HUC_LATENCY_SLOTS ? slot : HUC_LATENCY_SLOTS - 1;
	huc_hash_add(&latency, &key, 1, &drops, HUC_DROP_LATENCY_MAP_FULL);
	return 0;
}

/* void __check_object_size(const void *ptr, unsigned long n, bool to_user) */
SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	struct huc_caller c = huc_fentry_caller(ctx);
	__u64 object = 0;

	/* The verifier refuses a direct read of a `const void *` argument ("arg0 type UNKNOWN is
	 * not a struct", 6.12); the helper hands it over as a number. The slot is laundered only
	 * on the helper-called path that needs it: a scratch lookup per check otherwise. */
	if (classify_subchecks)
		bpf_get_func_arg(ctx, 0, &object);
	return huc_on_check(ctx, c.slot, true, c.ret, object, n, to_user);
}

SEC("kprobe/__check_object_size")
int BPF_KPROBE(huc_kprobe_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	struct huc_caller c = huc_kprobe_caller(ctx);

	return huc_on_check(ctx, c.slot, false, c.ret, (__u64)ptr, n, to_user);
}

SEC("fexit/__check_object_size")
int BPF_PROG(huc_fexit_check_object_size)
{
	return huc_on_check_return();
}

SEC("kretprobe/__check_object_size")
int BPF_KRETPROBE(huc_kretprobe_check_object_size)
{
	return huc_on_check_return();
}

/* Sub-checks: one program pair per kind. The fentry attach target is set at run time (the
 * symbol may be check_heap_object on one kernel and missing on another). */
#define HUC_SUBCHECK_PROGS(name, kind)                                        \
	SEC("fentry")                                                          \
	int huc_fentry_##name(void *ctx)                                       \
	{                                                                      \
		return huc_on_subcheck(huc_fentry_caller(ctx).ret, kind);      \
	}                                                                      \
	SEC("kprobe")                                                          \
	int huc_kprobe_##name(struct pt_regs *ctx)                             \
	{                                                                      \
		return huc_on_subcheck(huc_kprobe_caller(ctx).ret, kind);      \
	}

HUC_SUBCHECK_PROGS(slab, HUC_CHECK_SLAB)
HUC_SUBCHECK_PROGS(vmalloc, HUC_CHECK_VMALLOC)
HUC_SUBCHECK_PROGS(stack, HUC_CHECK_STACK)
HUC_SUBCHECK_PROGS(text, HUC_CHECK_TEXT)
HUC_SUBCHECK_PROGS(page, HUC_CHECK_PAGE)
HUC_SUBCHECK_PROGS(heap, HUC_CHECK_HEAP)
