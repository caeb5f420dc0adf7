"""Request fuzzer of `impulse view`'s HTTP server: random and mutated requests (method, path,
query, headers, Range, bodies; truncated, slow and pipelined requests) against a live and a
replay server on 127.0.0.1. Asserts that the servers never crash nor hang, that every reply is a
well-formed HTTP reply with a status the server means to send (no 5xx but 503 for "too many
connections"), and that both still answer a normal request afterwards.

usage: http_fuzz.py IMPULSE_BINARY SOURCE_DIR WORK_DIR [--seconds S] [--seed N]
(ctest runs it for 12 s; run it longer locally, e.g. --seconds 600.)
"""
import argparse
import json
import os
import random
import re
import socket
import sys
import threading
import time

from viewer_http import Closed, Viewer, make_recording, read_reply, request

ap = argparse.ArgumentParser()
ap.add_argument("impulse")
ap.add_argument("source")
ap.add_argument("work")
ap.add_argument("--seconds", type=float, default=12)
ap.add_argument("--seed", type=int, default=None)
args = ap.parse_args()
seed = args.seed if args.seed is not None else int(time.time())
print(f"seed {seed} ({args.seconds:.0f} s)")
os.makedirs(args.work, exist_ok=True)
world = os.path.join(args.source, "models/worlds/spheres.xml")
rec = make_recording(args.impulse, args.source, args.work, steps=200)

# Statuses the server sends on purpose. 5xx: only 503 (no room for another connection).
EXPECTED = {200, 206, 400, 403, 404, 413, 414, 416, 503}
HANG = 30  # seconds: longer than every deadline of the server (request 10 s, silence 5 s)

PATHS = ["/", "/index.html", "/viewer.js", "/api/info", "/api/scene", "/api/frame", "/api/frames", "/api/series",
         "/api/dof", "/api/frame.json", "/api/recording", "/api/status", "/api/control", "/api/push",
         "/api/render/frame", "/api/render/done", "/nope", "//api/scene", "/api/../api/scene", "/%2e%2e/etc/passwd",
         "/api/scene/", "*", "/api/frame%00", "/" + "a" * 9000]
PARAMS = ["k", "from", "count", "system", "iq", "iv", "cmd", "speed", "fx", "fy", "fz", "px", "py", "pz", "body",
          "seconds"]
VALUES = ["0", "1", "-1", "3", "199", "200", "1e12", "abc", "nan", "inf", "-inf", "1e308", "1e999", "4294967296",
          "9223372036854775808", "-9223372036854775809", "0x10", " 1", "1 ", "", "+1", "1.5", "-0", "%00", "%ff",
          "pause", "run", "step", "reset", "jump", "0.05", "1000", "1001", "%", "%%", "=", "&", "0.1e-300",
          "99999999999999999999999999999", "1" * 400]
METHODS = ["GET", "POST", "HEAD", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "CONNECT", "get", "G ET", "",
           "POST" * 50]
RANGES = ["bytes=0-0", "bytes=0-200000", "bytes=-1", "bytes=-0", "bytes=5-", "bytes=5-2", "bytes=0-1,2-3",
          "bytes=abc", "bytes=", "bytes=-", "items=0-1", "bytes=99999999999999999999-", "bytes=0-99999999999999999999",
          "bytes=" + ",".join(["0-1"] * 300), "bytes=1-1, 3-4", "bytes=18446744073709551615-"]


def query(r):
    parts = []
    for _ in range(r.randrange(0, 8)):
        parts.append(f"{r.choice(PARAMS)}={r.choice(VALUES)}" if r.random() < 0.9 else r.choice(VALUES))
    return ("?" + "&".join(parts)) if parts or r.random() < 0.1 else ""


