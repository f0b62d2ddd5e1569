// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Probe mode: exact counts of hardened-usercopy checks per call site.
 *
 * Cost model (docs/design.md): a full kernel stack walk per call costs more than the check itself
 * (a stack-keyed kprobe made a UDP flood 2.8x slower, a bare one 1.23x). So every call is
 * keyed by its *call site's return address*, read in O(1), plus the syscall number and
 * direction. Usually that is the immediate caller (the return address at the top of the stack).
 * When the caller is a copy helper (simple_copy_to_iter, ip_generic_getfrag, ...: address ranges
 * handed in before load), the call site lies further up. Walking the stack to it on every call
 * is what made probe mode as dear as a stack-keyed probe (3 of 4 checks per UDP datagram are
 * helper-called), so instead hucprof *learns* where each helper keeps its own return address:
 *
 *   A return address R into a function F fixes F's stack depth at R (the kernel's ORC unwinder
 *   relies on the same fact: one sp offset per instruction), so the slot holding F's return
 *   address is always the same number of bytes above the slot holding R. The first time R is
 *   seen, one real stack trace and one read of the stack above it give that offset (helper_hops);
 *   from then on the call site is a few 8-byte reads away (the offsets memoized per CPU).
 *
 * A learned chain is checked against a real stack trace whenever it yields a key not seen before
 * and for 1 in HUC_VERIFY_ONE_IN calls; a disagreement (a function with a variable frame) drops
 * the offset for good and that helper's callers go back to the bounded stack walk
 * (HUC_SHORT_STACK_DEPTH frames, keyed by stack id), as do callers whose offsets cannot be
 * learned (the call site not within 1 KiB of stack, more than HUC_HOPS_MAX helpers).
 * A full stack is captured once per new key and generation, for flame graphs and pprof.
 *
 * Every target has an fentry and a kprobe flavour; the daemon picks one per target at run time
 * (autoload off for the other) and reports the choice.
 */
#include "usercopy_classify.bpf.h"
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
HUC_PERCPU_SLOTS(helper_walks, HUC_WALK_KINDS);

/* Bytes from the stack slot holding a return address into a copy helper to the slot holding
 * that helper's own return address; 0: not learnable (variable frame), always walk. */
struct huc_hop {
	__u32 offset;
	__u32 pad;
};

/* LRU: should a kernel ever have more helper return addresses than entries, the coldest are
 * relearned, instead of every new one learning again on every call. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HUC_HOPS_MAX_ENTRIES);
	__type(key, __u64); /* return address into a copy helper */
	__type(value, struct huc_hop);
} helper_hops SEC(".maps");

/* Bumped whenever helper_hops changes (learned, forgotten): memo entries about helpers from an
 * older epoch are asked again. */
volatile __u32 hops_epoch = 0;

/*
 * What the per-check path asks about a return address -- is it in a copy helper (a binary
 * search of helper_ranges), and if so its learned offset (a helper_hops lookup) -- memoized per
 * CPU, direct-mapped: a UDP flood asks about a handful of addresses millions of times, and the
 * search and the hash lookup were most of the walk along learned offsets. facts: HUC_MEMO_* in
 * the low byte, the offset above it, the epoch in the high half; check guards against an entry
 * half-written when a program on the same CPU preempted another one writing it.
 */
#define HUC_MEMO_SLOTS 32
#define HUC_MEMO_HELPER 1ULL /* in a copy helper */
#define HUC_MEMO_HOP 2ULL    /* helper_hops has an entry: its offset is in bits 8..31 (0: none) */
#define HUC_MEMO_SALT 0x9e3779b97f4a7c15ULL

struct huc_memo {
	__u64 addr;
	__u64 facts;
	__u64 check;
};

/* Learning and verifying need a real stack trace and a window of raw stack, and storing a stack
 * needs its value built somewhere: too big for the 512-byte BPF stack, so per-CPU scratch. */
#define HUC_TRACE_WORDS 32
#define HUC_WINDOW_WORDS 128 /* 1 KiB above the caller's slot: deep enough for the helpers */
#define HUC_WINDOW_CHUNK 16
#define HUC_VERIFY_ONE_IN 1024

