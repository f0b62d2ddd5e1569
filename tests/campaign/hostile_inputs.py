#!/usr/bin/env python3
"""A campaign of hostile and careless inputs over every surface of hucprof, each outcome put in
one of four classes:

  rejected cleanly      refused as it should be: the documented exit code, one line on stderr
                        naming the problem (valid UTF-8, no control character), nothing on stdout;
                        for HTTP the expected 4xx/5xx (or a close where no answer is owed)
  accepted validly      taken as it should be and handled correctly (exit 0 or the next check's
                        refusal proving the flag passed; HTTP 200 with the series; a signal
                        survived and logged)
  wrong                 anything else that is not harm: another exit code, several lines, output
                        on stdout, a refusal of something valid, an answer to a smuggled request
  crash/hang/blow-up    killed by a signal, past its time bound, past its memory bound, a server
                        that stops answering, or anything at the host changed outside the
                        campaign's own temporary directory (a device node replaced, say)

Surfaces: flags, config files, web config files, HTTP requests (plain and TLS), signals to `run`
and `record`, profile files for `report`, output paths of `record -o` and `report --flamegraph`,
debuginfo files, debuginfod servers on loopback, cgroup names (in cgroups the campaign makes and
removes), `record` COMMANDs.
Bounded: about 700 inputs, each with a time limit and an address-space cap; loopback only;
everything it makes is in one temporary directory (device nodes included, made there with
numbers no driver is expected to serve); the machine's own files and devices are never used as
outputs. Signals and record need root and a kernel that allows perf events: without them those
cases are counted as skipped, and said so.

  tests/campaign/hostile_inputs.py --hucprof build/daemon/hucprof \\
      --web-serve build/tests/tools/huc_web_serve [--json summary.json] [--only SURFACE,...]

Exit 0 when no input is `wrong` or `crash/hang/blow-up`, else 1 with every such case listed.
"""

import argparse
import collections
import ctypes.util
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import debuginfo_fixtures as fx  # noqa: E402
import hucprof_testlib as t  # noqa: E402
import pprof_files  # noqa: E402
import web_fixtures as wf  # noqa: E402

REJECTED, ACCEPTED, WRONG, CRASH, SKIPPED = (
    "rejected cleanly", "accepted validly", "wrong exit code or stream", "crash/hang/blow-up",
    "skipped")
CLASSES = (REJECTED, ACCEPTED, WRONG, CRASH)
KALLSYMS = os.path.join(HERE, "..", "data", "kallsyms_6.18_excerpt.txt")
ADDRESS_SPACE = 2 << 30     # a defect aborts here instead of taking the machine's memory
CLI_RSS_MIB = 64            # a refusal or a small report: hucprof itself is 12-15 MiB
CLI_SECONDS = 20
MiB = 1 << 20
SERIES = b'usercopy_checks_total{callsite="udp_recvmsg"'
# Written into the output probes' paths: refused before anything is attached or read.
PROBE_OUTPUT = "/proc/hucprof-campaign.pb.gz"
PROBE_OUTPUT_SAYS = "cannot create a file in /proc"

ARGS = None


class Campaign:
    def __init__(self, workdir):
        self.workdir = workdir
        self.results = []  # (surface, name, class, detail)
        self.started = time.monotonic()

    def record(self, surface, name, outcome, detail=""):
        self.results.append((surface, name, outcome, detail))
        mark = {REJECTED: "ok", ACCEPTED: "ok", SKIPPED: "--"}.get(outcome, "!!")
        print("%s %-12s %-58.58s %-26s %s" % (mark, surface, name, outcome, detail[:100]), flush=True)

    def summary(self):
        by_surface = collections.OrderedDict()
        for surface, _, outcome, _ in self.results:
            by_surface.setdefault(surface, collections.Counter())[outcome] += 1
        return by_surface


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def one_clean_line(text):
    """stderr as the contract says: one line, valid UTF-8, no control character but the end."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return False, "stderr is not UTF-8"
    if not decoded.endswith("\n") or decoded.count("\n") != 1:
        return False, "%d lines on stderr: %r" % (decoded.count("\n"), decoded[:200])
    if any(ord(c) < 0x20 and c != "\n" or 0x7f <= ord(c) < 0xa0 for c in decoded):
        return False, "a control character on stderr: %r" % decoded[:200]
    return True, decoded.strip()


def run_cli(words, timeout=CLI_SECONDS, stdin=subprocess.DEVNULL, rss_mib=CLI_RSS_MIB, cwd=None, env=None):
    """(rc, stdout bytes, stderr bytes, peak RSS MiB, seconds, timed out)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen([ARGS.hucprof] + list(words), stdout=out, stderr=err, stdin=stdin,
                                preexec_fn=limit_memory, cwd=cwd or ARGS.cwd, env=env)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > timeout:
                timed_out = True
                proc.kill()
                _, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - started
        out.seek(0)
        err.seek(0)
        return (os.waitstatus_to_exitcode(status), out.read(), err.read(), usage.ru_maxrss / 1024,
                seconds, timed_out)


def harm(rc, rss, timed_out, rss_mib):
    if timed_out:
        return "hung (killed after the time bound)"
    if rc < 0:
        return "killed by %s" % signal.Signals(-rc).name
    if rc in (134, 139):
        return "aborted (exit %d)" % rc
    if rss > rss_mib:
        return "peak RSS %.0f MiB > %d MiB" % (rss, rss_mib)
    return None


def cli_case(c, surface, name, words, expect_rc, says=None, accept=False, rss_mib=CLI_RSS_MIB,
             timeout=CLI_SECONDS, check=None, stdin=subprocess.DEVNULL):
    """One run of hucprof. `accept`: the input is valid, and `expect_rc`/`says` is how a valid
    input shows (exit 0, or the next check's refusal when the run goes no further). `check`,
    if given, must return None for the outcome to count (else what is wrong)."""
    rc, out, err, rss, seconds, timed_out = run_cli(words, timeout, stdin=stdin)
    bad = harm(rc, rss, timed_out, rss_mib)
    if bad:
        return c.record(surface, name, CRASH, bad)
    detail = "rc %d, %.0f MiB, %.2f s" % (rc, rss, seconds)
    if rc != expect_rc:
        return c.record(surface, name, WRONG, "exit %d, expected %d: %s" % (
            rc, expect_rc, err.decode(errors="replace").strip()[-160:]))
    problem = check() if check else None
    if problem:
        return c.record(surface, name, WRONG, problem)
    if expect_rc != 0 or not accept:
        clean, line = one_clean_line(err)
        if not clean:
            return c.record(surface, name, WRONG, line)
        if out:
            return c.record(surface, name, WRONG, "printed on stdout: %r" % out[:100])
        if says and says not in line:
            return c.record(surface, name, WRONG, "message %r lacks %r" % (line[-160:], says))
        detail += ": " + line[-90:]
    c.record(surface, name, ACCEPTED if accept else REJECTED, detail)


# ---------------------------------------------------------------------------------------- flags

def guarded(words):
    """`words`, made unable to attach or serve should a refusal not come: record gets an -o it
    cannot write, run a kallsyms file that does not exist (neither can start then)."""
    words = list(words)
    if "--" in words or not words:
        return words
    if words[0] == "record" and "-o" not in words and "--output" not in words:
        words += ["-o", PROBE_OUTPUT]
    if words[0] == "run" and "--kallsyms" not in words:
        words += ["--kallsyms", "/nonexistent"]
    return words


def flags(c):
    s = "flags"
    reject = lambda name, words, says=None: cli_case(c, s, name, guarded(words), 2, says)  # noqa: E731
    # A valid record flag passes parsing and is stopped by the unwritable -o, before the kernel.
    rec_ok = lambda name, words: cli_case(c, s, name, ["record"] + words + ["-o", PROBE_OUTPUT], 2,  # noqa: E731
                                          PROBE_OUTPUT_SAYS, accept=True)
    # A valid run flag passes parsing and start-up stops at the missing kallsyms file (exit 1).
    run_ok = lambda name, words: cli_case(c, s, name, ["run"] + words + ["--kallsyms", "/nonexistent"],  # noqa: E731
                                          1, "/nonexistent", accept=True)
    for words in (["run", "--nope"], ["run", "-x"], ["doctor", "--web.listen-address", ":1"],
                  ["record", "--top-k", "5"], ["record", "--capabilities.keep", "none"],
                  ["report", "--mode", "sample", "x"], ["run", "--mode=sample=x"],
                  ["version", "--x"], ["run", "extra"], ["report", "a", "b"]):
        reject("unknown/misplaced " + " ".join(words), words)
    for flag in ("--mode", "--interval", "--top-k", "--config", "--web.listen-address",
                 "--log.level", "--sample-frequency"):
        cli_case(c, s, "missing value " + flag, ["run", flag], 2, "missing value")
    reject("no command", [], "missing command")
    reject("unknown command", ["frobnicate"], "unknown command")
    reject("-- outside record", ["run", "--", "ls"], "only `hucprof record -- COMMAND`")
    reject("record -- missing command", ["record", "--mode", "sample", "-o",
                                         os.path.join(c.workdir, "never.pb.gz"), "--",
                                         "/no/such/command"] if os.geteuid() == 0 else
           ["record", "-o", PROBE_OUTPUT, "--", "/no/such/command"])
    # FILE defaults to usercopy.pb.gz, as perf report reads perf.data; there is none in the cwd.
    reject("report without file", ["report"], "usercopy.pb.gz: No such file")
    reject("empty -o", ["record", "-o", ""], "empty path")
    reject("empty --flamegraph", ["report", "--flamegraph", "", "x"], "empty path")
    numbers = {"--sample-frequency": (1, 1000), "--top-k": (1, 1000),
               "--bpf.max-keys": (256, 1 << 20), "--bpf.max-stacks": (64, 1 << 18)}
    for flag, (low, high) in numbers.items():
        for bad in ("0", str(low - 1), str(high + 1), "-1", "1e3", " 5", "5 ", "", "abc",
                    "99999999999999999999999", "\uff11\uff12", "0x10"):
            if flag in ("--top-k",):
                reject("%s %r" % (flag, bad), ["run", flag, bad], flag)
            else:
                reject("%s %r" % (flag, bad), ["record", flag, bad], flag)
        good = [str(low), str(high)]
        for value in good:
            if flag == "--top-k":
                run_ok("%s %s" % (flag, value), [flag, value])
            else:
                rec_ok("%s %s" % (flag, value), [flag, value])
    durations = {"--interval": "record", "--prediction.window": "run", "--duration": "record"}
    for flag, command in durations.items():
        for bad in ("10", "1000000h", "-1s", "1.5.5s", "10sec", "", "1ns", "9223372036854775808ns",
                    "\u221e", "1s\n"):
            if flag == "--duration" and bad == "1000000h":
                continue  # a long recording is valid; Ctrl-C ends it
            reject("%s %r" % (flag, bad), [command, flag, bad], flag)
        for good in ("10s", "1m30s", "1.5s"):
            (rec_ok if command == "record" else run_ok)("%s %s" % (flag, good), [flag, good])
    for flag, goods in {"--mode": ("auto", "probe", "sample"),
                        "--probe.attach": ("auto", "fentry", "kprobe"),
                        "--log.level": ("debug", "info", "warn", "error"),
                        "--log.format": ("text", "logfmt", "json")}.items():
        for bad in ("x", goods[0].upper(), "", goods[0] + " ", "\x1b[31m" + goods[0]):
            reject("%s %r" % (flag, bad), ["record", flag, bad], flag)
        for good in goods:
            rec_ok("%s %s" % (flag, good), [flag, good])
    for bad in ("maybe", "2", "tru", "-1"):
        reject("--latency=%r" % bad, ["record", "--latency=" + bad], "--latency")
    for good in ("--latency", "--latency=false", "--latency=yes", "--latency="):
        rec_ok(good, [good])
    for bad in ("cap_sys_admn", "all,none", "", ",", "cap_syslog,,cap_bpf", "cap_12", "cap_syslog;rm"):
        reject("--capabilities.keep %r" % bad, ["run", "--capabilities.keep", bad], "--capabilities.keep")
    # Trimmed and case-insensitive, as setpriv and capsh read them.
    for good in ("cap_syslog", "cap_syslog,cap_bpf", "all", "none", " CAP_SYSLOG\n", "NONE"):
        run_ok("--capabilities.keep " + good, ["--capabilities.keep", good])
    reject("--log.level invalid UTF-8", ["run", "--log.level", b"tr\xffce"], "\\xff")
    reject("--mode 100 KB", ["run", "--mode", "x" * 100000], "--mode")
    # Listen addresses: what Go's net.ParseIP and net.Listen take, and only that.
    for bad in ("host:", ":65536", "127.0.0.1:-1", "999.1.1.1:80", "127.1:80", "0x7f.0.0.1:80",
                "017700000001:80", "2130706433:80", "127.0.0.01:80", "::1:80", "[::1:80", "[::1]",
                "[127.0.0.1]:80", "[1::2::3]:80", "bad host:80", "-lead:80", "a..b:80", "",
                "127.0.0.1", ":", ":+80", ":0x50", "[::1]:80x", "x" * 300 + ":80", "\x1b:80",
                "[fe80::1%lo]:80"):
        reject("--web.listen-address %r" % bad[:40], ["run", "--web.listen-address", bad],
               "--web.listen-address")
    for good in (":9478", "[::]:0", "127.0.0.1:0", "[::1]:0", "localhost:0", "0.0.0.0:0",
                 "node-1.example.org:9478", "x7f.0.0.1:80"):
        run_ok("--web.listen-address " + good, ["--web.listen-address", good])
    run_ok("--web.config.file ''", ["--web.config.file", ""])
    rec_ok("--config ''", ["--config", ""])
    reject("--config missing file", ["run", "--config", os.path.join(c.workdir, "none.yaml")],
           "no such file or directory")


