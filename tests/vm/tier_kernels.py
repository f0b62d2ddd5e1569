"""The kernels the VM tier boots (Debian 12's 6.1 and 6.12, and the newest of other suites
through private apt lists), and one of them ready to boot for the scripts that boot a single
kernel (bench/vm/, vm_systemd)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import initramfs
import kernel_packages


@dataclasses.dataclass
class KernelSpec:
    label: str
    meta_package: str
    # Does a 64 KiB unicast netlink skb head come from vmalloc? 6.1: always (vmalloc in
    # netlink_alloc_large_skb). 6.12: kvmalloc -> the page allocator satisfies an order-4
    # request in a fresh guest, so no vmalloc; the 6 MiB variant is the vmalloc path there.
    netlink_64k_vmalloc: bool
    # Possible-CPU counts the memory runs boot with (none: no memory runs on this kernel).
    memory_cpus: tuple[int, ...] = ()
    # The Debian suite it comes from through a private apt list (kernel_packages.PRIVATE_SUITES); None:
    # the machine's own apt sources (Debian 12).
    suite: str | None = None
    # Booted by ctest's vm_tier (CI); the others by the full documented command (--all).
    ci: bool = True
    # What the kernel's own checks do and what hucprof's probes can be there, as the tier
    # asserts it (hucprof decides from its feature probes; these are the expected outcomes):
    # hardened usercopy checks vmalloc'ed objects (find_vmap_area: from 5.19; before,
    # check_heap_object returns early for any address outside the direct map),
    vmalloc_subcheck: bool = True
    # hucprof's fentry programs load (bpf_get_func_ip 5.15, bpf_get_func_arg_cnt 5.17),
    fentry: bool = True
    # and sub-checks are classified by default (syscall programs 5.14, the task's BTF helpers).
    classifies: bool = True
    # The builds of the BPF objects hucprof picks from the kernel's features (info where None).
    sampler_build: str | None = None
    probe_build: str | None = None


# bullseye's 5.10 is the floor. 6.1 is where the per-CPU growth was measured (its memlock is
# max_entries x entry size, so it shows the reservation, not just what is in use). The newest
# kernels are whatever the suites carry the day the tier runs (linux-image-amd64 of
# trixie-backports and sid): the tables name the release. CI boots the newest of all
# (trixie-backports) besides Debian 12's; bullseye's 5.10, trixie's 6.12, sid's kernel and
# trixie-backports' cloud and rt flavours only by name or with --all (budget in
# tests/vm/README.md).
KERNELS = [
    KernelSpec("6.1", "linux-image-amd64", netlink_64k_vmalloc=True, memory_cpus=(2, 64, 128),
               sampler_build="sampler", probe_build="probe_helper_reads"),
    # Debian 11: the oldest kernel hucprof supports; the compat builds of both objects, kprobes
    # only, sub-check functions probed, no hist triggers (the reference counts a trace buffer).
    # Not in CI yet: its reference misses one __check_object_size hit per workload window
    # (kprobe_profile), which the tier does not accept (tests/vm/README.md).
    KernelSpec("bullseye", "linux-image-amd64", netlink_64k_vmalloc=True, suite="bullseye",
               ci=False, vmalloc_subcheck=False, fentry=False, classifies=False,
               sampler_build="sampler_compat", probe_build="probe_compat"),
    KernelSpec("6.12", "linux-image-6.12-amd64", netlink_64k_vmalloc=False),
    KernelSpec("trixie", "linux-image-amd64", netlink_64k_vmalloc=False, suite="trixie",
               ci=False),
    KernelSpec("trixie-backports", "linux-image-amd64", netlink_64k_vmalloc=False,
               suite="trixie-backports"),
    KernelSpec("sid", "linux-image-amd64", netlink_64k_vmalloc=False, suite="sid", ci=False),
    # Debian's cloud flavour of the same release (what its cloud images boot): no 9p, so the guest
    # sees the host's root over virtiofs.
    KernelSpec("trixie-backports-cloud", "linux-image-cloud-amd64", netlink_64k_vmalloc=False,
               suite="trixie-backports", ci=False),
    # The same release built with PREEMPT_RT: a run of the check's program is preemptible there
    # whatever the boot parameters say (the busy session's rescue and misses).
    KernelSpec("trixie-backports-rt", "linux-image-rt-amd64", netlink_64k_vmalloc=False,
               suite="trixie-backports", ci=False),
]


def boot_files(label: str, cache: Path) -> tuple[kernel_packages.Kernel, Path]:
    """One kernel of KERNELS ready to boot, for scripts that boot a single kernel (bench/vm/):
    its package (downloaded into `cache` the first time) and its initramfs. KeyError for a label
    not in KERNELS (argparse's choices=[k.label for k in KERNELS] keeps it out); vmlib.Skip when
    the host lacks what it takes."""
    spec = {k.label: k for k in KERNELS}[label]
    k = kernel_packages.resolve_kernel(spec.label, spec.meta_package, cache, {}, suite=spec.suite)
    initrd = cache / f"initramfs-{k.release}.cpio"
    initramfs.build_initramfs(k, initrd)
    return k, initrd

