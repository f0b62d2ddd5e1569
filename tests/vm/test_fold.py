#!/usr/bin/env python3
"""hucvm_fold (hucprof's CallsiteFolder) on real kernel stacks captured from Debian 6.1 and 6.12
guests: the reference's stacks must fold to the call sites the VM tier compares with hucprof.

Usage: test_fold.py PATH/TO/hucvm_fold        (no VM, a second)
"""

import re
import subprocess
import sys
import unittest
from pathlib import Path

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
import histref  # noqa: E402
import vm_tier_model  # noqa: E402

DATA = Path(__file__).resolve().parent / "testdata"
FOLD = None


def fold(name: str, probed: str, subcheck: bool) -> dict:
    h = histref.parse_file(DATA / name)
    return vm_tier_model.parse_folded(vm_tier_model.fold_reference(FOLD, h, probed, subcheck))


class FoldRealStacks(unittest.TestCase):
    def check_udp(self, name):
        got = fold(name, "__check_object_size", subcheck=False)
        # Inlined copy_to_iter: the immediate caller is the call site.
        self.assertEqual(got[("udp_recvmsg", "recvfrom", "to_user")], (1000, 64000))
        # ip_generic_getfrag <- __ip_append_data <- ip_make_skb are copy helpers: skipped.
        self.assertEqual(got[("udp_sendmsg", "sendto", "from_user")], (1000, 64000))
        # move_addr_to_user / move_addr_to_kernel are helpers: the syscall body is the site.
        self.assertEqual(got[("__sys_recvfrom", "recvfrom", "to_user")], (1000, 16000))
        self.assertEqual(got[("__sys_sendto", "sendto", "from_user")], (1000, 16000))
        self.assertFalse([k for k in got if k[0] in ("ip_generic_getfrag", "move_addr_to_user",
                                                     "__check_object_size")])

    def test_udp_6_1(self):
        self.check_udp("hist-6.1-ucheck-udp.txt")

    def test_udp_6_12(self):
        self.check_udp("hist-6.12-ucheck-udp.txt")

    def test_vmalloc_subcheck_6_1(self):
        got = fold("hist-6.1-uvmap-netlink64k.txt", "find_vmap_area", subcheck=True)
        self.assertEqual(got, {("netlink_sendmsg", "sendto", "-"): (100, 0),
                               ("netlink_recvmsg", "recvfrom", "-"): (100, 0)})

    def test_vmalloc_other_callers_are_not_checks(self):
        # 6.12: no vmalloc'ed 64 KiB heads; find_vmap_area's other callers (vfree, ...) must
        # not be charged to any call site.
        self.assertEqual(fold("hist-6.12-uvmap-netlink64k.txt", "find_vmap_area",
                              subcheck=True), {})

    def test_malformed_input_is_an_error(self):
        r = subprocess.run([FOLD], input="12 x to_user a;b\n", capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("line 1", r.stderr)


class FoldSlabReference(unittest.TestCase):
    """bpftrace's kfunc:__check_heap_object map keyed by cache, direction and kstack, captured
    around udp_pairs 1000 64 on Debian 6.12.118+deb12 (vm_tier_checks.slab_object_rows)."""

    def test_udp_slab_checks_fold_to_the_udp_call_sites(self):
        import vm_tier_checks
        text = (DATA / "slabref-6.12-udp.txt").read_text()
        entries = vm_tier_checks.parse_slab_ref(text)
        # Every map entry bpftrace printed is parsed, with its count.
        printed = [int(n) for n in re.findall(r"^\]: (\d+)$", text, re.M)]
        self.assertEqual(sorted(e[3] for e in entries), sorted(printed))
        got = vm_tier_checks.fold_slab_ref(FOLD, entries)
        self.assertEqual(got[("udp_recvmsg", "to_user", "skbuff_small_head")], 1000)
        self.assertEqual(got[("udp_sendmsg", "from_user", "skbuff_small_head")], 1000)
        self.assertEqual(sum(got.values()), sum(printed))
        self.assertFalse([k for k in got if k[0] in ("__check_object_size",
                                                     "__check_heap_object", "[unknown]")])

    def test_a_bpftrace_that_did_not_exit_cleanly_is_no_reference(self):
        import vm_tier_checks
        text = (DATA / "slabref-6.12-udp.txt").read_text()
        self.assertIsNone(vm_tier_checks.parse_slab_ref(
            text.replace("hucvm-bpftrace-rc 0", "hucvm-bpftrace-rc 1")))
        self.assertIsNone(vm_tier_checks.parse_slab_ref("ERROR: kfunc not supported\n"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("usage: test_fold.py PATH/TO/hucvm_fold", file=sys.stderr)
        sys.exit(2)
    FOLD = sys.argv.pop(1)
    unittest.main()
