"""`impulse view` and `impulse plot` on inputs that are not what they read: a FIFO, /dev/zero, a
directory, a recording without frames, an invalid recording, a recording whose last frame is
incomplete. Each must end at once with a one-line `error: ...` (exit code non-zero) naming the
input, or, for the incomplete last frame, go on with a warning naming the dropped bytes; never
hang, grow without bound or print a traceback.

usage: test_cli_inputs.py IMPULSE_BINARY SOURCE_DIR WORK_DIR
"""
import os
import resource
import subprocess
import sys

impulse, source, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
corpus = os.path.join(source, "tests", "record", "corpus")
fifo = os.path.join(work, "input.fifo")
if os.path.exists(fifo):
    os.remove(fifo)
os.mkfifo(fifo)
out = os.path.join(work, "plots")
# `impulse view` needs a page to serve before it opens its input: a stand-in is enough here
page = os.path.join(work, "page")
os.makedirs(page, exist_ok=True)
for name in ("index.html", "viewer.js"):
    with open(os.path.join(page, name), "w") as f:
        f.write("<!-- stand-in -->\n")
env = dict(os.environ, IMPULSE_VIEWER_DIR=page)


# AddressSanitizer reserves terabytes of address space for its shadow memory: under it the
# address-space bound below cannot be set (the sanitizer's own checks stand in for it)
with open(impulse, "rb") as f:
    sanitized = b"AddressSanitizer" in f.read()


def limit_memory():
    # 4 GiB of address space: plenty for a plot of a small file; a reader that reads /dev/zero
    # "to its first line" fails instead of taking the machine's memory
    if not sanitized:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


failures = []


def run(args, expect_error, must_contain):
    try:
        p = subprocess.run([impulse] + args, capture_output=True, text=True, timeout=60,
                           preexec_fn=limit_memory, env=env)
    except subprocess.TimeoutExpired:
        failures.append(f"{' '.join(args)}: still running after 60 s")
        return
    err = p.stderr.strip().splitlines()
    if expect_error:
        ok = p.returncode != 0 and len(err) == 1 and err[0].startswith("error: ") and must_contain in err[0]
    else:
        ok = p.returncode == 0 and any(line.startswith("warning: ") and must_contain in line for line in err)
    if not ok:
        failures.append(f"{' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}")


# rule 1: not regular files (a FIFO would block the reader; /dev/zero has no end)
run(["view", fifo, "--port", "0"], True, "not a regular file")
run(["plot", fifo, "--out", out], True, "not a regular file")
run(["plot", "/dev/zero", "--out", out], True, "not a regular file")
# valid recordings with nothing to show, and invalid ones
run(["plot", os.path.join(corpus, "no_frames.imprec"), "--out", out], True, "no frames")
run(["view", os.path.join(corpus, "no_frames.imprec"), "--port", "0"], True, "no frames")
run(["plot", os.path.join(corpus, "dt_nan.imprec"), "--out", out], True, "(rule 5)")
run(["plot", os.path.join(corpus, "scene_not_json.imprec"), "--out", out], True, "(rule 8)")
run(["view", os.path.join(corpus, "scene_not_json.imprec"), "--port", "0"], True, "(rule 8)")
run(["plot", os.path.join(corpus, "status_7.imprec"), "--out", out], True, "(rule 10)")
# a run killed mid-frame: plotted, with a warning naming the dropped bytes
run(["plot", os.path.join(corpus, "killed_mid_frame.imprec"), "--out", out], False, "bytes at byte")
# a CSV "log" of 2 MiB without a line break: the line bound stops it before it is read whole
long_line = os.path.join(work, "one_line.csv")
with open(long_line, "w") as f:
    f.write("time," + "1," * (1 << 20))
run(["plot", long_line, "--out", out], True, "a line is longer than")
# a page file that is a FIFO is refused before the server starts (it is not opened)
fifo_page = os.path.join(work, "fifo_page")
os.makedirs(fifo_page, exist_ok=True)
with open(os.path.join(fifo_page, "index.html"), "w") as f:
    f.write("<!-- stand-in -->\n")
if os.path.exists(os.path.join(fifo_page, "viewer.js")):
    os.remove(os.path.join(fifo_page, "viewer.js"))
os.mkfifo(os.path.join(fifo_page, "viewer.js"))
env["IMPULSE_VIEWER_DIR"] = fifo_page
run(["view", os.path.join(source, "models", "worlds", "box_on_ground.xml"), "--port", "0"], True,
    "not a regular file")
env["IMPULSE_VIEWER_DIR"] = page
os.remove(os.path.join(fifo_page, "viewer.js"))
# the plot module alone (python3 -m impulse_viz.plot) checks its input too
module = [sys.executable, "-m", "impulse_viz.plot"]
env["PYTHONPATH"] = os.path.join(source, "python")
for bad, expect in ((fifo, "not a regular file"), ("/dev/zero", "not a regular file")):
    try:
        p = subprocess.run(module + [bad, "--out", out], capture_output=True, text=True, timeout=60,
                           preexec_fn=limit_memory, env=env)
        err = p.stderr.strip().splitlines()
        if p.returncode == 0 or len(err) != 1 or expect not in err[0]:
            failures.append(f"impulse_viz.plot {bad}: exit {p.returncode}, stderr {p.stderr!r}")
    except subprocess.TimeoutExpired:
        failures.append(f"impulse_viz.plot {bad}: still running after 60 s")
os.remove(fifo)
for f in failures:
    print(f)
sys.exit(1 if failures else 0)
