/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Everything the BPF programs read that depends on the CPU architecture, in one place:
 *   huc_kprobe_caller   the immediate caller at a kprobe on function entry
 *   huc_fentry_caller   the immediate caller inside an fentry program (the BPF trampoline frame)
 *   huc_ret_addr        a return address read from the stack, as the unwinder reports it
 *   huc_regs_syscall_nr the syscall number saved in a task's user registers (_read: by helper)
 *   huc_sample_is_user  whether a perf_event sample interrupted user mode
 *   huc_kernel_word     one word of kernel memory, by a helper call or a direct load
 * Compiled with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64 (cmake/BpfObject.cmake picks it
 * from the CMake target). Field reads go through vmlinux.h's types, so they are CO-RE relocated.
 *
 * "slot" is where the walk along learned helper offsets (learned_offsets.bpf.h) starts: a stack
 * address at a fixed distance from the caller's frame. On x86 it is the word holding the return
 * address (the call pushed it); on arm64 the return address is in the link register, so the
 * slot is the caller's stack pointer at the call, which is just as fixed by the return address.
 */
#ifndef HUCPROF_ARCH_READS_BPF_H
#define HUCPROF_ARCH_READS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#if !defined(__TARGET_ARCH_x86) && !defined(__TARGET_ARCH_arm64)
#error "hucprof BPF programs support __TARGET_ARCH_x86 and __TARGET_ARCH_arm64"
#endif

/*
 * Kernel memory the programs did not get as a BTF pointer (the trampoline frame, stack slots,
 * struct page) is read with bpf_probe_read_kernel(), a helper call of a few hundred instructions
 * per read (measured under icount: bench/vm/probe_overhead.py --stages). From 6.2 the
 * bpf_rdonly_cast kfunc, which the verifier turns into a register move, makes any address an
 * untrusted BTF pointer, and a load through it is a plain load the JIT guards with an exception
 * entry (a fault reads 0): a handful of instructions. The check's program comes in both
 * flavours (`direct` is a constant at every call, so each keeps one path: a kernel without the
 * kfunc never sees its call); the daemon loads the direct one where the kernel BTF has it.
 * The type is struct pt_regs for its plain unsigned long words at known offsets.
 *
 * The object is also built with HUC_HELPER_READS_ONLY (bpf/CMakeLists.txt): no kfunc extern at
 * all, for kernels without the kfunc. libbpf resolves every extern of an object, even of
 * programs it does not load, and looks for a kfunc missing from vmlinux in the modules' BTF,
 * whose listing needs CAP_SYS_ADMIN: under the unit's CAP_BPF and CAP_PERFMON alone, a weak
 * extern the kernel lacks fails the whole load.
 */
#if !defined(HUC_HELPER_READS_ONLY)
#define HUC_HAS_DIRECT_READS true
extern void *bpf_rdonly_cast(const void *obj__ign, __u32 btf_id) __ksym __weak;
#define HUC_RDONLY_CAST(addr, type) bpf_rdonly_cast((void *)(addr), bpf_core_type_id_kernel(type))
#else
#define HUC_HAS_DIRECT_READS false
/* Never reached: the programs pass direct = HUC_HAS_DIRECT_READS, false here. */
#define HUC_RDONLY_CAST(addr, type) ((void *)0)
#endif

/* The word at addr, as its first pt_regs word (r15 on x86, regs[0] on arm64). */
#if defined(__TARGET_ARCH_x86)
#define HUC_FIRST_REGS_WORD(p) ((p)->r15)
#else
#define HUC_FIRST_REGS_WORD(p) ((p)->regs[0])
#endif

static __always_inline __u64 huc_kernel_word(__u64 addr, bool direct)
{
	__u64 word = 0;

#if defined(__TARGET_ARCH_arm64)
	/* Not yet booted in the arm64 guests: helper reads there, as before. */
	direct = false;
#endif
	if (direct) {
		struct pt_regs *at = HUC_RDONLY_CAST(addr, struct pt_regs);

		return HUC_FIRST_REGS_WORD(at);
	}
	bpf_probe_read_kernel(&word, sizeof(word), (void *)addr);
	return word;
}