def headers(r, port):
    h = []
    host = r.random()
    if host < 0.75:
        h.append(f"Host: 127.0.0.1:{port}")
    elif host < 0.85:
        h.append(r.choice([f"Host: localhost:{port}", f"Host: [::1]:{port}", "Host: evil.example",
                           f"Host: 127.0.0.1:{port}\r\nHost: evil.example", "Host:", f"Host: 127.0.0.1:{port + 1}"]))
    if r.random() < 0.5:
        h.append("X-Impulse-Request: " + r.choice(["1", "0", "", "1, 1"]))
    if r.random() < 0.3:
        h.append("Range: " + r.choice(RANGES))
    if r.random() < 0.2:
        h.append("Origin: " + r.choice([f"http://127.0.0.1:{port}", "http://evil.example", "null", ""]))
    if r.random() < 0.1:
        h.append("Sec-Fetch-Site: " + r.choice(["same-origin", "cross-site", "none", "same-site"]))
    if r.random() < 0.2:
        h.append("Accept-Encoding: " + r.choice(["br", "gzip, deflate, br", "identity", "*"]))
    if r.random() < 0.1:
        h.append("Connection: " + r.choice(["close", "keep-alive", "upgrade", ""]))
    if r.random() < 0.1:
        h.append("Expect: 100-continue")
    if r.random() < 0.05:
        h.append("X-Long: " + "y" * r.choice([100, 8000, 9000, 70000]))
    if r.random() < 0.05:
        h.extend(f"X-Many-{i}: z" for i in range(r.choice([10, 200, 3000])))
    if r.random() < 0.05:
        h.append(r.choice(["no colon", ": empty name", " leading: space", "Bad\x00Name: v", "X: \xff\xfe"]))
    return h


def body_and_framing(r):
    """(extra header lines, body bytes)."""
    kind = r.random()
    if kind < 0.5:
        return [], b""
    body = r.choice([b"", b"x", b"12", b"-3", b"abc", b"\x00" * 100, os.urandom(r.choice([10, 1000, 70000]))])
    if kind < 0.8:
        return [f"Content-Length: {len(body)}"], body
    if kind < 0.9:  # a wrong length: too small, too large, nonsense, huge
        return [f"Content-Length: {r.choice([0, len(body) + 5, -1, 'abc', 1 << 40, 18446744073709551616])}"], body
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in [body[i:i + 500] for i in range(0, len(body), 500)])
    if r.random() < 0.3:
        chunks = r.choice([b"zz\r\n", b"ffffffffffffffffff\r\n", b"5\r\nab\r\n"]) + chunks
    return ["Transfer-Encoding: chunked"], chunks + b"0\r\n\r\n"


GOOD = {
    "GET": ["/", "/viewer.js", "/api/info", "/api/scene", "/api/status", "/api/series", "/api/recording",
            "/api/frame", "/api/frame?k={i}", "/api/frame.json?k={i}", "/api/frames?from={i}&count={j}",
            "/api/dof?system=0&iq={j}&iv={j}"],
    "POST": ["/api/control?cmd=pause", "/api/control?cmd=run", "/api/control?cmd=step", "/api/control?speed={x}",
             "/api/control?cmd=reset", "/api/push?system=0&body=0&fx={f}&fy={f}&fz={f}&px={p}&py={p}&pz={p}"
             "&seconds={s}"],
}


def plausible_request(r, port):
    """A request the page could send, with its values near and past their limits."""
    method = r.choice(["GET", "GET", "GET", "POST", "HEAD"])
    target = r.choice(GOOD["POST" if method == "POST" else "GET"]).format(
        i=r.choice([0, 1, 5, 199, 200, 201, -1]), j=r.choice([0, 1, 3, 7, 200]),
        x=r.choice(["0.05", "1", "10", "1000", "1000.0001", "0"]), f=r.choice(["0", "1", "-50", "1e6", "1e300"]),
        p=r.choice(["0", "0.05", "-0.1", "2", "1e3"]), s=r.choice(["0", "0.1", "10", "10.5"]))
    lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    if method == "POST":
        lines.append("X-Impulse-Request: 1")
        lines.append("Content-Length: 0")
    if r.random() < 0.3:
        lines.append("Range: " + r.choice(["bytes=0-0", "bytes=0-200000", "bytes=-1", "bytes=5-", "bytes=3-10",
                                           "bytes=100000-", "bytes=0-1,2-3"]))
    if r.random() < 0.2:
        lines.append(f"Origin: http://127.0.0.1:{port}")
    return method, ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def make_request(r, port):
    if r.random() < 0.4:
        return plausible_request(r, port)
    method = r.choice(METHODS)
    target = r.choice(PATHS) + query(r)
    version = r.choice(["HTTP/1.1"] * 8 + ["HTTP/1.0", "HTTP/2.0", "HTTP/1.1x", ""])
    extra, body = body_and_framing(r)
    lines = [f"{method} {target} {version}".rstrip()] + headers(r, port) + extra
    data = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    if r.random() < 0.1:  # mutate a few bytes
        data = bytearray(data)
        for _ in range(r.randrange(1, 6)):
            data[r.randrange(len(data))] = r.randrange(256)
        data = bytes(data)
    return method, data


