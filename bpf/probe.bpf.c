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
 * A full stack is captured once per new key and generation, for flame graphs and pprof. A check
 * that repeats the key its CPU counted last for the same caller, syscall and direction takes
 * the fast path instead (recent_keys.bpf.h): the same stack words compared, the same counter.
 *
 * Every target has an fentry and a kprobe flavour; the daemon picks one per target at run time
 * (autoload off for the other) and reports the choice.
 */
#include "learned_offsets.bpf.h"
#include "probe_scratch.bpf.h"
#include "recent_keys.bpf.h"
#include "usercopy_classify.bpf.h"
#include "usercopy_common.bpf.h"
#include "usercopy_objects.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* probe.bpf.c's own parts, in this order: its globals, then what counts through them. */
#include "probe_globals.bpf.h"
#include "hot_sites.bpf.h"
#include "rescue.bpf.h"

/* The full stack of the current run, stored in full_stacks; its id, or 0 when it could not be
 * taken or stored. */
static __always_inline __u64 huc_full_stack(void *ctx, struct huc_scratch *s, __u8 gen)
{
	long n = bpf_get_stack(ctx, s->full.ips, sizeof(s->full.ips), 0);
	if (n <= 0) {
		huc_count(&drops, HUC_DROP_STACK_MAP_FULL);
		return 0;
	}
	s->full.depth = n / sizeof(__u64);
	return huc_store_stack(&full_stacks, &s->full, s->full.ips, s->full.depth,
			       HUC_FULL_STACK_DEPTH, gen, &drops);
}

/* The fallback: the short stack up from the check is the key; user space folds it. */
static __always_inline void huc_site_by_stack(void *ctx, struct huc_scratch *s, __u64 caller,
					      struct huc_site_key *key)
{
	__u64 id = 0;
	long n;

	huc_count(&helper_walks, HUC_WALK_STACK);
	n = bpf_get_stack(ctx, s->short_stack.ips, sizeof(s->short_stack.ips), 0);
	if (n > 0) {
		s->short_stack.depth = n / sizeof(__u64);
		id = huc_store_stack(&short_stacks, &s->short_stack, s->short_stack.ips,
				     s->short_stack.depth, HUC_SHORT_STACK_DEPTH, key->generation,
				     &drops);
	} else {
		huc_count(&drops, HUC_DROP_STACK_MAP_FULL);
	}
	if (id) {
		key->short_stack_id = id;
		key->caller = 0;
	} else {
		key->caller = caller;
	}
}

/*
 * The full path: the check's call site found from the immediate caller (along learned offsets
 * where the caller is a copy helper, else by the bounded stack walk), then its counter: a way of
 * the hot call sites' table, taken if need be, else the key's value in the shared hash (*value).
 * A key counted in a way from the caller or learned offsets is remembered in recent (when not
 * NULL) for the fast path. NULL and *value NULL: dropped (counted). Arguments as huc_on_check's.
 */
static __always_inline struct huc_site_slot *
huc_count_full(void *ctx, struct huc_scratch *s, __u64 slot, bool slot_in_ctx, bool direct,
	       __u64 caller, struct huc_site_key *key, __u32 seq, struct huc_recent *recent,
	       struct huc_site_value **value_out)
{
	struct huc_site_value *value = NULL;
	struct huc_site_slot *set, *own;
	bool from_hops = false, by_stack = false;
	__u32 set_index;

	*value_out = NULL;
	/* (slot_in_ctx: the fentry flavour.) A kernel whose check took another count of arguments
	 * has its trampoline frame elsewhere: the words read are not its caller. Every key the fast
	 * path finds was filled here, so such a kernel counts every check as caller_unreadable,
	 * none at a wrong site. */
	if (slot_in_ctx && bpf_get_func_arg_cnt(ctx) != HUC_CHECK_OBJECT_SIZE_NARGS) {
		caller = 0;
		key->caller = 0;
	}
	if (!caller) {
		huc_count(&drops, HUC_DROP_CALLER_UNREADABLE);
	} else {
		__u64 facts = huc_addr_facts(s, caller);

		if (facts & HUC_MEMO_HELPER) {
			from_hops = huc_site_by_hops(ctx, s, slot, slot_in_ctx, caller, facts, direct,
						     key);
			if (!from_hops) {
				huc_site_by_stack(ctx, s, caller, key);
				by_stack = true;
			}
		}
	}

