/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one header shared by the BPF programs and the daemon: map keys and values, constants and
 * enums. Fixed-width types and explicit padding only, so both compilers lay structs out the same
 * way; daemon/kernel_edge/abi_checks.cpp static_asserts every size and the loader compares them
 * with the BTF of the loaded maps.
 */
#ifndef HUCPROF_ABI_H
#define HUCPROF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Address ranges handed to BPF before load (rodata). Powers of two: indices are masked. */
#define HUC_MAX_RANGES 64
/* Copy helpers need more: a kernel keeps an out-of-line copy of a static inline helper in every
 * object file that did not inline it (Debian's arm64 7.3 has 60 of _inline_copy_from_user, 30
 * of copy_{from,to}_sockptr_offset, 81 ranges in all, more with modules). A helper left out
 * loses its callers' call site ("[truncated]"). probe mode memoizes the search per address. */
#define HUC_MAX_HELPER_RANGES 1024
/* `record -p`: the most processes, and `record -C`: CPUs 0 to HUC_MAX_FOLLOW_CPUS - 1, a bit each
 * (core/workload/record_target.h). */
#define HUC_MAX_FOLLOW_TGIDS 64
#define HUC_MAX_FOLLOW_CPUS 1024
/* Stack depths. SHORT is what a copy-helper caller needs to reach the real call site; FULL is
 * the kernel's own PERF_MAX_STACK_DEPTH. */
#define HUC_SHORT_STACK_DEPTH 16
#define HUC_FULL_STACK_DEPTH 127
/* The sampler looks this many frames up from the sampled instruction for a check function:
 * check functions sit at most a few frames above the leaf (leaf → spinlock → find_vmap_area →
 * __check_object_size). Interrupt entry code met first ends the check's claim
 * (kernel_ranges.h). */
#define HUC_SAMPLE_SCAN_DEPTH 24

/* Map capacities built into the objects. The daemon sets the real ones before load from
 * --bpf.max-keys and --bpf.max-stacks (core/kernel/attach_plan.cpp): these only have to be valid. */
#define HUC_DEFAULT_MAX_KEYS 16384
#define HUC_DEFAULT_MAX_STACKS 8192
#define HUC_LATENCY_SLOTS 32 /* log2(ns) buckets: 1 ns .. 2^31 ns */
#define HUC_HOPS_MAX_ENTRIES 4096

/* Copy helpers between a check and its call site that probe mode follows by learned stack
 * offsets (udp_recvmsg -> skb_copy_datagram_iter -> __skb_datagram_iter -> simple_copy_to_iter
 * is three); a longer chain falls back to a stack walk. */
#define HUC_HOPS_MAX 6

/* Half-open [start, end) kernel text range, sorted by start in the rodata arrays. */
struct huc_range {
	__u64 start;
	__u64 end;
};

/* The kernel's layout as sub-check classification sees it (x86_64; usercopy_classify.bpf.h),
 * in the probe object's .bss: filled once after load by the huc_read_layout program. */
struct huc_kernel_layout {
	__u64 page_offset;
	__u64 vmalloc_start;
	__u64 vmalloc_end;
	__u64 vmemmap;
	__u64 thread_size;
};

enum huc_direction {
	HUC_DIR_FROM_USER = 0,
	HUC_DIR_TO_USER = 1,
};

/* Which sub-check of check_object_size() ran. Index into subcheck counters. */
enum huc_check_kind {
	HUC_CHECK_SLAB = 0,    /* __check_heap_object */
	HUC_CHECK_VMALLOC = 1, /* find_vmap_area */
	HUC_CHECK_STACK = 2,   /* check_stack_object */
	HUC_CHECK_TEXT = 3,    /* check_kernel_text_object */
	HUC_CHECK_PAGE = 4,    /* __virt_addr_valid (page/folio lookup) */
	HUC_CHECK_HEAP = 5,    /* check_heap_object, where it is a real symbol */
	HUC_CHECK_KINDS = 6,
};

