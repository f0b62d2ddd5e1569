/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What cgroup_names.bpf.c tells the daemon about the unified hierarchy (daemon/kernel_edge/
 * cgroup_names_session.*): one record per cgroup made or removed, in a ring buffer the
 * daemon reads at every drain. Shared by the BPF object and the daemon, like hucprof_abi.h.
 */
#ifndef HUCPROF_CGROUP_EVENTS_H
#define HUCPROF_CGROUP_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* A cgroup's own name, NUL included: a directory entry's at most (NAME_MAX + 1). */
#define HUC_CGROUP_NAME_MAX 256
/* Ring buffer bytes (a power of 2, pages): ~3,000 records of typical names (pod container scopes
 * are ~90 bytes), so several hundred cgroups a second between two 10-second drains. */
#define HUC_CGROUP_RING_BYTES (256 * 1024)

enum huc_cgroup_change {
	HUC_CGROUP_MADE = 1,
	HUC_CGROUP_REMOVED = 2,
};

/* A record is this header and name_len bytes of name (no NUL): the rest is not sent. */
struct huc_cgroup_event {
	__u64 id;        /* the cgroup's id (kernfs node id): bpf_get_current_cgroup_id()'s */
	__u64 parent_id; /* its parent's; 0 for a removal */
	__u32 change;    /* enum huc_cgroup_change */
	__u32 name_len;  /* bytes of name that follow; 0 for a removal */
	char name[HUC_CGROUP_NAME_MAX];
};

#endif
