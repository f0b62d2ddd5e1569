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
# A failed check: the verdict fails and a "FAIL:" line says which (CI's digest of a red run
# collects those lines, not the whole console). fail: one the guest cannot go on after.
verdict=pass
failed() { verdict="fail"; echo "FAIL: arm64 guest $(uname -r): $*"; }
fail() { failed "$*"; echo "HUCARM64-RESULT fail $*"; echo HUCARM64-END; poweroff -f; }
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
# Every doctor and run names its kernel debuginfo (tests/vm/test_hermetic.py checks this file):
# none, but where run-guest.sh --debuginfo gives the unpacked -dbg package (below).
nodbg="--debuginfo.path none"
echo "== hucprof doctor"; (hucprof doctor $nodbg) >/tmp/doctor-auto.txt 2>&1; echo "doctor rc=$?"
cat /tmp/doctor-auto.txt
# The kernel config where the package installs it (run-guest.sh put it there): doctor reads it.
[ "$(awk -v want="$KCONFIG" '$1 == "kernel" && $2 == "config" { print ($3 == "yes" && $4 == want) }' \
      /tmp/doctor-auto.txt)" = 1 ] ||
    failed "doctor did not read the kernel config at $KCONFIG"
echo "ROW config $(grep '^  kernel config' /tmp/doctor-auto.txt) (expected yes $KCONFIG)"
# 6.15 moved the checks-off test into check_object_size() (include/linux/ucopysize.h).
case $(uname -r) in
    [0-5].*|6.[0-9].*|6.1[0-4].*) entered="still enters" ;;
    *) entered="does not enter" ;;
esac

T=/sys/kernel/tracing
# With the kernel's debuginfo (run-guest.sh --debuginfo: the unpacked -dbg package on the host,
# a writable share for the results): the first probe run and the sample run resolve their stacks
# with it and save their profiles there for the host to compare with addr2line.
dbg=$nodbg dbgargs=$nodbg
if [ -n "${DBG:-}" ]; then
    mkdir -p /mnt/results
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 results /mnt/results ||
        fail "mount 9p results"
    dbgargs="--debuginfo.path /mnt/host$DBG"
    dbg=$dbgargs  # until a probe run was served with it
    echo "== hucprof doctor --mode probe $dbg"
    (hucprof doctor --mode probe $dbg) >/mnt/results/doctor.txt 2>&1
    grep -E '^ *(vmlinux|modules) ' /mnt/results/doctor.txt
