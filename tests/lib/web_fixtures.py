"""Certificates, bcrypt hashes and web configs for the web front tests (stdlib only).

Everything secret here is made by tools written by others, at test time: the PKI by the
`openssl` command, the bcrypt hashes by Apache's `htpasswd` (its own bcrypt, not libcrypt's),
so a test checks hucprof against them rather than against itself.

  missing_tools()            what is not installed (the caller skips with exit 77)
  make_pki(dir)              CA, server cert (localhost, 127.0.0.1, ::1), client certs
  expired_certificate(dir)   a server cert (and key) valid only on 2020-01-01, by `openssl ca`
  encrypted_key(key, out)    the key encrypted with a passphrase, by `openssl pkey`
  bcrypt(user, password)     htpasswd -nbBC 10
  web_config(...)            exporter-toolkit YAML text
  hold_slow_clients(port)    idle and slowloris connections, held open (the caller closes them)
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess

TOOLS = ("openssl", "htpasswd", "curl")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if not shutil.which(t)]


def _openssl(*args: str, cwd: str) -> None:
    r = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl " + " ".join(args) + ":\n" + r.stderr)


def _key_and_csr(name: str, subject: str, cwd: str) -> None:
    _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject, cwd=cwd)


def _sign(name: str, extensions: str, cwd: str, ca: str = "ca") -> None:
    with open(os.path.join(cwd, f"{name}.ext"), "w") as f:
        f.write(extensions + "\n")
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
             "-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext",
             cwd=cwd)


def make_pki(directory: str) -> dict[str, str]:
    """Paths of: ca, server (+ server2, a second certificate for rotation), client (SAN
    DNS:prometheus.test, signed by the CA) and rogue (self-signed client certificate)."""
    os.makedirs(directory, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=hucprof test CA",
             cwd=directory)
    server_ext = ("subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\n"
                  "extendedKeyUsage=serverAuth")
    for name in ("server", "server2"):
        _key_and_csr(name, "/CN=localhost", directory)
        _sign(name, server_ext, directory)
    _key_and_csr("client", "/CN=prometheus", directory)
    _sign("client", "subjectAltName=DNS:prometheus.test\nextendedKeyUsage=clientAuth", directory)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
             "-keyout", "rogue.key", "-out", "rogue.crt", "-days", "2", "-subj", "/CN=rogue",
             "-addext", "subjectAltName=DNS:prometheus.test", cwd=directory)
    paths = {}
    for name in ("ca", "server", "server2", "client", "rogue"):
        paths[name + ".crt"] = os.path.join(directory, name + ".crt")
        paths[name + ".key"] = os.path.join(directory, name + ".key")
    return paths


def expired_certificate(directory: str) -> tuple[str, str]:
    """(certificate, key) of localhost, signed by the CA of make_pki(directory), valid for one day
    of 2020: `openssl ca` is the command that takes start and end dates."""
    with open(os.path.join(directory, "expired.cnf"), "w") as f:
        f.write("[ca]\ndefault_ca = d\n[d]\ndatabase = expired.index\nnew_certs_dir = .\n"
                "serial = expired.serial\ndefault_md = sha256\npolicy = p\nunique_subject = no\n"
                "copy_extensions = copy\n[p]\ncommonName = supplied\n")
    open(os.path.join(directory, "expired.index"), "w").close()
    with open(os.path.join(directory, "expired.serial"), "w") as f:
        f.write("01\n")
    _key_and_csr("expired", "/CN=localhost", directory)
    _openssl("ca", "-batch", "-config", "expired.cnf", "-cert", "ca.crt", "-keyfile", "ca.key",
             "-startdate", "20200101000000Z", "-enddate", "20200102000000Z", "-notext",
             "-in", "expired.csr", "-out", "expired.crt", cwd=directory)
    return os.path.join(directory, "expired.crt"), os.path.join(directory, "expired.key")


def encrypted_key(key: str, out: str, passphrase: str = "hunter2") -> str:
    _openssl("pkey", "-in", key, "-aes256", "-passout", "pass:" + passphrase, "-out", out,
             cwd=os.path.dirname(out) or ".")
    return out


def bcrypt(user: str, password: str) -> str:
    r = subprocess.run(["htpasswd", "-nbBC", "10", user, password], capture_output=True,
                       text=True, timeout=60, check=True)
    line = r.stdout.strip()
    assert line.startswith(user + ":"), line
    return line.split(":", 1)[1]


def web_config(cert: str | None = None, key: str | None = None, users: dict[str, str] | None = None,
               client_auth: str | None = None, client_ca: str | None = None,
               extra_tls: str = "", extra: str = "") -> str:
    """exporter-toolkit YAML; users maps names to bcrypt hashes."""
    lines = []
    if cert:
        lines += ["tls_server_config:", f"  cert_file: {cert}", f"  key_file: {key}"]
        if client_auth:
            lines.append(f"  client_auth_type: {client_auth}")
        if client_ca:
            lines.append(f"  client_ca_file: {client_ca}")
        if extra_tls:
            lines.append(extra_tls.rstrip("\n"))
    if users:
        lines.append("basic_auth_users:")
        lines += [f"  {name}: '{hashed}'" for name, hashed in users.items()]
    if extra:
        lines.append(extra.rstrip("\n"))
    return "\n".join(lines) + "\n"


def hold_slow_clients(port: int, count: int = 50) -> list[socket.socket]:
    """Half the connections idle, half a slowloris: a request head begun and never ended."""
    held = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        if i % 2:
            sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        held.append(sock)
    return held