# ---------------------------------------------------------------------------------- config files

def config_files(c):
    s = "config"
    d = os.path.join(c.workdir, "configs")
    os.makedirs(d)

    def file_of(name, data):
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def reject(name, data, says=None):
        path = file_of(name, data) if data is not None else name
        cli_case(c, s, name[-50:], ["record", "--config", path, "-o", PROBE_OUTPUT], 2, says)

    def accept(name, data):
        path = file_of(name, data)
        cli_case(c, s, name, ["record", "--config", path, "-o", PROBE_OUTPUT], 2, PROBE_OUTPUT_SAYS,
                 accept=True)

    laughs = "a0: &a0 {%s}\n" % ", ".join("k%d: lol" % i for i in range(10))
    for level in range(1, 10):
        laughs += "a%d: &a%d {%s}\n" % (level, level, ", ".join("k%d: *a%d" % (i, level - 1)
                                                                 for i in range(10)))
    reject("laughs.yaml", laughs, "anchors")
    reject("alias.yaml", "a: &x 1\nb: *x\n", "anchors")
    for shape, unit in (("brackets", "["), ("braces", "{"), ("brace_keys", "{a:"), ("mixed", "[{a: "),
                        ("dashes", "- "), ("questions", "? ")):
        reject(shape + "_1MiB.yaml", ("a: " + unit * MiB)[:MiB])
    reject("flat_in_nested.yaml", ("a: [[" + "x," * MiB)[:MiB - 2] + "]]", "flow collection")
    reject("quoted_closers.yaml", ("a: " + '["]",' * MiB)[:MiB], "flow collection")
    reject("deep_blocks.yaml", "".join(" " * i + "k%d:\n" % i for i in range(200)), "nested more")
    reject("many_nodes.yaml", "list:\n" + "  - x\n" * 50000, "more than 10000 YAML nodes")
    reject("big.yaml", "# " + "x" * (2 * MiB) + "\n", "larger than 1048576 bytes")
    reject("binary.yaml", bytes(range(256)) * 64)
    reject("nul.yaml", b"interval: 10s\x00\n", "control character")
    reject("nul_in_key.yaml", b"inter\x00val: 10s\n", "control character")
    reject("escape.yaml", b"interval: \x1b[31m10s\n", "control character")
    reject("not_utf8.yaml", b"intervall\xff: 1s\n", "not UTF-8")
    reject("latin1.yaml", "interval: 10s # caf\xe9\n".encode("latin-1"), "not UTF-8")
    reject("overlong.yaml", b"mode: \xc0\xafsample\n", "not UTF-8")
    reject("utf16.yaml", "interval: 10s\n".encode("utf-16"), "not UTF-8")
    reject("/dev/zero", None, "not a regular file")
    fifo = os.path.join(d, "fifo.yaml")
    os.mkfifo(fifo)
    reject(fifo, None, "not a regular file")
    reject(d, None, "is a directory")
    loop = os.path.join(d, "loop.yaml")
    os.symlink(loop, loop)
    reject(loop, None, "too many levels of symbolic links")
    reject("unknown_key.yaml", "intervall: 1s\n", 'unknown key "intervall"')
    reject("unknown_nested.yaml", "web:\n  listen-adress: :1\n", "unknown key")
    reject("list_for_scalar.yaml", "interval: [1s]\n", "expected a single value")
    reject("null_value.yaml", "interval:\n", "missing value")
    reject("duplicate.yaml", "top-k: 1\ntop-k: 2\n", "duplicate key")
    reject("two_docs.yaml", "top-k: 1\n---\ntop-k: 2\n", "more than one YAML document")
    reject("not_a_map.yaml", "- a\n- b\n", "expected a mapping")
    reject("scalar_doc.yaml", "just text\n", "expected a mapping")
    reject("key_list.yaml", "[a]: 1\n", "plain names")
    reject("bad_yaml.yaml", "interval: \"10s\n", None)  # yaml-cpp reads to the end: refused later
    reject("tab_indent.yaml", "web:\n\tlisten-address: :1\n", "invalid YAML")
    reject("kallsyms_key.yaml", "kallsyms: /x\n", "unknown key")
    reject("config_key.yaml", "config: /etc/x\n", "unknown key")
    for key, bad in (("interval", "10"), ("interval", "1000000h"), ("top-k", "0"), ("mode", "fast"),
                     ("latency", "maybe"), ("sample-frequency", "1001"), ("log.format", "xml"),
                     ("web.listen-address", "0x7f.0.0.1:9478"), ("capabilities.keep", "cap_x"),
                     ("bpf.max-keys", "1"), ("prediction.window", "25h"), ("probe.attach", "x")):
        reject("%s_%s.yaml" % (key, bad.replace("/", "_")[:12]), "%s: '%s'\n" % (key, bad), key)
    accept("empty.yaml", "")
    accept("comments.yaml", "# nothing\n\n")
    accept("bom.yaml", b"\xef\xbb\xbfinterval: 10s\n")
    accept("crlf.yaml", "interval: 10s\r\ntop-k: 5\r\n")
    accept("nested_map.yaml", "web:\n  listen-address: ':9478'\nlog:\n  level: debug\n")
    accept("flow_map.yaml", "{interval: 10s, top-k: 5}\n")
    accept("quoted.yaml", "interval: \"10s\"\nmode: 'sample'\n")
    accept("yes.yaml", "latency: yes\n")
    accept("utf8_comment.yaml", "# caf\u00e9 \u2014 ok\ninterval: 1s\n")
    accept("deploy_example.yaml", open(os.path.join(HERE, "..", "..", "deploy", "hucprof.yaml")).read())
    accept("all_keys.yaml", "mode: sample\ninterval: 2s\nsample-frequency: 49\nlatency: false\n"
           "probe.attach: auto\nlog.level: info\nlog.format: json\nbpf.max-keys: 4096\n"
           "bpf.max-stacks: 1024\n")


# ------------------------------------------------------------------------------ web config files

