/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Address-range tests on kernel stacks, in plain C without BPF helpers: the BPF programs include
 * it, and the unit tests run the very same code on recorded stacks
 * (tests/unit/core/sample_scan_test.cpp).
 */
#ifndef HUCPROF_KERNEL_RANGES_H
#define HUCPROF_KERNEL_RANGES_H

#include "hucprof_abi.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/*
 * Is addr inside one of the n sorted, non-overlapping [start, end) ranges of an array of
 * capacity entries (a power of two, a constant at every call)? A binary search of at most
 * log2(capacity) + 1 steps: this runs on every probed call, so no linear scan.
 */
static __always_inline bool huc_in_ranges_of(const volatile struct huc_range *ranges, __u32 n,
					     __u32 capacity, __u64 addr)
{
	__u32 lo = 0, hi = n;

	if (hi > capacity)
		hi = capacity;
	for (int i = 0; i <= __builtin_ctz(capacity) && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;

		if (ranges[mid & (capacity - 1)].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	return addr < ranges[(lo - 1) & (capacity - 1)].end;
}

/* The same for an array of HUC_MAX_RANGES entries. */
static __always_inline bool huc_in_ranges(const volatile struct huc_range *ranges, __u32 n,
					  __u64 addr)
{
	return huc_in_ranges_of(ranges, n, HUC_MAX_RANGES, addr);
}

/*
 * What one sampled kernel stack (ips[0..frames), leaf first) is: the first frame from the leaf
 * that is a check dispatcher makes it the check's cost, unless interrupt entry code came before
 * it. Then the CPU was in an interrupt, exception or softirq that happened to land inside the
 * check: that time is not the check's and would not be saved with hardened_usercopy=off.
 */
enum huc_scan_verdict {
	HUC_SCAN_OUTSIDE = 0,           /* no check within the scan: kernel CPU */
	HUC_SCAN_IN_CHECK = 1,          /* the check's cost */
	HUC_SCAN_INTERRUPT_IN_CHECK = 2, /* kernel CPU, counted as HUC_EXCLUDE_INTERRUPT */
};

/*
 * One frame of that scan, leaf first: the verdict when this frame is a check dispatcher (the
 * scan ends there), else HUC_SCAN_OUTSIDE to go on; *interrupted is set at interrupt entry code.
 * The sampler runs it frame by frame under bpf_loop (one verification for every frame: the
 * unrolled scan of both range sets was past 6.1's verifier limit, E2BIG), or in a global function
 * where the kernel has no bpf_loop (huc_scan_frame_packed, below).
 */
static __always_inline enum huc_scan_verdict
huc_scan_frame(__u64 ip, bool *interrupted, const volatile struct huc_range *checks,
	       __u32 nr_checks, const volatile struct huc_range *interrupts, __u32 nr_interrupts)
{
	if (huc_in_ranges(checks, nr_checks, ip))
		return *interrupted ? HUC_SCAN_INTERRUPT_IN_CHECK : HUC_SCAN_IN_CHECK;
	if (!*interrupted && huc_in_ranges(interrupts, nr_interrupts, ip))
		*interrupted = true;
	return HUC_SCAN_OUTSIDE;
}

/* The whole scan, as the sampler's bpf_loop walks it (the unit tests run this). */
static __always_inline enum huc_scan_verdict
huc_scan_stack(const __u64 *ips, __u32 frames, const volatile struct huc_range *checks,
	       __u32 nr_checks, const volatile struct huc_range *interrupts, __u32 nr_interrupts)
{
	bool interrupted = false;

	for (__u32 i = 0; i < HUC_SAMPLE_SCAN_DEPTH && i < frames; i++) {
		enum huc_scan_verdict verdict = huc_scan_frame(ips[i], &interrupted, checks, nr_checks,
							       interrupts, nr_interrupts);
		if (verdict != HUC_SCAN_OUTSIDE)
			return verdict;
	}
	return HUC_SCAN_OUTSIDE;
}

/*
 * The same scan where the kernel has no bpf_loop (5.17; the sampler's compat build): the frame's
 * test is a global function the verifier checks once on its own, as it does bpf_loop's callback,
 * and the scan's state crosses its boundary as one int (a global function takes and returns
 * scalars only): the frame's verdict in the low bits, HUC_SCAN_INTERRUPTED_BIT once interrupt
 * entry code was passed. huc_scan_frame_packed is that function's body, HUC_SCAN_STACK_PACKED
 * the bounded loop around it (step: the function, called as step(ip, state)); the unit tests run
 * both on recorded stacks against huc_scan_stack.
 */
#define HUC_SCAN_INTERRUPTED_BIT 4

static __always_inline int huc_scan_frame_packed(__u64 ip, int state,
						 const volatile struct huc_range *checks,
						 __u32 nr_checks,
						 const volatile struct huc_range *interrupts,
						 __u32 nr_interrupts)
{
	bool interrupted = (state & HUC_SCAN_INTERRUPTED_BIT) != 0;
	enum huc_scan_verdict verdict =
		huc_scan_frame(ip, &interrupted, checks, nr_checks, interrupts, nr_interrupts);

	return (int)verdict | (interrupted ? HUC_SCAN_INTERRUPTED_BIT : 0);
}

#define HUC_SCAN_STACK_PACKED(ips, frames, step)                                          \
	({                                                                                \
		int huc_state_ = 0;                                                       \
		enum huc_scan_verdict huc_verdict_ = HUC_SCAN_OUTSIDE;                    \
		for (__u32 huc_i_ = 0; huc_i_ < HUC_SAMPLE_SCAN_DEPTH && huc_i_ < (frames); \
		     huc_i_++) {                                                          \
			huc_state_ = step((ips)[huc_i_], huc_state_ & HUC_SCAN_INTERRUPTED_BIT); \
			if ((huc_state_ & ~HUC_SCAN_INTERRUPTED_BIT) != HUC_SCAN_OUTSIDE) {   \
				huc_verdict_ = (enum huc_scan_verdict)(huc_state_ &         \
								       ~HUC_SCAN_INTERRUPTED_BIT); \
				break;                                                    \
			}                                                                 \
		}                                                                         \
		huc_verdict_;                                                             \
	})

#endif /* HUCPROF_KERNEL_RANGES_H */
