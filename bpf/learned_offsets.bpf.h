/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Learned offsets: the call site of a check called from a copy helper (simple_copy_to_iter,
 * ip_generic_getfrag, ...: address ranges handed in before load), without a stack walk per call.
 * Such a call site lies above the immediate caller, and walking the stack to it on every call
 * made probe mode as dear as a stack-keyed probe (docs/design.md), so hucprof learns where each
 * helper keeps its own return address:
 *
 *   A return address R into a function F fixes F's stack depth at R (the kernel's ORC unwinder
 *   relies on the same fact: one sp offset per instruction), so the slot holding F's return
 *   address is always the same number of bytes above the slot holding R. The first time R is
 *   seen, one real stack trace and one read of the stack above it give that offset (helper_hops);
 *   from then on the call site is a few 8-byte reads away (the offsets memoized per CPU).
 *
 * A learned chain is checked against a real stack trace whenever it yields a key not seen before
 * and for 1 in HUC_VERIFY_ONE_IN calls (probe.bpf.c asks huc_verify_due and huc_verify_hops); a
 * disagreement (a function with a variable frame) drops the offset for good and that helper's
 * callers go back to probe.bpf.c's bounded stack walk, as do callers whose offsets cannot be
 * learned (the call site not within 1 KiB of stack, more than HUC_HOPS_MAX helpers).
 *
 * Its state is in probe mode's per-CPU scratch (probe_scratch.bpf.h). It declares maps and
 * read-only globals the daemon sets before load: only probe.bpf.c includes it, so there is one
 * instance of each, in the probe object.
 */
#ifndef HUCPROF_LEARNED_OFFSETS_BPF_H
#define HUCPROF_LEARNED_OFFSETS_BPF_H

#include "probe_scratch.bpf.h"
#include "usercopy_common.bpf.h"

/* Copy helpers whose callers are the real call sites (sorted, set before load). */
const volatile struct huc_range helper_ranges[HUC_MAX_HELPER_RANGES] = {};
const volatile __u32 nr_helper_ranges = 0;

/* How each helper-called check found its call site (hucprof_abi.h, HUC_WALK_*). */
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
 * CPU, 4-way set-associative (struct huc_memo): a UDP flood asks about a handful of addresses millions
 * of times, and the search and the hash lookup were most of the walk along learned offsets.
 * facts: HUC_MEMO_* in the low byte, the offset above it, the epoch in the high half; check
 * guards against an entry half-written when a program on the same CPU preempted another one
 * writing it.
 */
#define HUC_MEMO_HELPER 1ULL /* in a copy helper */
#define HUC_MEMO_HOP 2ULL    /* helper_hops has an entry: its offset is in bits 8..31 (0: none) */
#define HUC_MEMO_SALT 0x9e3779b97f4a7c15ULL

#define HUC_WINDOW_CHUNK 16
#define HUC_VERIFY_ONE_IN 1024

/* The return address at a stack slot, 0 when there is no slot or it cannot be read. direct:
 * huc_kernel_word's. */
static __always_inline __u64 huc_read_slot(__u64 slot, bool direct)
{
	return slot ? huc_ret_addr(huc_kernel_word(slot, direct)) : 0;
}

/* Global (verified once): the binary search inlined into every caller multiplied the verifier's
 * paths past its budget on 6.1. The per-check path asks huc_addr_facts(), which memoizes it. */
