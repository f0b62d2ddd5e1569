/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which sub-checks one __check_object_size(ptr, n) call will run, decided inside the check's own
 * program from the object's address and the kernel's own layout, instead of one more program run
 * per sub-check entry (check_stack_object on every check, __virt_addr_valid and
 * __check_heap_object on every heap copy). It mirrors mm/usercopy.c of 6.1 (Debian's 6.1.y has
 * the pagefault_disabled() test backported) to 7.3, in the kernel's order:
 *
 *   __check_object_size:  n == 0 -> nothing
 *     check_stack_object  always (it is noinline): "stack"
 *       object inside [task_stack_page(current), + THREAD_SIZE) -> return
 *     check_heap_object (inlined):
 *       is_vmalloc_addr(ptr) && !pagefault_disabled() -> find_vmap_area: "vmalloc", return
 *       __virt_addr_valid (out of line on x86): "page"; not valid -> return
 *       folio_test_slab(virt_to_folio(ptr)) -> __check_heap_object: "slab"
 *
 * x86_64 only (the layout reads below); on other architectures the daemon attaches the sub-check
 * functions instead. The KASLR bases are the kernel's own variables (page_offset_base,
 * vmalloc_base, vmemmap_base, __pgtable_l5_enabled), resolved by libbpf from /proc/kallsyms
 * (CONFIG_KALLSYMS_ALL, as Debian builds) and read once after load by huc_read_layout; struct page
 * is read with CO-RE flavours, every field guarded, so a kernel that lacks one still loads the
 * check; the slab marker comes from the daemon: PG_slab in page->flags up to 6.9, the PGTY_slab
 * page type from 6.12. The daemon does not classify where the kernel has neither, or lacks a
 * field read here (core/kernel/page_layout.h), and falls back to probing the sub-check functions.
 *
 * Checked by the VM tier against the kernel's own sub-check calls per call site (Debian 6.1, 6.12
 * and the newest of trixie-backports and sid, fentry and kprobe): stack, vmalloc, page and slab.
 */
#ifndef HUCPROF_USERCOPY_CLASSIFY_BPF_H
#define HUCPROF_USERCOPY_CLASSIFY_BPF_H

#include "usercopy_common.bpf.h"

extern const void page_offset_base __ksym __weak;
extern const void vmalloc_base __ksym __weak;
extern const void vmemmap_base __ksym __weak;
extern const void __pgtable_l5_enabled __ksym __weak;

/* arch/x86/include/asm/page_64_types.h, pgtable_64_types.h: the fixed layout when the bases
 * are not randomized (no such variables), and the vmalloc area's size by paging depth. */
#define HUC_START_KERNEL_MAP 0xffffffff80000000ULL
#define HUC_PAGE_OFFSET_L4 0xffff888000000000ULL
#define HUC_PAGE_OFFSET_L5 0xff11000000000000ULL
#define HUC_VMALLOC_START_L4 0xffffc90000000000ULL
#define HUC_VMALLOC_START_L5 0xffa0000000000000ULL
#define HUC_VMEMMAP_START_L4 0xffffea0000000000ULL
#define HUC_VMEMMAP_START_L5 0xffd4000000000000ULL
#define HUC_VMALLOC_SIZE_TB_L4 32ULL
#define HUC_VMALLOC_SIZE_TB_L5 12800ULL
#define HUC_PAGE_SHIFT 12
#define HUC_THREAD_SIZE_DEFAULT (16384ULL) /* x86_64 without KASAN */
/* Physical addresses above this are not RAM on any x86_64 (MAX_PHYSMEM_BITS is 52). */
#define HUC_MAX_PHYS (1ULL << 52)

/*
 * struct page as the kernels between 6.1 and 7.3 lay it out, one flavour per field that moved or
 * changed (libbpf matches each against the kernel's BTF; only bpf_core_field_exists() may ask
 * about a field that is not there, every other read is guarded by it):
 *   flags          a plain word up to 6.17; memdesc_flags_t, a struct around the word, from 6.18
 *   compound_head  a tail page's head + 1, up to 6.18 at least
 *   compound_info  its successor (Debian's 7.2 and 7.3): the head + 1, or, where the kernel
 *                  builds the HugeTLB vmemmap optimization with a power-of-two struct page, a
 *                  mask that turns the tail's address into the head's (the daemon says which:
 *                  compound_info_mask)
 *   page_type      the PGTY_* type in its top byte, from 6.12
 * The daemon reads the same BTF and classifies only where every field it needs is there.
 */
