// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Names for cgroups that end before the drain (docs/design.md, "Which workload"): the samples
 * carry a cgroup id only, and a cgroup that lived between two drains is gone by the time user
 * space looks for its directory. So every cgroup made on the unified hierarchy is reported with
 * its parent's id and its own name, and every one removed by its id, at the moment it happens
 * (a cgroup v2 directory cannot be renamed: only v1 hierarchies have a rename). Raw tracepoints
 * (cgroup_mkdir, cgroup_rmdir): no trampolines, no kprobes, CAP_BPF + CAP_PERFMON, any kernel
 * since 5.8 (the ring buffer).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cgroup_events.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HUC_CGROUP_RING_BYTES);
} cgroup_events SEC(".maps");

/* Records the ring had no room for, since load: the daemon then walks the tree again. */
__u64 lost_events = 0;

/* The unified hierarchy's cgroups only: cgroup v1 hierarchies (a hybrid host's cpu, memory...)
 * fire the same tracepoints with ids of their own. The current task's default-hierarchy cgroup
 * is on the unified root by definition, so compare roots, not hierarchy numbers. */
static __always_inline bool on_unified(struct cgroup *cgrp)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	return BPF_CORE_READ(cgrp, root) == BPF_CORE_READ(task, cgroups, dfl_cgrp, root);
}

static __always_inline int report_change(struct cgroup *cgrp, __u32 change)
{
	struct huc_cgroup_event event = {};
	__u64 name_len = 0;

	if (!on_unified(cgrp))
		return 0;
	event.id = BPF_CORE_READ(cgrp, kn, id);
	event.change = change;
	if (change == HUC_CGROUP_MADE) {
		/* cgroup_parent(): self is the first member of struct cgroup. */
		struct cgroup *parent = (struct cgroup *)BPF_CORE_READ(cgrp, self.parent);
		long len;

		if (parent)
			event.parent_id = BPF_CORE_READ(parent, kn, id);
		len = bpf_probe_read_kernel_str(event.name, sizeof(event.name),
						BPF_CORE_READ(cgrp, kn, name));
		if (len > 0)
			name_len = (__u64)(len - 1);
	}
	/* Masked where it is used: the verifier must see the record's size bounded. */
	name_len &= HUC_CGROUP_NAME_MAX - 1;
	event.name_len = (__u32)name_len;
	if (bpf_ringbuf_output(&cgroup_events, &event,
			       __builtin_offsetof(struct huc_cgroup_event, name) + name_len, 0))
		__sync_fetch_and_add(&lost_events, 1);
	return 0;
}

/* TP_PROTO(struct cgroup *cgrp, const char *path) for both. */
SEC("raw_tp/cgroup_mkdir")
int huc_cgroup_mkdir(struct bpf_raw_tracepoint_args *ctx)
{
	return report_change((struct cgroup *)ctx->args[0], HUC_CGROUP_MADE);
}

SEC("raw_tp/cgroup_rmdir")
int huc_cgroup_rmdir(struct bpf_raw_tracepoint_args *ctx)
{
	return report_change((struct cgroup *)ctx->args[0], HUC_CGROUP_REMOVED);
}