fi
metric() { awk -v name="$1" '$1 == name { v = $NF } END { print v + 0 }' "$2"; }
# After a workload: once the daemon drained twice more and no stack waits for its lines (the
# copy series have caught up with the checks), /debug/pprof/usercopy as $1-profile.pb.gz and a
# scrape as $1-after.txt. Not insisting on one drain for both: the host compares the profile
# with addr2line and the scrape with the workload, and under TCG on a loaded machine a drain
# often comes between two requests.
save_profile() {
    settled_scrape /tmp/d0 held
    wget -q -O "/mnt/results/$1-profile.pb.gz" http://127.0.0.1:9478/debug/pprof/usercopy ||
        failed "$1: GET /debug/pprof/usercopy"
    cp /tmp/d0 "/mnt/results/$1-after.txt"
    echo "-- $1: profile saved"
}
# Scrapes into $1 once the daemon has drained twice after now, so that a workload that just
# ended is in the scrape however slowly this guest runs: a fixed 3 s was not enough for the
# first drains of a probe session with debuginfo under TCG beside other work (68 of 1000 checks).
# With $2 = held, also once no stack waits for its debuginfo lines. After 120 s without, fails
# the run: for held, only if stacks still wait (the profile is saved all the same).
settled_scrape() {
    scrape "$1"; target=$(($(metric hucprof_drains_total "$1") + 2))
    for _ in $(seq 1 120); do
        [ "$(metric hucprof_drains_total "$1")" -ge "$target" ] &&
            { [ "${2:-}" != held ] || [ "$(metric hucprof_debuginfo_held_stacks "$1")" = 0 ]; } &&
            return 0
        sleep 1; scrape "$1"
    done
    if [ "${2:-}" = held ]; then
        held=$(metric hucprof_debuginfo_held_stacks "$1")
        [ "$held" = 0 ] ||
            failed "$1: $held stacks still wait for their debuginfo lines after 120 s"
    else
        failed "$1: the daemon did not drain twice within 120 s"
    fi
}
# Starts `hucprof run ARGS...` in the background ($pid) and waits until it serves /metrics.
start_run() {
    (hucprof run "$@" --interval 1s --web.listen-address 127.0.0.1:9478 >/tmp/run.log 2>&1) &
    pid=$!
    for _ in $(seq 1 120); do
        scrape /tmp/m0 2>/dev/null && return 0
        kill -0 $pid 2>/dev/null || break
        sleep 1
    done
    return 1
}
stop_run() {
    kill -TERM $pid; wait $pid; rc=$?
    echo "run exit $rc"
    [ "$rc" -eq 0 ] || failed "run exit $rc"
}
# The rise of every call site's value of metric $1 between scrapes $2 and $3, "site value" per
# line, largest first; only series matching the regex $4 when given.
rises() {
    awk -v name="$1" -v later="$3" -v only="${4:-}" '
        index($0, name "{") == 1 && $0 ~ only && match($0, /callsite="[^"]*"/) {
            site = substr($0, RSTART + 10, RLENGTH - 11)
            v[site] += (FILENAME == later ? $NF : -$NF)
        }
        END { for (s in v) if (v[s] > 0) print s, v[s] }' "$2" "$3" | sort -k2 -rn
}