class WebServe:
    """huc_web_serve: hucprof's web front without BPF (MetricsServer and --web.config.file)."""

    def __init__(self, workdir, config=None, wrapper=()):
        self.log_path = tempfile.mktemp(prefix="web_serve-", suffix=".log", dir=workdir)
        self.log = open(self.log_path, "wb")
        args = list(wrapper) + [ARGS.web_serve, "--web.listen-address", "127.0.0.1:0"]
        if config is not None:
            args += ["--web.config.file", config]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self.log,
                                     preexec_fn=limit_memory)
        line = self.proc.stdout.readline().decode(errors="replace")
        self.port = int(line.split()[2].rsplit(":", 1)[1]) if line.startswith("listening on ") else None

    def stderr(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read()

    def peak_rss_mib(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        return 0

    def stop(self, timeout=15):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = None
        self.log.close()
        return rc


def web_configs(c):
    s = "web_config"
    d = os.path.join(c.workdir, "web")
    os.makedirs(d)
    pki = wf.make_pki(os.path.join(d, "pki"))
    expired_crt, expired_key = wf.expired_certificate(os.path.join(d, "pki"))
    locked = wf.encrypted_key(pki["server.key"], os.path.join(d, "locked.key"))
    alice = wf.bcrypt("alice", "a")
    crt, key = pki["server.crt"], pki["server.key"]
    tls = "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (crt, key)

    def case(name, text, accept, says=None, warns=None, probe=None):
        path = os.path.join(d, "case.yml")
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        started = time.monotonic()
        server = WebServe(d, path)
        if server.port is None:
            try:
                rc = server.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.stop()
                return c.record(s, name, CRASH, "hung at start-up (a passphrase prompt?)")
            err = server.stderr()
            server.log.close()
            if rc < 0 or rc in (134, 139):
                return c.record(s, name, CRASH, "exit %d" % rc)
            if accept or rc != 2:
                return c.record(s, name, WRONG, "exit %d: %s" % (rc, err.decode(errors="replace")[-160:]))
            clean, line = one_clean_line(err)
            if not clean:
                return c.record(s, name, WRONG, line)
            if says and says not in line:
                return c.record(s, name, WRONG, "message %r lacks %r" % (line[-120:], says))
            return c.record(s, name, REJECTED, line[-100:])
        try:
            err = server.stderr().decode(errors="replace")
            if not accept:
                return c.record(s, name, WRONG, "started, expected a refusal")
            if warns and warns not in err:
                return c.record(s, name, WRONG, "no warning %r: %s" % (warns, err[-200:]))
            if probe:
                problem = probe(server.port)
            else:
                tls_on = isinstance(text, str) and "cert_file" in text
                problem = None if http_ok(server.port, tls=tls_on,
                                          auth="alice:a" if "alice" in str(text) else None) else (
                    "started but /metrics did not answer 200")
            if problem:
                return c.record(s, name, WRONG, problem)
            c.record(s, name, ACCEPTED, "served in %.2f s" % (time.monotonic() - started))
        finally:
            rc = server.stop()
            if rc != 0 and c.results[-1][1] == name and c.results[-1][2] == ACCEPTED:
                c.results[-1] = (s, name, CRASH if rc is None else WRONG, "stop: exit %s" % rc)

    case("empty", "", True)
    case("plain http, auth", "basic_auth_users:\n  alice: '%s'\n" % alice, True)
    case("tls", tls, True)
    case("tls + auth", tls + "basic_auth_users:\n  alice: '%s'\n" % alice, True)
    # The shipped example names files beside it that are not here: refused, naming the first.
    case("example file", open(os.path.join(HERE, "..", "..", "deploy", "web-config.yaml.example")).read(), False,
         "tls_server_config.cert_file")
    def mutual(port):
        # Without a client certificate nothing is served; with the CA's client certificate it is.
        if http_ok(port, tls=True):
            return "served without a client certificate"
        context = ssl.create_default_context(cafile=pki["ca.crt"])
        context.load_cert_chain(pki["client.crt"], pki["client.key"])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
            with context.wrap_socket(raw, server_hostname="localhost") as s:
                s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                answer = s.recv(65536)
        return None if answer.startswith(b"HTTP/1.1 200") else "refused the client certificate"

    case("mtls", tls + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: %s\n" % pki["ca.crt"],
         True, probe=mutual)
    case("expired certificate (warned)", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (
        expired_crt, expired_key), True, warns="expired on 2020-01-02")
    case("bcrypt cost 4 (warned)", "basic_auth_users:\n  alice: '%s'\n" % subprocess.run(
        ["htpasswd", "-nbBC", "4", "alice", "a"], capture_output=True, text=True,
        check=True).stdout.strip().split(":", 1)[1], True, warns="bcrypt cost 4 is below 10")
    case("min_version TLS10 (warned)", tls + "  min_version: TLS10\n", True, warns="RFC 8996")
    case("headers", "http_server_config:\n  headers:\n    X-Frame-Options: deny\n", True)
    case("rate limit", "rate_limit:\n  interval: 1s\n  burst: 10\n", True)
    case("encrypted key", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (crt, locked), False,
         "the key is encrypted")
    case("key of another cert", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (
        crt, pki["client.key"]), False, "does not belong")
    case("cert is a key", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (key, key), False,
         "no PEM certificate")
    case("missing cert file", "tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: %s\n" % key,
         False, "no such file")
    case("cert is /dev/zero", "tls_server_config:\n  cert_file: /dev/zero\n  key_file: %s\n" % key, False,
         "not a regular file")
    fifo = os.path.join(d, "cert.fifo")
    os.mkfifo(fifo)
    case("cert is a FIFO", "tls_server_config:\n  cert_file: %s\n  key_file: %s\n" % (fifo, key), False,
         "not a regular file")
    case("cert only", "tls_server_config:\n  cert_file: %s\n" % crt, False, "missing key_file")
    case("both cert and cert_file", tls + "  cert: x\n", False, "set one")
    case("min above max", tls + "  min_version: TLS13\n  max_version: TLS12\n", False, "is above")
    case("bad version", tls + "  min_version: SSL3\n", False, "min_version")
    case("bad cipher", tls + "  cipher_suites: [TLS_RC4]\n", False, "cipher_suites")
    case("bad curve", tls + "  curve_preferences: [CurveP999]\n", False, "curve_preferences")
    case("bad client auth", tls + "  client_auth_type: Sometimes\n", False, "client_auth_type")
    case("client ca without auth", tls + "  client_ca_file: %s\n" % pki["ca.crt"], False, "NoClientCert")
    case("verify without ca", tls + "  client_auth_type: RequireAndVerifyClientCert\n", False,
         "needs client_ca_file")
    case("sans without required cert", tls + "  client_allowed_sans: [x]\n", False, "client_allowed_sans")
    case("unknown key", "tls_server_confg:\n  cert_file: x\n", False, "unknown key")
    case("unknown header", "http_server_config:\n  headers:\n    X-Evil: 1\n", False, "unknown key")
    case("header line break", "http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nX: y\"\n",
         False, "line break")
    case("header bad value", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", False, "is not one of")
    case("user clear password", "basic_auth_users:\n  alice: secret\n", False, "not a bcrypt hash")
    case("user md5", "basic_auth_users:\n  alice: '$apr1$x$y'\n", False, "not a bcrypt hash")
    case("user cost 31", "basic_auth_users:\n  alice: '$2y$31%s'\n" % alice[6:], False, "above 14")
    case("user colon", "basic_auth_users:\n  'a:b': '%s'\n" % alice, False, "not a valid user name")
    case("users list", "basic_auth_users: [alice]\n", False, "expected a mapping")
    case("rate no burst", "rate_limit:\n  interval: 1s\n", False, "burst")
    case("rate bad interval", "rate_limit:\n  interval: soon\n  burst: 1\n", False, "interval")
    case("rate huge burst", "rate_limit:\n  interval: 1s\n  burst: 99999999999\n", False, "whole number")
    case("http2 maybe", "http_server_config:\n  http2: maybe\n", False, "boolean")
    case("laughs", "a: &a [x, x]\nb: [*a, *a]\n", False, "anchors")
    case("nested 1 MiB", ("a: " + "[" * MiB)[:MiB], False, "nested more than 64")
    case("NUL", b"basic_auth_users:\x00\n", False, "control character")
    case("not UTF-8", b"tls_server_config\xff:\n", False, "not UTF-8")
    case("tls is a list", "tls_server_config: [a]\n", False, "expected a mapping")
    case("root is a list", "- a\n", False, "expected a mapping")
    case("1000 users", "basic_auth_users:\n" + "".join("  u%d: '%s'\n" % (i, alice) for i in range(1001)),
         False, "more than 1000 users")
    for name, path in (("web config missing", os.path.join(d, "none.yml")), ("web config /dev/zero", "/dev/zero"),
                       ("web config directory", d), ("web config FIFO", fifo)):
        started = time.monotonic()
        r = subprocess.run([ARGS.web_serve, "--web.listen-address", "127.0.0.1:0", "--web.config.file", path],
                           capture_output=True, timeout=30)
        clean, line = one_clean_line(r.stderr)
        if r.returncode == 2 and clean and not r.stdout:
            c.record(s, name, REJECTED, line[-90:])
        else:
            c.record(s, name, WRONG, "exit %d: %r" % (r.returncode, r.stderr[-160:]))
        del started
    # hucprof run itself says a web config error in one line, before its start-up lines.
    bad = os.path.join(d, "bad.yml")
    with open(bad, "w") as f:
        f.write("tls_server_config:\n  cert_fil: x\n")
    cli_case(c, s, "hucprof run: bad web config", ["run", "--kallsyms", KALLSYMS, "--web.listen-address",
                                                   "127.0.0.1:0", "--web.config.file", bad], 2, "unknown key")


def http_ok(port, tls=False, auth=None):
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
    if auth:
        import base64
        head += b"Authorization: Basic " + base64.b64encode(auth.encode()) + b"\r\n"
    answer = exchange(port, head + b"\r\n", tls=tls)
    return answer is not None and answer.startswith(b"HTTP/1.1 200") and SERIES in answer


def exchange(port, data, tls=False, timeout=5, half_close=False):
    """Everything the server sends back until it closes (or `timeout` of silence)."""
    try:
        raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    except OSError:
        return None
    try:
        s = raw
        if tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            s = context.wrap_socket(raw, server_hostname="localhost")
        s.sendall(data)
        if half_close and not tls:
            s.shutdown(socket.SHUT_WR)
        answer = b""
        while True:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except (ConnectionResetError, ssl.SSLError):
                break
            if not chunk:
                break
            answer += chunk
        return answer
    except OSError:
        return b""
    finally:
        raw.close()


# ------------------------------------------------------------------------------- HTTP requests

def status_of(answer):
    """The status of each response in `answer` (several when pipelined)."""
    statuses, rest = [], answer
    while rest.startswith(b"HTTP/1."):
        line, _, rest = rest.partition(b"\r\n")
        try:
            statuses.append(int(line.split()[1]))
        except (IndexError, ValueError):
            break
        head, _, rest = rest.partition(b"\r\n\r\n")
        length = 0
        for h in head.split(b"\r\n"):
            if h.lower().startswith(b"content-length:"):
                length = int(h.split(b":", 1)[1])
        rest = rest[length:]
    return statuses


def http_requests(c):
    s = "http"
    plain = WebServe(c.workdir)
    d = os.path.join(c.workdir, "http-tls")
    os.makedirs(d)
    pki = wf.make_pki(d)
    config = os.path.join(d, "web.yml")
    with open(config, "w") as f:
        f.write(wf.web_config(pki["server.crt"], pki["server.key"], users={"alice": wf.bcrypt("alice", "a")}))
    secure = WebServe(c.workdir, config)
    if plain.port is None or secure.port is None:
        c.record(s, "servers start", CRASH, "huc_web_serve did not start")
        return
    count = [0]

    def case(name, data, expect, server=plain, tls=False, responses=1, timeout=5, half_close=False):
        """`expect`: the status of each response, or "close" when the server owes no answer."""
        count[0] += 1
        answer = exchange(server.port, data, tls=tls, timeout=timeout, half_close=half_close)
        if server.proc.poll() is not None:
            return c.record(s, name, CRASH, "the server exited with %s" % server.proc.returncode)
        if answer is None:
            return c.record(s, name, CRASH, "the server refused connections")
        got = status_of(answer)
        if expect == "close":
            outcome = REJECTED if not got or all(g == 400 for g in got) else WRONG
            return c.record(s, name, outcome, "statuses %s" % got)
        if isinstance(expect, tuple):  # the RFC allows either
            want = [got[0]] if len(got) == 1 and got[0] in expect else [expect[0]]
        else:
            want = [expect] * responses if isinstance(expect, int) else list(expect)
        if got != want:
            return c.record(s, name, WRONG, "statuses %s, expected %s: %r" % (got, want, answer[:120]))
        if count[0] % 10 == 0 and not http_ok(plain.port):
            return c.record(s, name, CRASH, "the server stopped answering /metrics")
        c.record(s, name, ACCEPTED if all(w < 400 for w in want) else REJECTED, "statuses %s" % got)

    def req(line, headers="Host: x\r\n", body=b""):
        return line.encode() + b"\r\n" + headers.encode() + b"\r\n" + body

    close = "Host: x\r\nConnection: close\r\n"
    for method, expect in (("GET", 200), ("HEAD", 200), ("POST", 405), ("PUT", 405), ("DELETE", 405),
                           ("OPTIONS", 405), ("PATCH", 405), ("TRACE", 405), ("BREW", 405), ("get", 405)):
        case("%s /metrics" % method, req("%s /metrics HTTP/1.1" % method, close), expect)
    for target, expect in (("/", 200), ("/metrics?x=1&y", 200), ("/%6detrics", 200), ("/metrics/", 404),
                           ("//metrics", 404), ("/nope", 404), ("/../../etc/passwd", 404),
                           ("/metrics%00", 400), ("/metrics%zz", 400), ("/metrics%", 400),
                           ("http://x/metrics", 200), ("http://x:9478/metrics?a=1", 200),
                           ("https://x/metrics", (200, 400)), ("metrics", 400), ("*", 400), ("x:80", 400),
                           ("/" + "a" * 20000, 431), ("/metrics?" + "a=1&" * 1000, 200),
                           ("/\u00e9", (400, 404))):
        case("GET %r" % target[:40], req("GET %s HTTP/1.1" % target, close), expect)
    # RFC 9110 6.2: a higher minor version is served as the highest implemented (1.1); 15.6.6:
    # 505 for a major version not supported; what is no version at all is malformed (D13).
    for version, expect in (("HTTP/1.0", 200), ("HTTP/2.0", 505), ("HTTP/1.2", 200),
                            ("HTTP/9.9", 505), ("HTTP/0.9", 505), ("HTTP/1.1x", 400), ("HTTP/1", 400), ("http/1.1", 400),
                            ("", 400), ("HTTP/1.1 extra", 400), ("HTTP/1.10", 400)):
        case("version %r" % version, req(("GET /metrics " + version).rstrip(), close), expect)
    for name, headers, expect in (
            ("no Host", "Connection: close\r\n", 400),
            ("two Hosts", "Host: a\r\nHost: b\r\nConnection: close\r\n", 400),
            ("two equal Hosts", "Host: a\r\nHost: a\r\nConnection: close\r\n", 400),
            ("Host with a space", "Host: a b\r\nConnection: close\r\n", 400),
            ("Host with a slash", "Host: a/b\r\nConnection: close\r\n", 400),
            ("empty Host", "Host:\r\nConnection: close\r\n", 200),
            ("Host with port", "Host: [::1]:9478\r\nConnection: close\r\n", 200),
            ("100 headers", "".join("X-%d: v\r\n" % i for i in range(100)) + close, 200),
            ("17 KB of header", "X-Big: " + "v" * 17000 + "\r\n" + close, 431),
            ("header without colon", "Broken\r\n" + close, 400),
            ("header name with space", "Bad Name: v\r\n" + close, 400),
            # RFC 9112 5.2: reject, or replace the fold by spaces (what Beast does).
            ("obsolete line folding", "X-A: v\r\n  folded\r\n" + close, (200, 400)),
            ("NUL in a header", "X-A: a\x00b\r\n" + close, 400),
            ("DEL in a header name", "X\x7fA: v\r\n" + close, 400),
            ("bare LF line ends", None, (200, 400)),
            ("Connection: keep-alive, 1.0", "Host: x\r\nConnection: close, keep-alive\r\n", 200),
            ("Expect: 100-continue", "Expect: 100-continue\r\n" + close, 200),
            ("Accept-Encoding gzip", "Accept-Encoding: gzip\r\n" + close, 200),
            ("Accept-Encoding gzip;q=0", "Accept-Encoding: gzip;q=0\r\n" + close, 200),
            ("Accept-Encoding garbage", "Accept-Encoding: ;;;,q=x,\x01\r\n" + close, 400),
            ("Authorization on plain", "Authorization: Basic !!!\r\n" + close, 200)):
        if headers is None:
            case(name, b"GET /metrics HTTP/1.1\nHost: x\nConnection: close\n\n", expect)
        else:
            case(name, req("GET /metrics HTTP/1.1", headers), expect)
    # Framing (RFC 9112 6.3): the body of a request whose end is unknown is never a request.
    smuggled = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    for te, expect in (("gzip", 400), ("xchunked", 400), ("chunked, identity", 400), ("identity", 400),
                       ("chunked, chunked", 400), ("gzip, chunked", 501), ("", 400), ("chunked;x=1", 400),
                       ("CHUNKED", 200)):
        body = b"0\r\n\r\n" if expect in (200, 501) else smuggled
        case("Transfer-Encoding %r" % te, req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: %s\r\n" % te,
                                              body) + (b"" if expect != 200 else b""), expect)
    case("TE and Content-Length", req("GET /metrics HTTP/1.1",
                                      "Host: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n",
                                      b"0\r\n\r\n" + smuggled), 400)
    case("TE in HTTP/1.0", req("GET /metrics HTTP/1.0", "Transfer-Encoding: chunked\r\n", b"0\r\n\r\n" + smuggled),
         400)
    case("TE split over two fields", req("GET /metrics HTTP/1.1",
                                         "Host: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n",
                                         smuggled), 400)
    case("chunked body then a request", req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: chunked\r\n",
                                            b"5\r\nhello\r\n0\r\n\r\n") + req("GET /metrics HTTP/1.1", close),
         [200, 200])
    case("bad chunk size", req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: chunked\r\n",
                               b"zz\r\nhello\r\n0\r\n\r\n"), 400)
    case("chunk larger than the body limit", req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: chunked\r\n",
                                                 b"20000\r\n" + b"x" * 0x20000 + b"\r\n0\r\n\r\n"), 413)
    case("chunk size overflow", req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: chunked\r\n",
                                    b"ffffffffffffffffff\r\n"), (400, 413))
    # Trailers count against the 16 KiB head; a chunk-size line may take 1024 bytes (D1, D2).
    chunked = "Host: x\r\nTransfer-Encoding: chunked\r\n"
    for name, body, expect in (
            ("chunk size 2^64", b"10000000000000000\r\nx\r\n0\r\n\r\n", 400),
            ("chunk size of 100 KB hex digits", b"f" * 100000 + b"\r\n", 400),
            ("chunk size of 100 KB leading zeros", b"0" * 100000 + b"1\r\nx\r\n0\r\n\r\n", 400),
            ("chunk extension of 2 KB", b"1;" + b"e" * 2000 + b"\r\nx\r\n0\r\n\r\n", 400),
            ("chunk extensions past the body", (b"1;" + b"e" * 1000 + b"\r\nx\r\n") * 70 + b"0\r\n\r\n", 413),
            ("chunk extension of 1 KB", b"1;" + b"e" * 1000 + b"\r\nx\r\n0\r\n\r\n", 200),
            ("trailer value of 65,536 bytes", b"0\r\nX-T: " + b"t" * 65536 + b"\r\n\r\n", 431),
            ("trailer name of 70,000 bytes", b"0\r\n" + b"n" * 70000 + b": v\r\n\r\n", 431),
            ("trailer of 60,000 bytes", b"0\r\nX-T: " + b"t" * 60000 + b"\r\n\r\n", 431),
            ("400 small trailers", b"0\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 40) for i in range(400))
             + b"\r\n", 431),
            ("a trailer of 1 KB", b"0\r\nX-T: " + b"t" * 1000 + b"\r\n\r\n", 200)):
        case(name, req("GET /metrics HTTP/1.1", chunked + "Connection: close\r\n", body), expect)
    case("pipelined after an oversized trailer", req("GET /metrics HTTP/1.1", chunked, b"0\r\nX-T: " + b"t" * 20000
                                                     + b"\r\n\r\n") + req("GET /metrics HTTP/1.1", close), [431])
    case("pipelined after a long chunk extension", req("GET /metrics HTTP/1.1", chunked, b"1;" + b"e" * 2000)
         + req("GET /metrics HTTP/1.1", close), [400])
    case("pipelined after HTTP/2.0", req("GET /metrics HTTP/2.0") + req("GET /metrics HTTP/1.1", close), [505])
    flood_case(c, s, plain)
    for length, body, expect in (("5", b"hello", 200), ("-1", b"", 400), ("abc", b"", 400), ("1, 2", b"xy", 400),
                                 ("100000", b"", 413), ("0", b"", 200), (" 5", b"hello", 200)):
        case("Content-Length %r" % length, req("GET /metrics HTTP/1.1", "Host: x\r\nConnection: close\r\n"
                                               "Content-Length: %s\r\n" % length, body), expect)
    case("two Content-Lengths", req("GET /metrics HTTP/1.1", "Host: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n",
                                    b"ab"), 400)
    case("3 pipelined", req("GET /metrics HTTP/1.1") * 2 + req("GET /metrics HTTP/1.1", close), [200, 200, 200])
    case("100 pipelined", req("GET / HTTP/1.1") * 99 + req("GET / HTTP/1.1", close), [200] * 100, timeout=10)
    # A bad target in a well-framed request: answered, and the next request is one.
    case("pipelined after a 400", req("GET /metrics%zz HTTP/1.1") + req("GET /metrics HTTP/1.1", close),
         [400, 200])
    case("pipelined after a framing 400", req("GET /metrics HTTP/1.1", "Host: x\r\nTransfer-Encoding: gzip\r\n")
         + req("GET /metrics HTTP/1.1", close), [400])
    case("random bytes", bytes(range(256)) * 4, "close")
    case("empty line only", b"\r\n\r\n", "close", half_close=True)
    case("nothing, then close", b"", "close", half_close=True)
    case("TLS ClientHello to the plain port", bytes.fromhex("16030100a5010000a10303") + os.urandom(160), "close")
    case("a request line of 20 KB", b"GET /" + b"a" * 20000, 431)
    case("half a request, then close", b"GET /metrics HTTP/1.1\r\nHo", "close", half_close=True)
    # TLS with basic auth.
    ok = "Host: x\r\nConnection: close\r\nAuthorization: Basic YWxpY2U6YQ==\r\n"
    case("tls: right password", req("GET /metrics HTTP/1.1", ok), 200, server=secure, tls=True)
    for name, auth in (("tls: no credentials", ""), ("tls: wrong password", "Authorization: Basic YWxpY2U6Yg==\r\n"),
                       ("tls: unknown user", "Authorization: Basic Ym9iOmE=\r\n"),
                       ("tls: not base64", "Authorization: Basic !!!\r\n"),
                       ("tls: bearer", "Authorization: Bearer x\r\n"),
                       ("tls: 10 KB of credentials", "Authorization: Basic " + "QUFB" * 2500 + "\r\n"),
                       ("tls: no colon", "Authorization: Basic YWxpY2U=\r\n")):
        case(name, req("GET /metrics HTTP/1.1", "Host: x\r\nConnection: close\r\n" + auth), 401, server=secure,
             tls=True)
    case("tls: every path needs credentials", req("GET /nope HTTP/1.1", close), 401, server=secure, tls=True)
    case("plain HTTP to the TLS port", req("GET /metrics HTTP/1.1", close), 400, server=secure)
    case("tls: smuggled after a TE", req("GET /metrics HTTP/1.1", ok + "Transfer-Encoding: gzip\r\n", smuggled),
         400, server=secure, tls=True)
    # Held connections and bursts: the cap holds, scrapes go through.
    held = wf.hold_slow_clients(plain.port)
    scraped = all(http_ok(plain.port) for _ in range(5))
    c.record(s, "50 slow clients held, 5 scrapes", ACCEPTED if scraped else WRONG, "")
    for sock in held:
        sock.close()
    burst_case(c, s, "600 back-to-back connections", [], 600, 513)
    if shutil.which("prlimit"):
        burst_case(c, s, "1500 at once, nofile 1024", ["prlimit", "--nofile=1024"], 1500, 1024 - 32)
        burst_case(c, s, "600 at once, nofile 256", ["prlimit", "--nofile=256"], 600, 256 - 32)
    else:
        c.record(s, "bursts under prlimit", SKIPPED, "prlimit is not installed")
    for server, name in ((plain, "plain"), (secure, "tls")):
        rss = server.peak_rss_mib()
        rc = server.stop()
        outcome = ACCEPTED if rc == 0 and rss < CLI_RSS_MIB else CRASH
        c.record(s, "%s server after the campaign" % name, outcome, "exit %s, peak RSS %.0f MiB" % (rc, rss))


