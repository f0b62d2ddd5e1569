#!/bin/sh
# /init of the arm64 guest (busybox sh, PID 1; tests/vm/arm64/run-guest.sh builds the initramfs).
# Everything goes to the console between HUCARM64-BEGIN and HUCARM64-END; the verdict is the
# line "HUCARM64-RESULT pass|fail ...". Then power off.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
. /hucvm.env
echo "HUCARM64-BEGIN kernel $(uname -r) $(uname -m)"
fail() { echo "HUCARM64-RESULT fail $*"; echo HUCARM64-END; poweroff -f; }
for m in $(cat /modules/order); do insmod "/modules/$m" || fail "insmod $m"; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /mnt/host \
    || fail "mount 9p hostroot"
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t bpf bpf /sys/fs/bpf 2>/dev/null
ip link set lo up

S=/mnt/host$BUILD/sysroot
# exec: started with & this runs in a subshell, whose pid must be hucprof's own (SIGTERM).
hucprof() {
    exec "$S/lib/ld-linux-aarch64.so.1" --library-path "$S/usr/lib/aarch64-linux-gnu" \
        "/mnt/host$BUILD/daemon/hucprof" "$@"
}
scrape() { wget -q -O "$1" http://127.0.0.1:9478/metrics; }
# The udp_recvmsg/recvfrom/to_user row of a scrape (0 when absent).
row() {
    awk '/^usercopy_checks_total\{/ && /callsite="udp_recvmsg"/ && /syscall="recvfrom"/ &&
         /direction="to_user"/ { v = $NF } END { print v + 0 }' "$1"
}

echo "== hucprof version"; (hucprof version) || fail "hucprof version"
echo "== hucprof doctor"; (hucprof doctor); echo "doctor rc=$?"

T=/sys/kernel/tracing
verdict=pass
for flavour in fentry kprobe; do
    echo "== probe mode, --probe.attach $flavour, $N UDP pairs of $PAYLOAD bytes"
    (hucprof run --mode probe --probe.attach "$flavour" --interval 1s \
        --web.listen-address 127.0.0.1:9478 >/tmp/run.log 2>&1) &
    pid=$!
    up=
    for _ in $(seq 1 120); do
        if scrape /tmp/m0 2>/dev/null; then up=1; break; fi
        kill -0 $pid 2>/dev/null || break
        sleep 1
    done
    if [ -z "$up" ]; then
        # Not a failure by itself (6.1 arm64 has no BPF trampolines for kernel functions):
        # hucprof must say why in words, which the log shows; doctor above says the same.
        echo "ROW $flavour not served; hucprof said:"; cat /tmp/run.log
        kill $pid 2>/dev/null; wait $pid 2>/dev/null
        continue
    fi
    grep -E "attached|not attached|probe" /tmp/run.log | head -20
    # The kernel's own count for the same window: a kprobe event on __check_object_size (arm64
    # registers: x1 = n, x2 = to_user) filtered to udp_pairs' 64-byte copies to user space, which
    # are exactly its recvfrom() payloads (the address copy is 16 bytes). Not keyed on the stack
    # as on x86: arm64's hist stacktrace (16 frames) spends 8 on the kprobe's own exception entry.
    echo 'p:hucarm64 __check_object_size n=%x1:u64 to_user=%x2:u8' >>$T/kprobe_events ||
        echo "-- kprobe event refused"
    E=$T/events/kprobes/hucarm64
    # A trigger runs whenever the kprobe fires (it soft-enables the event); its own filter keeps
    # only udp_pairs' payload copies, so it is armed right before the workload and read after.
    TRIG="hist:keys=to_user:vals=n if to_user == 1 && n == $PAYLOAD && comm == \"udp_pairs\""
    sleep 2; scrape /tmp/m1
    echo "$TRIG" >$E/trigger || echo "-- hist trigger refused"
    udp_pairs "$N" "$PAYLOAD" || verdict="fail(udp_pairs)"
    sleep 3; scrape /tmp/m2
    ref=$(awk '/hitcount:/ { for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1) }
               END { print s + 0 }' $E/hist)
    if [ "$ref" -ne "$N" ]; then
        echo "-- reference hist and tracing error log:"; cat $E/hist; tail -5 $T/error_log 2>/dev/null
    fi
    echo "!$TRIG" >>$E/trigger
    echo '-:hucarm64' >>$T/kprobe_events
    before=$(row /tmp/m1); after=$(row /tmp/m2)
    rise=$((after - before))
    echo "ROW $flavour usercopy_checks_total{udp_recvmsg,recvfrom,to_user} rise=$rise expected=$N kernel_kprobe_hist=$ref"
    [ "$rise" -eq "$N" ] && [ "$ref" -eq "$N" ] || verdict=fail
    grep -E '^usercopy_checks_total\{.*(udp_|recvfrom|sendto)' /tmp/m2
    grep -E '^hucprof_(probe|drops|helper)' /tmp/m2 | head -12
    kill -TERM $pid; wait $pid; rc=$?
    echo "run exit $rc"
    [ "$rc" -eq 0 ] || verdict=fail
done
echo "HUCARM64-RESULT $verdict"
echo HUCARM64-END
poweroff -f
