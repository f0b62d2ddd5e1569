#!/bin/sh
# /init of the accelerator probe's initramfs (tests/vm/accel.py, qemu_run.probe_kvm_boot): getting
# here and printing the marker proves a guest boots under the accelerator being probed.

# busybox applets, PATH, fail(), /proc /sys /dev (tests/vm/guest/preamble.sh)
. /lib/hucvm-preamble.sh

echo "HUCVM-ACCEL-PROBE-OK"
poweroff -f
sleep 5
