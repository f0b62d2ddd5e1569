"""Shared helpers for hucprof's script-driven test tiers (host, e2e, vm) and benches: start the
daemon on a free port, fetch pages, parse /metrics. Python stdlib, plus the Prometheus project's
own client library (Debian's python3-prometheus-client) as the reader of /metrics, imported only
by parse_metrics so stdlib-only guests can use the rest."""

import contextlib
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SKIP = 77  # ctest SKIP_RETURN_CODE

# Debian installs python3-prometheus-client for /usr/bin/python3; a python3 from elsewhere first
# on PATH (pyenv, a venv) reads the same pure-Python package from here.
_DEBIAN_DIST_PACKAGES = "/usr/lib/python3/dist-packages"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _text_parser():
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        if _DEBIAN_DIST_PACKAGES in sys.path:
            raise
        # Last, so Debian's copies never shadow what this interpreter has of its own.
        sys.path.append(_DEBIAN_DIST_PACKAGES)
        try:
            from prometheus_client.parser import text_string_to_metric_families
        except ImportError:
            raise ImportError("the /metrics parser needs python3-prometheus-client "
                              "(scripts/install-deps.sh)") from None
    return text_string_to_metric_families


def parse_metrics(text):
    """Prometheus text format → list of (sample name, labels dict, float value), in exposition
    order. Read by prometheus_client's parser, a reference written by no one here; ValueError
    when the text is not the format."""
    parse = _text_parser()
    try:
        return [(s.name, s.labels, s.value) for family in parse(text) for s in family.samples]
    except ValueError as e:
        raise ValueError("not Prometheus text format: %s" % e) from None


def select(samples, name, **labels):
    return [(l, v) for (n, l, v) in samples
            if n == name and all(l.get(k) == val for k, val in labels.items())]


def total(samples, name, **labels):
    return sum(v for _, v in select(samples, name, **labels))


