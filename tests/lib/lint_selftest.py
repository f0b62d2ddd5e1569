"""What the lints' self-tests share: a lint's main() run with its output captured, and a tally
of expectations, each one that fails printed with what was wanted."""

import contextlib
import io


class Expectations:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def __call__(self, cond, what):
        if cond:
            self.passed += 1
        else:
            self.failures.append(what)
            print(f"FAIL {what}")

    def exit_code(self):
        """Prints the tally; 1 when any expectation failed."""
        print(f"{self.passed} passed, {len(self.failures)} failed")
        return 1 if self.failures else 0


def run_main(main, *args):
    """(exit code, stdout) of a lint's main(argv)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(args))
    return rc, out.getvalue()
