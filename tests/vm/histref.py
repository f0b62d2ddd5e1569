"""Parse the kernel's hist-trigger output for kprobe events keyed on the kernel stack.

Input looks like (6.1 says `stacktrace`, 6.5+ `common_stacktrace`; extra keys follow the stack):

    { stacktrace:
             kprobe_ftrace_handler+0x10b/0x1b0
             0xffffffffc041a0c8
             __check_object_size+0x5/0x220
             udp_recvmsg+0x33e/0x550
             ...
    , to_user:          1} hitcount:       1000  n:      64000
    ...
    Totals:
        Hits: 4064
        Entries: 16
        Dropped: 0

The first frames belong to the kprobe machinery (handler, an unnamed trampoline address, then the
probed function itself at a small offset); `Entry.callers` drops them so frame 0 is the probed
function's caller. Raw addresses are never kept (KASLR). Python 3 standard library only.

Kernels built without CONFIG_HIST_TRIGGERS (Debian 11's 5.10) have no hist files: there the
reference records every hit with its stack in a trace buffer (options/stacktrace), and
`hist_texts_from_trace` counts those hits into the very text a hist trigger with the same keys
would have printed, so everything downstream reads one format. Run as a script (in the guest,
by refprobe.sh):

    histref.py from-trace TRACE DROPPED OUT_PREFIX NAME=TRIGGER...

writes OUT_PREFIX-NAME.txt per probe.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

_FRAME = re.compile(r"^\s+(?P<name>[A-Za-z_.$][\w.$]*)\+0x(?P<off>[0-9a-f]+)/0x(?P<size>[0-9a-f]+)"
                    r"(?:\s+\[(?P<module>[\w-]+)\])?\s*$")
_ADDR = re.compile(r"^\s+(?:0x)?[0-9a-f]{8,16}\s*$")
_FIELD = re.compile(r"(\w+):\s*(-?\d+)")
_SUFFIX = re.compile(r"(\.(?:part|isra|constprop|cold|lto_priv|llvm)(?:\.\d+)?)+$")


@dataclasses.dataclass(frozen=True)
class Frame:
    name: str | None          # None for an unsymbolized address (kept as a placeholder only)
    offset: int = 0
    size: int = 0
    module: str | None = None

    @property
    def base(self) -> str | None:
        """Name without compiler suffixes (.isra.0, .constprop.0, .part.0, .cold)."""
        return _SUFFIX.sub("", self.name) if self.name else None

    def __str__(self):
        if self.name is None:
            return "?"
        s = f"{self.name}+0x{self.offset:x}/0x{self.size:x}"
        return s + (f" [{self.module}]" if self.module else "")


@dataclasses.dataclass
class Entry:
    stack: list[Frame]        # innermost first, as printed
    keys: dict[str, int]      # other keys, e.g. {"to_user": 1}
    hitcount: int
    vals: dict[str, int]      # e.g. {"n": 64000}

    def callers(self, probed: str) -> list[Frame]:
        """Frames above the probed function (innermost first). If the probed function is not
        in the stack (should not happen), only the kprobe trampoline frames are dropped."""
        for i, f in enumerate(self.stack):
            if f.base == probed:
                return self.stack[i + 1:]
        return [f for f in self.stack if f.name and not f.name.startswith("kprobe_")]

    def contains(self, name: str, probed: str | None = None) -> bool:
        frames = self.callers(probed) if probed else self.stack
        return any(f.base == name for f in frames)


@dataclasses.dataclass
class Hist:
    key_name: str             # "stacktrace" or "common_stacktrace"
    trigger: str
    entries: list[Entry]
    totals: dict[str, int]    # Hits, Entries, Dropped

    def select(self, *, contains=(), probed: str | None = None, caller: str | None = None,
               **keys) -> list[Entry]:
        """Entries whose stack (above `probed`, if given) has every function in `contains`,
        whose immediate caller of `probed` is `caller` (if given), and whose extra keys match."""
        out = []
        for e in self.entries:
            if caller is not None:
                above = e.callers(probed) if probed else e.stack
                if not above or above[0].base != caller:
                    continue
            if all(e.contains(c, probed) for c in contains) and \
               all(e.keys.get(k) == v for k, v in keys.items()):
                out.append(e)
        return out

    def sum(self, field: str = "hitcount", **sel) -> int:
        es = self.select(**sel)
        return sum(e.hitcount if field == "hitcount" else e.vals.get(field, 0) for e in es)


class HistParseError(ValueError):
    pass


def parse(text: str) -> Hist:
    entries: list[Entry] = []
    totals: dict[str, int] = {}
    trigger = ""
    key_name = ""
    stack: list[Frame] | None = None
    in_totals = False
    for ln, line in enumerate(text.splitlines(), 1):
        if line.startswith("# trigger info:"):
            trigger = line.split(":", 1)[1].strip()
            continue
        if line.startswith("#") or not line.strip():
            continue
        if line.startswith("Totals:"):
            in_totals = True
            continue
        if in_totals:
            m = re.match(r"\s+(\w+):\s*(\d+)", line)
            if m:
                totals[m.group(1)] = int(m.group(2))
            continue
        m = re.match(r"^\{ (\w+):\s*$", line)
        if m:
            if stack is not None:
                raise HistParseError(f"line {ln}: new entry inside an entry")
            key_name = m.group(1)
            stack = []
            continue
        if stack is not None and (line.startswith(",") or line.startswith("}")):
            # end of the stack: ", to_user:   1} hitcount: 5  n: 320"  or  "} hitcount: 5"
            if "}" not in line:
                raise HistParseError(f"line {ln}: unterminated key: {line!r}")
            keypart, valpart = line.split("}", 1)
            keys = {k: int(v) for k, v in _FIELD.findall(keypart)}
            vals = {k: int(v) for k, v in _FIELD.findall(valpart)}
            if "hitcount" not in vals:
                raise HistParseError(f"line {ln}: no hitcount: {line!r}")
            hit = vals.pop("hitcount")
            entries.append(Entry(stack=stack, keys=keys, hitcount=hit, vals=vals))
            stack = None
            continue
        if stack is not None:
            fm = _FRAME.match(line)
            if fm:
                stack.append(Frame(fm.group("name"), int(fm.group("off"), 16),
                                   int(fm.group("size"), 16), fm.group("module")))
                continue
            if _ADDR.match(line):
                stack.append(Frame(None))
                continue
            raise HistParseError(f"line {ln}: not a stack frame: {line!r}")
        raise HistParseError(f"line {ln}: unexpected: {line!r}")
    if stack is not None:
        raise HistParseError("input ends inside an entry")
    if "Hits" not in totals:
        raise HistParseError("no Totals section (truncated hist?)")
    if totals.get("Entries") != len(entries):
        raise HistParseError(f"Totals say {totals.get('Entries')} entries, parsed {len(entries)}")
    if totals.get("Dropped", 0) == 0 and sum(e.hitcount for e in entries) != totals["Hits"]:
        raise HistParseError("hitcounts do not add up to Totals: Hits")
    return Hist(key_name=key_name, trigger=trigger, entries=entries, totals=totals)


def parse_file(path: Path) -> Hist:
    try:
        return parse(Path(path).read_text())
    except HistParseError as e:
        raise HistParseError(f"{path}: {e}") from None


def fold_input(h: Hist, probed: str, callers_in: set[str] | frozenset[str] | None = None,
               direction_key: str | None = None) -> list[str]:
    """Input lines for hucvm_fold (tests/vm/fold_tool.cpp): `COUNT BYTES DIRECTION FRAMES`, frames
    leaf first from the probed function's immediate caller, exact names, `[unknown]` for an
    address. `callers_in`: keep only entries whose immediate caller (suffix-normalised) is one of
    these (a sub-check counts only when called from the check dispatcher, as in hucprof's BPF).
    `direction_key`: the extra key holding to_user (1) / from_user (0); without it, `-`."""
    out = []
    for e in h.entries:
        callers = e.callers(probed)
        if callers_in is not None and (not callers or callers[0].base not in callers_in):
            continue
        frames = ";".join(f.name or "[unknown]" for f in callers) or "[unknown]"
        if direction_key is None:
            direction = "-"
        else:
            direction = "to_user" if e.keys.get(direction_key) else "from_user"
        out.append(f"{e.hitcount} {e.vals.get('n', 0)} {direction} {frames}")
    return out


# One event of a kprobe trace with its stack (options/stacktrace, options/sym-offset), 5.10's
# format:
#        udp_pairs-215     [001] d...   123.456789: ucheck: (__check_object_size+0x0/0x1b0) n=64 to_user=1
#        udp_pairs-215     [001] d...   123.456790: <stack trace>
#  => __check_object_size+0x0/0x1b0
#  => udp_recvmsg+0x33e/0x550
# The buffers of all CPUs are read merged by time, so another CPU's event can come between an
# event and its stack: a stack belongs to the last event of its own CPU.
_TRACE_EVENT = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+[\d.]+: "
                          r"(?P<event>\w+): \((?P<at>[^)]*)\)(?P<args>.*)$")
_TRACE_STACK = re.compile(r"^\s*.*-\d+\s+\[(?P<cpu>\d+)\]\s+\S+\s+[\d.]+: <stack trace>$")
_TRACE_FRAME = re.compile(r"^ => (?P<frame>\S+)(?:\s+\[(?P<module>[\w-]+)\])?$")
_TRACE_ARG = re.compile(r"(\w+)=(-?(?:0x)?[0-9a-f]+)")


def _trigger_fields(trigger: str) -> tuple[list[str], list[str]]:
    """(keys, vals) of `hist:keys=a,b:vals=n:size=...`."""
    keys, vals = [], []
    for part in trigger.split(":"):
        if part.startswith("keys="):
            keys = part[len("keys="):].split(",")
        elif part.startswith("vals="):
            vals = part[len("vals="):].split(",")
    return keys, vals


def hist_texts_from_trace(trace: str, triggers: dict[str, str], dropped: int = 0) -> dict[str, str]:
    """Per probe name, the hist text its trigger would have shown for the hits in `trace`. A
    stack key (stacktrace / common_stacktrace) takes the event's recorded stack, common_pid its
    pid, other keys and vals its fetched arguments. `dropped`: events the trace buffer lost."""
    fields = {name: _trigger_fields(t) for name, t in triggers.items()}
    counts: dict[str, dict[tuple, list]] = {name: {} for name in triggers}
    pending: dict[int, tuple] = {}  # per CPU: (name, pid, args) of an event whose stack comes
    stacks: dict[int, list[str]] = {}  # per CPU: that event's stack
    frames_of: list[str] | None = None  # the stack whose frames the next lines are

    def flush(cpu):
        if cpu in pending:
            name, pid, args = pending.pop(cpu)
            stack = stacks.pop(cpu, None)
            keys, vals = fields[name]
            key = []
            for k in keys:
                if k in ("stacktrace", "common_stacktrace"):
                    key.append(("stack", tuple(stack or ())))
                elif k == "common_pid":
                    key.append((k, pid))
                else:
                    key.append((k, args.get(k, 0)))
            acc = counts[name].setdefault(tuple(key), [0] + [0] * len(vals))
            acc[0] += 1
            for i, v in enumerate(vals):
                acc[i + 1] += args.get(v, 0)
        stacks.pop(cpu, None)

    for line in trace.splitlines():
        if line.startswith("#"):
            continue
        m = _TRACE_EVENT.match(line)
        if m:
            cpu = int(m.group("cpu"))
            flush(cpu)
            frames_of = None
            if m.group("event") in triggers:  # else another instance's event: not ours
                args = {k: int(v, 0) for k, v in _TRACE_ARG.findall(m.group("args"))}
                pending[cpu] = (m.group("event"), int(m.group("pid")), args)
            continue
        st = _TRACE_STACK.match(line)
        if st:
            frames_of = stacks.setdefault(int(st.group("cpu")), [])
            continue
        f = _TRACE_FRAME.match(line)
        if f and frames_of is not None:
            frames_of.append(f.group("frame")
                             + (f" [{f.group('module')}]" if f.group("module") else ""))
    for cpu in list(pending):
        flush(cpu)

    out = {}
    for name, entries in counts.items():
        keys, vals = fields[name]
        lines = [f"# event histogram\n#\n# trigger info: {triggers[name]} [active]\n#\n"]
        for key, acc in entries.items():
            head, tail = [], []
            for (k, v) in key:
                if k == "stack":
                    head.append("{ " + keys[0] + ":\n" + "".join(f"         {fr}\n" for fr in v))
                else:
                    tail.append(f"{k}: {v:>8}")
            vals_text = "".join(f"  {v}: {acc[i + 1]:>10}" for i, v in enumerate(vals))
            if head:
                lines.append(head[0] + (", " + ", ".join(tail) if tail else "")
                             + f"}} hitcount: {acc[0]:>10}{vals_text}\n")
            else:
                lines.append("{ " + ", ".join(tail) + f"}} hitcount: {acc[0]:>10}{vals_text}\n")
        hits = sum(acc[0] for acc in entries.values())
        lines.append(f"\nTotals:\n    Hits: {hits}\n    Entries: {len(entries)}\n"
                     f"    Dropped: {dropped}\n")
        out[name] = "".join(lines)
    return out


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[1] != "from-trace":
        print("usage: histref.py from-trace TRACE DROPPED OUT_PREFIX NAME=TRIGGER...")
        return 2
    trace, dropped, prefix = Path(argv[2]).read_text(errors="replace"), int(argv[3]), argv[4]
    triggers = dict(a.split("=", 1) for a in argv[5:])
    for name, text in hist_texts_from_trace(trace, triggers, dropped).items():
        Path(f"{prefix}-{name}.txt").write_text(text)
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main(sys.argv))