if grep -qw hardened_usercopy=off /proc/cmdline; then
    # The checks are switched off at boot: hucprof must say so and count nothing, and doctor
    # what the kernel still runs of a check (before 6.15 __check_object_size is entered and
    # returns at its static key, since 6.15 it is not entered at all).
    echo "== hardened_usercopy=off: hucprof doctor --mode probe"
    (hucprof doctor --mode probe $nodbg) >/tmp/doctor.txt 2>&1; cat /tmp/doctor.txt
    grep -q "checks are off" /tmp/doctor.txt || failed "doctor does not say the checks are off"
    grep -q "$entered __check_object_size" /tmp/doctor.txt ||
        failed "doctor does not say the kernel $entered __check_object_size"
    if start_run --mode probe $nodbg; then
        udp_pairs "$N" "$PAYLOAD" || failed "udp_pairs"
        settled_scrape /tmp/m2
        enabled=$(awk '/^usercopy_hardened_enabled / { print $NF }' /tmp/m2)
        attached=$(awk '/^hucprof_probe_attached\{/ && /target="__check_object_size"/ { s += $NF }
                        END { print s + 0 }' /tmp/m2)
        checks=$(awk '/^usercopy_checks_total\{/ { s += $NF } END { print s + 0 }' /tmp/m2)
        echo "ROW off usercopy_hardened_enabled=$enabled (0) probe_attached=$attached (0) usercopy_checks_total=$checks (0)"
        [ "$enabled" = 0 ] && [ "$attached" = 0 ] && [ "$checks" = 0 ] ||
            failed "checks off: enabled=$enabled attached=$attached checks=$checks, all must be 0"
        stop_run
    else
        echo "ROW off not served; hucprof said:"; cat /tmp/run.log; failed "checks off: /metrics not served"
    fi
    echo "HUCARM64-RESULT $verdict"
    echo HUCARM64-END
    poweroff -f
fi

# doctor on arm64: the checks are on, and `run` will run with probes (fentry where the kernel has
# BPF trampolines for kernel functions, else kprobe) and sampling.
grep -Eq '^ *hardened usercopy +yes' /tmp/doctor-auto.txt || failed "doctor: hardened usercopy not yes"
grep -Eq '^verdict: .* will run: sampling on, probes on \((fentry|kprobe)\), sub-checks probed$' /tmp/doctor-auto.txt ||
    failed "doctor verdict"
echo "ROW doctor $(grep '^verdict:' /tmp/doctor-auto.txt)"

for flavour in fentry kprobe; do
    echo "== probe mode, --probe.attach $flavour, $N UDP pairs of $PAYLOAD bytes${dbg:+, $dbg}"
    if ! start_run --mode probe --probe.attach "$flavour" $dbg; then
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
    udp_pairs "$N" "$PAYLOAD" || failed "udp_pairs"
    settled_scrape /tmp/m2
    ref=$(awk '/hitcount:/ { for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1) }
               END { print s + 0 }' $E/hist)
    if [ "$ref" -ne "$N" ]; then
        echo "-- reference hist and tracing error log:"; cat $E/hist; tail -5 $T/error_log 2>/dev/null
    fi
    echo "!$TRIG" >>$E/trigger
    echo '-:hucarm64' >>$T/kprobe_events
    if [ "$dbg" != "$nodbg" ]; then
        cp /tmp/m1 /mnt/results/probe-before.txt
        save_profile probe
        echo "$flavour" >/mnt/results/probe-flavour
    fi
    before=$(row /tmp/m1); after=$(row /tmp/m2)
    rise=$((after - before))
    echo "ROW $flavour usercopy_checks_total{udp_recvmsg,recvfrom,to_user} rise=$rise expected=$N kernel_kprobe_hist=$ref"
    [ "$rise" -eq "$N" ] && [ "$ref" -eq "$N" ] ||
        failed "$flavour: udp_recvmsg rise $rise, kernel hist $ref, both must be $N"
    grep -E '^usercopy_checks_total\{.*(udp_|recvfrom|sendto)' /tmp/m2
    grep -E '^hucprof_(probe|drops|helper)' /tmp/m2 | head -12
    # The netlink vmalloc path (seed 001): 64 KiB unicast messages get a vmalloc'ed skb head on
    # 6.1; 6.12 kvmallocs them (page allocator), so 6 MiB ones (> KMALLOC_MAX_SIZE) are added
    # there. The kernel's own count: find_vmap_area calls by netlink_self from the check, against
    # the rise of hucprof's vmalloc sub-checks at netlink call sites. At a kprobe on a function's
    # entry arm64's unwinder skips the immediate caller (it is only in the link register), so
    # the frame after find_vmap_area is the check's caller: netlink_sendmsg (copy-in) or
    # simple_copy_to_iter (copy-out); vfree's find_vmap_area shows __vunmap there instead.
    echo 'p:hucvmap find_vmap_area' >>$T/kprobe_events || echo "-- kprobe event refused"
    V=$T/events/kprobes/hucvmap
    VTRIG='hist:keys=stacktrace if comm == "netlink_self"'
    scrape /tmp/n1
    echo "$VTRIG" >$V/trigger || echo "-- hist trigger refused"
    netlink_self 100 65536 || failed "netlink_self"
    case $(uname -r) in 6.1.*) ;; *) netlink_self 3 6291456 || failed "netlink_self" ;; esac
    settled_scrape /tmp/n2
    vref=$(awk '/stacktrace:/ { from_check = 0; next_is_caller = 0 }
                next_is_caller { from_check = $1 ~ /^(netlink_sendmsg|simple_copy_to_iter)\+/
                                 next_is_caller = 0 }
                $1 ~ /^find_vmap_area\+0x0\// { next_is_caller = 1 }
                /hitcount:/ && from_check {
                    for (i = 1; i < NF; i++) if ($i == "hitcount:") s += $(i + 1) }
                END { print s + 0 }' $V/hist)
    vrise=$(rises usercopy_subchecks_total /tmp/n1 /tmp/n2 'step="vmap_area"' |
            awk '$1 ~ /^netlink_/ { s += $2 } END { print s + 0 }')
    [ "$vref" -eq "$vrise" ] || { echo "-- find_vmap_area hist:"; head -80 $V/hist; }
    echo "!$VTRIG" >>$V/trigger
    echo '-:hucvmap' >>$T/kprobe_events
    echo "ROW $flavour usercopy_subchecks_total{netlink_*,vmalloc} rise=$vrise kernel_find_vmap_area_from_check=$vref"
    [ "$vrise" -eq "$vref" ] && [ "$vref" -gt 0 ] ||
        failed "$flavour: netlink vmalloc sub-checks rise $vrise, kernel find_vmap_area $vref (> 0)"
    # The workload's call sites (its syscalls; hucprof's own drains, __sys_bpf, are in the
    # window too) by bytes checked, for the sampling check below.
    rises usercopy_check_bytes_total /tmp/m1 /tmp/m2 'syscall="(sendto|recvfrom)"' >/tmp/probe-bytes
    # Every copy of the workload's syscalls is named: "[truncated]" means probe mode lost the
    # call site (a copy helper's range not handed to BPF, a walk that ended inside the helpers).
    lost=$(awk '$1 == "[truncated]" { print $2 }' /tmp/probe-bytes)
    echo "ROW $flavour sendto/recvfrom bytes at [truncated]=${lost:-0} (0)"
    [ -z "$lost" ] || failed "$flavour: $lost bytes of sendto/recvfrom copies at callsite [truncated]"
    stop_run
    dbg=$nodbg
done

# Sampling: over a longer run of pairs, the check's CPU samples must name a UDP call site on top,
# and the two call sites probe mode saw copy the most bytes (the payload copies, udp_sendmsg's
# and udp_recvmsg's) must hold more than half of them, as tests/vm/vm_tier.py asserts on x86.
# Not "the same top call site": a check's cost per call differs between the two (by kernel and
# by run), and their bytes tie. 200x the probe runs' pairs: with QEMU's fast pointer
# authentication (run-guest.sh) 20x gave 21 samples in the checks, too few to judge a share.
SN=$((N * ${SAMPLE_FACTOR:-200}))
echo "== sample mode, 999 Hz, $SN UDP pairs${dbgargs:+, $dbgargs}"
if start_run --mode sample --sample-frequency 999 $dbgargs; then
    sleep 2; scrape /tmp/s1
    udp_pairs "$SN" "$PAYLOAD" || failed "udp_pairs"
    settled_scrape /tmp/s2
    [ "$dbgargs" = "$nodbg" ] || save_profile sample
    rises usercopy_cpu_samples_total /tmp/s1 /tmp/s2 >/tmp/sample-top
    echo "-- samples per call site:"; head -5 /tmp/sample-top
    echo "-- probe mode's bytes checked per call site:"; head -3 /tmp/probe-bytes
    stop_run
    top=$(awk 'NR == 1 { print $1 }' /tmp/sample-top)
    total=$(awk '{ s += $2 } END { print s + 0 }' /tmp/sample-top)
    payload=$(awk 'NR <= 2 { printf "%s%s", (NR > 1 ? " " : ""), $1 }' /tmp/probe-bytes)
    in_payload=$(awk -v sites=" $payload " 'index(sites, " " $1 " ") { s += $2 } END { print s + 0 }' \
        /tmp/sample-top)
    echo "ROW sample top=$top samples_in_checks=$total (>= 20) probe_payload_sites=($payload)" \
        "their_samples=$in_payload (> half)"
    case $top in udp_sendmsg|udp_recvmsg) ;; *) failed "sample top $top" ;; esac
    [ "$total" -ge 20 ] || failed "sample: $total samples in the checks (>= 20)"
    [ $((2 * in_payload)) -gt "$total" ] ||
        failed "sample: probe mode's payload call sites ($payload) hold $in_payload of $total samples (> half)"
else
    echo "ROW sample not served; hucprof said:"; cat /tmp/run.log; failed "sample: /metrics not served"
fi
echo "HUCARM64-RESULT $verdict"
echo HUCARM64-END
poweroff -f
