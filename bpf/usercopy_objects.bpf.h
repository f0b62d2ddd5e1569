/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The slab object behind a classified check (usercopy_classify.bpf.h found HUC_END_SLAB): its
 * kmem_cache and whether the copy lies inside the cache's usercopy region, as
 * __check_heap_object (mm/slub.c) decides it:
 *
 *   offset = (ptr - slab_address(slab)) % s->size, less s->red_left_pad with SLAB_RED_ZONE
 *   inside: offset >= s->useroffset && offset - s->useroffset <= s->usersize &&
 *           n <= s->useroffset - offset + s->usersize
 *
 * Per check: one word of the slab (its slab_cache), one lookup in slab_caches, one counter. What
 * is the same for every object of a cache (name, size, region) is read once, at the cache's first
 * check, into slab_caches; the daemon reads the name from there once per new cache pointer.
 *
 * slab_cache is struct slab's from 5.17 and struct page's before: one CO-RE flavour each, the
 * one the kernel has is reached (a constant test the verifier drops). red_left_pad is SLUB's;
 * 0 where it is missing or SLAB_RED_ZONE is off (the cache is zeroed when made). A KFENCE-sampled
 * object sits at its own offset in its page, not at a multiple of the size: its region is judged
 * from the slab's stride like every other's (docs/metrics.md says so).
 */
#ifndef HUCPROF_USERCOPY_OBJECTS_BPF_H
#define HUCPROF_USERCOPY_OBJECTS_BPF_H

#include "usercopy_classify.bpf.h"

struct kmem_cache___huc {
	unsigned int size;
	unsigned int red_left_pad;
	const char *name;
	unsigned int useroffset;
	unsigned int usersize;
} __attribute__((preserve_access_index));

struct slab___huc {
	struct kmem_cache___huc *slab_cache;
} __attribute__((preserve_access_index));

struct page___huc_slab_cache {
	struct kmem_cache___huc *slab_cache;
} __attribute__((preserve_access_index));

HUC_COUNTERS(objects, struct huc_object_key, __u64);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HUC_DEFAULT_MAX_CACHES);
	__type(key, __u64);
	__type(value, struct huc_slab_cache);
} slab_caches SEC(".maps");

/* The kmem_cache of the slab whose head page is at head, 0 where the kernel has neither field. */
static __always_inline __u64 huc_slab_cache_of(__u64 head, bool direct)
{
	if (bpf_core_field_exists(struct slab___huc, slab_cache))
		return huc_kernel_word(head + bpf_core_field_offset(struct slab___huc, slab_cache),
				       direct);
	if (bpf_core_field_exists(struct page___huc_slab_cache, slab_cache))
		return huc_kernel_word(
			head + bpf_core_field_offset(struct page___huc_slab_cache, slab_cache), direct);
	return 0;
}

/* The cache's entry in slab_caches, read from the kernel at its first check; NULL when the map
 * is full. */
static __always_inline const struct huc_slab_cache *huc_slab_cache_info(__u64 cache)
{
	struct kmem_cache___huc *s = (void *)cache;
	struct huc_slab_cache fresh = {};
	const struct huc_slab_cache *info = bpf_map_lookup_elem(&slab_caches, &cache);
	const char *name = NULL;
	long err = 0;

	if (info)
		return info;
	err |= bpf_core_read(&name, sizeof(name), &s->name);
	if (name)
		err |= bpf_probe_read_kernel_str(fresh.name, sizeof(fresh.name), name) < 0;
	err |= bpf_core_read(&fresh.size, sizeof(fresh.size), &s->size);
	err |= bpf_core_read(&fresh.useroffset, sizeof(fresh.useroffset), &s->useroffset);
	err |= bpf_core_read(&fresh.usersize, sizeof(fresh.usersize), &s->usersize);
	if (bpf_core_field_exists(s->red_left_pad))
		err |= bpf_core_read(&fresh.red_left_pad, sizeof(fresh.red_left_pad),
				     &s->red_left_pad);
	fresh.readable = !err && fresh.size;
	/* -EEXIST: another CPU made it first, with the same reads. */
	bpf_map_update_elem(&slab_caches, &cache, &fresh, BPF_NOEXIST);
	return bpf_map_lookup_elem(&slab_caches, &cache);
}

/* Whether __check_heap_object finds the copy [ptr, ptr + n) inside the usercopy region of the
 * object holding it, in the slab whose head page is at head. */
static __always_inline __u32 huc_slab_region(const struct huc_slab_cache *info, __u64 head,
					     __u64 ptr, __u64 n)
{
	__u64 page_size = bpf_core_type_size(struct page___huc_page_type);
	__u64 base, offset, useroffset, usersize;

	if (!info->readable || !page_size)
		return HUC_REGION_UNKNOWN;
	base = huc_layout.page_offset + (((head - huc_layout.vmemmap) / page_size) << HUC_PAGE_SHIFT);
	if (ptr < base)
		return HUC_REGION_OUTSIDE;
	offset = (ptr - base) % info->size;
	if (offset < info->red_left_pad)
		return HUC_REGION_OUTSIDE;
	offset -= info->red_left_pad;
	useroffset = info->useroffset;
	usersize = info->usersize;
	if (offset >= useroffset && offset - useroffset <= usersize &&
	    n <= useroffset - offset + usersize)
		return HUC_REGION_INSIDE;
	return HUC_REGION_OUTSIDE;
}

/* Counts one check of n bytes at ptr, charged to site, against the slab at head. A check the full
 * objects map cannot take stays in its site's ended_at[HUC_END_SLAB] only (hucprof_abi.h). */
static __always_inline void huc_count_slab_object(const struct huc_site_key *site, __u64 head,
						  __u64 ptr, __u64 n, bool direct)
{
	struct huc_object_key key = {};
	const struct huc_slab_cache *info;
	__u64 zero = 0, *count;

	key.site = *site;
	key.cache = huc_slab_cache_of(head, direct);
	if (key.cache) {
		info = huc_slab_cache_info(key.cache);
		if (info)
			key.region = huc_slab_region(info, head, ptr, n);
	}
	count = bpf_map_lookup_elem(&objects, &key);
	if (!count) {
		bpf_map_update_elem(&objects, &key, &zero, BPF_NOEXIST);
		count = bpf_map_lookup_elem(&objects, &key);
		if (!count)
			return;
	}
	__sync_fetch_and_add(count, 1);
}

#endif
