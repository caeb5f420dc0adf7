"""Helpers of the HTTP tests of `impulse view` (test_http_server.py, http_fuzz.py): start a viewer
on a free port of 127.0.0.1, send raw requests over sockets (any method, header or body, the
Host header included) and read the replies. Standard library only."""
import os
import re
import select
import socket
import subprocess
import sys
import time

SKIP = 77  # ctest: skipped


class Viewer:
    """`impulse view TARGET --port 0 ARGS`, stopped by stop() (or at the end of a with block)."""

    def __init__(self, impulse, target, *args):
        self.proc = subprocess.Popen([impulse, "view", target, "--port", "0", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        line = ""
        end = time.time() + 60
        while time.time() < end:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1)
            if ready:
                line = self.proc.stdout.readline()
                break
            if self.proc.poll() is not None:
                break
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not m:
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop()
            if "was not built" in err or "without cpp-httplib" in err:
                print(f"SKIP: {err.strip()}")
                sys.exit(SKIP)
            raise RuntimeError(f"impulse view {target} did not start: {line!r} {err!r}")
        self.port = int(m.group(1))
        self.host = f"127.0.0.1:{self.port}"

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Closed(ValueError):
    """The server closed the connection without sending a byte of a reply."""


class Reply:
    def __init__(self, status, reason, headers, body):
        self.status, self.reason, self.headers, self.body = status, reason, headers, body

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return f"<{self.status} {self.reason} {self.body[:200]!r}>"


def read_reply(sock, deadline, head=False, pending=None):
    """One HTTP/1.1 reply from `sock` (Content-Length or read to the end), or raise ValueError
    for a malformed one and TimeoutError past `deadline` (time.time()). For pipelined requests,
    `pending` (a bytearray) keeps the bytes after the reply for the next call; without it, bytes
    after the reply are an error."""
    data = bytes(pending) if pending is not None else b""

    def more():
        nonlocal data
        left = deadline - time.time()
        if left <= 0:
            raise TimeoutError("no complete reply in time")
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            raise TimeoutError("no complete reply in time")
        data += chunk
        return bool(chunk)

    while True:
        while b"\r\n\r\n" not in data:
            if not more():
                if not data:
                    raise Closed("connection closed without a reply")
                raise ValueError(f"connection closed before a complete reply head: {data[:200]!r}")
        head_bytes, _, data = data.partition(b"\r\n\r\n")
        if not re.match(rb"HTTP/1\.[01] 1\d\d", head_bytes):
            break  # not an interim reply (100 Continue): the reply
    lines = head_bytes.decode("latin-1").split("\r\n")
    m = re.fullmatch(r"HTTP/1\.[01] (\d{3}) ?(.*)", lines[0])
    if not m:
        raise ValueError(f"malformed status line {lines[0]!r}")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise ValueError(f"malformed header line {line!r}")
        headers[name.lower()] = value.strip()
    status = int(m.group(1))
    if head or status in (204, 304):
        if pending is not None:
            pending[:] = data
        return Reply(status, m.group(2), headers, b"")
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(data) < n:
            if not more():
                raise ValueError(f"connection closed after {len(data)} of {n} body bytes")
        if pending is not None:
            pending[:] = data[n:]
        elif len(data) > n:
            raise ValueError(f"{len(data) - n} bytes after the body")
        return Reply(status, m.group(2), headers, data[:n])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raise ValueError("chunked replies are not expected from this server")
    while more():
        pass
    return Reply(status, m.group(2), headers, data)


def request(port, method, target, headers=None, body=b"", host=None, timeout=15, post_header=True):
    """Sends one request on a new connection and returns its Reply. Headers: Host (127.0.0.1:port
    unless `host`; None in `headers` leaves a header out), Content-Length for a body,
    X-Impulse-Request for a POST unless `post_header` is false."""
    h = {"Host": host or f"127.0.0.1:{port}", "Connection": "close"}
    if method == "POST" and post_header:
        h["X-Impulse-Request"] = "1"
    if body or method == "POST":
        h["Content-Length"] = str(len(body))
    h.update(headers or {})
    text = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items() if v is not None)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(text.encode("latin-1") + b"\r\n" + body)
        return read_reply(s, time.time() + timeout, head=method == "HEAD")


def impulse_args():
    if len(sys.argv) < 4:
        print(__doc__)
        sys.exit(2)
    impulse, source, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    return impulse, source, work


def make_recording(impulse, source, work, steps=300):
    rec = os.path.join(work, "spheres.imprec")
    subprocess.run([impulse, "run", os.path.join(source, "models/worlds/spheres.xml"), "--steps", str(steps),
                    "--record", rec], check=True, stdout=subprocess.DEVNULL)
    return rec
