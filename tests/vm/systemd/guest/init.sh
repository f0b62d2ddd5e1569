#!/bin/sh
# /init of the vm_systemd initramfs (busybox sh, PID 1 until it execs systemd).
#
# Like virtme-ng: a clean Debian root (hucsd.root=DIR, a debootstrap tree on the host, seen
# through the 9p share "hostroot" of the host's /) becomes the read-only lower layer of an
# overlayfs whose upper layer is a tmpfs, so the guest has a writable root (apt-get install,
# unit files, /var) that forgets everything at poweroff and never writes to the host. The host's
# / is mounted read-only at /host (the test's scripts and the package come from there; nothing
# of the system under test does). The writable results share (9p tag "results") is mounted over
# the same path inside the root, as in tests/vm/guest/init.sh.
# Then the test's own units (hucsd.guest=DIR/units) are copied into /etc/systemd/system, the
# units listed in DIR/masked-units and the generators in DIR/masked-generators are masked, and
# systemd becomes PID 1 through switch_root. It boots whatever systemd.unit= names on the kernel
# command line (hucvm.target, which runs the checks and powers off).
#
# Anything that goes wrong before systemd runs prints HUCVM-FAIL and powers off without an rc
# file, which the host treats as a failure.

# busybox applets, PATH, fail(), /proc /sys /dev (tests/vm/guest/preamble.sh)
. /lib/hucvm-preamble.sh

SCRIPT=
RESULTS=
GUEST=
SEED=
ROOT=
INIT=/lib/systemd/systemd
# shellcheck disable=SC2013  # words, not lines
for arg in $(cat /proc/cmdline); do
    case "$arg" in
        hucvm.script=*) SCRIPT=${arg#hucvm.script=} ;;
        hucvm.results=*) RESULTS=${arg#hucvm.results=} ;;
        hucsd.guest=*) GUEST=${arg#hucsd.guest=} ;;
        hucsd.init=*) INIT=${arg#hucsd.init=} ;;
        hucsd.seed=*) SEED=${arg#hucsd.seed=} ;;
        hucsd.root=*) ROOT=${arg#hucsd.root=} ;;
    esac
done
[ -n "$SCRIPT" ] || fail "no hucvm.script= on the kernel command line"
[ -n "$RESULTS" ] || fail "no hucvm.results= on the kernel command line"
[ -n "$GUEST" ] || fail "no hucsd.guest= on the kernel command line"
[ -n "$ROOT" ] || fail "no hucsd.root= on the kernel command line"

echo "HUCVM: kernel $(uname -r), modules: $(tr '\n' ' ' < /modules/order)"
# shellcheck disable=SC2013
for m in $(cat /modules/order); do
    insmod "/modules/$m" || fail "insmod $m"
done

mkdir -p /lower /rw /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /lower \
    || fail "mount 9p hostroot"
mount -t tmpfs -o mode=755 tmpfs /rw || fail "mount tmpfs for the overlay's upper layer"
mkdir -p /rw/upper /rw/work
[ -d "/lower$ROOT/etc" ] || fail "clean root $ROOT not visible through the host root"
# Seed the upper layer with a tar of root files the guest will read anyway (the dpkg database:
# many small files, each costing 9p round trips under emulation; one sequential read of a tar
# made by the host just before the boot is much faster). Same content as the lower layer.
if [ -n "$SEED" ]; then
    [ -f "/lower$SEED" ] || fail "seed tar $SEED not visible through the host root"
    tar -x -f "/lower$SEED" -C /rw/upper || fail "extract seed tar $SEED"
fi
mount -t overlay -o "lowerdir=/lower$ROOT,upperdir=/rw/upper,workdir=/rw/work" overlay /newroot \
    || fail "mount overlay (9p lower, tmpfs upper)"
R=/newroot
[ -x "$R$INIT" ] || fail "$INIT not found in the clean root"
mkdir -p "$R/host" "$R$RESULTS" "$R/.hucsd-rw"
mount --bind /lower "$R/host" || fail "bind the host root at /host"
# The upper layer, so the checks can see exactly what changed in the clean root (the package's
# install and purge) without walking all of it over 9p.
mount --bind /rw "$R/.hucsd-rw" || fail "bind the overlay's upper layer at /.hucsd-rw"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results "$R$RESULTS" \
    || fail "mount 9p results at $RESULTS"
[ -d "/lower$GUEST/units" ] || fail "no $GUEST/units in the host root"

# The test's units, the masks, and where the runner finds the script and the results share.
E=$R/etc/systemd/system
mkdir -p "$E"
cp "/lower$GUEST"/units/* "$E/" || fail "copy units"
n=0
while read -r unit _; do
    case "$unit" in ''|'#'*) continue ;; esac
    rm -f "$E/$unit"
    ln -s /dev/null "$E/$unit" || fail "mask $unit"
    n=$((n + 1))
done < "/lower$GUEST/masked-units"
G=$R/etc/systemd/system-generators
mkdir -p "$G"
while read -r gen _; do
    case "$gen" in ''|'#'*) continue ;; esac
    ln -sf /dev/null "$G/$gen" || fail "mask generator $gen"
    n=$((n + 1))
done < "/lower$GUEST/masked-generators"
# Where the runner finds the script (under /host) and the results share.
{
    echo "HUCVM_SCRIPT=/host$SCRIPT"
    echo "HUCVM_RESULTS=$RESULTS"
    echo "HUCVM_GUEST=/host$GUEST"
} > "$R/etc/hucvm.env"
# Own /tmp and /var/tmp, as tmpfs (not when the results share lives there: then
# systemd-tmpfiles must not empty it at boot either: Debian's tmp.conf says "D /tmp", and an
# /etc override of the same name keeps it, without cleaning).
for d in /tmp /var/tmp; do
    case "$RESULTS/" in
    "$d"/*)
        mkdir -p "$R/etc/tmpfiles.d"
        echo "d $d 1777 root root -" >> "$R/etc/tmpfiles.d/tmp.conf"
        continue ;;
    esac
    mount -t tmpfs -o mode=1777 tmpfs "$R$d" || fail "mount $d"
done
# The guest journal stays in /run (volatile): nothing to write back through the overlay.
rm -rf "$R/var/log/journal" 2>/dev/null

# API file systems go along (systemd keeps mounts it finds); the rest of the initramfs is freed.
mount --move /dev $R/dev || fail "move /dev"
mount --move /proc $R/proc || fail "move /proc"
mount --move /sys $R/sys || fail "move /sys"
cut -d' ' -f1 $R/proc/uptime > "$R$RESULTS/.hucsd-switch-uptime"
echo "HUCVM: overlay of $ROOT ready ($n units masked); switch_root to $INIT at uptime" \
     "$(cat "$R$RESULTS/.hucsd-switch-uptime")s"
# If this exec fails, PID 1 exits: kernel panic (panic=-1), qemu exits, no rc file -> failure.
exec switch_root $R "$INIT"
