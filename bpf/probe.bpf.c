// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe mode: exact counts of hardened-usercopy checks per call site.
 *
 * Cost model (DESIGN.md): a full kernel stack walk per call costs more than the check itself
 * (a stack-keyed kprobe made a UDP flood 2.8x slower, a bare one 1.23x). So every call is
 * keyed by its *immediate caller* (the return address, read in O(1)), plus the syscall number
 * and direction. Only when the caller is a copy helper (simple_copy_to_iter, ip_generic_getfrag,
 * ...: address ranges handed in before load) does the call site lie further up; then a short,
 * bounded stack (HUC_SHORT_STACK_DEPTH frames) is the key. A full stack is captured once per
 * new key, for flame graphs and pprof.
 *
 * Every target has an fentry and a kprobe flavour; the daemon picks one per target at run time
 * (autoload off for the other) and reports the choice.
 */
#include "usercopy_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Copy helpers whose callers are the real call sites (sorted, set before load). */
const volatile struct huc_range helper_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_helper_ranges = 0;
/* __check_object_size (+ .cold) and check_heap_object: the only legitimate callers of sub-checks
 * in a usercopy check. */
const volatile struct huc_range dispatcher_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_dispatcher_ranges = 0;
const volatile bool latency_enabled = false;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, HUC_SITES_MAX_ENTRIES);
	__type(key, struct huc_site_key);
	__type(value, struct huc_site_value);
} sites SEC(".maps");

HUC_PERCPU_COUNTERS(subchecks, struct huc_subcheck_key, HUC_SUBCHECKS_MAX_ENTRIES);
HUC_PERCPU_COUNTERS(latency, struct huc_latency_key, HUC_SITES_MAX_ENTRIES);
HUC_STACK_MAP(short_stacks, HUC_SHORT_STACK_DEPTH);
HUC_STACK_MAP(full_stacks, HUC_FULL_STACK_DEPTH);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct huc_cpu_state);
} cpu_state SEC(".maps");

HUC_PERCPU_SLOTS(drops, HUC_DROP_REASONS);

/* The return address into the traced function lies within this many bytes of its start
 * (call __fentry__ at +0, or +4 after ENDBR). */
#define HUC_FENTRY_RET_WINDOW 16

static __always_inline bool huc_returns_into(__u64 word, __u64 ip)
{
	return word > ip && word <= ip + HUC_FENTRY_RET_WINDOW;
}

/*
 * The immediate caller of an fentry-traced function. Stack unwinding from inside a trampoline
 * cannot be trusted to keep the caller, so read the trampoline frame directly. Above the
 * program's ctx (the saved argument registers, nargs words) the x86-64 BPF trampoline has
 * (arch/x86/net/bpf_jit_comp.c, 5.x to 6.12):
 *   fentry only:            saved RBP, return into the traced function, return into its caller
 *   with fexit (CALL_ORIG): the return-value slot, then the same three words
 * The return-value slot is written only after the traced function returns, so while fentry
 * programs run it holds whatever the stack had there -- sometimes an old return address into
 * the traced function itself (Debian 6.1 under fentry+fexit: 2 of 143k calls). A first-match
 * scan from the slot took that for the real one and returned the saved RBP (data, often 0:
 * caller_unreadable) as the caller. So test the with-fexit position first: that word returns
 * into the traced function only in that layout (without the slot it is the return into the
 * caller, which is never inside the traced function's first bytes).
 */
static __always_inline __u64 huc_fentry_caller(void *ctx)
{
	__u64 words[4] = {};
	__u64 ip = bpf_get_func_ip(ctx);
	__u64 nargs = bpf_get_func_arg_cnt(ctx);

	if (nargs > 6)
		return 0;
	if (bpf_probe_read_kernel(words, sizeof(words), (void *)((__u64)ctx + nargs * 8)))
		return 0;
	if (huc_returns_into(words[2], ip))
		return words[3]; /* return-value slot, saved RBP, return into traced, caller */
	if (huc_returns_into(words[1], ip))
		return words[2]; /* saved RBP, return into traced, caller */
	return 0;
}

/* The immediate caller at a kprobe on function entry: the return address is at the top of the
 * stack (no frame has been built yet, so frame-pointer unwinding would skip it). */