/*
 * Where the sub-checks of one classified __check_object_size(ptr, n > 0) call ended, in
 * mm/usercopy.c's order (usercopy_classify.bpf.h): each end implies the kinds that ran before
 * it, so one counter per call says them all (the daemon expands it: add_classified_subchecks in
 * daemon/core/drain/site_table.h):
 *   STACK    check_stack_object found the object on the task's stack: stack
 *   VMALLOC  find_vmap_area: stack, vmalloc
 *   PAGE     __virt_addr_valid, not a slab folio (or not valid): stack, page
 *   SLAB     __check_heap_object: stack, page, slab
 */
enum huc_classify_end {
	HUC_END_STACK = 0,
	HUC_END_VMALLOC = 1,
	HUC_END_PAGE = 2,
	HUC_END_SLAB = 3,
	HUC_CLASSIFY_ENDS = 4, /* also: no sub-check ran (n == 0) */
};

/*
 * Generations. Counter and stack keys carry the generation they were written in: BPF reads the
 * current one (a byte in .bss that only the daemon writes) once per program run. To drain, the
 * daemon moves to the next generation, waits until no program that may have read the old one
 * is still running (an RCU grace period), then reads and deletes every key of older
 * generations: no program writes those any more, so nothing races with the delete and no
 * count is lost. Maps thus hold one interval's keys, never the whole run's (docs/design.md,
 * "Map sizing and rotation").
 */

/* Probe mode: one key per (call site, syscall, direction, workload) and generation. */
struct huc_site_key {
	__u64 caller;         /* return address into the call site; 0 when short_stack_id is used */
	__u64 short_stack_id; /* id in short_stacks when the caller is a copy helper, else 0 */
	__s32 syscall_nr;     /* orig_ax of the current task, -1 outside a syscall */
	__u8 direction;       /* enum huc_direction */
	__u8 generation;
	__u8 pad[2];
	/* bpf_get_current_cgroup_id() with --probe.workloads (the task's cgroup v2 id), else 0 */
	__u64 cgroup_id;
};

/* Shared by every CPU: added to atomically. */
struct huc_site_value {
	__u64 calls;
	__u64 bytes;
	__u64 full_stack_id; /* id in full_stacks of the first stack seen for this key (0: none) */
	/* When the check's program classifies sub-checks: these calls by where their sub-checks
	 * ended (enum huc_classify_end), counted in the value it holds already instead of one more
	 * hash update per kind, and one add per call instead of one per kind. */
	__u64 ended_at[HUC_CLASSIFY_ENDS];
};

/*
 * Probe mode's per-CPU table of hot call sites: most checks come from a few call sites, and one
 * entry per (CPU, key) counted with plain adds is a fraction of a shared hash update with atomic
 * adds (the hash's lookup alone hashed the key and walked a bucket on every check). A key whose
 * set is full goes to the `sites` hash as before, so nothing is dropped for want of a slot.
 *
 * Ways are taken by the first keys of a generation, and each generation starts with the cold
 * ones of the daemon's own drain (its bpf() calls): without more, a hot key arriving later found
 * its set full for the whole generation (3 of the 4 keys of a UDP flood on Debian 6.12, and every
 * one of its checks went to the hash). So a key counted in the hash takes over its set's coldest
 * way once it has more than twice that way's heat (HUC_TAKEOVER_MARGIN on top): the way's counts
 * are added to the hash first, so nothing is lost, and a key's heat is its slot's calls plus what
 * it had in the hash when it took the slot, so two keys of similar heat do not take a way back
 * and forth at every call. Heat is what a way earned this generation, so a key that turns hot
 * after another went quiet (the flood moves from UDP to netlink) would wait for the next one:
 * each check the set turns away cools its coldest way by a sixteenth (HUC_COOL_SHIFT).
 *
 * Two halves, by the parity of the generation sequence: programs of sequence q write half q & 1
 * only, so the half the daemon drains after retiring q stays still until it retires q + 1, and a
 * slot of an older sequence in the live half was drained already (it is reused). The daemon only
 * reads the table. A 32-bit sequence, not the key's generation byte: a slot left alone for 256
 * drains must not look live again.
 */
#define HUC_SITE_WAYS 2
#define HUC_SITE_SETS 16
#define HUC_SITE_SLOTS (HUC_SITE_WAYS * HUC_SITE_SETS)

#define HUC_TAKEOVER_MARGIN 16
#define HUC_COOL_SHIFT 4

