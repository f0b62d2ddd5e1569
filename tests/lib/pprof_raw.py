"""Google's `pprof -raw` output, parsed: what pprof itself made of a profile (stdlib only)."""

import re
import subprocess

_LOCATION = re.compile(r"^\s+(\d+): (0x[0-9a-f]+)(?: M=\d+)? (\S.*?) :\d+ s=\d+\s*$")
_INLINED = re.compile(r"^\s+(\S.*?) :\d+ s=\d+\s*$")
_SAMPLE = re.compile(r"^\s*(-?\d+(?:\s+-?\d+)*):((?:\s+\d+)*)\s*$")
_LABELS = re.compile(r"(\w+):\[([^\]]*)\]")


class Sample:
    def __init__(self, values, frames, labels):
        self.values = values  # one per sample type
        self.frames = frames  # [(address as pprof has it, function)], leaf first
        self.labels = labels

    @property
    def names(self):
        return [name for _, name in self.frames]


def read(pprof, path, *args):
    """(sample type names, [Sample]) of `pprof -raw [args] path`."""
    text = subprocess.run([pprof, "-raw"] + list(args) + [path], capture_output=True, text=True,
                          check=True, timeout=120).stdout
    lines = text.splitlines()
    types, raw_samples, locations = [], [], {}
    section = None
    last_location = None
    for line in lines:
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
            m = _LOCATION.match(line)
            if m:
                last_location = int(m.group(1))
                locations[last_location] = [(int(m.group(2), 16), m.group(3))]
            elif last_location is not None and _INLINED.match(line):
                # pprof prints inlined callers on the lines after their location
                locations[last_location].append((None, _INLINED.match(line).group(1)))
    samples = []
    for values, ids, labels in raw_samples:
        frames = []
        for i in ids:
            frames.extend(locations[i])
        samples.append(Sample(values, frames, labels))
    return types, samples