	set_index = huc_site_set_index(key);
	set = huc_site_set(s, set_index, seq);
	own = huc_find_slot(set, key, seq);
	if (!own)
		value = bpf_map_lookup_elem(&sites, key);
	/* A key from learned offsets that was never seen before (in this generation), and 1 in
	 * HUC_VERIFY_ONE_IN, is checked against a real stack: a wrong offset reads garbage, and
	 * garbage is a new key. */
	if (from_hops && ((!own && !value) || huc_verify_due(s))) {
		huc_take_trace(ctx, s);
		if (!huc_verify_hops(caller)) {
			from_hops = false;
			by_stack = true;
			huc_site_by_stack(ctx, s, caller, key);
			set_index = huc_site_set_index(key);
			set = huc_site_set(s, set_index, seq);
			own = huc_find_slot(set, key, seq);
			value = own ? NULL : bpf_map_lookup_elem(&sites, key);
		}
	}
	if (from_hops)
		s->table.learned_walks += 1;
	if (!own) {
		/* New on this CPU in this generation: a free way takes it, with the full stack
		 * another CPU's entry in the hash has already, else one taken now. */
		own = huc_free_slot(set, seq);
		if (own) {
			s->table_epoch += 1;
			__builtin_memset(&own->value, 0, sizeof(own->value));
			own->key = *key;
			own->seq = seq;
			own->heat_credit = 0;
			own->value.full_stack_id =
				value ? value->full_stack_id : huc_full_stack(ctx, s, key->generation);
		} else if (value) {
			own = huc_take_cold_slot(set, key, value, seq);
			if (own)
				s->table_epoch += 1;
		}
	}
	if (own) {
		if (recent && !by_stack)
			huc_recent_fill(s, recent, caller, key, seq, huc_way_index(set, own, set_index),
					from_hops ? s->walk_len : 0);
		return own;
	}
	if (!value) {
		/* The set is full: the shared hash, as every key was counted before the table. */
		value = huc_made_site(key, huc_full_stack(ctx, s, key->generation));
		if (!value)
			huc_count(&drops, HUC_DROP_SITES_MAP_FULL);
	}
	*value_out = value;
	return NULL;
}

/* slot: where the walk along learned offsets starts (arch_reads.bpf.h), slot_in_ctx: see
 * huc_site_by_hops; direct: huc_kernel_word's, stoppable: whether the benchmark's stops are
 * compiled in (all three constants: the branches are compiled away);
 * caller: the immediate caller's return address (0: unknown); ptr: the object (read only to
 * classify sub-checks). The fast path (recent_keys.bpf.h) first, then the full one. */
static __always_inline int huc_on_check(void *ctx, __u64 slot, bool slot_in_ctx, bool direct,
					bool stoppable, __u64 caller, __u64 ptr, __u64 bytes,
					bool to_user)
{
	struct task_struct *task = huc_current_task();
	struct huc_site_value *value = NULL;
	struct huc_recent *recent = NULL;
	struct huc_site_slot *own = NULL;
	struct huc_site_key key = {};
	struct huc_cpu_state *state;
	__u32 seq = generation_seq;
	struct huc_scratch *s;
	__u32 zero = 0;

	/* Not followed (`record -p/-C/-G/-- COMMAND`): not counted, and no state of this check is
	 * left for its sub-checks and return to find (they would take another task's for it). */
	if (!huc_followed(0)) {
		state = check_leaves_state ? bpf_map_lookup_elem(&cpu_state, &zero) : NULL;
		if (state) {
			state->active = 0;
			state->entry_ns = 0;
		}
		return 0;
	}
	/* The one scratch lookup of the check: the recent keys, the memo, the walk and the hot
	 * sites' table. */
	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	key.generation = (__u8)seq;
	key.syscall_nr = huc_task_syscall_nr(task);
	key.direction = to_user ? HUC_DIR_TO_USER : HUC_DIR_FROM_USER;
	key.caller = caller;
	if (key_by_cgroup)
		key.cgroup_id = bpf_get_current_cgroup_id();
	HUC_STOP_AFTER(stoppable, HUC_STAGE_KEY, key.syscall_nr);
	if (caller) {
		__u64 tag = huc_recent_tag(key.syscall_nr, key.direction);

		recent = huc_recent_set(s, caller, tag);
		own = huc_recent_way(s, recent, slot, caller, tag, &key, seq, direct);
	}
	if (!own) {
		own = huc_count_full(ctx, s, slot, slot_in_ctx, direct, caller, &key, seq, recent,
				     &value);
		if (!own && !value)
			return 0;
	}
	if (own)
		huc_add_call(&own->value, bytes, false);
	else if (value)
		huc_add_call(value, bytes, true);
	HUC_STOP_AFTER(stoppable, HUC_STAGE_COUNT, own);

	if (classify_subchecks) {
		__u64 slab = 0;
		__u32 end = huc_classify_subchecks(task, ptr, bytes, direct, &slab);

		if (own)
			huc_add_end(&own->value, end, false);
		else if (value)
			huc_add_end(value, end, true);
		if (count_objects && end == HUC_END_SLAB)
			huc_count_slab_object(own ? &own->key : &key, slab, ptr, bytes, direct);
	}
	if (!check_leaves_state)
		return 0;

	state = bpf_map_lookup_elem(&cpu_state, &zero);
	if (state) {
		state->site = own ? own->key : key;
		/* The low half of bpf_get_current_pid_tgid(), which the sub-check and return
		 * programs compare it with, loaded from the task at hand instead of by a helper. */
		state->tgid_pid_low = (__u32)HUC_TASK_FIELD(task, pid);
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
	key.site.generation = (__u8)generation_seq;
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
	key.site.generation = (__u8)generation_seq;
	key.slot = slot < HUC_LATENCY_SLOTS ? slot : HUC_LATENCY_SLOTS - 1;
	huc_hash_add(&latency, &key, 1, &drops, HUC_DROP_LATENCY_MAP_FULL);
	return 0;
}

/* void __check_object_size(const void *ptr, unsigned long n, bool to_user). Each flavour twice: its
 * reads by helper calls, and by direct loads (arch_reads.bpf.h, huc_kernel_word): the daemon
 * loads one of the two. Each program holds the check twice, with the benchmark's stops and
 * without, and the verifier drops the copy bench_stop_after does not pick (HUC_PICK_COPY). */
static __always_inline int huc_fentry_check(unsigned long long *ctx, unsigned long n, bool to_user,
					    bool direct, bool stoppable)
{
	struct huc_caller c;
	__u64 object = 0;

	HUC_STOP_AFTER(stoppable, HUC_STAGE_ENTRY, 0);
	c = huc_fentry_caller(ctx, HUC_CHECK_OBJECT_SIZE_NARGS, direct);
	/* The verifier refuses a direct read of a `const void *` argument ("arg0 type UNKNOWN is
	 * not a struct", 6.12); the helper hands it over as a number. */
	if (classify_subchecks)
		bpf_get_func_arg(ctx, 0, &object);
	HUC_STOP_AFTER(stoppable, HUC_STAGE_CALLER, c.ret);
	huc_on_check(ctx, c.slot, true, direct, stoppable, c.ret, object, n, to_user);
	if (rescue_enabled)
		huc_rescue_mark();
	return 0;
}

static __always_inline int huc_kprobe_check(struct pt_regs *ctx, __u64 ptr, __u64 n, bool to_user,
					    bool direct, bool stoppable)
{
	struct huc_caller c;

	HUC_STOP_AFTER(stoppable, HUC_STAGE_ENTRY, 0);
	c = huc_kprobe_caller(ctx, direct);
	HUC_STOP_AFTER(stoppable, HUC_STAGE_CALLER, c.ret);
	return huc_on_check(ctx, c.slot, false, direct, stoppable, c.ret, ptr, n, to_user);
}

SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	return HUC_PICK_COPY(huc_fentry_check, ctx, n, to_user, false);
}