def http_get(url, timeout=5, context=None):
    """(status, body) of a GET of url (a string or a urllib Request, e.g. with headers; context: an
    ssl.SSLContext for https). HTTP errors are returned, not raised; connection errors raise
    OSError. A served page must be UTF-8 (UnicodeDecodeError otherwise); an error page need not."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=context) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8", "replace")


def timed_get(port, path="/metrics", timeout=5.0):
    """(status line's code or None, body bytes, seconds) of one GET on a fresh connection to
    127.0.0.1:port, the whole exchange bounded by timeout: the benches' client. Raw HTTP/1.1, so
    the seconds are the server's and not urllib's, and one deadline, so a server that trickles
    its answer cannot stretch a round past it. Status None: no connection, or a timeout."""
    started = time.monotonic()

    def left():
        return max(0.01, timeout - (time.monotonic() - started))

    request = b"GET %s HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n" % path.encode()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.settimeout(left())
            s.sendall(request)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
                s.settimeout(left())
    except OSError:
        return None, b"", time.monotonic() - started
    head, _, body = data.partition(b"\r\n\r\n")
    words = head.split(b" ", 2)
    status = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
    return status, body, time.monotonic() - started


class Daemon:
    """A running `hucprof run`; stops it with SIGTERM and records the exit status."""

    def __init__(self, binary, args, log_path, port=None):
        self.port = port or free_port()
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.proc = subprocess.Popen([binary, "run", "--web.listen-address",
                                      "127.0.0.1:%d" % self.port] + list(args),
                                     stdout=self._log, stderr=subprocess.STDOUT)
        self.returncode = None

    @classmethod
    def started(cls, binary, args, log_path, port=None, timeout=30):
        """A daemon that is ready (wait_ready); stopped again when it does not get there, so a
        failed setUpClass leaves no daemon behind."""
        d = cls(binary, args, log_path, port)
        try:
            d.wait_ready(timeout)
        except BaseException:
            d.stop()
            raise
        return d

    def url(self, path="/metrics"):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def wait_ready(self, timeout=30):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("hucprof exited with %d before serving:\n%s"
                                   % (self.proc.returncode, self.log()))
            try:
                # /-/ready answers 200 once the programs are attached and the first drain is
                # done (503 before), what every test needs before it measures anything.
                status, _ = http_get(self.url("/-/ready"), timeout=1)
                if status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("hucprof was not ready within %ds:\n%s" % (timeout, self.log()))

    def scrape(self):
        status, body = http_get(self.url())
        if status != 200:
            raise RuntimeError("GET /metrics returned %d" % status)
        return body

    def stop(self, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.returncode = self.proc.returncode
        self._log.close()
        return self.returncode

    def log(self):
        if not self._log.closed:
            self._log.flush()
        with open(self.log_path) as f:
            return f.read()


@contextlib.contextmanager
def running_daemon(binary, args, log_path, port=None):
    d = Daemon.started(binary, args, log_path, port)
    try:
        yield d
    finally:
        d.stop()


def held_bpf_ids(pid, kind):
    """Ids of the BPF objects (kind "map" or "prog") process pid holds open, from its fdinfo:
    what is the daemon's, whatever else is loaded on the machine."""
    ids = set()
    fd_dir = "/proc/%d/fdinfo" % pid
    for fd in os.listdir(fd_dir):
        try:
            with open(os.path.join(fd_dir, fd)) as f:
                for line in f:
                    if line.startswith(kind + "_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass  # closed meanwhile
    return ids


def within_counting_error(a_hits, a_total, b_hits, b_total, sigmas=4.0, spread=0.0):
    """Two binomial proportions agree: |pa - pb| within `sigmas` standard errors (pooled),
    plus `spread`."""
    pa, pb = a_hits / a_total, b_hits / b_total
    p = (a_hits + b_hits) / (a_total + b_total)
    se = math.sqrt(max(p * (1 - p), 1e-12) * (1 / a_total + 1 / b_total))
    return abs(pa - pb) <= sigmas * se + spread + 1e-9, pa, pb, se


def is_root():
    return os.geteuid() == 0


def has_btf(what):
    """The requirement (for run_unittests) of a test whose daemon loads hucprof's CO-RE BPF
    programs: the running kernel's BTF."""
    return (os.path.exists("/sys/kernel/btf/vmlinux"),
            what + ": this kernel has no BTF (/sys/kernel/btf/vmlinux)")


def script_args(*required, optional=(), workdir=True):
    """The command line of a script-driven test: --NAME (required) for each of `required`,
    --NAME (default "") for each of `optional`, and --workdir (default: the temp dir) unless
    workdir=False. Returns (args, what is left for unittest)."""
    import argparse
    import tempfile
    p = argparse.ArgumentParser()
    for name in required:
        p.add_argument("--" + name, required=True)
    for name in optional:
        p.add_argument("--" + name, default="")
    if workdir:
        p.add_argument("--workdir", default=tempfile.gettempdir())
    return p.parse_known_args()


def run_unittests(argv_rest, workdir=None, requirements=()):
    """main() of a script-driven test: the first unmet (ok, reason) requirement skips the whole
    script (exit 77, the reason printed); else this module's unittest cases run verbosely.
    Exit 0 when all passed, 1 otherwise."""
    import sys
    import unittest
    for ok, reason in requirements:
        if not ok:
            print("SKIP: " + reason)
            return SKIP
    if workdir:
        os.makedirs(workdir, exist_ok=True)
    prog = unittest.main(module="__main__", argv=[sys.argv[0]] + list(argv_rest), exit=False,
                         verbosity=2)
    return 0 if prog.result.wasSuccessful() else 1


def vm_rss_kib(pid):
    """The resident set of process `pid` in KiB, as the kernel counts it (/proc/PID/status)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


BPF_STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


def read_bpf_stats():
    """kernel.bpf_stats_enabled as the kernel shows it ("0" or "1"): tests that turn it on for
    run_cnt put back what they read."""
    with open(BPF_STATS_SYSCTL) as f:
        return f.read().strip()


def write_bpf_stats(value):
    with open(BPF_STATS_SYSCTL, "w") as f:
        f.write(value)


def unified_cgroup_root():
    """The cgroup v2 hierarchy: /sys/fs/cgroup on a pure v2 host, .../unified on a hybrid one."""
    for path in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        if os.path.exists(os.path.join(path, "cgroup.procs")) and \
                os.path.exists(os.path.join(path, "cgroup.controllers")):
            return path
    return None


class Cgroup:
    """A cgroup of the test's own below the unified root; removed (empty) at close()."""

    def __init__(self, name):
        self.name = "/" + name
        self.path = os.path.join(unified_cgroup_root(), name)
        os.mkdir(self.path)

    def run(self, argv, quiet=False):
        """argv started in the cgroup; its output dropped (and its errors too when quiet)."""
        procs = os.path.join(self.path, "cgroup.procs")

        def join():  # in the child, before exec: the command runs in the cgroup from its start
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        return subprocess.Popen(argv, preexec_fn=join, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL if quiet else None)

    def usage_seconds(self):
        with open(os.path.join(self.path, "cpu.stat")) as f:
            for line in f:
                key, value = line.split()
                if key == "usage_usec":
                    return int(value) / 1e6
        raise AssertionError("no usage_usec in %s/cpu.stat" % self.path)

    def close(self):
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.1)  # the last task is still exiting
        os.rmdir(self.path)