def flood_case(c, s, server, total=256 * MiB):
    """D2: "1;" then 256 MiB of chunk extension, streamed until the server answers. It must refuse
    at the chunk-size line's bound (1024 bytes), long before the client is done, and hold no
    more memory for it."""
    import select
    name = "256 MiB of chunk extension"
    before = server.peak_rss_mib()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    sent, answer = 0, b""
    try:
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;")
        piece = b"e" * (64 * 1024)
        while sent < total:
            readable, writable, _ = select.select([sock], [sock], [], 60)
            if readable or not writable:
                break
            try:
                sent += sock.send(piece[:total - sent])
            except OSError:
                break
        try:
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
        except OSError:
            pass
    finally:
        sock.close()
    after = server.peak_rss_mib()
    detail = "statuses %s after %.1f MiB sent, peak RSS %.0f -> %.0f MiB" % (status_of(answer), sent / MiB,
                                                                          before, after)
    if server.proc.poll() is not None or after - before > 32 or not http_ok(server.port):
        return c.record(s, name, CRASH, detail)
    if status_of(answer) != [400] or sent >= total // 2:
        return c.record(s, name, WRONG, detail)
    c.record(s, name, REJECTED, detail)


def burst_case(c, s, name, wrapper, count, max_sockets):
    server = WebServe(c.workdir, wrapper=wrapper)
    held = []
    try:
        for _ in range(count):
            try:
                held.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
            except OSError:
                break
        started = time.monotonic()
        scraped = all(http_ok(server.port) for _ in range(5))
        took = time.monotonic() - started
        deadline = time.monotonic() + 10
        while socket_count(server.proc.pid) > max_sockets and time.monotonic() < deadline:
            time.sleep(0.2)
        sockets = socket_count(server.proc.pid)
    finally:
        for sock in held:
            sock.close()
        rc = server.stop()
    log = server.stderr().decode(errors="replace")
    detail = "%d held, %d sockets in the server, 5 scrapes in %.2f s, exit %s" % (len(held), sockets, took, rc)
    if not scraped or rc != 0:
        return c.record(s, name, CRASH, detail)
    if sockets > max_sockets or "Too many open files" in log:
        return c.record(s, name, WRONG, detail)
    c.record(s, name, ACCEPTED, detail)


def socket_count(pid):
    n = 0
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            n += os.readlink("/proc/%d/fd/%s" % (pid, fd)).startswith("socket:")
        except OSError:
            pass
    return n


# -------------------------------------------------------------------------------------- signals

def can_record():
    """Why `record` cannot attach here (not root, no perf events), None when it can; asked once."""
    if ARGS.can_record is None:
        if os.geteuid() != 0:
            ARGS.can_record = "not root"
        else:
            r = subprocess.run([ARGS.hucprof, "record", "--mode", "sample", "--duration", "1s", "-o",
                                os.path.join(ARGS.workdir_for_probe, "probe.pb.gz")], capture_output=True,
                               text=True, timeout=120)
            ARGS.can_record = "" if r.returncode == 0 else "record cannot attach here: " + r.stderr.strip()[-200:]
    return ARGS.can_record or None


