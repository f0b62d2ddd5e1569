/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe mode's per-CPU scratch: what its programs need that is too big for the 512-byte BPF
 * stack. The learned-offsets code (learned_offsets.bpf.h) keeps its stack trace, raw stack
 * window and learning state here, and probe.bpf.c builds the value of each stack it stores
 * here, and the check counts its hot call sites here (struct huc_site_table). One map for all
 * of it, so that a check looks up a single scratch entry per CPU.
 *
 * It declares a map: only probe.bpf.c includes it (directly or through learned_offsets.bpf.h),
 * so there is one instance, in the probe object.
 */
#ifndef HUCPROF_PROBE_SCRATCH_BPF_H
#define HUCPROF_PROBE_SCRATCH_BPF_H

#include "usercopy_common.bpf.h"

/* The per-CPU memo of what the per-check path asks about a return address: facts and check are
 * explained with HUC_MEMO_* (learned_offsets.bpf.h). Four ways per set: in 32 direct-mapped
 * slots addresses of a UDP flood evicted each other (each miss a binary search and a hash
 * lookup); 4-way took the walk from +851 to +329 ns per check on 6.12. */
#define HUC_MEMO_WAYS 4
#define HUC_MEMO_SETS 16
#define HUC_MEMO_SLOTS (HUC_MEMO_WAYS * HUC_MEMO_SETS)

struct huc_memo {
	__u64 addr;
	__u64 facts;
	__u64 check;
	/* A hint, for a helper's return address: how far above the caller's slot its last walk
	 * found the call site (0: none); huc_walk_hops reads that much stack at once. */
	__u32 span;
	__u32 pad;
};

/*
 * The per-CPU cache of the keys its checks counted last (recent_keys.bpf.h): what a check with the
 * same immediate caller, syscall and direction needs to be sure its key is the same one -- the
 * words the walk along learned offsets read, and where -- and the way of the hot call sites'
 * table that counts that key. Two ways per set: direct-mapped, two hot keys of one flood that
 * meet in a slot (KASLR moves the callers every boot) would both take the full path on every
 * check. Chains longer than HUC_RECENT_HOPS are not kept.
 */
#define HUC_RECENT_WAYS 2
#define HUC_RECENT_SETS 16
#define HUC_RECENT_SLOTS (HUC_RECENT_WAYS * HUC_RECENT_SETS)
#define HUC_RECENT_HOPS 4

struct huc_recent {
	__u64 caller; /* the immediate caller's return address; 0: empty */
	__u64 cgroup_id;
	__u64 expect[HUC_RECENT_HOPS]; /* the return address read at each hop: the call site last */
	__u16 at[HUC_RECENT_HOPS];     /* each hop's word, in bytes above the caller's slot */
	__u64 tag;                     /* the syscall and direction (huc_recent_tag) */
	__u32 seq;                     /* the generation sequence of the way */
	__u32 table_epoch;             /* the scratch's table_epoch when filled */
	__u32 hops_epoch;              /* hops_epoch when filled (learned_offsets.bpf.h) */
	__u16 way; /* index in the live half of the hot call sites' table */
	__u8 hops; /* 0: the caller is the call site */
	__u8 pad;
};

#define HUC_TRACE_WORDS 32
#define HUC_WINDOW_WORDS 128 /* 1 KiB above the caller's slot: deep enough for the helpers */

struct huc_scratch {
	/* First, where the daemon finds it (hucprof_abi.h): the hot call sites' counters. */
	struct huc_site_table table;
	/* Learning and verifying need a real stack trace and a window of raw stack. */
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
	__u16 walk_at[HUC_HOPS_MAX]; /* where each was read, in bytes above the caller's slot */
	/* Bumped whenever a way of the hot call sites' table takes another key: every recent entry
	 * filled before then may name a way that counts something else now. */
	__u32 table_epoch;
	__s32 caller_index;
	__u32 pad0;
	__u64 laundered;
	__u32 verify_countdown;
	__u32 pad;
	struct huc_memo memo[HUC_MEMO_SLOTS];
	struct huc_recent recent[HUC_RECENT_SLOTS];
	struct huc_stack full; /* value of the next full_stacks entry */
	struct huc_short_stack short_stack; /* value of the next short_stacks entry */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct huc_scratch);
} scratch SEC(".maps");

#endif /* HUCPROF_PROBE_SCRATCH_BPF_H */
