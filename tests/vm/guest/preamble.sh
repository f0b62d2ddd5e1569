# Sourced first by both VM initramfs /init scripts (tests/vm/guest/init.sh and
# tests/vm/systemd/guest/init.sh); initramfs.write_initramfs puts it at /lib/hucvm-preamble.sh.
# busybox applets, fail(), and the kernel filesystems every guest needs before anything else.

/bin/busybox --install -s /bin
export PATH=/bin

# Prints HUCVM-FAIL and powers off without an rc file, which the host treats as a failure.
fail() {
    echo "HUCVM-FAIL: $*"
    sync
    poweroff -f
    sleep 5
    exit 1
}

mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev 2>/dev/null  # may already be there