static __always_inline __u64 huc_kprobe_caller(struct pt_regs *regs)
{
	__u64 ret = 0;

	bpf_probe_read_kernel(&ret, sizeof(ret), (void *)PT_REGS_SP(regs));
	return ret;
}

static __always_inline int huc_on_check(void *ctx, __u64 caller, __u64 bytes, bool to_user)
{
	struct huc_site_key key = {};
	struct huc_site_value *value;
	struct huc_cpu_state *state;
	__u32 zero = 0;

	key.short_stack_id = -1;
	key.syscall_nr = huc_current_syscall_nr();
	key.direction = to_user ? HUC_DIR_TO_USER : HUC_DIR_FROM_USER;
	if (!caller)
		huc_count(&drops, HUC_DROP_CALLER_UNREADABLE);

	if (caller && huc_in_ranges(helper_ranges, nr_helper_ranges, caller)) {
		long id = bpf_get_stackid(ctx, &short_stacks, 0);

		if (id >= 0)
			key.short_stack_id = (__s32)id;
		else
			huc_count_stack_error(&drops, id);
	}
	if (key.short_stack_id < 0)
		key.caller = caller;

	value = bpf_map_lookup_elem(&sites, &key);
	if (!value) {
		struct huc_site_value init = {};
		long id = bpf_get_stackid(ctx, &full_stacks, 0);

		if (id >= 0)
			init.full_stack_ref = (__u64)id + 1;
		else
			huc_count_stack_error(&drops, id);
		bpf_map_update_elem(&sites, &key, &init, BPF_NOEXIST);
		value = bpf_map_lookup_elem(&sites, &key);
		if (!value) {
			huc_count(&drops, HUC_DROP_SITES_MAP_FULL);
			return 0;
		}
	}
	/* Per-CPU value: no other CPU writes it, so no atomics. */
	value->calls += 1;
	value->bytes += bytes;

	state = bpf_map_lookup_elem(&cpu_state, &zero);
	if (state) {
		state->site = key;
		state->tgid_pid_low = (__u32)bpf_get_current_pid_tgid();
		state->active = 1;
		state->entry_ns = latency_enabled ? bpf_ktime_get_ns() : 0;
	}
	return 0;
}

/*
 * A sub-check ran. It belongs to a usercopy check only when it was called from the check
 * dispatcher (find_vmap_area and __virt_addr_valid have many other callers); then it is charged
 * to the call site of the enclosing __check_object_size, recorded in this CPU's state.
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
	key.slot = slot < HUC_LATENCY_SLOTS ? slot : HUC_LATENCY_SLOTS - 1;
	huc_hash_add(&latency, &key, 1, &drops, HUC_DROP_LATENCY_MAP_FULL);
	return 0;
}

/* void __check_object_size(const void *ptr, unsigned long n, bool to_user) */
SEC("fentry/__check_object_size")
int BPF_PROG(huc_fentry_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	return huc_on_check(ctx, huc_fentry_caller(ctx), n, to_user);
}

SEC("kprobe/__check_object_size")
int BPF_KPROBE(huc_kprobe_check_object_size, const void *ptr, unsigned long n, bool to_user)
{
	return huc_on_check(ctx, huc_kprobe_caller(ctx), n, to_user);
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
		return huc_on_subcheck(huc_fentry_caller(ctx), kind);          \
	}                                                                      \
	SEC("kprobe")                                                          \
	int huc_kprobe_##name(struct pt_regs *ctx)                             \
	{                                                                      \
		return huc_on_subcheck(huc_kprobe_caller(ctx), kind);          \
	}

HUC_SUBCHECK_PROGS(slab, HUC_CHECK_SLAB)
HUC_SUBCHECK_PROGS(vmalloc, HUC_CHECK_VMALLOC)
HUC_SUBCHECK_PROGS(stack, HUC_CHECK_STACK)
HUC_SUBCHECK_PROGS(text, HUC_CHECK_TEXT)
HUC_SUBCHECK_PROGS(page, HUC_CHECK_PAGE)
HUC_SUBCHECK_PROGS(heap, HUC_CHECK_HEAP)
