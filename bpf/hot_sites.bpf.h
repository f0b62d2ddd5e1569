/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The hot call sites' table: each CPU counts the keys it sees most in ways of a small
 * set-associative table in its scratch (probe_scratch.bpf.h), with plain adds, and only the rest
 * in the shared `sites` hash, with atomic ones. A way that counted is flushed into the hash when
 * a hotter key takes it; the drain reads both (hucprof_abi.h, "Ways are taken..."). The full
 * path (probe.bpf.c, huc_count_full) and the rescue (rescue.bpf.h) count through these.
 */
#ifndef HUCPROF_HOT_SITES_BPF_H
#define HUCPROF_HOT_SITES_BPF_H

#include "probe_globals.bpf.h"

/* The set of the hot call sites' table where key lives if anywhere: the key's words mixed by one
 * multiplication, the set from the top bits. */
static __always_inline __u32 huc_site_set_index(const struct huc_site_key *key)
{
	const __u64 *k = (const __u64 *)key;
	__u64 h = (k[0] ^ (k[1] << 1) ^ (k[2] << 7) ^ (k[3] << 13)) * 0x9e3779b97f4a7c15ULL;

	return (h >> 59) & (HUC_SITE_SETS - 1);
}

/* Set set_index of the live half of sequence seq: its first way. */
static __always_inline struct huc_site_slot *huc_site_set(struct huc_scratch *s, __u32 set_index,
							  __u32 seq)
{
	return &s->table.slots[seq & 1][set_index * HUC_SITE_WAYS];
}

/* The index in the live half of own, a way of set set_index. */
static __always_inline __u32 huc_way_index(const struct huc_site_slot *set,
					   const struct huc_site_slot *own, __u32 set_index)
{
	__u32 w = 0;

	for (int i = 1; i < HUC_SITE_WAYS; i++) {
		if (own == &set[i])
			w = i;
	}
	return set_index * HUC_SITE_WAYS + w;
}

/* The way of the set that counts key in sequence seq, or NULL. */
static __always_inline struct huc_site_slot *huc_find_slot(struct huc_site_slot *set,
							   const struct huc_site_key *key,
							   __u32 seq)
{
	const __u64 *k = (const __u64 *)key;

	for (int w = 0; w < HUC_SITE_WAYS; w++) {
		const __u64 *held = (const __u64 *)&set[w].key;

		if (set[w].seq == seq && held[0] == k[0] && held[1] == k[1] && held[2] == k[2] &&
		    held[3] == k[3])
			return &set[w];
	}
	return NULL;
}

/* A way of the set free in sequence seq (never counted in it: an older one was drained), or
 * NULL. */
static __always_inline struct huc_site_slot *huc_free_slot(struct huc_site_slot *set, __u32 seq)
{
	for (int w = 0; w < HUC_SITE_WAYS; w++) {
		if (set[w].seq != seq || !set[w].value.calls)
			return &set[w];
	}
	return NULL;
}

/* A way's heat (hucprof_abi.h, "Ways are taken..."): its calls and its credit, at least 0. */
static __always_inline __u64 huc_slot_heat(const struct huc_site_slot *slot)
{
	__s64 heat = (__s64)slot->value.calls + slot->heat_credit;

	return heat > 0 ? (__u64)heat : 0;
}

/* Bounds a way's credit both ways, so that it never overflows its 32 bits. */
#define HUC_CREDIT_LIMIT (1 << 30)

/* key's value in the shared hash, made with full_stack_id where the hash had none (another CPU
 * may have made it first: -EEXIST, then its value); NULL when the hash is full. */
static __always_inline struct huc_site_value *huc_made_site(const struct huc_site_key *key,
							    __u64 full_stack_id)
{
	struct huc_site_value init = {};

	init.full_stack_id = full_stack_id;
	bpf_map_update_elem(&sites, key, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&sites, key);
}

/* Adds what the way counted to its key's value in the shared hash (made if missing); false when
 * the hash is full (the way then keeps its key). */
static __always_inline bool huc_flush_slot(struct huc_site_slot *slot)
{
	struct huc_site_value *to = bpf_map_lookup_elem(&sites, &slot->key);

	if (!to)
		to = huc_made_site(&slot->key, slot->value.full_stack_id);
	if (!to)
		return false;
	__sync_fetch_and_add(&to->calls, slot->value.calls);
	__sync_fetch_and_add(&to->bytes, slot->value.bytes);
	for (__u32 end = 0; end < HUC_CLASSIFY_ENDS; end++) {
		if (slot->value.ended_at[end])
			__sync_fetch_and_add(&to->ended_at[end], slot->value.ended_at[end]);
	}
	return true;
}

/* The set's coldest way, given to key when key's value in the hash is more than twice as hot
 * (hucprof_abi.h, "Ways are taken..."), or NULL. */
static __always_inline struct huc_site_slot *huc_take_cold_slot(struct huc_site_slot *set,
								const struct huc_site_key *key,
								const struct huc_site_value *value,
								__u32 seq)
{
	struct huc_site_slot *cold = &set[0];
	__u64 calls = value->calls;
	__u64 heat;

	for (int w = 1; w < HUC_SITE_WAYS; w++) {
		if (huc_slot_heat(&set[w]) < huc_slot_heat(cold))
			cold = &set[w];
	}
	heat = huc_slot_heat(cold);
	if (calls <= 2 * heat + HUC_TAKEOVER_MARGIN) {
		/* Turned away: the coldest way cools. */
		__u64 cooling = (heat >> HUC_COOL_SHIFT) + 1;

		if (cooling > HUC_CREDIT_LIMIT)
			cooling = HUC_CREDIT_LIMIT;
		if (cold->heat_credit > -HUC_CREDIT_LIMIT)
			cold->heat_credit -= (__s32)cooling;
		return NULL;
	}
	if (!huc_flush_slot(cold))
		return NULL;
	__builtin_memset(&cold->value, 0, sizeof(cold->value));
	cold->key = *key;
	cold->seq = seq;
	cold->heat_credit = calls < HUC_CREDIT_LIMIT ? (__s32)calls : HUC_CREDIT_LIMIT;
	cold->value.full_stack_id = value->full_stack_id;
	return cold;
}

/* One call of bytes: with plain adds into this CPU's slot, atomic ones into the shared hash's
 * value. */
static __always_inline void huc_add_call(struct huc_site_value *value, __u64 bytes, bool shared)
{
	if (shared) {
		__sync_fetch_and_add(&value->calls, 1);
		__sync_fetch_and_add(&value->bytes, bytes);
	} else {
		value->calls += 1;
		value->bytes += bytes;
	}
}

/* Where the call's sub-checks ended (huc_classify_subchecks), likewise. */
static __always_inline void huc_add_end(struct huc_site_value *value, __u32 end, bool shared)
{
	if (end >= HUC_CLASSIFY_ENDS)
		return;
	if (shared)
		__sync_fetch_and_add(&value->ended_at[end], 1);
	else
		value->ended_at[end] += 1;
}

#endif /* HUCPROF_HOT_SITES_BPF_H */