class Run:
    """`hucprof run --mode sample` on a free loopback port, its log in a file."""

    def __init__(self, workdir, extra=(), env=None):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.log_path = tempfile.mktemp(prefix="run-", suffix=".log", dir=workdir)
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([ARGS.hucprof, "run", "--mode", "sample", "--interval", "500ms",
                                      "--web.listen-address", "127.0.0.1:%d" % self.port] + list(extra),
                                     stdout=subprocess.DEVNULL, stderr=self.log, stdin=subprocess.DEVNULL,
                                     env=env)

    def text(self):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_for(self, text, timeout=30, count=1):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.text().count(text) >= count:
                return True
            if self.proc.poll() is not None:
                return False
            time.sleep(0.1)
        return False

    def finish(self, timeout=30):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return None
        finally:
            self.log.close()


def signals(c):
    s = "signals"
    why = can_record()
    names = ["HUP", "QUIT", "USR1", "USR2", "PIPE", "WINCH", "CONT", "URG", "HUP with a broken config",
             "HUP with 1 MiB of [", "HUP applying top-k", "TERM", "INT"] + [
        "TERM after %d ms" % ms for ms in (5, 20, 50, 100, 200)] + [
        "record: INT", "record: TERM", "record: HUP", "record: QUIT ignored", "record -- sleep: INT",
        "record -- stubborn: INT, INT", "record -- stubborn: TERM, TERM", "record -- exit 3"]
    if why:
        for name in names:
            c.record(s, name, SKIPPED, why)
        return
    config = os.path.join(c.workdir, "signals.yaml")
    with open(config, "w") as f:
        f.write("interval: 500ms\n")
    daemon = Run(c.workdir, ["--config", config])
    if not daemon.wait_for("serving metrics on", 60):
        c.record(s, "run starts", CRASH, daemon.text()[-300:])
        daemon.finish()
        return
    logged = {"HUP": "SIGHUP: re-read", "QUIT": "received SIGQUIT: ignored", "USR1": "received SIGUSR1: ignored",
              "USR2": "received SIGUSR2: ignored"}
    for name in ("HUP", "QUIT", "USR1", "USR2", "PIPE", "WINCH", "CONT", "URG"):
        before = daemon.text().count(logged.get(name, "\0"))
        daemon.proc.send_signal(getattr(signal, "SIG" + name))
        time.sleep(0.3)
        alive = daemon.proc.poll() is None and http_ok_plain(daemon.port)
        said = name not in logged or daemon.wait_for(logged[name], 10, before + 1)
        c.record(s, name, ACCEPTED if alive and said else (WRONG if alive else CRASH),
                 "survived and logged" if alive and said else daemon.text()[-200:])
    for name, text, expect in (("HUP with a broken config", "intervall: 1s\n", "keeping the running settings"),
                               ("HUP with 1 MiB of [", ("a: " + "[" * MiB)[:MiB], "nested more than 64"),
                               ("HUP applying top-k", "top-k: 5\n", "applied top-k 20 -> 5")):
        with open(config, "w") as f:
            f.write(text)
        rss_before = vm_hwm_mib(daemon.proc.pid)
        daemon.proc.send_signal(signal.SIGHUP)
        said = daemon.wait_for(expect, 20)
        grown = vm_hwm_mib(daemon.proc.pid) - rss_before
        alive = daemon.proc.poll() is None and http_ok_plain(daemon.port)
        outcome = CRASH if not alive or grown > 16 else (ACCEPTED if said else WRONG)
        c.record(s, name, outcome, "peak RSS +%.1f MiB" % grown)
    daemon.proc.send_signal(signal.SIGTERM)
    rc = daemon.finish()
    c.record(s, "TERM", ACCEPTED if rc == 0 and "received SIGTERM, detaching" in daemon.text() else WRONG,
             "exit %s" % rc)
    other = Run(c.workdir)
    if other.wait_for("serving metrics on", 60):
        other.proc.send_signal(signal.SIGINT)
    rc = other.finish()
    c.record(s, "INT", ACCEPTED if rc == 0 and "received SIGINT, detaching" in other.text() else WRONG,
             "exit %s" % rc)
    for ms in (5, 20, 50, 100, 200):
        early = Run(c.workdir)
        time.sleep(ms / 1000)
        early.proc.send_signal(signal.SIGTERM)
        rc = early.finish(60)
        name = "TERM after %d ms" % ms
        if rc is None:
            c.record(s, name, CRASH, "did not stop")
        elif rc == -signal.SIGTERM and not early.text():
            # Before main(): the dynamic loader was still mapping the libraries, and no program
            # can act on a signal before its first instruction. The signal's default ended it.
            c.record(s, name, ACCEPTED, "ended by SIGTERM before main() ran (the loader's time)")
        else:
            ok = rc == 0 and "received SIGTERM" in early.text()
            c.record(s, name, ACCEPTED if ok else WRONG, "exit %s%s" % (rc, "" if ok else ", no log line"))
    record_signals(c, s)