__noinline int huc_is_helper(__u64 addr)
{
	return huc_in_ranges_of(helper_ranges, nr_helper_ranges, HUC_MAX_HELPER_RANGES, addr);
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

/* The memo set addr belongs to: its first way. */
static __always_inline struct huc_memo *huc_memo_set(struct huc_scratch *s, __u64 addr)
{
	__u32 set = ((addr * HUC_MEMO_SALT) >> 60) & (HUC_MEMO_SETS - 1);

	return &s->memo[set * HUC_MEMO_WAYS];
}

/* addr's entry in its set, or NULL. */
static __always_inline struct huc_memo *huc_memo_find(struct huc_memo *set, __u64 addr)
{
	for (int w = 0; w < HUC_MEMO_WAYS; w++) {
		if (set[w].addr == addr)
			return &set[w];
	}
	return NULL;
}

/* HUC_MEMO_* facts about addr, from the memo or asked and memoized. */
static __always_inline __u64 huc_addr_facts(struct huc_scratch *s, __u64 addr)
{
	struct huc_memo *set = huc_memo_set(s, addr);
	struct huc_memo *m = huc_memo_find(set, addr);
	__u64 epoch = hops_epoch;
	struct huc_hop *hop;
	__u64 facts;

	if (m) {
		facts = m->facts;
		/* Whether an address is in a helper never changes; what is known of its offset
		 * may. */
		if (m->check == (addr ^ facts ^ HUC_MEMO_SALT) &&
		    (!(facts & HUC_MEMO_HELPER) || (facts >> 32) == epoch))
			return facts;
	} else {
		/* The way filled longest ago goes; the others move down one. */
		for (int w = HUC_MEMO_WAYS - 1; w > 0; w--)
			set[w] = set[w - 1];
		m = &set[0];
		m->span = 0;
	}
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
	__u32 zero = 0, at = 0; /* at: bytes above slot of the hop's word */

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
		at += huc_memo_offset(facts);
		addr = huc_read_slot(slot + at, false);
		s->walk[h] = addr;
		s->walk_at[h] = at;
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
static __always_inline __u64 huc_as_scalar(struct huc_scratch *s, __u64 value)
{
	s->laundered = value;
	asm volatile("" ::: "memory");
	return s->laundered;
}

/* A real stack trace into scratch (bpf_get_stack needs the program's ctx, so this is inline). */
static __always_inline void huc_take_trace(void *ctx, struct huc_scratch *s)
{
	long n = bpf_get_stack(ctx, s->trace, sizeof(s->trace), 0);

	s->trace_words = n > 0 ? n / sizeof(__u64) : 0;
}

/* Every HUC_VERIFY_ONE_IN-th helper-called check on this CPU: a counter, not a random number,
 * to keep a helper call off the per-check path. huc_verify_due_at says whether the check that
 * brings the count to count is due: the fast path (recent_keys.bpf.h) asks it and leaves a due
 * check to the full path, which counts it by huc_verify_due. */
static __always_inline bool huc_verify_due_at(__u32 count)
{
	return !(count & (HUC_VERIFY_ONE_IN - 1));
}

static __always_inline bool huc_verify_due(struct huc_scratch *s)
{
	s->verify_countdown += 1;
	return huc_verify_due_at(s->verify_countdown);
}

/*
 * huc_follow_hops on the per-check path, inline: the global function costs a call, its own
 * scratch lookup and the slot's laundering, and it asks the memo twice about every address on
 * the way (is it a helper, then its offset); here the facts of each address are asked once and
 * carried to the next hop. facts: the caller's (huc_addr_facts). The learning path, which runs
 * rarely, keeps the global function.
 *
 * Without direct loads every stack read is a helper call of a few hundred instructions, so the
 * stack from the caller's slot up to where the caller's last walk found the call site (the
 * memo's span) is read at once into the window, and the hops read their words from it. The span
 * is only a hint: a hop beyond it reads its slot alone, and every word is the same whichever
 * read fetched it (the frames above the check do not change while it runs).
 */
static __always_inline __u64 huc_walk_hops(struct huc_scratch *s, __u64 slot, __u64 caller,
					   __u64 facts, bool direct)
{
	struct huc_memo *first = huc_memo_find(huc_memo_set(s, caller), caller);
	__u64 addr = caller;
	__u32 at = 0, have = 0; /* bytes above slot: the hop's slot, and what the window holds */

	if (!direct && first && first->span) {
		/* Masked, not compared: the verifier bounds the size by the mask. A span past the
		 * window reads less, and the hops beyond what was read read their own slots. */
		__u32 size = (first->span & (sizeof(s->window) - 8)) + 8;

		if (!bpf_probe_read_kernel(s->window, size, (void *)slot))
			have = size;
	}
	s->walk_len = 0;
	for (int h = 0; h < HUC_HOPS_MAX; h++) {
		if (!(facts & HUC_MEMO_HOP))
			return HUC_HOPS_UNKNOWN;
		if (!huc_memo_offset(facts))
			return 0;
		at += huc_memo_offset(facts);
		if (!direct && at + 8 <= have)
			addr = huc_ret_addr(s->window[(at / 8) & (HUC_WINDOW_WORDS - 1)]);
		else
			addr = huc_read_slot(slot + at, direct);
		s->walk[h] = addr;
		s->walk_at[h] = at;
		s->walk_len = h + 1;
		if (!addr)
			return 0;
		facts = huc_addr_facts(s, addr);
		if (!(facts & HUC_MEMO_HELPER)) {
			/* The entry may have moved to another way meanwhile: a hint, so only
			 * where it still is. */
			if (!direct && first && first->addr == caller)
				first->span = at;
			return addr;
		}
	}
	return 0;
}

/* The call site of a helper-called check from learned offsets, learning them first if a helper
 * on the way is new; 0 when they cannot say. facts: the caller's. slot_in_ctx: slot points into
 * the fentry trampoline's frame and must be laundered before the global functions take it. */
static __always_inline __u64 huc_site_by_hops(void *ctx, struct huc_scratch *s, __u64 slot,
					      bool slot_in_ctx, __u64 caller, __u64 facts,
					      bool direct, struct huc_site_key *key)
{
	__u64 site;

	/* The global walk takes the slot as the learning path does: laundered, once. */
	if (HUC_WALK_IS_GLOBAL && slot_in_ctx) {
		slot = huc_as_scalar(s, slot);
		slot_in_ctx = false;
	}
	site = HUC_WALK_IS_GLOBAL ? huc_follow_hops(slot, caller)
				  : huc_walk_hops(s, slot, caller, facts, direct);
	if (site == HUC_HOPS_UNKNOWN) {
		if (slot_in_ctx)
			slot = huc_as_scalar(s, slot);
		huc_take_trace(ctx, s);
		huc_learn_hops(slot, caller);
		site = huc_follow_hops(slot, caller);
		if (site == HUC_HOPS_UNKNOWN)
			site = 0; /* the offsets could not be stored */
	}
	key->caller = site;
	return site;
}

#endif /* HUCPROF_LEARNED_OFFSETS_BPF_H */
