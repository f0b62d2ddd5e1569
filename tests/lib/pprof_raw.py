"""Google's `pprof -raw` output, parsed: what pprof itself made of a profile (stdlib only).

The text is pprof's Profile.String() (github.com/google/pprof/profile/profile.go): a location is

    ID: ADDRESS [M=MAPPING ][[F] ]NAME FILE:LINE s=START_LINE[(SYSTEM_NAME)]

with one more line per further Line entry, indented by 13 spaces, holding the rest of that form:
profile.proto's Location.line lists a location's functions innermost first, the last one the
function the address is in and the others inlined into it. A location without lines prints its
ID and address only. A name may hold spaces ("[user CPU]"), a file name here holds none; so a
line is read from its end."""

import re
import subprocess

_LOCATION = re.compile(r"^\s*(\d+): (0x[0-9a-f]+) (?:M=\d+ )?(?:\[F\] )?(.*)$")
_CONTINUATION = " " * 13
_LINE = re.compile(r"^(.*) (\S*):(-?\d+) s=-?\d+(?:\(.*\))?$")
_SAMPLE = re.compile(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$")
# A value may hold brackets itself (workload:[[unknown]]): it ends at the "]" before the next
# label or the end of the line.
_LABELS = re.compile(r"(\w+):\[(.*?)\](?=\s+\w+:\[|\s*$)")


class Sample:
    def __init__(self, values, frames, labels, lines=None):
        self.values = values  # one per sample type
        # [(address as pprof has it, function)], leaf first; an inlined function's address is
        # None (it is its location's, given with the location's innermost function)
        self.frames = frames
        self.labels = labels
        self.lines = lines or []  # [(function, file, line)] for the same frames

    @property
    def names(self):
        return [name for _, name in self.frames]


def parse_line(text):
    """(function, file, line) of one Line entry as pprof prints it."""
    m = _LINE.match(text)
    if not m:
        raise ValueError("pprof -raw: a location line not understood: %r" % text)
    return (m.group(1), m.group(2), int(m.group(3)))


def parse(text):
    """(sample type names, [Sample]) of `pprof -raw` output."""
    types, raw_samples, locations = [], [], {}
    section = None
    current = None  # the location whose lines are being read
    for line in text.splitlines():
        if line.startswith("Samples:"):
            section = "samples"
            continue
        if line.startswith("Locations"):
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = None
            continue
        if section == "samples":
            if not types:
                types = [t.replace("[dflt]", "") for t in line.split()]
                continue
            m = _SAMPLE.match(line)
            if m:
                raw_samples.append([[int(v) for v in m.group(1).split()],
                                    [int(i) for i in m.group(2).split()], {}])
            elif raw_samples:
                raw_samples[-1][2].update(_LABELS.findall(line))
        elif section == "locations":
            if line.startswith(_CONTINUATION) and current is not None and line.strip():
                current[1].append(parse_line(line[len(_CONTINUATION):].rstrip()))
                continue
            m = _LOCATION.match(line)
            if not m:
                raise ValueError("pprof -raw: a location not understood: %r" % line)
            rest = m.group(3).rstrip()
            current = (int(m.group(2), 16), [parse_line(rest)] if rest else [])
            locations[int(m.group(1))] = current
    samples = []
    for values, ids, labels in raw_samples:
        frames, lines = [], []
        for i in ids:
            if i not in locations:
                raise ValueError("pprof -raw: a sample refers to location %d, which it does not "
                                 "list" % i)
            address, entries = locations[i]
            for k, entry in enumerate(entries or [("", "", 0)]):
                frames.append((address if k == 0 else None, entry[0]))
                lines.append(entry)
        samples.append(Sample(values, frames, labels, lines))
    return types, samples


def read(pprof, path, *args):
    """(sample type names, [Sample]) of `pprof -raw [args] path`."""
    text = subprocess.run([pprof, "-raw"] + list(args) + [path], capture_output=True, text=True,
                          check=True, timeout=120).stdout
    return parse(text)
