"""The HTTP server of `impulse view` keeps its limits and security rules (docs/viewer.md, "Limits
and security"): Range requests get exactly the bytes of the resource (206) or 416, never more;
requests for another Host, from another Origin or site, and POSTs without X-Impulse-Request get
403; slow clients do not keep the page from being answered and are dropped at the request
deadline; a body over the limit gets 413 without the server's memory growing; every malformed or
out-of-range parameter gets 400 naming it, and nothing of a refused request is applied.

usage: test_http_server.py IMPULSE_BINARY SOURCE_DIR WORK_DIR
"""
import json
import os
import socket
import time

from viewer_http import Viewer, impulse_args, make_recording, read_reply, request

impulse, source, work = impulse_args()
world = os.path.join(source, "models/worlds/spheres.xml")
rec = make_recording(impulse, source, work)
failures = []


def check(ok, what):
    print(("ok: " if ok else "FAIL: ") + what)
    if not ok:
        failures.append(what)


def error_line(r):
    try:
        e = json.loads(r.body)["error"]
    except (ValueError, KeyError, TypeError):
        return None
    return e if isinstance(e, str) and "\n" not in e and e else None


def get(v, target, **kw):
    return request(v.port, "GET", target, **kw)


def post(v, target, **kw):
    return request(v.port, "POST", target, **kw)


