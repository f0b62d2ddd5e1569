"""pprof files of a chosen shape, encoded here by hand (protobuf's wire format is a few lines)
rather than by hucprof's writer, so the bad-input tier and bench/report_memory.py can make what
the writer never would: names of any length, millions of samples, several gzip members."""

import gzip
import zlib


def varint(n):
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, payload):
    """A length-delimited field (wire type 2)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def number(field_number, n):
    return varint(field_number << 3) + varint(n)


def packed(field_number, values):
    return field(field_number, b"".join(varint(v) for v in values))


class Strings:
    def __init__(self):
        self.index = {"": 0}
        self.table = [""]

    def __call__(self, text):
        if text not in self.index:
            self.index[text] = len(self.table)
            self.table.append(text)
        return self.index[text]

    def encoded(self):
        return b"".join(field(6, s.encode()) for s in self.table)


def profile(stacks, samples, function_names, labels=("udp_recvmsg", "recvfrom", "object"),
            kernel_samples=1_000_000, callsites=None):
    """A sampling profile like hucprof's: `function_names` (one function and location each),
    `stacks` (lists of indices into them, leaf first), and `samples`, an iterable of
    (stack index, sample count); `callsites`, if given, names each stack's call site label.
    Returns the uncompressed bytes."""
    s = Strings()
    head = [field(1, number(1, s("samples")) + number(2, s("count"))),
            field(1, number(1, s("cpu")) + number(2, s("nanoseconds")))]
    callsite, syscall, check = (s(x) for x in labels)

    def label_bytes_of(site):
        return (field(3, number(1, s("callsite")) + number(2, site)) +
                field(3, number(1, s("syscall")) + number(2, syscall)) +
                field(3, number(1, s("check")) + number(2, check)))
    label_bytes = label_bytes_of(callsite)
    stack_labels = [label_bytes_of(s(c)) for c in callsites] if callsites else None
    head.append(field(3, number(1, 1) + number(5, s("[kernel.kallsyms]"))))
    for i, name in enumerate(function_names):
        head.append(field(5, number(1, i + 1) + number(2, s(name))))
        head.append(field(4, number(1, i + 1) + number(2, 1) + number(3, 0x1000 + i) +
                          field(4, number(1, i + 1))))
    period = 10_101_010
    head.append(number(10, 10_000_000_000))
    head.append(field(11, number(1, s("cpu")) + number(2, s("nanoseconds"))))
    head.append(number(12, period))
    head.append(packed(13, [s("hucprof.sampled_cpu_samples.kernel=%d" % kernel_samples)]))
    stack_bytes = [packed(1, [i + 1 for i in stack]) for stack in stacks]
    body = []
    for stack, count in samples:
        body.append(field(2, stack_bytes[stack] + packed(2, [count, count * period]) +
                          (stack_labels[stack] if stack_labels else label_bytes)))
    return b"".join(head) + b"".join(body) + s.encoded()


def long_names(samples=2000, name_bytes=100_000):
    """The report-memory case: one distinct function per sample, each named by `name_bytes`."""
    names = ["f%06d_" % i + "x" * (name_bytes - 8) for i in range(samples)]
    return profile([[i] for i in range(samples)], ((i, 1) for i in range(samples)), names)


def many_samples(samples=1_500_000, stacks=5000, depth=30, functions=2000):
    """A large valid profile: many samples over a few thousand stacks of real depth."""
    names = ["kernel_function_%d" % i for i in range(functions)]
    shapes = [[(k * 7919 + j * 104729) % functions for j in range(depth)] for k in range(stacks)]
    return profile(shapes, ((i % stacks, 1 + i % 3) for i in range(samples)), names)


def at_limits(samples=2_000_000, stacks=65_536, depth=15, functions=262_144):
    """Near every bound of `hucprof report` at once (distinct stacks, frames, functions, label
    sets): what a hostile file that is still accepted costs."""
    names = ["kernel_function_name_%09d" % i for i in range(functions)]  # 30 bytes each
    shapes = [[(k * depth + j) % functions for j in range(depth)] for k in range(stacks)]
    sites = ["callsite_%05d" % k for k in range(stacks)]
    return profile(shapes, ((i % stacks, 1) for i in range(samples)), names, callsites=sites)


def gzipped(data, members=1):
    """gzip of `data`, split into `members` gzip members one after another."""
    if members <= 1:
        return gzip.compress(data, mtime=0)
    step = (len(data) + members - 1) // members
    return b"".join(gzip.compress(data[i:i + step], mtime=0) for i in range(0, len(data), step))


def gzipped_with_unknown_field(data, size, field_number=99):
    """gzip of `data` followed by one field pprof's schema does not have, of `size` zero bytes,
    compressed as it is made (a 1 GiB field takes 1 MB of gzip and little memory here)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [packer.compress(data + varint(field_number << 3 | 2) + varint(size))]
    chunk = bytes(1 << 20)
    for left in range(size, 0, -len(chunk)):
        out.append(packer.compress(chunk[:min(left, len(chunk))]))
    out.append(packer.flush())
    return b"".join(out)


# Names a profile may hold that a terminal, an XML parser or a browser must not take raw: a
# terminal title sequence, NUL, DEL, a C1 CSI (U+009B), a noncharacter XML forbids (U+FFFE),
# markup. All valid UTF-8 (`report` refuses a string that is not).
HOSTILE = {
    "title": "evil\x1b]0;pwned\x07\x00nul",
    "csi": "csi\u009b2J\x7f",
    "nonchar": "non\ufffechar",
    "markup": "<script>alert(1)</script>&amp;",
}
# How each shows: printable_name's \xNN, byte by byte (U+009B is C2 9B in UTF-8).
SHOWN = {
    "title": "evil\\x1b]0;pwned\\x07\\x00nul",
    "csi": "csi\\xc2\\x9b2J\\x7f",
    "nonchar": "non\\xef\\xbf\\xbechar",
}


def hostile_profile():
    """A profile whose function names and call site and syscall labels are HOSTILE."""
    names = ["__check_object_size", HOSTILE["title"], HOSTILE["csi"], HOSTILE["nonchar"],
             HOSTILE["markup"]]
    return profile([[0, 1, 2, 3, 4]], [(0, 7)], names,
                               labels=(HOSTILE["title"], HOSTILE["csi"], "object"))
