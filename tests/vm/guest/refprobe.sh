# shellcheck shell=bash
# The independent reference: the kernel's own kprobe events with a hist trigger keyed on the
# kernel stack. Nothing of hucprof is involved. Source this from a guest script (bash).
#
#   ref_init                               # detect tracefs + the stack key name
#   ref_probe NAME SYMBOL "FETCHARGS" "EXTRA_KEYS" "VALS"   # define (the kernel sees nothing yet)
#   ref_probe_unstacked NAME SYMBOL "FETCHARGS" "KEYS"   # keyed on KEYS only: no stack walk
#   ref_start                              # create the probe events, arm hist triggers, enable
#   ...run a workload...
#   ref_stop TAG                           # pause, write hist-NAME-TAG.txt + kprobe_profile,
#                                          # remove triggers and probe events
#   ref_cleanup                            # remove whatever is left
#   ref_usercopy_probes                    # ref_probe for every usercopy check function (below)
#   ref_register / ref_unregister          # only create / remove the probe events (bench/vm)
#
# The kprobe events exist only between ref_start and ref_stop, never while hucprof attaches or
# detaches: a kprobe on a function's ftrace site turns a stray int3 there - which QEMU's
# multi-threaded TCG produces after text patching, see tests/vm/README.md "A NULL RIP at
# attach" - into a jump to address 0 (the kprobe handler single-steps the NULL instruction
# slot of an ftrace-based kprobe), where without it the kernel just re-executes the instruction.
#
# A probe whose symbol the kernel does not have is recorded in ref-missing.txt (not an error:
# which symbols exist differs by kernel); a hist trigger the kernel refuses is an error.
#
# A kernel without hist triggers (CONFIG_HIST_TRIGGERS off: Debian 11's 5.10) records every hit
# instead, with its stack, in a trace buffer of its own (instances/hucvm, options/stacktrace:
# the stack from the probe's registers, as a hist's stack key takes it), and ref_stop counts the
# hits into the hist files a trigger with the same keys would have written (histref.py
# from-trace): hits the buffer lost are its Dropped.

REF_T=/sys/kernel/tracing
REF_NAMES=()
REF_REGISTERED=
REF_MODE=hist
REF_INSTANCE=$REF_T/instances/hucvm
# Per CPU: 1000 UDP pairs with every sub-check probe, ~300 bytes a hit with its stack, ~30k hits.
REF_TRACE_KB=65536
REF_HISTREF=$(dirname "${BASH_SOURCE[0]}")/../histref.py
declare -A REF_TRIGGER REF_DEFINITION

ref_fail() {
    echo "refprobe: $*" >&2
    [ -r "$REF_T/error_log" ] && tail -5 "$REF_T/error_log" >&2
    exit 1
}

ref_init() {
    [ -w "$REF_T/kprobe_events" ] || ref_fail "no writable $REF_T/kprobe_events (CONFIG_KPROBE_EVENTS?)"
    : > "${HUCVM_RESULTS:-.}/ref-missing.txt"
    # Probe the stack key name on a throwaway probe: 6.1 knows only "stacktrace",
    # 6.5+ renamed it "common_stacktrace" (and keeps the old name as an alias).
    echo 'p:hucvm_keyprobe __check_object_size' >> "$REF_T/kprobe_events" \
        || ref_fail "cannot create a kprobe event on __check_object_size"
    local ev=$REF_T/events/kprobes/hucvm_keyprobe
    REF_STACKKEY=
    for key in common_stacktrace stacktrace; do
        if echo "hist:keys=$key" > "$ev/trigger" 2>/dev/null; then
            echo "!hist:keys=$key" > "$ev/trigger"
            REF_STACKKEY=$key
            break
        fi
    done
    echo '-:hucvm_keyprobe' >> "$REF_T/kprobe_events"
    if [ -z "$REF_STACKKEY" ]; then
        grep -q 'hist trigger' "$REF_T/README" \
            && ref_fail "kernel accepts neither common_stacktrace nor stacktrace as hist key"
        # No hist triggers at all: count hits from a trace buffer, keyed as stacktrace would be.
        REF_MODE=trace
        REF_STACKKEY=stacktrace
        echo "stacktrace (counted from a trace buffer: no hist triggers in this kernel)" \
            > "${HUCVM_RESULTS:-.}/ref-stackkey.txt"
        return 0
    fi
    echo "$REF_STACKKEY" > "${HUCVM_RESULTS:-.}/ref-stackkey.txt"
}

# ref_probe NAME SYMBOL FETCHARGS EXTRA_KEYS VALS
ref_probe() {
    ref_probe_keyed "$REF_STACKKEY${4:+,$4}" "$1" "$2" "$3" "$5"
}

# ref_probe_unstacked NAME SYMBOL FETCHARGS KEYS: the kprobe and a counter per KEYS, no stack
# walk (what a bare kprobe costs: bench/vm/probe_overhead.py).
ref_probe_unstacked() {
    ref_probe_keyed "$4" "$1" "$2" "$3" ""
}