struct huc_site_slot {
	struct huc_site_key key;
	__u32 seq;   /* the generation sequence it counts in; key.generation is its low byte */
	/* Added to the way's calls for its heat: what its key had in the hash when it took the way,
	 * less what the checks its set turned away cooled it by since (saturated) */
	__s32 heat_credit;
	struct huc_site_value value; /* calls 0: free */
};

/* The first member of probe mode's per-CPU scratch (probe_scratch.bpf.h), so that one map
 * lookup per check serves the table and the rest of the scratch; the daemon reads this prefix. */
struct huc_site_table {
	struct huc_site_slot slots[2][HUC_SITE_SLOTS];
	__u64 learned_walks; /* helper-called checks whose call site came from learned offsets */
};

struct huc_subcheck_key {
	struct huc_site_key site;
	__u32 kind; /* enum huc_check_kind */
	__u32 pad;
};

/*
 * Probe mode's slab objects (usercopy_objects.bpf.h): classified checks that ended in
 * __check_heap_object, by call site key, the object's kmem_cache and whether the copy lay inside
 * the cache's usercopy region. The cache's pointer is the key; what is the same for every object
 * of the cache (its name, sizes) is read once per cache into slab_caches, where the daemon reads
 * the name once per new pointer. Checks a full map could not count stay in the site's
 * ended_at[HUC_END_SLAB]: the daemon reports the difference as an unidentified slab object.
 */
enum huc_slab_region {
	HUC_REGION_UNKNOWN = 0, /* the cache's sizes could not be read */
	HUC_REGION_INSIDE = 1,  /* [useroffset, useroffset + usersize) of the object holds the copy */
	HUC_REGION_OUTSIDE = 2, /* it does not: the kernel aborts the copy (no usercopy fallback) */
};

struct huc_object_key {
	struct huc_site_key site;
	__u64 cache; /* the struct kmem_cache's address */
	__u32 region; /* enum huc_slab_region */
	__u32 pad;
};

#define HUC_CACHE_NAME_LEN 32
#define HUC_DEFAULT_MAX_CACHES 1024
struct huc_slab_cache {
	char name[HUC_CACHE_NAME_LEN]; /* kmem_cache->name, cut to fit, NUL-terminated */
	__u32 size;                    /* object stride: kmem_cache->size */
	__u32 useroffset;
	__u32 usersize;
	__u32 red_left_pad; /* 0 without SLAB_RED_ZONE (and on SLAB, which has none) */
	__u32 readable;     /* 1: the fields above were read */
	__u32 pad;
};

/* Per-CPU "inside __check_object_size" state: sub-check hits are charged to this key. */
struct huc_cpu_state {
	struct huc_site_key site;
	__u64 entry_ns; /* for latency, 0 when latency is off */
	__u32 tgid_pid_low; /* low 32 bits of bpf_get_current_pid_tgid(): the thread id */
	__u32 active;
};

struct huc_latency_key {
	struct huc_site_key site;
	__u32 slot; /* floor(log2(ns)) */
	__u32 pad;
};

/* The kernel's TASK_COMM_LEN: bpf_get_current_comm() fills this much, NUL-terminated. */
#define HUC_COMM_LEN 16

/* Sampling mode: one key per (kernel stack, cgroup, syscall, task) and generation. The task is
 * its comm, and its tgid only where the sampler's label_pids is set (`record`: a daemon would
 * count every process of the node apart, docs/profiles.md). */
struct huc_sample_key {
	__u64 stack_id;  /* id in sample_stacks */
	__u64 cgroup_id; /* bpf_get_current_cgroup_id(): the task's cgroup v2 (unified) id */
	__s32 syscall_nr;
	__u8 generation;
	__u8 pad[3];
	char comm[HUC_COMM_LEN]; /* bpf_get_current_comm() */
	__u32 tgid;              /* the process's id with label_pids, else 0 */
	__u32 pad2;
};

/* Sampling mode, the denominator per workload: busy samples (kernel, user) by cgroup v2 id and
 * generation, and among the kernel ones those an interrupt took from a check. The per-CPU
 * contexts array stays the node's total (and counts idle); this map splits its busy part. */
struct huc_busy_key {
	__u64 cgroup_id;
	__u8 context;  /* enum huc_context: HUC_CTX_KERNEL or HUC_CTX_USER */
	__u8 excluded; /* 1: a kernel sample counted in HUC_EXCLUDE_INTERRUPT */
	__u8 generation;
	__u8 pad[5];
};