struct page___huc_word_flags {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct memdesc_flags___huc {
	unsigned long f;
} __attribute__((preserve_access_index));

struct page___huc_memdesc_flags {
	struct memdesc_flags___huc flags;
} __attribute__((preserve_access_index));

struct page___huc_compound_head {
	unsigned long compound_head;
} __attribute__((preserve_access_index));

struct page___huc_compound_info {
	unsigned long compound_info;
} __attribute__((preserve_access_index));

struct page___huc_page_type {
	unsigned int page_type;
} __attribute__((preserve_access_index));

/*
 * The words classification reads, each at its field's CO-RE offset. Only the flavour the kernel
 * has is reached (a constant test the verifier drops): libbpf poisons the offset of a field the
 * kernel lacks, and that instruction must stay unreached. The daemon classifies only where the
 * fields its marker needs are there (core/kernel/page_layout.h); were one missing, these read 0,
 * and a page would count as a head page that is not slab. Offsets are immediates where they are
 * used: a helper returning the offset made clang select it among the flavours at run time, a
 * dozen instructions on every slab copy.
 */
static __always_inline __u64 huc_page_compound_word(__u64 page, bool direct)
{
	if (bpf_core_field_exists(struct page___huc_compound_head, compound_head))
		return huc_kernel_word(
			page + bpf_core_field_offset(struct page___huc_compound_head, compound_head),
			direct);
	if (bpf_core_field_exists(struct page___huc_compound_info, compound_info))
		return huc_kernel_word(
			page + bpf_core_field_offset(struct page___huc_compound_info, compound_info),
			direct);
	return 0;
}

static __always_inline __u64 huc_page_flags_word(__u64 page, bool direct)
{
	if (bpf_core_field_exists(struct page___huc_word_flags, flags))
		return huc_kernel_word(page + bpf_core_field_offset(struct page___huc_word_flags, flags),
				       direct);
	if (bpf_core_field_exists(struct page___huc_memdesc_flags, flags.f))
		return huc_kernel_word(
			page + bpf_core_field_offset(struct page___huc_memdesc_flags, flags.f), direct);
	return 0;
}

/* page_type's top byte: the PGTY_* type (from 6.12). */
static __always_inline __u32 huc_page_type_byte(__u64 page, bool direct)
{
	__u64 at;
	__u32 type = 0;

	if (!bpf_core_field_exists(struct page___huc_page_type, page_type))
		return 0;
	at = page + bpf_core_field_offset(struct page___huc_page_type, page_type);
	if (direct) {
		/* The word's low half: little-endian, and page_type is not the last field of
		 * struct page. */
		type = (__u32)huc_kernel_word(at, true);
	} else {
		bpf_probe_read_kernel(&type, sizeof(type), (const void *)at);
	}
	return type >> 24;
}

/* flags and the compound word are struct page's first two words (up to 6.9, where PG_slab marks
 * slab pages): one read of both. */
static __always_inline bool huc_flags_then_compound(void)
{
	return bpf_core_field_exists(struct page___huc_word_flags, flags) &&
	       bpf_core_field_exists(struct page___huc_compound_head, compound_head) &&
	       bpf_core_field_offset(struct page___huc_word_flags, flags) == 0 &&
	       bpf_core_field_offset(struct page___huc_compound_head, compound_head) == 8;
}

/* A tail page's compound_info is a mask of its address, not a pointer (see above). */
const volatile bool compound_info_mask = false;

/* How this kernel marks a slab page, from its BTF (core/kernel/slab_marker.h says why the daemon
 * reads it, not CO-RE): the PGTY_slab page type, else PG_slab's bit in page->flags; -1: none. */
const volatile __s32 slab_page_type = -1;
const volatile __s32 slab_flag_bit = -1;

struct vm_struct___huc {
	unsigned int nr_pages;
} __attribute__((preserve_access_index));

struct task_struct___huc {
	struct vm_struct___huc *stack_vm_area;
} __attribute__((preserve_access_index));

/* The kernel's layout as the checks see it, fixed at boot (KASLR picks the bases once, THREAD_SIZE
 * is a build constant). huc_read_layout, a syscall program the daemon runs once after load,
 * fills it; each check then reads plain globals instead of making six kernel reads. */
struct huc_kernel_layout huc_layout = {};

static __always_inline __u64 huc_read_kernel_u64(const void *addr, __u64 fallback)
{
	__u64 v = 0;

	if (!addr || bpf_probe_read_kernel(&v, sizeof(v), addr))
		return fallback;
	return v;
}

static __always_inline bool huc_l5(void)
{
	__u32 v = 0;

	if (!&__pgtable_l5_enabled ||
	    bpf_probe_read_kernel(&v, sizeof(v), &__pgtable_l5_enabled))
		return false;
	return v != 0;
}

/* THREAD_SIZE: the pages of the task's stack area (CONFIG_VMAP_STACK, as Debian builds), else
 * x86_64's 16 KiB. */
static __always_inline __u64 huc_thread_size(struct task_struct *task)
{
	struct task_struct___huc *t = (void *)task;

	if (bpf_core_field_exists(t->stack_vm_area)) {
		struct vm_struct___huc *area = BPF_CORE_READ(t, stack_vm_area);
		__u32 pages = 0;

		if (area && bpf_core_field_exists(area->nr_pages))
			pages = BPF_CORE_READ(area, nr_pages);

		if (pages)
			return (__u64)pages << HUC_PAGE_SHIFT;
	}
	return HUC_THREAD_SIZE_DEFAULT;
}

SEC("syscall")
int huc_read_layout(void *ctx)
{
	struct huc_kernel_layout *l = &huc_layout;
	bool l5 = huc_l5();

	l->page_offset = huc_read_kernel_u64(&page_offset_base,
					     l5 ? HUC_PAGE_OFFSET_L5 : HUC_PAGE_OFFSET_L4);
	l->vmalloc_start = huc_read_kernel_u64(&vmalloc_base,
					       l5 ? HUC_VMALLOC_START_L5 : HUC_VMALLOC_START_L4);
	l->vmemmap = huc_read_kernel_u64(&vmemmap_base,
					 l5 ? HUC_VMEMMAP_START_L5 : HUC_VMEMMAP_START_L4);
	/* VMALLOC_END depends on the paging depth the kernel chose at boot; the vmemmap area
	 * follows the vmalloc area in x86_64's layout (KASLR keeps the order), and nothing is
	 * mapped between the two, so its base bounds the vmalloc area without that guess. */
	l->vmalloc_end = l->vmemmap;
	if (l->vmalloc_end <= l->vmalloc_start)
		l->vmalloc_end = l->vmalloc_start +
				 ((l5 ? HUC_VMALLOC_SIZE_TB_L5 : HUC_VMALLOC_SIZE_TB_L4) << 40) - 1;
	/* Any task's: the daemon's own thread runs this. */
	l->thread_size = huc_thread_size(bpf_get_current_task_btf());
	return 0;
}


/* The head page of the page at page_addr, from its compound word (bit 0: a tail page). */
static __always_inline __u64 huc_head_page(__u64 page_addr, __u64 compound)
{
	if (!(compound & 1))
		return page_addr;
	return compound_info_mask ? page_addr & compound : compound - 1;
}

/* The head page of the folio holding the direct-map address ptr when folio_test_slab() holds
 * for it (the struct slab the kernel hands to __check_heap_object), else 0. */
static __always_inline __u64 huc_direct_map_slab(__u64 ptr, bool direct)
{
	__u64 pfn = (ptr - huc_layout.page_offset) >> HUC_PAGE_SHIFT;
	__u64 page = huc_layout.vmemmap + pfn * bpf_core_type_size(struct page___huc_page_type);
	/* Each read once: every read of a const volatile is a load. */
	const __s32 type_marker = slab_page_type, flag_bit = slab_flag_bit;
	__u64 head;

	if (type_marker < 0 && (flag_bit < 0 || flag_bit >= 64))
		return 0;
	if (!direct && type_marker < 0 && huc_flags_then_compound()) {
		unsigned long words[2] = {};

		bpf_probe_read_kernel(words, sizeof(words), (const void *)page);
		head = huc_head_page(page, words[1]);
		if (head != page)
			words[0] = huc_kernel_word(head, false);
		return (words[0] >> flag_bit) & 1 ? head : 0;
	}
	head = huc_head_page(page, huc_page_compound_word(page, direct));
	if (type_marker >= 0)
		return huc_page_type_byte(head, direct) == (__u32)type_marker ? head : 0;
	return (huc_page_flags_word(head, direct) >> flag_bit) & 1 ? head : 0;
}

/* pagefault_disabled() of task. Loaded directly from the task (a BTF pointer), not with
 * BPF_CORE_READ: no helper call, and bpf_probe_read_kernel() runs with page faults disabled, so
 * through it this task's count reads one higher than the kernel's own test sees (every vmalloc'ed
 * object was taken for a direct-map one). */
static __always_inline int huc_pagefault_disabled(struct task_struct *task)
{
	return task->pagefault_disabled;
}

/* Where the sub-checks of __check_object_size(ptr, n) end (enum huc_classify_end), or
 * HUC_CLASSIFY_ENDS when none runs; at HUC_END_SLAB, *slab is the slab's head page. */
static __always_inline __u32 huc_classify_subchecks(struct task_struct *task, __u64 ptr, __u64 n,
						    bool direct, __u64 *slab)
{
	const struct huc_kernel_layout *l = &huc_layout;
	__u64 stack;

	if (!n)
		return HUC_CLASSIFY_ENDS;
	/* Direct loads from the task (a BTF pointer): no helper call (huc_pagefault_disabled). The
	 * daemon classifies only where the task has the fields read here, so they are read without
	 * asking: this code is not reached (and the verifier drops it) where it does not. */
	stack = (__u64)task->stack;
	if (ptr >= stack && ptr < stack + l->thread_size)
		return HUC_END_STACK;
	if (ptr >= l->vmalloc_start && ptr < l->vmalloc_end && !huc_pagefault_disabled(task))
		return HUC_END_VMALLOC;
	/* __virt_addr_valid: the kernel image mapping is valid but never slab; below it only the
	 * direct map [PAGE_OFFSET, PAGE_OFFSET + RAM) is. */
	if (ptr >= HUC_START_KERNEL_MAP)
		return HUC_END_PAGE;
	if (ptr < l->page_offset || ptr - l->page_offset >= HUC_MAX_PHYS)
		return HUC_END_PAGE;
	*slab = huc_direct_map_slab(ptr, direct);
	return *slab ? HUC_END_SLAB : HUC_END_PAGE;
}

#endif