struct huc_scratch {
	__u64 trace[HUC_TRACE_WORDS];
	__u64 window[HUC_WINDOW_WORDS];
	/* Learning state. It lives here, not in registers, on purpose: the verifier does not track
	 * map memory, so the window scan's states stay equal from one iteration to the next and
	 * are pruned, instead of multiplying past the 1M-instruction limit. */
	__u64 wanted[HUC_HOPS_MAX + 1]; /* return addresses above the caller, call site last */
	__u32 found_at[HUC_HOPS_MAX + 1]; /* window word of each, in order */
	__u32 wanted_count;
	__u32 found_count;
	__u32 trace_words;
	/* The last walk along learned offsets: return addresses read above the caller, call site
	 * last. */
	__u32 walk_len;
	__u64 walk[HUC_HOPS_MAX];
	__s32 caller_index;
	__u32 pad0;
	__u64 laundered;
	__u32 verify_countdown;
	__u32 pad;
	struct huc_memo memo[HUC_MEMO_SLOTS];
	struct huc_stack full; /* value of the next full_stacks entry */
	struct huc_short_stack short_stack; /* value of the next short_stacks entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct huc_scratch);
} scratch SEC(".maps");

/* The return address at a stack slot, 0 when there is no slot or it cannot be read. */
static __always_inline __u64 huc_read_slot(__u64 slot)
{
	__u64 word = 0;

	if (slot)
		bpf_probe_read_kernel(&word, sizeof(word), (void *)slot);
	return huc_ret_addr(word);
}

/* Global (verified once): the binary search inlined into every caller multiplied the verifier's
 * paths past its budget on 6.1. The per-check path asks huc_addr_facts(), which memoizes it. */
__noinline int huc_is_helper(__u64 addr)
{
	return huc_in_ranges(helper_ranges, nr_helper_ranges, addr);
}

static __always_inline void huc_set_hop(__u64 addr, const struct huc_hop *hop)
{
	bpf_map_update_elem(&helper_hops, &addr, hop, BPF_ANY);
	__sync_fetch_and_add(&hops_epoch, 1);
}

static __always_inline void huc_forget_hop(__u64 addr)
{
	struct huc_hop never = {};

	huc_set_hop(addr, &never);
}

/* HUC_MEMO_* facts about addr (see struct huc_memo), from the memo or asked and memoized. */
static __always_inline __u64 huc_addr_facts(struct huc_scratch *s, __u64 addr)
{
	struct huc_memo *m = &s->memo[(addr ^ (addr >> 5) ^ (addr >> 13)) & (HUC_MEMO_SLOTS - 1)];
	__u64 epoch = hops_epoch;
	__u64 facts = m->facts;
	struct huc_hop *hop;

	/* Whether an address is in a helper never changes; what is known of its offset may. */
	if (m->addr == addr && m->check == (addr ^ facts ^ HUC_MEMO_SALT) &&
	    (!(facts & HUC_MEMO_HELPER) || (facts >> 32) == epoch))
		return facts;
	facts = epoch << 32;
	if (huc_is_helper(addr)) {
		facts |= HUC_MEMO_HELPER;
		hop = bpf_map_lookup_elem(&helper_hops, &addr);
		if (hop)
			facts |= HUC_MEMO_HOP | ((__u64)(hop->offset & 0xffffff) << 8);
	}
	m->addr = addr;
	m->facts = facts;
	m->check = addr ^ facts ^ HUC_MEMO_SALT;
	return facts;
}

static __always_inline __u32 huc_memo_offset(__u64 facts)
{
	return (facts >> 8) & 0xffffff;
}

/*
 * The learning machinery below runs rarely (a new return address, a new key, 1 in
 * HUC_VERIFY_ONE_IN calls) but has loops over the stack window; as global functions the verifier
 * checks each once, instead of once per inlined copy and path, which blew its 1M-instruction
 * budget. They share per-CPU scratch (probe programs do not nest on a CPU) and take scalars only.
 */

/* Index of caller in the stack trace in scratch, or -1. Laundered through map memory: a
 * verifier that knew which of 32 indices it is would check everything after once per index. */
static __always_inline int huc_trace_index(struct huc_scratch *s, __u64 caller)
{
	s->caller_index = -1;
	for (int i = 0; i < HUC_TRACE_WORDS; i++) {
		if (i >= s->trace_words)
			break;
		if (s->trace[i] == caller) {
			s->caller_index = i;
			break;
		}
	}
	/* arm64 kprobes: the trace lacks the caller and its index 0 is the probed function
	 * (arch_reads.bpf.h); the frames above it are the ones above the caller. */
	if (HUC_TRACE_SKIPS_CALLER && s->caller_index < 0 && s->trace_words > 1)
		s->caller_index = 0;
	asm volatile("" ::: "memory");
	return s->caller_index;
}

/*
 * Learns the offsets from the caller's slot up to the call site: the return addresses above the
 * caller in the stack trace in scratch, found in the raw stack above the slot, in order. Every
 * helper on the way gets its offset; where that fails, the helper is marked not learnable (its
 * callers go on with the stack walk instead of learning again on every call).
 */
__noinline int huc_learn_hops(__u64 slot, __u64 caller)
{
	struct huc_scratch *s;
	__u32 zero = 0, n;
	int i;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	i = huc_trace_index(s, caller);
	if (i < 0) {
		huc_forget_hop(caller);
		return 0;
	}
	/* What to look for: the helpers above the caller and the call site above them. */
	s->wanted_count = 0;
	for (int h = 0; h <= HUC_HOPS_MAX; h++) {
		__u32 index = (__u32)i + 1 + h;
		__u64 addr;

		if (index >= HUC_TRACE_WORDS || index >= s->trace_words)
			break;
		barrier_var(index); /* keep the mask: the compiler finds it redundant, the verifier not */
		addr = s->trace[index & (HUC_TRACE_WORDS - 1)];
		s->wanted[h] = addr;
		s->wanted_count = h + 1;
		if (!huc_is_helper(addr))
			break;
	}
	asm volatile("" ::: "memory");
	/* Read in chunks: near the top of the task stack a full window would run off its end. */
	__builtin_memset(s->window, 0, sizeof(s->window));
	for (int c = 0; c < HUC_WINDOW_WORDS / HUC_WINDOW_CHUNK; c++) {
		if (bpf_probe_read_kernel(&s->window[c * HUC_WINDOW_CHUNK],
					  HUC_WINDOW_CHUNK * sizeof(__u64),
					  (void *)(slot + c * HUC_WINDOW_CHUNK * sizeof(__u64))))
			break;
	}
	s->found_count = 0;
	for (__u32 k = 1; k < HUC_WINDOW_WORDS; k++) {
		__u32 f;

		asm volatile("" ::: "memory"); /* reload the state: see struct huc_scratch */
		f = s->found_count;

		if (f >= s->wanted_count || f > HUC_HOPS_MAX)
			break;
		if (huc_ret_addr(s->window[k]) == s->wanted[f]) {
			s->found_at[f] = k;
			s->found_count = f + 1;
		}
	}
	/* Offsets between consecutive finds; the first helper whose successor was not found (chain
	 * too long, frame too big, call site not in the window) is marked not learnable. */
	asm volatile("" ::: "memory");
	n = s->found_count;
	for (__u32 h = 0; h <= HUC_HOPS_MAX; h++) {
		__u64 from = h ? s->wanted[h - 1] : caller;
		struct huc_hop hop = {};

		if (h >= n) {
			huc_forget_hop(from);
			break;
		}
		hop.offset = (s->found_at[h] - (h ? s->found_at[h - 1] : 0)) * sizeof(__u64);
		huc_set_hop(from, &hop);
		if (!huc_is_helper(s->wanted[h]))
			break; /* reached the call site */
	}
	return 0;
}

/* huc_follow_hops met a helper without a learned offset yet. Never a kernel address. */
#define HUC_HOPS_UNKNOWN 1

/* Follows learned offsets from the caller's slot, recording the walk in scratch; returns the
 * call site's return address (the first one outside the helpers), HUC_HOPS_UNKNOWN, or 0. */
__noinline __u64 huc_follow_hops(__u64 slot, __u64 caller)
{
	struct huc_scratch *s;
	__u64 addr = caller;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->walk_len = 0;
	for (int h = 0; h < HUC_HOPS_MAX; h++) {
		__u64 facts = huc_addr_facts(s, addr);

		if (!(facts & HUC_MEMO_HOP))
			return HUC_HOPS_UNKNOWN;
		if (!huc_memo_offset(facts))
			return 0;
		slot += huc_memo_offset(facts);
		addr = huc_read_slot(slot);
		s->walk[h] = addr;
		s->walk_len = h + 1;
		if (!addr)
			return 0;
		if (!(huc_addr_facts(s, addr) & HUC_MEMO_HELPER))
			return addr;
	}
	return 0;
}

/* Does the stack trace in scratch agree with the walk in scratch? On disagreement the first
 * wrong offset is dropped for good. */
__noinline int huc_verify_hops(__u64 caller)
{
	struct huc_scratch *s;
	__u64 previous = caller;
	__u32 zero = 0;
	int i;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	i = huc_trace_index(s, caller);
	if (i < 0)
		return 0; /* cannot tell: do not trust, do not forget */
	for (__u32 h = 0; h < HUC_HOPS_MAX; h++) {
		__u32 index = (__u32)i + 1 + h;

		if (h >= s->walk_len)
			break;
		if (index >= HUC_TRACE_WORDS || index >= s->trace_words)
			return 0;
		barrier_var(index);
		if (s->trace[index & (HUC_TRACE_WORDS - 1)] != s->walk[h]) {
			huc_forget_hop(previous);
			huc_count(&helper_walks, HUC_WALK_MISMATCH);
			return 0;
		}
		previous = s->walk[h];
	}
	return 1;
}

/*
 * The fentry caller's slot is an address inside the trampoline's frame, derived from ctx, and the
 * verifier refuses a ctx pointer as a global function's scalar argument. Passed through map
 * memory it comes back as a plain number (storing a pointer in a map needs CAP_PERFMON, which
 * hucprof has anyway for perf events); it is only ever read with bpf_probe_read_kernel.
 */
static __always_inline __u64 huc_as_scalar(__u64 value)
{
	struct huc_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return 0;
	s->laundered = value;
	asm volatile("" ::: "memory");
	return s->laundered;
}

/* A real stack trace into scratch (bpf_get_stack needs the program's ctx, so this is inline). */
static __always_inline void huc_take_trace(void *ctx)
{
	struct huc_scratch *s;
	__u32 zero = 0;
	long n;

	s = bpf_map_lookup_elem(&scratch, &zero);
	if (!s)
		return;
	n = bpf_get_stack(ctx, s->trace, sizeof(s->trace), 0);
	s->trace_words = n > 0 ? n / sizeof(__u64) : 0;
}

/* Every HUC_VERIFY_ONE_IN-th helper-called check on this CPU: a counter, not a random number,
 * to keep a helper call off the per-check path. */
static __always_inline bool huc_verify_due(void)
{
	__u32 zero = 0;
	struct huc_scratch *s = bpf_map_lookup_elem(&scratch, &zero);

	return s && (++s->verify_countdown & (HUC_VERIFY_ONE_IN - 1)) == 0;
}

/* The call site of a helper-called check from learned offsets, learning them first if a helper
 * on the way is new; 0 when they cannot say. slot_in_ctx: slot points into the fentry
 * trampoline's frame and must be laundered before the global functions take it. */
static __always_inline __u64 huc_site_by_hops(void *ctx, __u64 slot, bool slot_in_ctx,
					      __u64 caller, struct huc_site_key *key)
{
	__u64 site;

	if (slot_in_ctx)
		slot = huc_as_scalar(slot);
	site = huc_follow_hops(slot, caller);

	if (site == HUC_HOPS_UNKNOWN) {
		huc_take_trace(ctx);
		huc_learn_hops(slot, caller);
		site = huc_follow_hops(slot, caller);
		if (site == HUC_HOPS_UNKNOWN)
			site = 0; /* the offsets could not be stored */
	}
	key->caller = site;
	return site;
}

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

static __always_inline bool huc_caller_is_helper(__u64 caller)
{
	struct huc_scratch *s;
	__u32 zero = 0;

	s = bpf_map_lookup_elem(&scratch, &zero);
	return s && (huc_addr_facts(s, caller) & HUC_MEMO_HELPER);
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