# ref_probe_keyed HIST_KEYS NAME SYMBOL FETCHARGS VALS
ref_probe_keyed() {
    local hist_keys=$1 name=$2 sym=$3 args=$4 vals=$5
    if ! grep -qE "^[0-9a-f]+ [tT] $sym\$" /proc/kallsyms; then
        echo "$name $sym" >> "${HUCVM_RESULTS:-.}/ref-missing.txt"
        return 0
    fi
    REF_DEFINITION[$name]="p:$name $sym $args"
    local trig="hist:keys=$hist_keys"
    [ -n "$vals" ] && trig="$trig:vals=$vals"
    trig="$trig:size=8192"
    REF_TRIGGER[$name]=$trig
    REF_NAMES+=("$name")
}

ref_register() {
    local n
    [ -n "$REF_REGISTERED" ] && return 0
    for n in "${REF_NAMES[@]}"; do
        echo "${REF_DEFINITION[$n]}" >> "$REF_T/kprobe_events" \
            || ref_fail "kprobe '${REF_DEFINITION[$n]}' refused"
    done
    REF_REGISTERED=1
}

ref_unregister() {
    local n
    [ -n "$REF_REGISTERED" ] || return 0
    for n in "${REF_NAMES[@]}"; do
        echo "-:$n" >> "$REF_T/kprobe_events" || ref_fail "remove kprobe event $n"
    done
    REF_REGISTERED=
}

ref_start() {
    local n ev
    ref_register
    if [ "$REF_MODE" = trace ]; then
        ref_trace_start
        return
    fi
    for n in "${REF_NAMES[@]}"; do
        ev=$REF_T/events/kprobes/$n
        echo "${REF_TRIGGER[$n]}" >> "$ev/trigger" || ref_fail "hist trigger '${REF_TRIGGER[$n]}' refused for $n"
    done
    for n in "${REF_NAMES[@]}"; do
        echo 1 > "$REF_T/events/kprobes/$n/enable" || ref_fail "enable $n"
    done
}

# A hist trigger counts whenever it is attached (an event with a trigger stays soft-enabled
# whatever its enable file says), so first pause every hist, then read them: reading a live hist
# races with other CPUs and its entries need not add up to its Totals. Triggers are changed with
# >> only: opening the trigger file with O_TRUNC (>) removes every hist trigger of the event.
ref_stop() {
    local tag=$1 n ev
    if [ "$REF_MODE" = trace ]; then
        ref_trace_stop "$tag"
        return
    fi
    for n in "${REF_NAMES[@]}"; do
        echo "${REF_TRIGGER[$n]}:pause" >> "$REF_T/events/kprobes/$n/trigger" \
            || ref_fail "pause hist of $n"
    done
    for n in "${REF_NAMES[@]}"; do
        echo 0 > "$REF_T/events/kprobes/$n/enable"
    done
    for n in "${REF_NAMES[@]}"; do
        ev=$REF_T/events/kprobes/$n
        cat "$ev/hist" > "${HUCVM_RESULTS:-.}/hist-$n-$tag.txt" || ref_fail "read hist of $n"
        echo "!${REF_TRIGGER[$n]}" >> "$ev/trigger" || ref_fail "remove trigger of $n"
    done
    cat "$REF_T/kprobe_profile" > "${HUCVM_RESULTS:-.}/kprobe_profile-$tag.txt"
    ref_unregister
}

# The trace-buffer flavour of ref_start/ref_stop (REF_MODE=trace).
ref_trace_start() {
    local n
    [ -d "$REF_INSTANCE" ] || mkdir "$REF_INSTANCE" || ref_fail "cannot make $REF_INSTANCE"
    echo 0 > "$REF_INSTANCE/tracing_on"
    echo "$REF_TRACE_KB" > "$REF_INSTANCE/buffer_size_kb" || ref_fail "trace buffer size"
    echo 1 > "$REF_INSTANCE/options/stacktrace" || ref_fail "options/stacktrace"
    echo 1 > "$REF_INSTANCE/options/sym-offset" || ref_fail "options/sym-offset"
    : > "$REF_INSTANCE/trace"
    for n in "${REF_NAMES[@]}"; do
        echo 1 > "$REF_INSTANCE/events/kprobes/$n/enable" || ref_fail "enable $n"
    done
    echo 1 > "$REF_INSTANCE/tracing_on"
}

