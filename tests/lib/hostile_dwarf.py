#!/usr/bin/env python3
"""C source whose DWARF, as gcc -g -O2 writes it, is hostile in every way a debuginfo file from
outside can be (a download is checked only by its build-id): a function name of megabytes, a
source file name of kilobytes, a name of control bytes and invalid UTF-8 (gcc takes no such
identifier: a marker of the same length is patched into the binary, see patch_bad_bytes), an
inline chain hundreds of levels deep, and a function whose scope holds tens of thousands of
DIEs before the inlined call at an address.

Functions, in address order (-fno-reorder-functions keeps source order):
  _stext         where text offsets count from, as in vmlinux
  hostile_outer  inlines LONG (the long name; its calls are in the long file) -> MARKER -> d0
                 -> ... -> dN-1 (or d0 -> ... -> dN-1 -> MARKER -> LONG); the innermost holds
                 --skip bytes, so with a large one every offset of a kernel's text falls into
                 the whole chain
  wide_outer     --wide local statics (a DIE each, ahead of the inlined call), then inlines
                 w_last
Used by tests/CMakeLists.txt (the debuginfo unit tests' fixture, the fuzz seed) and by the CLI
tests, which build a vmlinux with the running kernel's build-id from it.
"""

import argparse

MARKER = b"huc_badbytes_" + b"X" * 19  # 32 bytes, an identifier gcc takes
# What the marker becomes: ESC and a terminal colour sequence, bytes that are never UTF-8, an
# overlong NUL, a UTF-16 surrogate, DEL and the C1 control CSI (U+009B), then printable text.
BAD_BYTES = (b"\x1b[31m\xff\xfe\xc0\x80\xed\xa0\x80\x7f\xc2\x9bok").ljust(len(MARKER), b"Y")
assert len(BAD_BYTES) == len(MARKER)


def long_name(n):
    return "n" + "x" * (n - 1)


def long_file(n):
    return "hostile/" + "d" * (n - len("hostile/") - 2) + ".h"


def source(long_name_bytes, long_file_bytes, deep, wide, skip, long_inside=False):
    """The C text. The chain, outermost first, is LONG, MARKER, d0..d(deep-1); with long_inside
    d0..d(deep-1), MARKER, LONG (a short chain then ends in the hostile names: the copy label is
    taken from the innermost function). The innermost holds the skip."""
    names = [long_name(long_name_bytes), MARKER.decode()]
    depth = ["d%d" % i for i in range(deep)]
    chain = depth + names[::-1] if long_inside else names + depth
    out = ["#define AI static inline __attribute__((always_inline))",
           "#define NI __attribute__((noinline, used))",
           'NI void _stext(void) { __asm__ volatile(""); }']
    for i in range(len(chain) - 1, -1, -1):
        body = ('__asm__ volatile(".skip %d");' % skip if i == len(chain) - 1
                else '%s(); __asm__ volatile("");' % chain[i + 1])
        if chain[i] == names[0]:  # the long name's calls are in the long file
            out.append('#line 1 "%s"' % long_file(long_file_bytes))
            out.append("AI void %s(void) { %s }" % (chain[i], body))
            out.append('#line %d "hostile_dwarf.c"' % (len(out) + 2))
        else:
            out.append("AI void %s(void) { %s }" % (chain[i], body))
    out.append("NI void hostile_outer(void) { %s(); }" % chain[0])
    out.append('AI void w_last(void) { __asm__ volatile(".skip 16"); }')
    out.append("NI void wide_outer(void) {")
    # Local statics: a DIE each in the function's scope, ahead of the inlined call, and no code
    # for the compiler to build.
    for i in range(wide):
        out.append("  static int v%d __attribute__((used));" % i)
    out.append("  w_last();")
    out.append("}")
    out.append("int main(void) { hostile_outer(); wide_outer(); return 0; }")
    return "\n".join(out) + "\n"


def patch_bad_bytes(elf_bytes):
    """The ELF with every copy of the marker name replaced by BAD_BYTES (same length, so every
    offset in the file stays)."""
    assert MARKER in elf_bytes, "the marker is not in the file"
    return elf_bytes.replace(MARKER, BAD_BYTES)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--long-name-bytes", type=int, default=4 << 20)
    parser.add_argument("--long-file-bytes", type=int, default=100 << 10)
    parser.add_argument("--deep", type=int, default=300)
    parser.add_argument("--wide", type=int, default=20000)
    parser.add_argument("--skip", type=int, default=16)
    parser.add_argument("--patch", help="patch the marker in this ELF file in place")
    args = parser.parse_args()
    if args.patch:
        with open(args.patch, "rb") as f:
            patched = patch_bad_bytes(f.read())
        with open(args.patch, "wb") as f:
            f.write(patched)
        return
    with open(args.out, "w") as f:
        f.write(source(args.long_name_bytes, args.long_file_bytes, args.deep, args.wide, args.skip))


if __name__ == "__main__":
    main()