/* The direct flavour. Built with HUC_HELPER_READS_ONLY (arch_reads.bpf.h) it is the helper
 * flavour under the same name: that object is never asked for it, but has the same programs. */
SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_check_direct, const void *ptr, unsigned long n, bool to_user)
{
	return HUC_PICK_COPY(huc_fentry_check, ctx, n, to_user, HUC_HAS_DIRECT_READS);
}

SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_rescue, const void *ptr, unsigned long n, bool to_user)
{
	return huc_fentry_rescue_check(ctx, n, to_user, false);
}

SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_rescue_direct, const void *ptr, unsigned long n, bool to_user)
{
	return huc_fentry_rescue_check(ctx, n, to_user, HUC_HAS_DIRECT_READS);
}

SEC("kprobe/__check_object_size")
int BPF_KPROBE(huc_kprobe_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	return HUC_PICK_COPY(huc_kprobe_check, ctx, (__u64)ptr, n, to_user, false);
}

SEC("kprobe/__check_object_size")
int BPF_KPROBE(huc_kprobe_check_direct, const void *ptr, unsigned long n, bool to_user)
{
	return HUC_PICK_COPY(huc_kprobe_check, ctx, (__u64)ptr, n, to_user,
			     HUC_HAS_DIRECT_READS);
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
		return huc_on_subcheck(                                       \
			huc_fentry_caller(ctx, bpf_get_func_arg_cnt(ctx), false).ret, kind); \
	}                                                                      \
	SEC("kprobe")                                                          \
	int huc_kprobe_##name(struct pt_regs *ctx)                             \
	{                                                                      \
		return huc_on_subcheck(huc_kprobe_caller(ctx, false).ret, kind);      \
	}

HUC_SUBCHECK_PROGS(slab, HUC_CHECK_SLAB)
HUC_SUBCHECK_PROGS(vmalloc, HUC_CHECK_VMALLOC)
HUC_SUBCHECK_PROGS(stack, HUC_CHECK_STACK)
HUC_SUBCHECK_PROGS(text, HUC_CHECK_TEXT)
HUC_SUBCHECK_PROGS(page, HUC_CHECK_PAGE)
HUC_SUBCHECK_PROGS(heap, HUC_CHECK_HEAP)
