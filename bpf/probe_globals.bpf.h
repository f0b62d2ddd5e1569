/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Probe mode's globals, shared by its programs and the daemon: the settings the daemon writes
 * into rodata before load, the generation sequence it writes while running, and the maps it
 * drains (their layouts: hucprof_abi.h). Only probe.bpf.c includes it, once, before the code
 * that uses them (hot_sites.bpf.h, rescue.bpf.h).
 */
#ifndef HUCPROF_PROBE_GLOBALS_BPF_H
#define HUCPROF_PROBE_GLOBALS_BPF_H

#include "probe_scratch.bpf.h"
#include "usercopy_common.bpf.h"

/* __check_object_size (+ .cold) and check_heap_object: the only legitimate callers of sub-checks
 * in a usercopy check. */
const volatile struct huc_range dispatcher_ranges[HUC_MAX_RANGES] = {};
const volatile __u32 nr_dispatcher_ranges = 0;
const volatile bool latency_enabled = false;
/* Sub-checks (stack, vmalloc, page, slab) classified inside the check's program
 * (usercopy_classify.bpf.h) instead of probed at their own entries. */
const volatile bool classify_subchecks = false;
/* --probe.workloads: key each check also by its task's cgroup v2 id (which workload pays). */
const volatile bool key_by_cgroup = false;
/* Some program runs after the check on this CPU and reads its state (cpu_state): a sub-check
 * function's, or the check's exit with --latency. */
const volatile bool check_leaves_state = false;
/* The rescue program is attached (hucprof_abi.h, "Probe mode's rescue"): the check's program
 * counts its runs per task for it. */
const volatile bool rescue_enabled = false;
/* --probe.objects: classified slab checks also counted by cache (usercopy_objects.bpf.h). */
const volatile bool count_objects = false;
/*
 * Benchmarks only (bench/vm/probe_overhead.py --stages, through the daemon's environment): the
 * check's program returns after this stage, 0: never. The verifier drops what a known rodata
 * value makes unreachable, and turns a test whose one side it never reached into a plain jump
 * (then dropped), but keeps the load of the value. So the stops are compiled into a copy of the
 * program of their own (stoppable), chosen by one test at entry: the default program has no stop
 * and loads the value once. Each stop exits in an asm block of its own, never taken by another
 * path, where a C return would share the program's exit with every other return and keep its
 * test. Each stage keeps a value it computed alive (an empty asm that takes it in a register),
 * so the compiler cannot sink that work past the stop; no memory clobber, which would make the
 * program spill and reload around every stage.
 */
const volatile __u32 bench_stop_after = 0;
#define HUC_STAGE_ENTRY 1  /* the program entered, nothing more */
#define HUC_STAGE_CALLER 2 /* + the immediate caller read (and the object, to classify) */
#define HUC_STAGE_KEY 3    /* + the scratch, the syscall number and direction */
/* + counted: the fast path's way (recent_keys.bpf.h), else the full path's call site along
 * learned offsets and its way or hash entry. One stage: a full path stopped before its count
 * would find its way still empty and take it again on every check. */
#define HUC_STAGE_COUNT 4
/* (not stopped: + the sub-checks classified and counted) */
#define HUC_STOP_AFTER(stoppable, stage, kept)                        \
	do {                                                          \
		if (!(stoppable))                                     \
			break;                                        \
		asm volatile("" : : "r"(kept));                       \
		if (bench_stop_after == (stage)) {                    \
			asm volatile("r0 = 0\n\texit" : : : "r0");   \
			__builtin_unreachable();                      \
		}                                                     \
	} while (0)

/* The check's body, called as the copy with stops when the benchmark asks for one, else as the
 * copy without (the verifier drops the one not picked): fn's last argument is stoppable. */
#define HUC_PICK_COPY(fn, ...)                                                \
	(bench_stop_after ? fn(__VA_ARGS__, true) : fn(__VA_ARGS__, false))

/* __check_object_size's argument registers, unchanged since it came in 4.8: its trampoline frame
 * starts this many words above an fentry program's ctx. A constant on the per-check path (no
 * load, no bound test); huc_count_full asks the trampoline, off the fast path. */
#define HUC_CHECK_OBJECT_SIZE_NARGS 3

/* Written by the daemon only: the generation sequence; keys are written in its low byte, the
 * generation (hucprof_abi.h), and the hot call sites' table in the half of its parity. */
volatile __u32 generation_seq = 0;

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

#endif /* HUCPROF_PROBE_GLOBALS_BPF_H */
