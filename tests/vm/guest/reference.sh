#!/bin/bash
# Guest script: kernel-only reference counts for the usercopy checks, per workload.
#
# Environment (from the harness):
#   HUCVM_RESULTS      results dir (cwd), writable, shared back to the host
#   HUCVM_BIN          dir with the compiled workloads (host path, visible in the chroot)
#   HUCVM_WORKLOADS    newline-separated "TAG COMMAND..." lines, run in order
#
# Output (in $HUCVM_RESULTS): kallsyms-usercopy.txt, ref-stackkey.txt, ref-missing.txt,
# hist-<probe>-<TAG>.txt, kprobe_profile-<TAG>.txt, workload-<TAG>.log, cmdline.txt.
set -u
HERE=$(dirname "$(readlink -f "$0")")
. "$HERE/refprobe.sh"

cd "$HUCVM_RESULTS" || exit 1
cat /proc/cmdline > cmdline.txt
uname -r > uname.txt
grep -E ' [tT] (__check_object_size|__check_heap_object|check_heap_object|__virt_addr_valid|check_stack_object|check_kernel_text_object|find_vmap_area|find_vm_area|check_page_span)(\.[a-z0-9.]+)?$' \
    /proc/kallsyms | cut -d' ' -f2- | sort -k2 > kallsyms-usercopy.txt

ref_init
# __check_object_size(const void *ptr, unsigned long n, bool to_user)
ref_probe ucheck __check_object_size 'n=%si:u64 to_user=%dx:u8' to_user n
# __check_heap_object(const void *ptr, unsigned long n, const struct slab *slab, bool to_user)
ref_probe uheap __check_heap_object 'n=%si:u64 to_user=%cx:u8' to_user n
# check_stack_object(const void *obj, unsigned long len) -> int
ref_probe ustack check_stack_object 'n=%si:u64' '' n
# find_vmap_area(unsigned long addr): the vmalloc branch of check_heap_object
ref_probe uvmap find_vmap_area '' '' ''

rc=0
while read -r tag cmd; do
    [ -n "$tag" ] || continue
    ref_start
    # shellcheck disable=SC2086
    (cd /tmp && exec $cmd) > "workload-$tag.log" 2>&1
    wrc=$?
    ref_stop "$tag"
    echo "$wrc" > "workload-$tag.rc"
    if [ "$wrc" != 0 ]; then
        echo "workload $tag ($cmd) failed with $wrc:" >&2
        cat "workload-$tag.log" >&2
        rc=1
    fi
done <<< "$HUCVM_WORKLOADS"
ref_cleanup
exit $rc