/* The immediate caller: its return address, and the slot (see above). Both 0 when unreadable.
 * huc_fentry_caller's nargs is the traced function's count of argument registers, where the
 * trampoline frame begins above ctx: a constant where the program knows its function (no load,
 * and the bound test folds away), else bpf_get_func_arg_cnt(ctx). */
struct huc_caller {
	__u64 slot;
	__u64 ret;
};

/* The return address into the traced function lies within this many bytes of its start:
 * x86 call __fentry__ at +0 (+4 after ENDBR); arm64 "mov x9, lr; bl <trampoline>" at +0
 * (+4 after BTI "bti c"), so the return is at +8 or +12. */
#define HUC_FENTRY_RET_WINDOW 16

static __always_inline bool huc_returns_into(__u64 word, __u64 ip)
{
	return word > ip && word <= ip + HUC_FENTRY_RET_WINDOW;
}

#if defined(__TARGET_ARCH_arm64)
/*
 * With pointer authentication (CONFIG_ARM64_PTR_AUTH_KERNEL, Debian's arm64 kernels) the return
 * addresses functions save in their frame records carry a PAC in the high bits. Kernel text
 * addresses have bits 63..48 all set whatever VA_BITS is (the image and modules sit at the top
 * of the address space), so the PAC is stripped by setting them again, as the kernel's unwinder
 * does (ptrauth_strip_kernel_insn_pac). Bit 55 tells kernel from user/data words; 0 stays 0.
 */
#define HUC_ARM64_KERNEL_TOP_BITS 0xffff000000000000ULL

static __always_inline __u64 huc_ret_addr(__u64 word)
{
	/* Without a branch: each read is one verifier state, not two (HUC_WALK_IS_GLOBAL). */
	return word | ((0 - ((word >> 55) & 1)) & HUC_ARM64_KERNEL_TOP_BITS);
}
#else
static __always_inline __u64 huc_ret_addr(__u64 word)
{
	return word;
}
#endif

#if defined(__TARGET_ARCH_arm64)
#define HUC_TRACE_SKIPS_CALLER 1
#else
#define HUC_TRACE_SKIPS_CALLER 0
#endif

/*
 * Where the per-check walk along learned offsets is the global function huc_follow_hops, which
 * the verifier checks once on its own, rather than inline in the check's program. Inline, each of
 * its hops multiplies the paths the verifier walks: Debian's arm64 7.3 refused the check's
 * program for passing a million instructions (E2BIG), and loaded none, while 6.12 took it; x86's
 * helper flavour walks 200 855 on 6.18, 88 541 with the global walk (tests/host verifier_test).
 * x86 keeps the inline walk, measured faster on 6.1 and 6.12 (docs/benchmarks.md).
 */
#if defined(__TARGET_ARCH_arm64)
#define HUC_WALK_IS_GLOBAL 1
#else
#define HUC_WALK_IS_GLOBAL 0
#endif

#if defined(__TARGET_ARCH_x86)
/* Does the return address ret follow a direct call (call rel32) of the function at ip, or of its
 * call-depth-tracking thunk in the bytes before it? Reads 5 bytes of kernel text. */
static __always_inline bool huc_called_from(__u64 ret, __u64 ip)
{
	__u8 insn[5] = {};
	__s32 rel;
	__u64 target;

	if (ret < 5 || bpf_probe_read_kernel(insn, sizeof(insn), (void *)(ret - 5)) ||
	    insn[0] != 0xe8)
		return false;
	__builtin_memcpy(&rel, &insn[1], sizeof(rel));
	target = ret + (__s64)rel;
	return target <= ip && target + HUC_FENTRY_RET_WINDOW >= ip;
}