def http_ok_plain(port):
    """The daemon answers /metrics (its series depend on what this machine runs)."""
    answer = exchange(port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    return answer is not None and answer.startswith(b"HTTP/1.1 200") and b"hucprof_drains_total" in answer


def vm_hwm_mib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0


def record_signals(c, s):
    stubborn = [sys.executable, "-c", "import signal, time\n"
                "for s in (signal.SIGINT, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)\n"
                "time.sleep(120)"]
    cases = (("record: INT", [], [signal.SIGINT], 0, "received SIGINT, stopping"),
             ("record: TERM", [], [signal.SIGTERM], 0, "received SIGTERM, stopping"),
             ("record: HUP", [], [signal.SIGHUP], 0, "received SIGHUP, stopping"),
             ("record: QUIT ignored", ["--duration", "8s"], [signal.SIGQUIT], 0, "received SIGQUIT: ignored"),
             ("record -- sleep: INT", ["--", "sleep", "60"], [signal.SIGINT], 0, "received SIGINT, stopping"),
             ("record -- stubborn: INT, INT", ["--"] + stubborn, [signal.SIGINT, signal.SIGINT], 0,
              "received SIGINT again: killing"),
             ("record -- stubborn: TERM, TERM", ["--"] + stubborn, [signal.SIGTERM, signal.SIGTERM], 0,
              "received SIGTERM again: killing"),
             ("record -- exit 3", ["--", "sh", "-c", "exit 3"], [], 0, "exited with status 3"))
    for name, extra, sent, expect_rc, says in cases:
        out = tempfile.mktemp(prefix="rec-", suffix=".pb.gz", dir=c.workdir)
        duration = [] if "--duration" in extra or "--" in extra else ["--duration", "60s"]
        proc = subprocess.Popen([ARGS.hucprof, "record", "--mode", "sample", "-o", out] + duration + extra,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        log = []
        reader = threading.Thread(target=lambda: log.append(proc.stderr.read()))
        reader.start()
        time.sleep(4)  # attached and recording
        for sig in sent:
            proc.send_signal(sig)
            time.sleep(1.5)
        try:
            rc = proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = None
        reader.join()
        text = b"".join(log).decode(errors="replace")
        if rc is None:
            c.record(s, name, CRASH, "did not end")
            continue
        written = os.path.exists(out) and run_cli(["report", out])[0] == 0
        ok = rc == expect_rc and says in text and written
        c.record(s, name, ACCEPTED if ok else WRONG, "exit %s, file %s" % (rc, "read" if written else "MISSING"))


# -------------------------------------------------------------------------------- profile files

def report_files(c):
    s = "report_files"
    d = os.path.join(c.workdir, "profiles")
    os.makedirs(d)
    small = pprof_files.profile([[0, 1], [2, 1]], [(0, 5), (1, 3)],
                                ["__check_object_size", "udp_recvmsg", "__virt_addr_valid"])
    good = pprof_files.gzipped(small)

    def file_of(name, data):
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def reject(name, data, says=None, rss_mib=CLI_RSS_MIB):
        path = file_of(name, data) if data is not None else name
        cli_case(c, s, os.path.basename(name)[:50], ["report", path], 2, says, rss_mib=rss_mib)

    def accept(name, data, rss_mib=CLI_RSS_MIB, timeout=CLI_SECONDS):
        path = file_of(name, data)
        cli_case(c, s, name, ["report", path], 0, accept=True, rss_mib=rss_mib, timeout=timeout,
                 check=lambda: None)

    accept("good.pb.gz", good)
    accept("good.pb", small)
    accept("two_members.pb.gz", pprof_files.gzipped(small, members=2))
    accept("five_members.pb.gz", pprof_files.gzipped(small, members=5))
    accept("merged_duplicates.pb.gz", pprof_files.gzipped(pprof_files.profile([[0]], [(0, 1)] * 1000, ["f"])))
    accept("200k_samples.pb.gz", pprof_files.gzipped(pprof_files.many_samples(samples=200_000)), rss_mib=128,
           timeout=60)
    accept("no_samples.pb.gz", pprof_files.gzipped(pprof_files.profile([], [], [])))
    for cut in (1, 2, 10, 20, len(good) // 2, len(good) - 4, len(good) - 1):
        reject("cut_%d.pb.gz" % cut, good[:cut])
    for cut in (3, len(small) // 2, len(small) - 1):
        reject("cut_%d.pb" % cut, small[:cut], "not a pprof profile")
    flipped = bytearray(good)
    for i in range(12, min(len(flipped), 60)):
        flipped[i] ^= 0xA5
    reject("flipped.pb.gz", bytes(flipped))
    reject("junk_after.pb.gz", good + b"junk", "after the end of the gzip data")
    reject("zeros_after.pb.gz", good + b"\0" * 512, "after the end of the gzip data")
    reject("empty.pb.gz", b"", "empty file")
    reject("text.pb.gz", b"hello, not a profile\n" * 10, "not a pprof profile")
    reject("gzip_text.pb.gz", pprof_files.gzipped(b"\x00\x01\x02" * 50), "not a pprof profile")
    reject("magic_only.pb.gz", b"\x1f\x8b", "gzip")
    # Zeros are not protobuf: refused at the first byte, nothing more is inflated. A string
    # field of 300 MiB is valid protobuf and is read (skipped) up to the inflated bound.
    reject("zeros_bomb.pb.gz", zero_bomb(b"", 300 * MiB), "not a pprof profile")
    reject("string_bomb.pb.gz", zero_bomb(pprof_files.varint(6 << 3 | 2) + pprof_files.varint(300 * MiB),
                                          300 * MiB), "inflates to more than 256 MiB")
    reject("long_names.pb.gz", pprof_files.gzipped(pprof_files.long_names()), "100000 bytes long")
    reject("long_label.pb.gz", pprof_files.gzipped(pprof_files.profile([[0]], [(0, 1)], ["f"],
                                                                       labels=("c" * 5000, "s", "k"))),
           "a label value is 5000 bytes long")
    reject("deep_stack.pb.gz", pprof_files.gzipped(pprof_files.profile([list(range(2000))], [(0, 1)],
                                                                       ["f%d" % i for i in range(2000)])),
           "a stack of more than 1024 frames")
    reject("70k_label_sets.pb.gz", pprof_files.gzipped(pprof_files.profile(
        [[0]] * 70_000, ((i, 1) for i in range(70_000)), ["f"], callsites=["c%d" % i for i in range(70_000)])),
        "distinct label sets")
    reject("70k_stacks.pb.gz", pprof_files.gzipped(pprof_files.profile(
        [[i % 300, (i // 300) % 300] for i in range(70_000)], ((i, 1) for i in range(70_000)),
        ["f%d" % i for i in range(300)])), "distinct stacks")
    foreign = (pprof_files.field(1, pprof_files.number(1, 1) + pprof_files.number(2, 2)) +
               pprof_files.field(6, b"") + pprof_files.field(6, b"alloc_space") + pprof_files.field(6, b"bytes"))
    reject("foreign.pb", foreign, "no sample type hucprof knows")
    reject("no_string_table.pb", pprof_files.number(9, 5), "no string table")
    reject("bad_string_index.pb", pprof_files.field(1, pprof_files.number(1, 99)) + pprof_files.field(6, b""),
           "names string 99")
    reject("dangling_location.pb", small + pprof_files.field(2, pprof_files.packed(1, [777]) +
                                                             pprof_files.packed(2, [1, 1])), "location 777")
    reject("negative_value.pb", small + pprof_files.field(2, pprof_files.packed(1, [1]) +
                                                          pprof_files.packed(2, [-5, 1])), "negative")
    reject("wrong_value_count.pb", small + pprof_files.field(2, pprof_files.packed(1, [1]) +
                                                             pprof_files.packed(2, [1])), "values for 2")
    reject("group_wire_type.pb", b"\x0b\x0c", "not a pprof profile")
    reject("huge_length.pb", b"\x12\xff\xff\xff\xff\x0f", "more than the 65536 hucprof reads")
    # D7: a field outside pprof's schema is skipped as it streams by; past the inflated bound, refused.
    accept("unknown_field_200MiB.pb.gz", pprof_files.gzipped_with_unknown_field(small, 200 * MiB))
    reject("unknown_field_1GiB.pb.gz", pprof_files.gzipped_with_unknown_field(small, 1 << 30),
           "inflates to more than 256 MiB")
    # D9: three samples of INT64_MAX: their sum is refused, not wrapped.
    int64_max = pprof_files.field(2, pprof_files.packed(1, [1]) + pprof_files.packed(2, [2 ** 63 - 1, 1]))
    reject("int64_max_sums.pb", small + int64_max * 3, "add up to more than 9223372036854775807")
    # D8: a string that is not UTF-8: hucprof's one line, not libprotobuf's log before it.
    reject("invalid_utf8_string.pb", small + pprof_files.field(6, b"\xff\xfe\xc3("), "UTF-8")
    # D6: names that would retitle a terminal or break the SVG: printed as \xNN.
    hostile = file_of("hostile_names.pb.gz", pprof_files.gzipped(pprof_files.hostile_profile()))
    cli_case(c, s, "hostile_names.pb.gz", ["report", hostile], 0, accept=True,
             check=lambda: printable_report(hostile))
    svg = os.path.join(d, "hostile.svg")
    cli_case(c, s, "hostile_names.pb.gz --flamegraph", ["report", hostile, "--flamegraph", svg], 0, accept=True,
             check=lambda: well_formed_svg(svg))
    reject("/dev/zero", None, "not a regular file")
    fifo = os.path.join(d, "fifo.pb.gz")
    os.mkfifo(fifo)
    reject(fifo, None, "not a regular file")
    reject(d, None, "Is a directory")
    reject(os.path.join(d, "missing.pb.gz"), None, "No such file")
    loop = os.path.join(d, "loop.pb.gz")
    os.symlink(loop, loop)
    reject(loop, None, "Too many levels of symbolic links")


def printable_report(path):
    """What `report` prints of hostile names: printable, the escapes in place."""
    out = subprocess.run([ARGS.hucprof, "report", path], capture_output=True, timeout=CLI_SECONDS).stdout
    problem = printable_lines(out)
    if problem:
        return problem
    missing = [v for v in pprof_files.SHOWN.values() if v not in out.decode()]
    return "not shown escaped: %r" % missing if missing else None


def well_formed_svg(path):
    import xml.etree.ElementTree as ET
    try:
        ET.parse(path)
    except ET.ParseError as e:
        return "the SVG is not well-formed XML: %s" % e
    return None


def zero_bomb(prefix, size):
    """gzip of `prefix` and `size` zero bytes, made a MiB at a time (a few hundred KB)."""
    import zlib
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"\0" * MiB
    return b"".join([z.compress(prefix)] + [z.compress(chunk) for _ in range(size // MiB)] + [z.flush()])


# --------------------------------------------------------------------------------- output paths

def output_paths(c):
    s = "output_paths"
    d = os.path.join(c.workdir, "outputs")
    os.makedirs(d)
    profile = os.path.join(d, "in.pb.gz")
    with open(profile, "wb") as f:
        f.write(pprof_files.gzipped(pprof_files.profile([[0, 1]], [(0, 5)], ["__check_object_size", "udp_recvmsg"])))
    nodes = {}  # path -> (mode type, rdev): checked unchanged at the end

    def node(name, kind, major, minor):
        path = os.path.join(d, name)
        os.mknod(path, 0o600 | kind, os.makedev(major, minor))
        nodes[path] = (kind, os.makedev(major, minor))
        return path

    def flame(name, out, expect_rc, says=None, accept=False, check=None):
        cli_case(c, s, "--flamegraph " + name, ["report", "--flamegraph", out, profile], expect_rc, says,
                 accept=accept, check=check)

    def rec(name, out, says):
        cli_case(c, s, "record -o " + name, ["record", "--duration", "1s", "-o", out], 2, says)

    def holds_svg(path):
        return lambda: None if open(path, "rb").read().startswith(b"<?xml") else "no SVG in %s" % path

    new = os.path.join(d, "new.svg")
    flame("new file", new, 0, accept=True, check=holds_svg(new))
    flame("existing file", new, 0, accept=True, check=holds_svg(new))
    hard = os.path.join(d, "hard.svg")
    os.link(new, hard)
    flame("a hard link (replaced, the other name keeps its file)", new, 0, accept=True, check=holds_svg(hard))
    flame("relative path", "rel.svg", 0, accept=True)
    target = os.path.join(d, "target.svg")
    with open(target, "w") as f:
        f.write("old")
    link = os.path.join(d, "link.svg")
    os.symlink(target, link)
    flame("symlink to a file (followed)", link, 0, accept=True,
          check=lambda: None if os.path.islink(link) and open(target, "rb").read().startswith(b"<?xml")
          else "the link was replaced or its file not written")
    dangling = os.path.join(d, "dangling.svg")
    os.symlink(os.path.join(d, "nowhere", "x"), dangling)
    flame("dangling symlink", dangling, 2, "symbolic link to nothing")
    loop = os.path.join(d, "loop.svg")
    os.symlink(loop, loop)
    flame("symlink loop", loop, 2, "Too many levels of symbolic links")
    to_dir = os.path.join(d, "to_dir.svg")
    os.symlink(d, to_dir)
    flame("symlink to a directory", to_dir, 2, "leads to a directory")
    flame("directory", d, 2, "is a directory")
    flame("the input itself", profile, 2, "is the file being read")
    flame("in /proc", "/proc/hucprof-campaign.svg", 2, "cannot create a file in /")
    flame("in /sys", "/sys/hucprof-campaign.svg", 2, "cannot create a file in /")
    flame("missing directory", os.path.join(d, "none", "x.svg"), 2, "No such file or directory")
    flame("under a file", os.path.join(profile, "x.svg"), 2, "Not a directory")
    flame("name too long", os.path.join(d, "x" * 300), 2, "File name too long")
    flame("path too long", os.path.join(d, *(["y" * 200] * 25)), 2, "File name too long")
    flame("newline in the name", os.path.join(d, "a\nb.svg"), 0, accept=True)
    fifo = os.path.join(d, "out.fifo")
    os.mkfifo(fifo)
    flame("FIFO without reader", fifo, 2, "FIFO with no reader")
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    time.sleep(0.2)
    flame("FIFO with a reader", fifo, 0, accept=True)
    reader.join(10)
    if not got or b"<svg" not in got[0]:
        c.results[-1] = (s, c.results[-1][1], WRONG, "the reader got no SVG")
    rec("in /proc", "/proc/hucprof-campaign.pb.gz", "cannot create a file in /")
    rec("FIFO without reader", fifo, "FIFO with no reader")
    rec("directory", d, "is a directory")
    rec("dangling symlink", dangling, "symbolic link to nothing")
    if os.geteuid() == 0:
        null = node("null", stat.S_IFCHR, 1, 3)
        flame("a /dev/null node (written into)", null, 0, accept=True)
        for name, kind, major, minor, says in (
                ("full", stat.S_IFCHR, 1, 7, "is a character device (1:7)"),
                ("block", stat.S_IFBLK, 240, 0, "is a block device (240:0)"),
                ("block2", stat.S_IFBLK, 241, 3, "is a block device (241:3)"),
                ("tty", stat.S_IFCHR, 136, 250, "is a terminal"),
                ("console", stat.S_IFCHR, 5, 1, "is a terminal"),
                ("local", stat.S_IFCHR, 240, 0, "is a character device (240:0)")):
            path = node(name, kind, major, minor)
            # A terminal takes the flame graph (text), as `cat` writes into one: tried on the
            # campaign's own pseudo-terminal below, never on a node of the machine's.
            if says != "is a terminal":
                flame("a %s node" % name, path, 2, says)
            rec("a %s node" % name, path, says)
        own_terminal(c, s, profile)
        via = os.path.join(d, "via.svg")
        os.symlink(os.path.join(d, "block"), via)
        flame("symlink to a block node", via, 2, "leads to a block device")
    else:
        for name in ("device nodes (null, full, block, tty, console, 240:0)",):
            c.record(s, name, SKIPPED, "mknod needs root")
    # Nothing at the host changed: every node is what it was, no temporary file is left.
    changed = [p for p, (kind, rdev) in nodes.items()
               if stat.S_IFMT(os.lstat(p).st_mode) != kind or os.lstat(p).st_rdev != rdev]
    left = [f for f in os.listdir(d) if "." in f and len(f.rsplit(".", 1)[1]) == 6 and f.rsplit(".", 1)[1].isalnum()
            and not f.endswith((".pb.gz", ".svg"))]
    c.record(s, "device nodes unchanged, no temporary file left", CRASH if changed or left else ACCEPTED,
             "changed %s, left %s" % (changed, left))


# ------------------------------------------------------------------------- debuginfo, debuginfod

def own_terminal(c, s, profile):
    """report --flamegraph into a pseudo-terminal the campaign opened: written (text), and what
    arrives at the other end is the SVG; record -o into it is refused (binary)."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    got = []

    def drain():
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            got.append(chunk)
    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        cli_case(c, s, "--flamegraph the campaign's own pty", ["report", "--flamegraph", path, profile], 0,
                 accept=True, check=lambda: None if b"<svg" in b"".join(got) or wait_svg(got) else
                 "the terminal got no SVG")
        cli_case(c, s, "record -o the campaign's own pty", ["record", "--duration", "1s", "-o", path], 2,
                 "is a terminal")
    finally:
        os.close(slave)
        os.close(master)
        reader.join(5)


def wait_svg(got, timeout=5):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if b"</svg>" in b"".join(got):
            return True
        time.sleep(0.05)
    return False


def printable_lines(text):
    """None when every line of `text` is UTF-8 without a control character, else what is wrong."""
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        return "not UTF-8"
    for c in decoded:
        if (ord(c) < 0x20 and c not in "\n") or 0x7f <= ord(c) < 0xa0:
            return "a control character: %r" % decoded[max(0, decoded.index(c) - 60):decoded.index(c) + 20]
    return None


def doctor_baseline(env=None):
    """doctor's exit code with no debuginfo: the verdict on `run`, which no debuginfo changes."""
    if ARGS.doctor_rc is None:
        empty = os.path.join(ARGS.workdir_for_probe, "no-debuginfo")
        os.makedirs(empty, exist_ok=True)
        ARGS.doctor_rc = run_cli(["doctor", "--debuginfo.path", empty])[0]
    return ARGS.doctor_rc


def doctor_case(c, surface, name, words, says, env=None, timeout=CLI_SECONDS, accepted=False):
    """`doctor WORDS`: its usual exit code, its report printable, `says` in it (a string, or a
    function of the report returning what is wrong); bounded in time and memory."""
    baseline = doctor_baseline()
    rc, out, err, rss, seconds, timed_out = run_cli(["doctor"] + words, timeout, env=env)
    bad = harm(rc, rss, timed_out, CLI_RSS_MIB)
    if bad:
        return c.record(surface, name, CRASH, bad)
    detail = "rc %d, %.0f MiB, %.2f s" % (rc, rss, seconds)
    problem = printable_lines(out) or printable_lines(err)
    if rc != baseline:
        problem = "exit %d, doctor without debuginfo exits %d" % (rc, baseline)
    report = out.decode(errors="replace")
    if not problem:
        problem = says(report) if callable(says) else (None if says in report else "no %r in the report" % says)
    if problem:
        return c.record(surface, name, WRONG, problem[:300])
    c.record(surface, name, ACCEPTED if accepted else REJECTED, detail)


def debuginfo_files(c):
    """Files where the debuginfo search looks: anything but a regular file is named and never
    opened, a file is bounded (4 GiB, 1 GiB inflated), a foreign or broken one refused; and a
    vmlinux with the running kernel's build-id whose DWARF is hostile, recorded under a flood."""
    s = "debuginfo"
    build_id = fx.running_build_id()
    if build_id is None:
        return c.record(s, "debuginfo search", SKIPPED, "the running kernel's build-id is unreadable")
    release = os.uname().release
    d = os.path.join(c.workdir, "debuginfo")
    os.makedirs(d)
    count = [0]

    def place(relative, make):
        """A directory for --debuginfo.path with `make(path)` done at DIR/relative."""
        count[0] += 1
        top = os.path.join(d, "d%d" % count[0])
        path = os.path.join(top, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        make(path)
        return top, path

    for relative in fx.candidate_paths(release, build_id):
        top, path = place(relative, os.mkfifo)
        doctor_case(c, s, "FIFO at " + relative.replace(release, "R").replace(build_id[2:], "ID"),
                    ["--debuginfo.path", top], "%s: cannot be read: not a regular file" % path)
    boot = "boot/vmlinux-" + release
    fifo = os.path.join(d, "vmlinux.fifo")
    os.mkfifo(fifo)
    doctor_case(c, s, "--debuginfo.path FIFO", ["--debuginfo.path", fifo], "not a regular file")
    doctor_case(c, s, "--debuginfo.path /dev/zero", ["--debuginfo.path", "/dev/zero"], "not a regular file")
    config = os.path.join(d, "fifo.yaml")
    with open(config, "w") as f:
        f.write("debuginfo:\n  path: %s\n" % fifo)
    doctor_case(c, s, "config debuginfo.path: FIFO", ["--config", config], "not a regular file")

    def sparse(size):
        def make(path):
            with open(path, "wb") as f:
                f.truncate(size)
        return make

    def copy_head(n):
        def make(path):
            with open("/proc/self/exe", "rb") as src, open(path, "wb") as f:
                f.write(src.read(n))
        return make

    def write(data):
        def make(path):
            with open(path, "wb") as f:
                f.write(data)
        return make

    for name, make, says in (
            ("link to /dev/zero", lambda p: os.symlink("/dev/zero", p), "not a regular file"),
            ("link to /dev/null", lambda p: os.symlink("/dev/null", p), "not a regular file"),
            ("link loop", lambda p: os.symlink(p, p), "link"),
            ("a directory", os.mkdir, "vmlinux"),
            ("a socket", lambda p: socket.socket(socket.AF_UNIX).bind(p), "not a regular file"),
            ("sparse 5 GiB", sparse(5 << 30), "larger than 4294967296 bytes"),
            ("sparse 3 GiB of zeros", sparse(3 << 30), "not an ELF file"),
            ("empty file", sparse(0), "vmlinux"),
            ("64 bytes of an ELF header", copy_head(64), "vmlinux"),
            ("4 KiB of an ELF file", copy_head(4096), "vmlinux"),
            ("an ELF without DWARF, another build-id", lambda p: shutil.copy("/proc/self/exe", p), "vmlinux"),
            ("ELF magic, then zeros", write(b"\x7fELF\x02\x01\x01" + b"\0" * 8192), "vmlinux")):
        top, path = place(boot, make)
        doctor_case(c, s, "%s at boot/vmlinux-R" % name, ["--debuginfo.path", top], says)
    # A path of control bytes and invalid UTF-8 (D11): printed as \xNN.
    odd = os.path.join(os.fsencode(d), b"odd\x1b]0;t\x07\xff")
    os.makedirs(odd)
    doctor_case(c, s, "a directory named with ESC, BEL, \\xff", ["--debuginfo.path", odd], "odd\\x1b]0;t\\x07\\xff")
    hostile_dwarf_case(c, s, d, build_id)


def hostile_dwarf_case(c, s, d, build_id):
    """D5: tests/lib/hostile_dwarf.py's vmlinux (a 4 MiB inline name, control bytes, invalid
    UTF-8, a 500-level inline chain) with the running kernel's build-id, so every kernel address
    falls into it; `record` under a UDP flood, then `report` of what it wrote."""
    name = "record, vmlinux with hostile DWARF, under a flood"
    why = can_record() or (None if shutil.which("gcc") else "no gcc") or (
        None if ARGS.flood else "no --flood (build/tests/tools/huc_udp_flood)")
    if why:
        return c.record(s, name, SKIPPED, why)
    vmlinux = os.path.join(d, "hostile-vmlinux")
    try:
        fx.build_hostile_vmlinux(vmlinux, build_id, fx.kernel_text_bytes() + MiB, d, deep=500, long_inside=True)
    except (subprocess.SubprocessError, RuntimeError, OSError) as e:
        return c.record(s, name, SKIPPED, "cannot build the hostile vmlinux: %s" % e)
    out = os.path.join(d, "hostile.pb.gz")
    rc, _, err, rss, seconds, timed_out = run_cli(
        ["record", "--mode", "sample", "-F", "499", "--interval", "1s", "--debuginfo.path", vmlinux,
         "-o", out, "--", ARGS.flood, "--seconds", "4", "--payload", "64"], timeout=120)
    bad = harm(rc, rss, timed_out, 200)
    if bad:
        return c.record(s, name, CRASH, bad)
    log = err.decode(errors="replace")
    if rc != 0 or "debuginfo: %s (build-id" % vmlinux not in log:
        return c.record(s, name, WRONG, "exit %d: %s" % (rc, log.strip()[-200:]))
    rc2, report, err2, rss2, _, timed_out2 = run_cli(["report", out])
    bad = harm(rc2, rss2, timed_out2, CLI_RSS_MIB)
    if bad:
        return c.record(s, name, CRASH, "report: " + bad)
    problem = ("report exits %d: %s" % (rc2, err2.decode(errors="replace").strip()[-160:]) if rc2 else
               printable_lines(report))
    c.record(s, name, WRONG if problem else ACCEPTED,
             problem or "record %.0f MiB, %.0f s; report read it back, printable" % (rss, seconds))


def debuginfod_servers(c):
    """A debuginfod server on loopback that misbehaves (tests/lib/debuginfo_fixtures.py), asked by
    doctor for the running kernel's build-id: each ends in one line saying why, within the
    download's bounds (shortened by DEBUGINFOD_TIMEOUT/MAXTIME where waiting them out would be
    minutes); and SIGTERM to `run` during a download."""
    s = "debuginfod"
    names = ["silent", "trickle", "huge", "headers", "garbage", "notelf", "missing", "closed port",
             "cache is a FIFO", "cache is a file", "URLs of garbage", "run: SIGTERM while it trickles"]
    why = None if fx.running_build_id() else "the running kernel's build-id is unreadable"
    why = why or (None if ctypes.util.find_library("debuginfod") else "libdebuginfod.so.1 is not installed")
    if why:
        for name in names:
            c.record(s, name, SKIPPED, why)
        return
    d = os.path.join(c.workdir, "debuginfod")
    empty = os.path.join(d, "empty")
    os.makedirs(empty)
    count = [0]

    def env_for(url, **extra):
        count[0] += 1
        env = dict(os.environ, DEBUGINFOD_URLS=url, DEBUGINFOD_CACHE_PATH=os.path.join(d, "cache%d" % count[0]))
        for key in ("DEBUGINFOD_MAXTIME", "DEBUGINFOD_TIMEOUT", "DEBUGINFOD_MAXSIZE", "DEBUGINFOD_VERBOSE"):
            env.pop(key, None)
        env.update(extra)
        return env

    def one_line(says):
        def check(report):
            lines = [l.strip() for l in report.splitlines() if l.strip().startswith("debuginfod: ")]
            if len(lines) != 1:
                return "%d debuginfod lines: %r" % (len(lines), lines)
            if "vmlinux                yes" in report:
                return "a vmlinux was accepted"
            return None if says in lines[0] else "%r lacks %r" % (lines[0], says)
        return check

    words = ["--debuginfo.path", empty, "--debuginfo.debuginfod"]
    for mode, extra, says in (
            ("silent", {"DEBUGINFOD_TIMEOUT": "3"}, "0 bytes arrived in 3 s"),
            ("trickle", {"DEBUGINFOD_MAXTIME": "4"}, "the deadline of a download"),
            ("huge", {}, "more than the 4096 MiB hucprof takes"),
            ("headers", {"DEBUGINFOD_TIMEOUT": "3"}, "gave up"),
            ("garbage", {}, "build-id"),
            ("notelf", {}, "not an ELF file"),
            ("missing", {}, "has build-id")):
        with fx.FakeDebuginfod(mode) as server:
            doctor_case(c, s, mode, words, one_line(says), env=env_for(server.url, **extra))
    doctor_case(c, s, "closed port", words, one_line("build-id"), env=env_for("http://127.0.0.1:%d" % closed_port()))
    fifo = os.path.join(d, "cache.fifo")
    os.mkfifo(fifo)
    plain = os.path.join(d, "cache.file")
    open(plain, "w").close()
    for name, cache, says in (("cache is a FIFO", fifo, "is a FIFO, not a directory"),
                              ("cache is a file", plain, "is a regular file, not a directory")):
        doctor_case(c, s, name, words, one_line(says),
                    env=env_for("http://127.0.0.1:%d" % closed_port(), DEBUGINFOD_CACHE_PATH=cache))
    doctor_case(c, s, "URLs of garbage", words, one_line("build-id"),
                env=env_for(" ::: \x01 http://[::1 " + "x" * 5000))
    run_stops_during_download(c, s, env_for, empty)


def closed_port():
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_stops_during_download(c, s, env_for, empty):
    """Issue 37 item 1: SIGTERM while libdebuginfod downloads (a server trickling, the flood's
    first call sites having started the download) stops `run` as always."""
    name = "run: SIGTERM while it trickles"
    why = can_record() or (None if ARGS.flood else "no --flood")
    if why:
        return c.record(s, name, SKIPPED, why)
    with fx.FakeDebuginfod("trickle") as server:
        daemon = Run(c.workdir, ["--debuginfo.path", empty, "--debuginfo.debuginfod"], env=env_for(server.url))
        flood = subprocess.Popen([ARGS.flood, "--seconds", "60", "--payload", "64"], stdout=subprocess.DEVNULL)
        try:
            asked = fx.wait_for(lambda: server.requests > 0 or daemon.proc.poll() is not None, 60)
            time.sleep(1)
            sent = time.monotonic()
            daemon.proc.send_signal(signal.SIGTERM)
            rc = daemon.finish(20)
            took = time.monotonic() - sent
        finally:
            flood.kill()
            flood.wait()
    if not asked:
        return c.record(s, name, WRONG, "the server was not asked: " + daemon.text()[-200:])
    if rc is None:
        return c.record(s, name, CRASH, "still running 20 s after SIGTERM")
    ok = rc == 0 and "received SIGTERM, detaching" in daemon.text()
    c.record(s, name, ACCEPTED if ok else WRONG, "exit %s %.2f s after SIGTERM" % (rc, took))


# ------------------------------------------------------------------------------- cgroup names

# Each with a marker of its own (hcN) that shows whatever the escaping does to the rest.
CGROUP_NAMES = (
    ("ESC ] 0 ; title BEL", b"hc1-\x1b]0;pwned\x07x"),
    ("a tab and DEL (the kernel refuses a line break)", b"hc2-tab\there\x7fx"),
    ("quote, backslash, braces", b'hc3-q"b\\c{d}=e,f'),
    ("invalid UTF-8", b"hc4-bad\xff\xfe\xc3("),
    ("C1 CSI, RLO", "hc5-c1\u009b2J\u202erlo".encode()),
    ("255 bytes", b"n" * 251 + b"-hc6"),  # the tail is what a long name keeps
    ("40 levels of 120 bytes, past PATH_MAX", None),
)


def cgroup_names(c):
    """Cgroups the campaign makes under the unified hierarchy, with names a tenant may choose,
    each holding a UDP flood while `run --mode sample` attributes it; /metrics read by
    Prometheus' parser, every label printable and at most 1 KiB; the cgroups removed after."""
    s = "cgroup_names"
    why = can_record() or (None if ARGS.flood else "no --flood")
    root = unified_root()
    why = why or (None if root else "no writable cgroup2 hierarchy")
    if why:
        for name, _ in CGROUP_NAMES:
            c.record(s, name, SKIPPED, why)
        return
    mine = os.path.join(root, "hucprof-campaign-%d" % os.getpid())
    os.mkdir(mine)
    made = [(None, mine)]  # (directory descriptor or None, name): removed in reverse
    opened = []
    daemon = Run(c.workdir, ["--sample-frequency", "499"])
    try:
        if not daemon.wait_for("serving metrics on", 60):
            return c.record(s, "run starts", CRASH, daemon.text()[-300:])
        for name, leaf in CGROUP_NAMES:
            if leaf is None:
                # Past PATH_MAX no path reaches it: each level is made relative to the one above.
                parent = os.open(mine, os.O_RDONLY | os.O_DIRECTORY)
                opened.append(parent)
                for level in range(40):
                    step = b"%03d" % level + b"p" * 117
                    os.mkdir(step, dir_fd=parent)
                    made.append((parent, step))
                    parent = os.open(step, os.O_RDONLY | os.O_DIRECTORY, dir_fd=parent)
                    opened.append(parent)
                procs = os.open(b"cgroup.procs", os.O_WRONLY, dir_fd=parent)
                marker = "p" * 40
            else:
                path = os.path.join(os.fsencode(mine), leaf)
                try:
                    os.mkdir(path)
                except OSError as e:
                    # The kernel refuses some names itself (a line break: EINVAL).
                    c.record(s, name, SKIPPED, "the kernel refuses the name: %s" % e.strerror)
                    continue
                made.append((None, path))
                procs = os.open(os.path.join(path, b"cgroup.procs"), os.O_WRONLY)
                marker = leaf[-4:].decode() if leaf.endswith(b"-hc6") else leaf[:4].decode()
            flood = subprocess.Popen([ARGS.flood, "--seconds", "3", "--payload", "64"], stdout=subprocess.DEVNULL)
            try:
                os.write(procs, str(flood.pid).encode())
            finally:
                os.close(procs)
            flood.wait(timeout=60)
            time.sleep(1.2)  # two drains
            cgroup_case(c, s, name, daemon, marker)
    finally:
        daemon.proc.send_signal(signal.SIGTERM)
        rc = daemon.finish()
        for fd, path in reversed(made):
            remove_cgroup(path, fd)
        for fd in opened:
            os.close(fd)
        left = os.path.exists(mine)
        c.record(s, "stop, cgroups removed", ACCEPTED if rc == 0 and not left else WRONG,
                 "exit %s, %s" % (rc, "cgroups left" if left else "%d cgroups made and removed" % len(made)))


def remove_cgroup(path, dir_fd=None):
    for _ in range(50):
        try:
            os.rmdir(path, dir_fd=dir_fd)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.1)  # the kernel counts a cgroup empty a moment after its last task left


def unified_root():
    """The writable cgroup2 mount, as /proc/self/mounts names it."""
    with open("/proc/self/mounts") as f:
        for line in f:
            fields = line.split()
            if fields[2] == "cgroup2" and "rw" in fields[3].split(",") and os.access(fields[1], os.W_OK):
                return fields[1].replace("\\040", " ")
    return None


def cgroup_case(c, s, name, daemon, marker):
    answer = exchange(daemon.port, b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", timeout=10)
    if daemon.proc.poll() is not None or answer is None or not answer.startswith(b"HTTP/1.1 200"):
        return c.record(s, name, CRASH, "no 200 from /metrics: %r" % (answer or b"")[:100])
    body = answer.split(b"\r\n\r\n", 1)[1]
    if b"chunked" in answer.split(b"\r\n\r\n", 1)[0].lower():
        body = unchunk(body)
    try:
        text = body.decode("utf-8")
        families = list(t.parse_metrics(text))
    except (UnicodeDecodeError, ValueError) as e:
        return c.record(s, name, WRONG, "the page does not parse: %s" % e)
    workloads = []
    for _, labels, _ in families:
        for value in labels.values():
            if len(value.encode()) > 1024 or any(ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0 for ch in value):
                return c.record(s, name, WRONG, "label value %r" % value[:100])
        if "workload" in labels:
            workloads.append(labels["workload"])
    seen = [w for w in workloads if marker in w]
    c.record(s, name, ACCEPTED if seen else WRONG,
             ("workload %r" % seen[0][-80:]) if seen else "the flood's cgroup is not among %d workloads" % len(workloads))


def unchunk(body):
    out, at = b"", 0
    while True:
        end = body.index(b"\r\n", at)
        size = int(body[at:end].split(b";")[0], 16)
        if size == 0:
            return out
        out += body[end + 2:end + 2 + size]
        at = end + 2 + size + 2


# ------------------------------------------------------------------------------ record commands

def record_commands(c):
    """COMMANDs given to `record` (D10 and what is next to it)."""
    s = "record_commands"
    names = ["-- COMMAND followed, a child outlives it", "-- COMMAND followed, three children outlive it",
             "a COMMAND that does not exist", "a directory as COMMAND", "a COMMAND that is not executable",
             "a COMMAND named with ESC and BEL", "a COMMAND of 100 KB", "a COMMAND killed by SIGSEGV"]
    why = can_record()
    if why:
        for name in names:
            c.record(s, name, SKIPPED, why)
        return
    d = os.path.join(c.workdir, "commands")
    os.makedirs(d)
    out = os.path.join(d, "out.pb.gz")
    root = unified_root()
    for name, children in ((names[0], 1), (names[1], 3)):
        # Each child a shell named by $0 (so it can be found), sleeping past the recording.
        tag = "campaign-child-%d-%d" % (os.getpid(), children)
        script = "for i in %s; do sh -c 'sleep 8; :' %s & done; exit 0" % (" ".join(["x"] * children), tag)
        rc, _, err, rss, seconds, timed_out = run_cli(
            ["record", "--mode", "sample", "-o", out, "--", "sh", "-c", script], timeout=60)
        bad = harm(rc, rss, timed_out, CLI_RSS_MIB * 2)
        alive = pids_with_arg(tag)
        left = [e for e in os.listdir(root) if e.startswith("hucprof-record-")] if root else []
        for pid in alive:
            os.kill(pid, signal.SIGKILL)
        if bad:
            c.record(s, name, CRASH, bad)
            continue
        log = err.decode(errors="replace")
        problem = None
        if rc != 0:
            problem = "exit %d: %s" % (rc, log.strip()[-160:])
        elif len(alive) != children:
            problem = "%d of %d children still run" % (len(alive), children)
        elif left:
            problem = "cgroups left: %s" % left
        elif "outlived it" not in log:
            problem = "no line says the children were moved out"
        c.record(s, name, WRONG if problem else ACCEPTED,
                 problem or "exit 0, %d children alive, moved out, no cgroup left" % children)
    directory = os.path.join(d, "adir")
    os.mkdir(directory)
    plain = os.path.join(d, "not-executable")
    open(plain, "w").close()
    for name, command, says in ((names[2], ["/nonexistent/command"], "/nonexistent/command"),
                                (names[3], [directory], directory),
                                (names[4], [plain], plain),
                                (names[5], [os.path.join(d, "cmd\x1b]0;t\x07")], "cmd\\x1b]0;t\\x07"),
                                (names[6], ["/" + "c" * 100000], "cccc")):
        cli_case(c, s, name, ["record", "--mode", "sample", "-o", out, "--"] + command, 2, says)
    rc, _, err, rss, seconds, timed_out = run_cli(
        ["record", "--mode", "sample", "-o", out, "--", "sh", "-c", "kill -SEGV $$"], timeout=60)
    bad = harm(rc, rss, timed_out, CLI_RSS_MIB * 2)
    log = err.decode(errors="replace")
    ok = not bad and rc == 0 and "wrote " in log
    c.record(s, names[7], CRASH if bad else (ACCEPTED if ok else WRONG),
             bad or "exit %d: %s" % (rc, log.strip().splitlines()[-1][-120:] if log.strip() else ""))


def pids_with_arg(arg):
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/cmdline" % entry, "rb") as f:
                    if arg.encode() in f.read().split(b"\0"):
                        pids.append(int(entry))
            except OSError:
                pass
    return pids


# ------------------------------------------------------------------------------------------ main

SURFACES = (("flags", flags), ("config", config_files), ("web_config", web_configs),
            ("http", http_requests), ("signals", signals), ("report_files", report_files),
            ("output_paths", output_paths), ("debuginfo", debuginfo_files), ("debuginfod", debuginfod_servers),
            ("cgroup_names", cgroup_names), ("record_commands", record_commands))


def main():
    global ARGS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--hucprof", required=True)
    p.add_argument("--web-serve", required=True)
    p.add_argument("--flood", help="build/tests/tools/huc_udp_flood: load for the debuginfo, debuginfod and "
                                   "cgroup cases that need call sites (without it they are skipped)")
    p.add_argument("--only", help="comma-separated surfaces: " + ",".join(n for n, _ in SURFACES))
    p.add_argument("--json", help="write the counts and every case here")
    ARGS = p.parse_args()
    ARGS.hucprof, ARGS.web_serve = os.path.abspath(ARGS.hucprof), os.path.abspath(ARGS.web_serve)
    ARGS.flood = os.path.abspath(ARGS.flood) if ARGS.flood else None
    ARGS.can_record = ARGS.doctor_rc = None
    missing = wf.missing_tools()
    if missing:
        print("SKIP: missing %s (scripts/install-deps.sh installs them)" % ", ".join(missing))
        return 77
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    workdir = tempfile.mkdtemp(prefix="hucprof-campaign-")
    ARGS.workdir_for_probe = workdir
    ARGS.cwd = os.path.join(workdir, "cwd")  # where relative outputs land: never the caller's
    os.makedirs(ARGS.cwd)
    only = set(ARGS.only.split(",")) if ARGS.only else None
    campaign = Campaign(workdir)
    try:
        for name, surface in SURFACES:
            if only and name not in only:
                continue
            started = time.monotonic()
            surface(campaign)
            print("-- %s: %.0f s" % (name, time.monotonic() - started), flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    totals = collections.Counter(outcome for _, _, outcome, _ in campaign.results)
    print("\n%-14s %6s %9s %9s %7s %12s %8s" % ("surface", "tried", "rejected", "accepted", "wrong",
                                                 "crash/hang", "skipped"))
    for surface, counts in campaign.summary().items():
        print("%-14s %6d %9d %9d %7d %12d %8d" % (
            surface, sum(counts[k] for k in CLASSES), counts[REJECTED], counts[ACCEPTED], counts[WRONG],
            counts[CRASH], counts[SKIPPED]))
    print("%-14s %6d %9d %9d %7d %12d %8d   (%.0f s)" % (
        "all", sum(totals[k] for k in CLASSES), totals[REJECTED], totals[ACCEPTED], totals[WRONG],
        totals[CRASH], totals[SKIPPED], time.monotonic() - campaign.started))
    bad = [r for r in campaign.results if r[2] in (WRONG, CRASH)]
    for surface, name, outcome, detail in bad:
        print("!! %s / %s: %s: %s" % (surface, name, outcome, detail))
    if ARGS.json:
        with open(ARGS.json, "w") as f:
            json.dump({"totals": {k: totals[k] for k in CLASSES + (SKIPPED,)},
                       "by_surface": {k: dict(v) for k, v in campaign.summary().items()},
                       "cases": campaign.results}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
