"""What the debuginfo tests stand up around the real binary: the running kernel's build-id,
FIFOs at every place the search looks, a fake debuginfod server that misbehaves, and a hostile
vmlinux built by gcc (tests/lib/hostile_dwarf.py) that carries the running kernel's build-id,
so hucprof accepts it and looks every kernel address up in it. Python stdlib and gcc."""

import os
import shutil
import socket
import struct
import subprocess
import threading
import time

import hostile_dwarf


def running_build_id(notes="/sys/kernel/notes"):
    """The GNU build-id (hex) of the running kernel, from its ELF notes; None when unreadable."""
    try:
        with open(notes, "rb") as f:
            data = f.read()
    except OSError:
        return None
    at = 0
    while at + 12 <= len(data):
        namesz, descsz, kind = struct.unpack_from("<III", data, at)
        name_at = at + 12
        desc_at = name_at + (namesz + 3) // 4 * 4
        if kind == 3 and data[name_at:name_at + namesz].rstrip(b"\0") == b"GNU":
            return data[desc_at:desc_at + descsz].hex()
        at = desc_at + (descsz + 3) // 4 * 4
    return None


def kernel_text_bytes():
    """_etext - _stext of the running kernel, from kallsyms (root sees the addresses): a hostile
    vmlinux whose innermost function is larger covers every kernel text offset."""
    found = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            addr, _, name = line.split()[:3]
            if name in ("_stext", "_etext"):
                found[name] = int(addr, 16)
    return found["_etext"] - found["_stext"]


def candidate_paths(release, build_id):
    """Every place below a --debuginfo.path DIR the search looks for vmlinux (docs/debuginfo.md),
    relative to DIR."""
    places = []
    for root in ("", "usr/lib/debug/"):
        places += [root + "boot/vmlinux-" + release,
                   root + "lib/modules/%s/vmlinux" % release,
                   root + "vmlinux-" + release,
                   root + ".build-id/%s/%s.debug" % (build_id[:2], build_id[2:]),
                   root + "boot/vmlinux-%s.debug" % release]
    return places + ["vmlinux"]


def make_fifo(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)
    return path


class FakeDebuginfod:
    """A debuginfod server on 127.0.0.1 that misbehaves one way, on every connection:
      silent   takes the connection and never answers
      trickle  answers 200 with a 700 MB Content-Length, then sends 300 bytes a second
      huge     answers 200 with a 5 GiB Content-Length, then 64 KiB, then nothing
      headers  answers 200, then header lines without end, 300 bytes a second
      garbage  answers 4 KiB of random bytes that are not HTTP, then closes
      notelf   answers 200 with 4 KiB that are not an ELF file
      missing  answers 404, as a server without the build-id does
    Serves until stop(); counts the requests it read."""

    def __init__(self, mode):
        self.mode = mode
        self.requests = 0
        self._stop = threading.Event()
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.2)
        self.url = "http://127.0.0.1:%d" % self._listener.getsockname()[1]
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        self._listener.close()

    def _accept(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(t)
            t.start()

    def _serve(self, conn):
        with conn:
            conn.settimeout(0.2)
            request = b""
            while b"\r\n\r\n" not in request and not self._stop.is_set():
                try:
                    chunk = conn.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                request += chunk
            self.requests += 1
            try:
                if self.mode == "trickle":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 700000000\r\n\r\n")
                    while not self._stop.wait(0.1):
                        conn.sendall(b"x" * 30)
                elif self.mode == "headers":
                    conn.sendall(b"HTTP/1.1 200 OK\r\n")
                    while not self._stop.wait(0.1):
                        conn.sendall(b"X-Pad: " + b"p" * 20 + b"\r\n")
                elif self.mode == "garbage":
                    conn.sendall(os.urandom(4096))
                elif self.mode == "notelf":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\n\r\n" + b"z" * 4096)
                elif self.mode == "missing":
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                elif self.mode == "huge":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (5 << 30))
                    conn.sendall(b"\x7fELF" + b"\0" * (64 << 10))
                    self._stop.wait()
                else:
                    self._stop.wait()
            except OSError:
                return


def build_hostile_vmlinux(out, build_id, skip, workdir, long_name_bytes=4 << 20, deep=500,
                          long_inside=False):
    """gcc -g -O2 of hostile_dwarf's source into `out`, with `build_id` as its GNU build-id and
    `skip` bytes in its innermost inline function (so every text offset below it falls into the
    whole hostile chain), the marker patched into control bytes and invalid UTF-8."""
    gcc = shutil.which("gcc")
    if gcc is None:
        raise RuntimeError("no gcc to build the hostile vmlinux")
    source = os.path.join(workdir, "hostile_vmlinux.c")
    with open(source, "w") as f:
        f.write(hostile_dwarf.source(long_name_bytes, 100 << 10, deep, 2, skip, long_inside))
    subprocess.run([gcc, "-g", "-O2", "-fno-pie", "-no-pie", "-fno-reorder-functions", "-w",
                    "-Wl,--build-id=0x" + build_id, source, "-o", out], check=True, timeout=600)
    with open(out, "rb") as f:
        patched = hostile_dwarf.patch_bad_bytes(f.read())
    with open(out, "wb") as f:
        f.write(patched)
    return out


def wait_for(predicate, timeout, step=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