/*
 * Stack unwinding from inside a trampoline cannot be trusted to keep the caller, so read the
 * trampoline frame directly. Above the program's ctx (the saved argument registers, nargs words)
 * the x86-64 BPF trampoline has (arch/x86/net/bpf_jit_comp.c; as dumped on Debian's 6.12 and 7.3):
 *   fentry only:            saved RBP, return into the traced function, return into its caller
 *   with fexit (CALL_ORIG), up to 6.12 at least:
 *                           the return-value slot, then the same three words
 *   with fexit on 7.3:      the return-value slot, saved RBP, return into the caller: the
 *                           function's ftrace site jumps to the trampoline instead of calling it,
 *                           so nothing returns into the traced function
 * The return-value slot is written only after the traced function returns, so while fentry
 * programs run it holds whatever the stack had there -- sometimes an old return address into
 * the traced function itself (Debian 6.1 under fentry+fexit: 2 of 143k calls). A first-match
 * scan from the slot took that for the real one and returned the saved RBP (data, often 0:
 * caller_unreadable) as the caller. So test the with-fexit position first: that word returns
 * into the traced function only in that layout (without the slot it is the return into the
 * caller, which is never inside the traced function's first bytes). Without a return into the
 * traced function at all, the third word is the caller's return address only if the instruction
 * before it calls the traced function: checked, from the kernel text.
 */
static __always_inline struct huc_caller huc_fentry_caller(void *ctx, __u64 nargs, bool direct)
{
	struct huc_caller c = {};
	__u64 words[4] = {};
	__u64 ip = bpf_get_func_ip(ctx);
	__u64 base = (__u64)ctx + nargs * 8;

	if (nargs > 6)
		return c;
	if (direct) {
		/* r15, r14, r13, r12: the words at base + 0, 8, 16, 24. Each load is a guarded
		 * one (8 instructions): only those the layout needs, as the tests below go. */
		struct pt_regs *frame = HUC_RDONLY_CAST(base, struct pt_regs);

		words[2] = frame->r13;
		if (huc_returns_into(words[2], ip)) {
			c.slot = base + 3 * 8;
			c.ret = frame->r12;
			return c;
		}
		words[1] = frame->r14;
	} else if (bpf_probe_read_kernel(&words[1], 3 * 8, (void *)(base + 8))) {
		/* words[0] (r15's) is in no layout: 3 words, a copy fewer. */
		return c;
	}
	if (huc_returns_into(words[2], ip)) {
		/* return-value slot, saved RBP, return into traced, caller */
		c.slot = base + 3 * 8;
		c.ret = words[3];
	} else if (huc_returns_into(words[1], ip)) {
		/* saved RBP, return into traced, caller */
		c.slot = base + 2 * 8;
		c.ret = words[2];
	} else if (huc_called_from(words[2], ip)) {
		/* return-value slot, saved RBP, caller (the trampoline was jumped to) */
		c.slot = base + 2 * 8;
		c.ret = words[2];
	}
	return c;
}

/* At a kprobe on function entry the return address is at the top of the stack (no frame has
 * been built yet, so frame-pointer unwinding would skip it). */
static __always_inline struct huc_caller huc_kprobe_caller(struct pt_regs *regs, bool direct)
{
	struct huc_caller c = {.slot = PT_REGS_SP(regs)};

	if (c.slot)
		c.ret = huc_kernel_word(c.slot, direct);
	return c;
}

/* orig_ax: the syscall number as entered; -1 outside a syscall. regs a BTF pointer; the _read
 * flavour takes any address (bpf_probe_read_kernel), 0 where unreadable. */
static __always_inline long huc_regs_syscall_nr(struct pt_regs *regs)
{
	return regs->orig_ax;
}

static __always_inline long huc_regs_syscall_nr_read(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, orig_ax);
}

/* perf_event ctx regs are the UAPI pt_regs (stable layout, 8-byte slots: cs is slot 17) and
 * only 8-byte loads are allowed; vmlinux.h's pt_regs splits cs into 16-bit halves. A non-zero
 * privilege level (CPL 3) is user mode (the kernel's user_mode()). */
#define HUC_UAPI_CS_SLOT 17
#define HUC_CS_RPL_MASK 3

static __always_inline bool huc_sample_is_user(struct bpf_perf_event_data *ctx)
{
	return ((const __u64 *)&ctx->regs)[HUC_UAPI_CS_SLOT] & HUC_CS_RPL_MASK;
}