# ------------------------------------------------------------------------------------ ranges
def check_ranges(v, target):
    whole = get(v, target)
    n = len(whole.body)
    check(whole.status == 200 and n > 0, f"{target}: 200 with {n} bytes")
    cases = [
        (f"bytes=0-{n + 200000}", 0, n),  # past the end: up to the end
        ("bytes=0-0", 0, 1),
        (f"bytes=1-{n // 2}", 1, n // 2 + 1),
        ("bytes=-5", n - 5, n),
        (f"bytes=-{n * 10}", 0, n),
        (f"bytes={n - 1}-", n - 1, n),
    ]
    for header, a, b in cases:
        r = get(v, target, headers={"Range": header})
        want = whole.body[a:b]
        check(r.status == 206 and r.body == want and r.header("content-range") == f"bytes {a}-{b - 1}/{n}",
              f"{target} Range {header}: 206 with bytes {a}..{b - 1} of {n} (got {r.status}, {len(r.body)} bytes, "
              f"{r.header('content-range')})")
    for header in (f"bytes={n}-", f"bytes={n}-{n + 10}", "bytes=-0"):
        r = get(v, target, headers={"Range": header})
        check(r.status == 416 and r.header("content-range") == f"bytes */{n}" and error_line(r),
              f"{target} Range {header}: 416 with a reason (got {r.status}, {len(r.body)} bytes)")
    # malformed (cpp-httplib refuses these before the handler): 416, nothing of the resource
    for header in ("bytes=0-99999999999999999999999", "bytes=99999999999999999999999-", "bytes=5-2", "bytes=abc",
                   "items=0-1"):
        r = get(v, target, headers={"Range": header})
        check(r.status == 416 and error_line(r) and whole.body[:20] not in r.body,
              f"{target} Range {header}: 416 with a reason (got {r.status}, {len(r.body)} bytes)")
    # several ranges: the whole resource
    for header in ("bytes=0-1,4-5", "bytes=0-1, 3-3"):
        r = get(v, target, headers={"Range": header})
        check(r.status == 200 and r.body == whole.body, f"{target} Range {header}: 200 with the whole resource")


def ranges():
    with Viewer(impulse, world, "--paused") as live, Viewer(impulse, rec) as replay:
        for target in ("/", "/viewer.js", "/api/scene", "/api/frame"):
            check_ranges(live, target)
        for target in ("/api/scene", "/api/frame?k=3", "/api/recording", "/api/series", "/api/frames?from=2&count=5"):
            check_ranges(replay, target)
        check(live.alive() and replay.alive(), "both servers run after the range requests")

# ------------------------------------------------------------------------------------ Host, Origin, POST
def origins():
    with Viewer(impulse, world, "--paused") as v:
        p = v.port
        for host in (f"localhost:{p}", f"LOCALHOST:{p}", f"[::1]:{p}", f"127.0.0.1:{p}"):
            r = get(v, "/api/status", host=host)
            check(r.status == 200, f"Host {host}: 200")
        for host in (f"evil.example:{p}", "127.0.0.1", f"127.0.0.1:{p + 1}", f"127.0.0.1:{p}.evil.example",
                     f"rebind.example:{p}"):
            r = get(v, "/api/scene", host=host)
            check(r.status == 403 and error_line(r) and "Host" in error_line(r), f"Host {host}: 403 naming Host ({r})")
        r = get(v, "/api/scene", headers={"Host": None})
        check(r.status == 403 and "Host" in (error_line(r) or ""), f"no Host header: 403 ({r.status})")
        for origin in ("http://evil.example", "null", f"http://127.0.0.1:{p + 1}", f"https://127.0.0.1:{p}",
                       f"http://localhost:{p}"):  # the Host is 127.0.0.1:port
            r = get(v, "/api/status", headers={"Origin": origin})
            check(r.status == 403 and "Origin" in (error_line(r) or ""), f"Origin {origin}: 403 naming Origin ({r})")
        r = get(v, "/api/status", headers={"Origin": f"http://127.0.0.1:{p}"})
        check(r.status == 200, "same Origin: 200")
        for site in ("cross-site", "same-site"):
            r = get(v, "/api/status", headers={"Sec-Fetch-Site": site})
            check(r.status == 403, f"Sec-Fetch-Site {site}: 403")
        # a cross-origin "simple" POST (no preflight) cannot carry X-Impulse-Request
        r = post(v, "/api/control?cmd=run", headers={"Content-Type": "text/plain"}, body=b"x", post_header=False)
        check(r.status == 403 and "X-Impulse-Request" in (error_line(r) or ""),
              f"POST without X-Impulse-Request: 403 naming the header ({r})")
        r = post(v, "/api/control?cmd=run", headers={"Origin": "http://evil.example"})
        check(r.status == 403, "POST from another Origin, with the header: 403")
        check(json.loads(get(v, "/api/status").body)["paused"] is True, "the refused POSTs changed nothing")
        r = post(v, "/api/control?cmd=step", headers={"Origin": f"http://127.0.0.1:{p}"})
        check(r.status == 200 and json.loads(r.body)["steps"] == 1, "POST from the page (Origin, header): 200, one step")

# ------------------------------------------------------------------------------------ slow clients, large bodies
def slow_clients():
    with Viewer(impulse, world, "--paused") as v:
        slow = []
        for i in range(40):  # more than cpp-httplib's 8 threads
            s = socket.create_connection(("127.0.0.1", v.port))
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\n".encode())
            slow.append(s)
        t0 = time.time()
        worst = 0
        while time.time() - t0 < 4:
            for s in slow:  # one header line each second: never silent for long
                try:
                    s.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    pass
            t = time.time()
            r = get(v, "/api/status", timeout=10)
            worst = max(worst, time.time() - t)
            check(r.status == 200, "a normal request beside 40 slow ones: 200") if r.status != 200 else None
            time.sleep(1)
        check(worst < 2, f"normal requests beside 40 slow clients answered within {worst:.2f} s (< 2 s)")
        # the request deadline (10 s for the head) drops the slow clients
        end = t0 + 14
        dropped = 0
        for s in slow:
            try:
                while time.time() < end:
                    s.sendall(b"X-Slow: 1\r\n")
                    s.settimeout(1)
                    try:
                        if s.recv(4096) == b"":
                            break
                    except socket.timeout:
                        continue
                    # a reply (400 or 408) then the close
                    while s.recv(4096):
                        pass
                    break
                else:
                    continue
                dropped += 1
            except OSError:
                dropped += 1
            finally:
                s.close()
        check(dropped == len(slow), f"{dropped} of {len(slow)} slow clients dropped within 14 s")
        check(get(v, "/api/status").status == 200 and v.alive(), "the server answers after the slow clients")


def large_body():
    with Viewer(impulse, world, "--paused") as v:
        # 300 MB announced, 64 MB sent: 413 at once, memory flat
        rss0 = v.rss_kib()
        s = socket.create_connection(("127.0.0.1", v.port))
        s.sendall(f"POST /api/control HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\nX-Impulse-Request: 1\r\n"
                  f"Content-Type: text/plain\r\nContent-Length: {300 << 20}\r\n\r\n".encode())
        chunk = b"x" * (1 << 20)
        try:
            for _ in range(64):
                s.sendall(chunk)
        except OSError:
            pass  # the server closed after its reply
        r = read_reply(s, time.time() + 10)
        s.close()
        grew = v.rss_kib() - rss0
        check(r.status == 413 and error_line(r), f"a 300 MB body: 413 with a reason ({r})")
        check(grew < 20 << 10, f"the server's memory grew {grew} KiB (< 20 MiB) for the 300 MB body")
        check(get(v, "/api/status").status == 200 and v.alive(), "the server answers after the large body")


def connection_limits():
    with Viewer(impulse, world, "--paused") as v:
        # a body on a GET would be read as the next request: refused, and the connection closed
        with socket.create_connection(("127.0.0.1", v.port)) as s:
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\nContent-Length: 16\r\n\r\n"
                      "GET / HTTP/1.1\r\n".encode())
            r = read_reply(s, time.time() + 10)
            s.settimeout(10)
            rest = s.recv(4096)
        check(r.status == 400 and "body" in (error_line(r) or "") and rest == b"",
              f"a GET with a body: 400, then the connection closes ({r}, then {rest[:60]!r})")
        # 128 connections at most: the next ones get 503 at once, and the server serves again once
        # they are gone
        idle = [socket.create_connection(("127.0.0.1", v.port)) for _ in range(140)]
        busy = 0
        for s in idle[-8:]:
            s.sendall(f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{v.port}\r\n\r\n".encode())
            busy += read_reply(s, time.time() + 10).status == 503
        for s in idle:
            s.close()
        check(busy == 8, f"connections over 128: {busy} of 8 answered 503")
        time.sleep(0.5)
        check(get(v, "/api/status").status == 200, "after they close, a request gets 200")


# ------------------------------------------------------------------------------------ numbers
def replay_numbers():
    with Viewer(impulse, rec) as v:
        n = json.loads(get(v, "/api/info").body)["frames"]
        bad = [
            ("/api/frame?k=abc", "k"), ("/api/frame?k=nan", "k"), ("/api/frame?k=1e12", "k"), ("/api/frame?k=-1", "k"),
            ("/api/frame?k=1.5", "k"), ("/api/frame?k=", "k"), (f"/api/frame?k={n}", "k"), ("/api/frame?k=%201", "k"),
            ("/api/frame?k=1&k=2", "k"), ("/api/frame?k=99999999999999999999", "k"), ("/api/frame.json?k=x", "k"),
            ("/api/frames?from=abc&count=1", "from"), ("/api/frames?from=0&count=0", "count"),
            (f"/api/frames?from=1&count={n}", "count"), ("/api/frames?count=1", "from"),
            ("/api/dof?system=4294967296&iq=0&iv=0", "system"), ("/api/dof?system=0&iq=x&iv=0", "iq"),
            ("/api/dof?system=0&iq=0&iv=-1", "iv"),
        ]
        for target, name in bad:
            r = get(v, target)
            e = error_line(r) or ""
            check(r.status == 400 and f"'{name}'" in e, f"{target}: 400 naming '{name}' ({r.status} {e})")
        r = get(v, "/api/dof?system=7&iq=0&iv=0")
        check(r.status == 400 and "system 7" in (error_line(r) or ""), f"/api/dof of a system not recorded: 400 ({r})")
        check(get(v, f"/api/frame?k={n - 1}").status == 200, "the last frame: 200")


def live_numbers():
    with Viewer(impulse, world, "--paused") as v:
        status = lambda: json.loads(get(v, "/api/status").body)  # noqa: E731
        for target, name in [("/api/control?speed=nan", "speed"), ("/api/control?speed=0", "speed"),
                             ("/api/control?speed=1001", "speed"), ("/api/control?speed=inf", "speed"),
                             ("/api/control?speed=2x", "speed"), ("/api/control?cmd=run&speed=abc", "speed"),
                             ("/api/control?cmd=jump&speed=2", "cmd"),
                             ("/api/push?system=4294967296&body=0&fx=1", "system"),
                             ("/api/push?system=0&body=x&fx=1", "body"), ("/api/push?system=0&body=0&fx=nan", "fx"),
                             ("/api/push?system=0&body=0&fy=1e999", "fy"), ("/api/push?system=0&body=0&seconds=11", "seconds"),
                             ("/api/push?system=0&body=0&seconds=-1", "seconds")]:
            r = post(v, target)
            e = error_line(r) or ""
            check(r.status == 400 and f"'{name}'" in e, f"POST {target}: 400 naming '{name}' ({r.status} {e})")
        s = status()
        check(s["paused"] and s["speed"] == 1 and s["steps"] == 0, "the refused controls changed nothing (no speed, no run)")
        r = post(v, "/api/push?system=0&body=0&fx=1&px=1000000&seconds=1")
        check(r.status == 400 and "push point" in (error_line(r) or ""), f"a push point 1e6 m away: 400 ({r})")
        r = post(v, "/api/push?system=0&body=0&fx=1e300&fy=-1e300&px=0.05&seconds=1")
        check(r.status == 200, "a huge finite force: 200 (capped at 5 m g)")
        for _ in range(50):
            post(v, "/api/control?cmd=step")
        s = status()
        check(s["steps"] == 50 and s["error"] == "" and isinstance(s["time"], float),
              f"the pushed world steps on, finite ({s['steps']} steps, error '{s['error']}')")

for section in (ranges, origins, slow_clients, large_body, connection_limits, replay_numbers, live_numbers):
    try:
        section()
    except Exception as e:  # a crashed or hung server: the section fails, the next ones still run
        check(False, f"{section.__name__}: {type(e).__name__}: {e}")

if failures:
    print(f"{len(failures)} failure(s):")
    for f in failures:
        print("  " + f)
    raise SystemExit(1)
print("all HTTP server checks passed")
