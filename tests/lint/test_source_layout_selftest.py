#!/usr/bin/env python3
"""The source layout lint catches what it promises: run it on small trees made here, each with
one planted mistake (a daemon file of 501 lines, a daemon folder of 41 files, an export/web file that includes "cli/...", a
C++ file that includes <regex>), on their clean twins, and on the real tree, and check the
verdicts."""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import check_source_layout  # noqa: E402
from lint_selftest import Expectations, run_main  # noqa: E402

expect = Expectations()


def run_lint(*args):
    return run_main(check_source_layout.main, *args)


def make_tree(root, files):
    """files: relative path -> text; every tree gets one harmless daemon file to scan."""
    files = {"daemon/core/base/clean.cpp": '#include "core/base/clean.h"\n', **files}
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)
    return root


def lines(n):
    return "".join(f"int v{i} = {i};\n" for i in range(n))


def verdict(files, check):
    with tempfile.TemporaryDirectory() as root:
        return run_lint("--root", make_tree(root, files), check)


# 1. size: over 500 lines fails and names the file and its count; 500 passes; outside daemon/
#    (tests/) and other suffixes are not this lint's.
rc, out = verdict({"daemon/export/big.cpp": lines(501)}, "size")
expect(rc == 1 and "daemon/export/big.cpp: 501 lines, over the 500" in out,
       f"size fails on a 501-line daemon file; output was:\n{out}")
rc, out = verdict({"daemon/web/big.h": lines(501)}, "size")
expect(rc == 1 and "daemon/web/big.h: 501 lines" in out, f"size checks headers; output was:\n{out}")
rc, out = verdict({"daemon/export/full.cpp": lines(500), "tests/unit/long_test.cpp": lines(900),
                   "daemon/core/notes.txt": lines(900)}, "size")
expect(rc == 0, f"size passes 500 lines and files it does not cover; output was:\n{out}")

# 1b. size: a daemon folder of 41 .cpp/.h files fails and names it; 40 pass, and a folder's
#     subfolders count for themselves.
many = {f"daemon/core/drain/f{i}.cpp": "int x;\n" for i in range(41)}
rc, out = verdict(many, "size")
expect(rc == 1 and "daemon/core/drain/: 41 .cpp/.h files, over the 40" in out,
       f"size fails on a folder of 41 files; output was:\n{out}")
forty = {f"daemon/core/drain/f{i}.h": "int x;\n" for i in range(40)}
forty.update({f"daemon/core/base/f{i}.cpp": "int x;\n" for i in range(39)})
rc, out = verdict(forty, "size")
expect(rc == 0, f"size passes folders of 40 files each; output was:\n{out}")

# 2. layering: "cli/..." from export/ or web/ fails with its line; from app/ it is fine.
rc, out = verdict({"daemon/export/view.cpp": '#include <string>\n#include "cli/duration.h"\n'},
                  "layering")
expect(rc == 1 and 'daemon/export/view.cpp:2: includes "cli/duration.h"' in out,
       f"layering fails on export/ including cli/; output was:\n{out}")
rc, out = verdict({"daemon/web/config.h": '#  include "cli/safe_yaml.h"\n'}, "layering")
expect(rc == 1 and 'daemon/web/config.h:1: includes "cli/safe_yaml.h"' in out,
       f"layering fails on web/ including cli/ (spaced #  include); output was:\n{out}")
rc, out = verdict({"daemon/app/run.cpp": '#include "cli/options.h"\n',
                   "daemon/web/page.cpp": '#include "core/text/duration.h"\n// "cli/options.h"\n'},
                  "layering")
expect(rc == 0, f"layering passes app/ including cli/ and a comment naming it; output was:\n{out}")

# 2b. layering of daemon/core/'s rooms: a room including one above it fails with its line, one
#     below passes, a folder that is not a room fails.
rc, out = verdict({"daemon/core/base/word.h": '#include "core/text/duration.h"\n'}, "layering")
expect(rc == 1 and 'daemon/core/base/word.h:1: includes "core/text/duration.h"' in out,
       f"layering fails on base/ including text/; output was:\n{out}")
rc, out = verdict({"daemon/core/profile/view.cpp": '#include "core/base/result.h"\n',
                   "daemon/core/text/duration.h": '#include "core/base/result.h"\n'}, "layering")
expect(rc == 0, f"layering passes rooms including the ones below; output was:\n{out}")
rc, out = verdict({"daemon/core/misc/thing.h": "int x;\n", "daemon/core/loose.h": "int y;\n"},
                  "layering")
expect(rc == 1 and "daemon/core/misc/ is not one of the rooms" in out
       and "daemon/core/loose.h: a file of daemon/core/ lives in one of its rooms" in out,
       f"layering fails on a folder of core/ that is not a room and a file outside the rooms; "
       f"output was:\n{out}")

# 3. regex: <regex> anywhere in daemon/, tests/, bench/, fuzz/ fails and says why.
for path in ["daemon/core/match.cpp", "tests/unit/web/page_test.cpp", "bench/speed.cpp",
             "fuzz/thing_fuzz.cpp", "tests/lib/helpers.h"]:
    rc, out = verdict({path: "#include <string>\n#include <regex>\n"}, "regex")
    expect(rc == 1 and f"{path}:2: includes <regex>" in out and "sanitize tier's GCC -O1" in out,
           f"regex fails on {path}; output was:\n{out}")
rc, out = verdict({"tests/unit/ok_test.cpp": "// no <regex> here\n#include <string>\n",
                   "scripts/tool.py": "import re  # <regex>\n"}, "regex")
expect(rc == 0, f"regex passes a comment and non-C++ files; output was:\n{out}")

# 4. a tree with no C++ files (a wrong --root) is not a pass.
with tempfile.TemporaryDirectory() as empty:
    rc, out = run_lint("--root", empty)
expect(rc == 1 and "no C++ files found" in out, f"an empty --root fails; output was:\n{out}")

# 5. the real tree passes every check.
rc, out = run_lint()
expect(rc == 0, "the repository passes the source layout lint:\n" + out)

sys.exit(expect.exit_code())