#elif defined(__TARGET_ARCH_arm64)
/*
 * The arm64 BPF trampoline (arch/arm64/net/bpf_jit_comp.c, prepare_trampoline, 6.4 to 6.12; 6.1
 * has no direct calls for kernel functions, so fentry does not attach there) pushes two frame
 * records before allocating its frame, and the program's ctx (the saved argument registers,
 * nargs words) is inside that frame. Above ctx:
 *   [return value]  only with fexit (CALL_ORIG): written after the traced function returns
 *   x19, x20        callee-saved registers
 *   [padding]       to 16 bytes
 *   FP, self ip     frame record of the traced function: self ip returns into it
 *   FP, parent ip   frame record of the caller: x9, the link register at entry
 * The self ip word is at index 2 to 5 above ctx. Test the highest first: every word above it is
 * a frame pointer (stack data) or the parent ip (in the caller, never the traced function's first
 * bytes), while words below it (the unwritten return-value slot, the padding) may hold stale
 * return addresses into the traced function. The slot is the caller's stack pointer, the word
 * above the parent ip: the same place as at a kprobe, so learned offsets are the same.
 */
#define HUC_ARM64_TRAMP_WORDS 8

static __always_inline struct huc_caller huc_fentry_caller(void *ctx, __u64 nargs, bool direct)
{
	struct huc_caller c = {};
	__u64 words[HUC_ARM64_TRAMP_WORDS] = {};
	__u64 ip = bpf_get_func_ip(ctx);
	__u64 base = (__u64)ctx + nargs * 8;

	(void)direct; /* one read of the whole frame record area either way */
	if (nargs > 8 || bpf_probe_read_kernel(words, sizeof(words), (void *)base))
		return c;
	for (int k = HUC_ARM64_TRAMP_WORDS - 3; k >= 2; k--) {
		if (huc_returns_into(words[k], ip)) {
			c.ret = words[k + 2];
			c.slot = base + (k + 3) * 8;
			break;
		}
	}
	return c;
}

/* At a kprobe on function entry the return address is still in the link register (x30, what
 * bpf_tracing.h calls PT_REGS_RET); the callee has not pushed its frame record yet. The kprobe
 * ctx is the UAPI user_pt_regs: a fixed layout, read directly.
 * The kernel's frame-record unwinder starts at pc and x29, so a stack trace taken here does not
 * list this caller: [probed function, the caller's caller, ...] (seen on Debian 6.1 arm64:
 * __check_object_size+0x0, getname_flags+0x58 with strncpy_from_user missing).
 * HUC_TRACE_SKIPS_CALLER tells learned_offsets.bpf.h to take index 0 as the caller's place
 * then. */
static __always_inline struct huc_caller huc_kprobe_caller(struct pt_regs *regs, bool direct)
{
	struct huc_caller c = {.slot = PT_REGS_SP(regs), .ret = PT_REGS_RET(regs)};

	(void)direct; /* the return address is in a register */
	return c;
}

/* syscallno: the syscall number as entered; NO_SYSCALL (-1) outside a syscall. regs a BTF
 * pointer; the _read flavour takes any address (bpf_probe_read_kernel), 0 where unreadable. */
static __always_inline long huc_regs_syscall_nr(struct pt_regs *regs)
{
	return regs->syscallno;
}

static __always_inline long huc_regs_syscall_nr_read(struct pt_regs *regs)
{
	return BPF_CORE_READ(regs, syscallno);
}

/* arch/arm64/include/uapi/asm/ptrace.h: the exception level and stack pointer the sample
 * interrupted; EL0 (with SP_EL0) is user mode (the kernel's user_mode()). The perf_event ctx
 * regs are the UAPI user_pt_regs (regs[31], sp, pc, pstate: pstate is slot 33), read as the
 * 8-byte load the verifier allows. */
#define HUC_PSR_MODE_MASK 0x0000000f
#define HUC_PSR_MODE_EL0t 0x00000000
#define HUC_UAPI_PSTATE_SLOT 33

static __always_inline bool huc_sample_is_user(struct bpf_perf_event_data *ctx)
{
	__u64 pstate = ((const __u64 *)&ctx->regs)[HUC_UAPI_PSTATE_SLOT];

	return (pstate & HUC_PSR_MODE_MASK) == HUC_PSR_MODE_EL0t;
}
#endif

#endif /* HUCPROF_ARCH_READS_BPF_H */
