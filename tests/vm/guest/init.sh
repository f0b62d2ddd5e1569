#!/bin/sh
# /init of the VM-tier initramfs (busybox sh, PID 1).
#
# Loads the virtio/9p modules shipped with the booted kernel, mounts the host root read-only
# (9p tag "hostroot"; virtiofs with hucvm.share=virtiofs) at /mnt/host, mounts the writable
# results share (tag "results") over the
# same path inside it, mounts the kernel filesystems a test needs, and runs the test script
# (hucvm.script=) in a chroot. Its exit status goes to $RESULTS/.hucvm-rc; then power off.
# Anything that goes wrong before the script runs prints HUCVM-FAIL and powers off without an rc
# file, which the host treats as a failure.

# busybox applets, PATH, fail(), /proc /sys /dev (tests/vm/guest/preamble.sh)
. /lib/hucvm-preamble.sh

SCRIPT=
RESULTS=
SHARE=9p
# shellcheck disable=SC2013  # words, not lines
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        hucvm.script=*) SCRIPT=${arg#hucvm.script=} ;;
        hucvm.results=*) RESULTS=${arg#hucvm.results=} ;;
        hucvm.share=*) SHARE=${arg#hucvm.share=} ;;
    esac
done
[ -n "$SCRIPT" ] || fail "no hucvm.script= on the kernel command line"
[ -n "$RESULTS" ] || fail "no hucvm.results= on the kernel command line"

echo "HUCVM: kernel $(uname -r), modules: $(tr '\n' ' ' < /modules/order)"
# shellcheck disable=SC2013
for m in $(cat /modules/order); do
    insmod "/modules/$m" || fail "insmod $m"
done

H=/mnt/host
# The host's root over 9p, or over virtiofs where the kernel has no 9p (Debian's cloud flavour;
# tests/vm/virtiofs.py): read-only either way.
if [ "$SHARE" = virtiofs ]; then
    mount -t virtiofs -o ro hostroot $H || fail "mount virtiofs hostroot"
else
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot $H \
        || fail "mount 9p hostroot"
fi
[ -d "$H$RESULTS" ] || fail "results dir $RESULTS not visible through the host root"

mount -t proc proc $H/proc || fail "mount proc in chroot"
mount -t sysfs sysfs $H/sys || fail "mount sysfs in chroot"
mount -t devtmpfs devtmpfs $H/dev || fail "mount devtmpfs in chroot"
mount -t devpts devpts $H/dev/pts 2>/dev/null
mount -t tmpfs tmpfs $H/dev/shm 2>/dev/null
# The guest gets its own writable /tmp, but a checkout or build tree under the host's /tmp (a CI
# clone, say) must stay visible: bind each host /tmp directory back into it, read-only.
mkdir -p /hosttmp
mount --bind $H/tmp /hosttmp || fail "bind host /tmp"
mount -t tmpfs -o mode=1777 tmpfs $H/tmp || fail "mount /tmp"
for d in /hosttmp/*/; do
    [ -d "$d" ] || continue
    n=$(basename "$d")
    mkdir -p "$H/tmp/$n" && mount --bind "$d" "$H/tmp/$n" || fail "bind /tmp/$n"
done
mount -t tmpfs -o mode=755 tmpfs $H/run || fail "mount /run"
# The booted kernel's config where its package installs it (/boot/config-R up to 6.x,
# /usr/lib/modules/R/config for Debian's split 7.x packages), so that hucprof reads it there as on
# a machine: a tmpfs over that directory of the host root, in the guest's view only. A host root
# without the directory cannot take it; that is written down for the host to report.
KCONF=
if [ -d /kernel-files ]; then
    for top in boot usr/lib/modules; do
        [ -e "/kernel-files/$top" ] || continue
        if [ -d "$H/$top" ]; then
            mount -t tmpfs -o mode=755 tmpfs "$H/$top" || fail "mount tmpfs on /$top"
            cp -a "/kernel-files/$top/." "$H/$top/" || fail "install the kernel's files in /$top"
            KCONF="installed /$top"
        else
            KCONF="not installed: the host root has no /$top"
        fi
    done
fi
mount -t bpf bpf $H/sys/fs/bpf || fail "mount bpffs"
mount -t tracefs tracefs $H/sys/kernel/tracing || fail "mount tracefs"
mount -t debugfs debugfs $H/sys/kernel/debug || fail "mount debugfs"
if [ "$SHARE" = virtiofs ]; then
    mount -t virtiofs results "$H$RESULTS" || fail "mount virtiofs results at $RESULTS"
else
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results "$H$RESULTS" \
        || fail "mount 9p results at $RESULTS"
fi
ip link set lo up || fail "lo up"
echo "${KCONF:-not installed: no kernel files in the initramfs}" > "$H$RESULTS/.hucvm-kernel-config"

cut -d' ' -f1 /proc/uptime > "$H$RESULTS/.hucvm-start-uptime"
echo "HUCVM: start $SCRIPT at uptime $(cat "$H$RESULTS/.hucvm-start-uptime")s"
chroot $H /bin/sh -c ". '$RESULTS/.hucvm-env'; export HUCVM_RESULTS='$RESULTS' HOME=/tmp \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; cd '$RESULTS' && exec '$SCRIPT'" \
    </dev/null
rc=$?
cut -d' ' -f1 /proc/uptime > "$H$RESULTS/.hucvm-end-uptime"
echo "$rc" > "$H$RESULTS/.hucvm-rc"
echo "HUCVM: rc=$rc at uptime $(cat "$H$RESULTS/.hucvm-end-uptime")s"
sync
umount "$H$RESULTS"
poweroff -f
sleep 5