ref_trace_stop() {
    local tag=$1 n dropped=0 f v
    local out=${HUCVM_RESULTS:-.}
    echo 0 > "$REF_INSTANCE/tracing_on"
    for n in "${REF_NAMES[@]}"; do
        echo 0 > "$REF_INSTANCE/events/kprobes/$n/enable"
    done
    # Hits the buffer lost: overwritten (overrun) or never written (dropped events).
    for f in "$REF_INSTANCE"/per_cpu/cpu*/stats; do
        # shellcheck disable=SC2013  # numbers, not lines
        for v in $(sed -n 's/^\(overrun\|dropped events\): //p' "$f"); do
            dropped=$((dropped + v))
        done
    done
    cat "$REF_INSTANCE/trace" > "$out/trace-$tag.txt" || ref_fail "read the trace"
    # Give the buffer's memory back until the next workload.
    echo 4 > "$REF_INSTANCE/buffer_size_kb"
    local triggers=()
    for n in "${REF_NAMES[@]}"; do triggers+=("$n=${REF_TRIGGER[$n]}"); done
    python3 "$REF_HISTREF" from-trace "$out/trace-$tag.txt" "$dropped" "$out/hist" "${triggers[@]}" \
        || ref_fail "count the trace into hists"
    for n in "${REF_NAMES[@]}"; do mv "$out/hist-$n.txt" "$out/hist-$n-$tag.txt"; done
    cat "$REF_T/kprobe_profile" > "$out/kprobe_profile-$tag.txt"
    ref_unregister
}

ref_cleanup() {
    local n
    if [ "$REF_MODE" = trace ] && [ -d "$REF_INSTANCE" ]; then
        echo 0 > "$REF_INSTANCE/tracing_on"
        for n in "${REF_NAMES[@]}"; do
            echo 0 > "$REF_INSTANCE/events/kprobes/$n/enable" 2>/dev/null
        done
    fi
    if [ -n "$REF_REGISTERED" ]; then
        for n in "${REF_NAMES[@]}"; do
            echo 0 > "$REF_T/events/kprobes/$n/enable" 2>/dev/null
            echo "!${REF_TRIGGER[$n]}" >> "$REF_T/events/kprobes/$n/trigger" 2>/dev/null
            echo "-:$n" >> "$REF_T/kprobe_events"
        done
    fi
    REF_REGISTERED=
    REF_NAMES=()
    [ "$REF_MODE" = trace ] && rmdir "$REF_INSTANCE" 2>/dev/null
    return 0
}

# The reference probes of the VM tier: the check entry point and every sub-check function, each
# keyed on the stack (names: histref / vm_tier.PROBES), and the check entry point keyed on the
# thread (upid).
ref_usercopy_probes() {
    # __check_object_size(const void *ptr, unsigned long n, bool to_user)
    ref_probe ucheck __check_object_size 'n=%si:u64 to_user=%dx:u8' to_user n
    # __check_heap_object(const void *ptr, unsigned long n, const struct slab *slab, bool to_user)
    ref_probe uheap __check_heap_object 'n=%si:u64 to_user=%cx:u8' to_user n
    # The same calls keyed by thread instead of stack: what one workload's task ran
    # (--probe.workloads, vm_tier_checks.workload_rows).
    ref_probe_keyed common_pid upid __check_object_size 'n=%si:u64' n
    # check_stack_object(const void *obj, unsigned long len) -> int
    ref_probe ustack check_stack_object 'n=%si:u64' '' n
    # find_vmap_area(unsigned long addr): the vmalloc branch of check_heap_object
    ref_probe uvmap find_vmap_area '' '' ''
    # __virt_addr_valid(unsigned long x): behind virt_addr_valid() in check_heap_object
    ref_probe upage __virt_addr_valid '' '' ''
}

# The reference of a followed command (guest/follow_record.py): __check_object_size's calls keyed
# by stack and thread, so the host can keep the command's threads alone and fold their stacks to
# call sites. `hucprof record` attaches and detaches while this probe is armed, so it is not at
# the function's entry (an ftrace-based kprobe there turns a stray int3 of the attach's text
# patching into a jump to 0: "A NULL RIP at attach", tests/vm/README.md) but at the first
# instruction after the ftrace site (+0, or +4 behind IBT's endbr64) that the kernel lets a kprobe
# have: it refuses an offset inside an instruction and one in a jump label's site (6.1 tests
# bypass_usercopy_checks right after the ftrace site; with the checks on it falls through, so
# every call runs what follows). Armed alone, after ref_cleanup: a second stack-keyed hist on
# every check would slow the sessions' workloads.
# Not optimized into a jump either (6.1 did, at +10): an optprobe's stack starts at
# opt_pre_handler without the probed function's frame, and the folding needs it.
ref_follow_probe() {
    local sym=__check_object_size off
    local opt=/proc/sys/debug/kprobes-optimization
    [ -w "$opt" ] && echo 0 > "$opt"
    for off in $(seq 5 24); do
        if echo "p:hucvm_offprobe $sym+$off" >> "$REF_T/kprobe_events" 2>/dev/null; then
            echo '-:hucvm_offprobe' >> "$REF_T/kprobe_events"
            REF_DEFINITION[ufollow]="p:ufollow $sym+$off"
            REF_TRIGGER[ufollow]="hist:keys=$REF_STACKKEY,common_pid:size=8192"
            REF_NAMES+=(ufollow)
            echo "$sym+$off" > "${HUCVM_RESULTS:-.}/ref-follow-at.txt"
            return 0
        fi
    done
    ref_fail "no kprobe inside $sym after its ftrace site (tried +5 to +24)"
}