def check_range(reply, head):
    """A 206 holds exactly the bytes its Content-Range names, inside the resource."""
    if reply.status != 206:
        return
    m = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+)", reply.header("content-range") or "")
    if not m:
        raise ValueError(f"206 with Content-Range {reply.header('content-range')!r}")
    a, b, n = map(int, m.groups())
    if not a <= b < n or (not head and len(reply.body) != b - a + 1):
        raise ValueError(f"206 with Content-Range {m.group(0)!r} and {len(reply.body)} bytes")


def exchange(port, data, r, head):
    """Sends `data` (whole, truncated, slowly, or twice pipelined) and reads the replies until the
    server closes or stops answering. Returns the statuses; raises on a malformed reply or a hang."""
    mode = r.random()
    statuses = []
    with socket.create_connection(("127.0.0.1", port), timeout=HANG) as s:
        try:
            if mode < 0.05:  # truncated: the server must give up on its own
                s.sendall(data[:r.randrange(len(data) + 1)])
                if r.random() < 0.5:
                    s.shutdown(socket.SHUT_WR)
            elif mode < 0.1:  # slow: a few bytes at a time
                for i in range(0, min(len(data), 60), 3):
                    s.sendall(data[i:i + 3])
                    time.sleep(0.05)
                s.sendall(data[60:])
            elif mode < 0.25:  # pipelined
                s.sendall(data + data)
            else:
                s.sendall(data)
        except OSError:
            return statuses  # the server closed first (a reply may have been lost with the reset)
        deadline = time.time() + HANG
        # Bytes past a reply are the reply to what the server read as the next request (a wrong
        # Content-Length, pipelining): read them as replies too, each must be well-formed.
        pipelined = 0.1 <= mode < 0.25
        pending = bytearray()
        sent = 2 if pipelined else 1
        while len(statuses) < sent or pending:
            try:
                reply = read_reply(s, deadline, head=head and len(statuses) < sent, pending=pending)
            except (Closed, ConnectionResetError):
                break  # closed without (another) reply
            statuses.append(reply.status)
            check_range(reply, head and len(statuses) <= sent)
            if reply.header("connection") == "close":
                break
    return statuses


def normal_request_ok(v):
    r = request(v.port, "GET", "/api/status", timeout=10)
    return r.status == 200 and "mode" in json.loads(r.body)


def fuzz(v, name, seconds, rng, counts, problems):
    end = time.time() + seconds
    while time.time() < end and not problems:
        r = random.Random(rng.random())
        method, data = make_request(r, v.port)
        t0 = time.time()
        try:
            statuses = exchange(v.port, data, r, head=method == "HEAD")
        except TimeoutError:
            problems.append(f"{name}: no reply within {HANG} s to {data[:300]!r}")
            return
        except ValueError as e:
            problems.append(f"{name}: {e} for {data[:300]!r}")
            return
        for st in statuses:
            counts[st] = counts.get(st, 0) + 1
            if st not in EXPECTED:
                problems.append(f"{name}: status {st} for {data[:300]!r}")
        if time.time() - t0 > HANG:
            problems.append(f"{name}: {time.time() - t0:.1f} s for {data[:300]!r}")
        if not v.alive():
            problems.append(f"{name}: the server exited ({v.proc.returncode}) after {data[:300]!r}")


problems = []
counts = {}
rng = random.Random(seed)
with Viewer(args.impulse, world) as live, Viewer(args.impulse, rec) as replay:
    # two clients per server, so that slow and truncated requests overlap with others
    threads = []
    for i, (v, name) in enumerate([(live, "live"), (replay, "replay")] * 2):
        t = threading.Thread(target=fuzz, args=(v, name, args.seconds, random.Random(rng.random()), counts, problems))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    for v, name in [(live, "live"), (replay, "replay")]:
        if not v.alive():
            problems.append(f"{name}: the server exited ({v.proc.returncode})")
        elif not normal_request_ok(v):
            problems.append(f"{name}: no normal answer after the fuzzing")
    status = json.loads(request(live.port, "GET", "/api/status").body)
    if status.get("error"):
        problems.append(f"live: the simulation reports '{status['error']}' after the fuzzing")
    for v, name in [(live, "live"), (replay, "replay")]:
        v.stop()
        err = v.proc.stderr.read()
        if "Sanitizer" in err or "runtime error" in err:
            problems.append(f"{name}: sanitizer report:\n{err[-3000:]}")

print("replies by status: " + ", ".join(f"{k}: {counts[k]}" for k in sorted(counts)))
if problems:
    print(f"FAIL (seed {seed}):")
    for p in problems:
        print("  " + p)
    sys.exit(1)
print(f"ok: {sum(counts.values())} replies, every one well-formed and expected; both servers still answer")
