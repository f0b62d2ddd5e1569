/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The check's fast path: a flood repeats a handful of keys, and for each repeat the full path
 * asked the memo about every address of the walk along learned offsets, hashed the whole key and
 * compared it with both ways of its set -- most of a check's cost (docs/benchmarks.md, "Where the
 * time goes"). So each CPU remembers, per (immediate caller, syscall, direction), the key it
 * counted last: the words the walk read and where, and the way of the hot call sites' table that
 * counts the key. A check that finds its entry reads the same words (the stack above its caller,
 * no memo) and, when each is the one remembered, counts into that way directly.
 *
 * Exact, because a hit is the full path's own answer: with the same learned offsets (hops_epoch)
 * the full path reads exactly these words, takes each but the last for a helper (as it did when
 * the entry was filled) and stops at the last, the call site. The way still counts the key while
 * the generation sequence is the same and no way of the table took another key since
 * (table_epoch). A check due to have its walk verified against a real stack trace
 * (HUC_VERIFY_ONE_IN) takes the full path, which verifies it.
 *
 * Its state is in probe mode's per-CPU scratch (probe_scratch.bpf.h); only probe.bpf.c includes
 * it.
 */
#ifndef HUCPROF_RECENT_KEYS_BPF_H
#define HUCPROF_RECENT_KEYS_BPF_H

#include "learned_offsets.bpf.h"
#include "probe_scratch.bpf.h"

/* A key's syscall and direction in one word: what an entry is for besides its caller, compared
 * and hashed at once. */
static __always_inline __u64 huc_recent_tag(__s32 syscall_nr, __u8 direction)
{
	return (__u64)(__u32)syscall_nr | (__u64)direction << 32;
}

/* The set a check of (caller, tag) would be remembered in: its first way. */
static __always_inline struct huc_recent *huc_recent_set(struct huc_scratch *s, __u64 caller,
							 __u64 tag)
{
	__u64 h = (caller ^ tag) * HUC_MEMO_SALT;

	return &s->recent[((h >> 60) & (HUC_RECENT_SETS - 1)) * HUC_RECENT_WAYS];
}

/* The way of set that remembers (caller, tag), else NULL. */
static __always_inline struct huc_recent *huc_recent_find(struct huc_recent *set, __u64 caller,
							  __u64 tag)
{
	for (int w = 0; w < HUC_RECENT_WAYS; w++) {
		if (set[w].caller == caller && set[w].tag == tag)
			return &set[w];
	}
	return NULL;
}

/*
 * The way that counts this check's key if set remembers it, else NULL (the full path). slot:
 * where the walk starts (arch_reads.bpf.h); direct: huc_kernel_word's.
 */
static __always_inline struct huc_site_slot *huc_recent_way(struct huc_scratch *s,
							    struct huc_recent *set, __u64 slot,
							    __u64 caller, __u64 tag,
							    const struct huc_site_key *key,
							    __u32 seq, bool direct)
{
	const struct huc_recent *e = huc_recent_find(set, caller, tag);
	__u32 hops, countdown;

	if (!e || e->seq != seq || e->table_epoch != s->table_epoch ||
	    e->cgroup_id != key->cgroup_id)
		return NULL;
	hops = e->hops;
	if (hops) {
		/* The verification count, read once: a due check takes the full path. */
		countdown = s->verify_countdown + 1;
		if (e->hops_epoch != hops_epoch || huc_verify_due_at(countdown))
			return NULL;
		/* Without direct loads, a helper call per hop: one read of the whole span up to
		 * the call site copies every word between (Debian 6.1, same boot: 1 461 -> 1 323
		 * ns per UDP check, the send path's 3 hops span 456 bytes; TCP's receive path, 3
		 * over 176 bytes, within its noise). Each offset is loaded before the bound test:
		 * so clang unrolls the loop, which otherwise kept its index, two pointers and the
		 * bound on the stack (6.12: 35 ns more per UDP check). */
		for (__u32 h = 0; h < HUC_RECENT_HOPS; h++) {
			__u32 at = e->at[h];

			if (h >= hops)
				break;
			if (huc_ret_addr(huc_kernel_word(slot + at, direct)) != e->expect[h])
				return NULL;
		}
		s->verify_countdown = countdown;
		s->table.learned_walks += 1;
	}
	return &s->table.slots[seq & 1][e->way & (HUC_SITE_SLOTS - 1)];
}

/*
 * Remembers in set that the key the full path just counted in way (an index in the live half)
 * came from caller directly (hops 0) or from the walk in scratch: in the way that remembered
 * caller already, else in the first, whose entry moves down to the second. Written with the
 * caller last, so an entry is never matched half-written.
 */
static __always_inline void huc_recent_fill(struct huc_scratch *s, struct huc_recent *set,
					    __u64 caller, const struct huc_site_key *key,
					    __u32 seq, __u32 way, __u32 hops)
{
	__u64 tag = huc_recent_tag(key->syscall_nr, key->direction);
	struct huc_recent *e;

	if (hops > HUC_RECENT_HOPS)
		return;
	e = huc_recent_find(set, caller, tag);
	if (!e) {
		for (int w = HUC_RECENT_WAYS - 1; w > 0; w--)
			set[w] = set[w - 1];
		e = &set[0];
	}
	e->caller = 0;
	asm volatile("" ::: "memory");
	for (__u32 h = 0; h < HUC_RECENT_HOPS; h++) {
		e->expect[h] = s->walk[h];
		e->at[h] = s->walk_at[h];
	}
	e->cgroup_id = key->cgroup_id;
	e->seq = seq;
	e->table_epoch = s->table_epoch;
	e->hops_epoch = hops_epoch;
	e->tag = tag;
	e->way = way;
	e->hops = hops;
	asm volatile("" ::: "memory");
	e->caller = caller;
}

#endif /* HUCPROF_RECENT_KEYS_BPF_H */
