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

REF_T=/sys/kernel/tracing
REF_NAMES=()
REF_REGISTERED=
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
    [ -n "$REF_STACKKEY" ] || ref_fail "kernel accepts neither common_stacktrace nor stacktrace as hist key"
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

ref_cleanup() {
    local n
    if [ -n "$REF_REGISTERED" ]; then
        for n in "${REF_NAMES[@]}"; do
            echo 0 > "$REF_T/events/kprobes/$n/enable" 2>/dev/null
            echo "!${REF_TRIGGER[$n]}" >> "$REF_T/events/kprobes/$n/trigger" 2>/dev/null
            echo "-:$n" >> "$REF_T/kprobe_events"
        done
    fi
    REF_REGISTERED=
    REF_NAMES=()
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