/*
 * Stacks are stored by content: the id is a 64-bit hash of the frames (never 0), so one stack
 * always gets the same id and two stacks practically never share one (unlike a stack-trace map,
 * whose ids are bucket indices: a second stack in a taken bucket is dropped). The key carries
 * the generation of the counter keys that reference it, so a drain deletes them together.
 */
struct huc_stack_key {
	__u64 id;
	__u8 generation;
	__u8 pad[7];
};

/* Frames, leaf first; only the first depth are meaningful. */
struct huc_stack {
	__u32 depth;
	__u32 pad;
	__u64 ips[HUC_FULL_STACK_DEPTH];
};

struct huc_short_stack {
	__u32 depth;
	__u32 pad;
	__u64 ips[HUC_SHORT_STACK_DEPTH];
};

/* Denominator: every sample, by where the CPU was. Every run of the sampler that is followed
 * counts exactly one of these; the others count sample_unfollowed instead, so the two together
 * are the program's runs per CPU (daemon/kernel_edge/sampling_session.cpp counts skipped samples
 * by it). */
enum huc_context {
	HUC_CTX_KERNEL = 0, /* kernel mode, a real task */
	HUC_CTX_USER = 1,
	HUC_CTX_IDLE = 2, /* kernel mode in the idle task (pid 0) */
	HUC_CTX_COUNT = 3,
};

/*
 * Probe mode's rescue (rescue.bpf.h; docs/design.md, "Checks the program never saw"). While a run of
 * the check's program is preempted, the trampoline skips the program for every other task's check
 * on that CPU. A second fentry program, which the trampoline runs after the check's, counts such a
 * check: the check's program counts its runs per task in a slot of rescue_slots (by the low bits
 * of the pid), and the rescue program counts a check when no run came since the one it saw last.
 * Per task, not per CPU: a task may move to another CPU between the two programs. One cache line
 * per slot, so that tasks on different CPUs do not write the same line.
 */
#define HUC_RESCUE_SLOTS 1024
struct huc_rescue_slot {
	__u32 pid; /* the task counted here, 0: none */
	__u32 pad;
	__u64 runs; /* runs of the check's program for it */
	__u64 seen; /* runs as the rescue program saw them last */
	__u64 pad2[5];
};

/* Everything BPF could not record, by why. Index into the per-CPU drops array. */
enum huc_drop_reason {
	HUC_DROP_SITES_MAP_FULL = 0,
	HUC_DROP_SUBCHECKS_MAP_FULL = 1,
	HUC_DROP_SAMPLES_MAP_FULL = 2,
	HUC_DROP_LATENCY_MAP_FULL = 3,
	HUC_DROP_STACK_COLLISION = 4, /* stack-trace map bucket taken; 0 since stacks are hashed */
	HUC_DROP_STACK_MAP_FULL = 5,  /* a stack could not be stored (map full, no memory) */
	HUC_DROP_CALLER_UNREADABLE = 6,
	HUC_DROP_SUBCHECK_UNMATCHED = 7, /* sub-check inside a check but state belongs to another task */
	HUC_DROP_BUSY_MAP_FULL = 8,      /* a busy sample's workload could not be counted */
	HUC_DROP_REASONS = 9,
};

/* Sampling mode: samples with a check on the stack that are not the check's cost, by why. Index
 * into the sampler's per-CPU sample_excluded array; such samples stay in HUC_CTX_KERNEL. */
enum huc_exclude_reason {
	HUC_EXCLUDE_INTERRUPT = 0, /* an interrupt, exception or softirq ran on top of the check */
	HUC_EXCLUDE_REASONS = 1,
};

/* How probe mode found the call site of a check whose immediate caller is a copy helper. Index
 * into the per-CPU helper_walks array. */
enum huc_helper_walk {
	HUC_WALK_LEARNED = 0,  /* followed learned offsets: O(1) stack reads per helper */
	HUC_WALK_STACK = 1,    /* bounded stack walk (learning, unlearnable or unverified hop) */
	HUC_WALK_MISMATCH = 2, /* a learned offset disagreed with a real stack; it was dropped */
	HUC_WALK_KINDS = 3,
};

#endif /* HUCPROF_ABI_H */
