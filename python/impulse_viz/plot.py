"""PNG figures of a run: `impulse plot RECORDING_or_CSV --out DIR` hands over to this module.

    python3 -m impulse_viz.plot run.imprec --out plots/

Inputs: a recording (docs/recording.md), a CSV log of `impulse run --csv` (docs/world-format.md)
or `impulse demo --csv`, or the training log of examples/python/train_locomotion.py (train_log.csv:
one figure, training.png, of the episode return, the reward per step and the policy's action
noise over the run). Figures of a run (only those the input has data for):
    base_trajectory.png  base position of every floating system over time, and x-y path
    velocities.png       base linear and angular velocity (from u)
    contact_forces.png   contact count and total normal force
    energy.png           kinetic, potential and total energy
    penetration.png      largest contact penetration per step
    solver.png           solver iterations and residual
    joints.png           joint positions and efforts of the first robot (recordings)
"""
from __future__ import annotations

import argparse
import csv
import os
import stat
import sys
import warnings

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .recording import MAGIC, Recording, RecordingError, RecordingWarning  # noqa: E402

# Bounds on a CSV input (docs/recording.md): it is read whole into Python lists, so its size is
# limited, and so is a line (a file without line breaks would otherwise be one line).
MAX_CSV_BYTES = 256 << 20
MAX_LINE_BYTES = 1 << 20


def _open_input(path: str, binary: bool = False):
    """Opens a regular file for reading; anything else (a FIFO, /dev/zero, a directory) is an
    error before a byte is read. The open does not block, and fstat checks the open file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise RecordingError(f"'{path}': {e.strerror}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (device, FIFO or socket)"
        raise RecordingError(f"'{path}': is {kind}")
    return os.fdopen(fd, "rb") if binary else os.fdopen(fd, newline="")


def _csv_lines(f, path: str):
    """The lines of an open CSV file, each at most MAX_LINE_BYTES, the file at most MAX_CSV_BYTES."""
    size = os.fstat(f.fileno()).st_size
    if size > MAX_CSV_BYTES:
        raise RecordingError(f"csv '{path}': {size} bytes, more than the limit of {MAX_CSV_BYTES}")
    while True:
        line = f.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES:
            raise RecordingError(f"csv '{path}': a line is longer than {MAX_LINE_BYTES} characters")
        yield line


class Run:
    """The series the figures need, from either input kind."""

    def __init__(self):
        self.title = ""
        self.time = None
        self.bases = {}  # name -> dict(pos (n,3), quat (n,4), v (n,3), w (n,3))
        self.kinetic = self.potential = None
        self.contacts = self.normal_force = None
        self.iterations = self.residual = self.penetration = None
        self.joints = None  # (names, q (n,k), tau (n,k))


def load_recording(path: str) -> Run:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RecordingWarning)  # printed below, once, as the CLI's warnings are
        rec = Recording(path)
    if rec.dropped_bytes:
        print(f"warning: {rec.dropped_warning()}", file=sys.stderr)
    if len(rec) == 0:
        raise RecordingError(f"recording '{path}': no frames, nothing to plot")
    r = Run()
    r.title = os.path.basename(path)
    r.time = rec.time
    for s in rec.systems:
        if s.scene.get("floating_base"):
            r.bases[s.name] = dict(pos=s.q[:, :3], quat=s.q[:, 3:7], v=s.u[:, :3], w=s.u[:, 3:6])
    r.kinetic = sum(s.kinetic.astype(float) for s in rec.systems) if rec.systems else None
    r.potential = sum(s.potential.astype(float) for s in rec.systems) if rec.systems else None
    r.contacts = rec.contact_count.astype(float)
    r.normal_force = rec.normal_force()
    r.iterations = rec.iterations.astype(float)
    r.residual = rec.residual.astype(float)
    r.penetration = rec.max_penetration.astype(float)
    robot = next((s for s in rec.systems if len(s.scene["joints"]) > 1), None)
    if robot is not None:
        names, iq, iv = [], [], []
        for j in robot.scene["joints"]:
            if j["nv"] == 1:
                names.append(j["name"])
                iq.append(j["idx_q"])
                iv.append(j["idx_v"])
        if names:
            r.joints = (names, robot.q[:, iq], robot.tau[:, iv])
    return r


def load_csv(path: str) -> Run:
    with _open_input(path) as f:
        reader = csv.reader(_csv_lines(f, path))
        try:
            header = next(reader)
        except StopIteration:
            raise RecordingError(f"csv '{path}': empty file") from None
        rows = [row for row in reader if row]
    if not rows:
        raise RecordingError(f"csv '{path}': no data rows")
    def value(x):
        try:
            return float(x)
        except ValueError:
            return np.nan  # text columns (e.g. status) are not plotted

    data = np.array([[value(x) for x in row] for row in rows])
    if data.ndim != 2 or data.shape[1] != len(header):
        raise RecordingError(f"csv '{path}': rows do not match the header's {len(header)} columns")
    col = {name: i for i, name in enumerate(header)}
    get = lambda name: data[:, col[name]] if name in col else None  # noqa: E731
    r = Run()
    r.title = os.path.basename(path)
    r.time = get("time") if "time" in col else get("t")
    if r.time is None or not np.isfinite(r.time).all():
        raise RecordingError(f"csv '{path}': no numeric 'time' column (not an impulse CSV log)")
    # `impulse run --csv`: "<name>.x" ...; `impulse demo --csv`: "x" ... (scenario_csv.hpp)
    prefixes = sorted({h[: -len(".x")] for h in header if h.endswith(".x")})
    for p in prefixes:
        need = [f"{p}.{c}" for c in ("x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz")]
        if all(n in col for n in need):
            a = data[:, [col[n] for n in need]]
            r.bases[p] = dict(pos=a[:, 0:3], quat=a[:, 3:7], v=a[:, 7:10], w=a[:, 10:13])
    if all(c in col for c in ("x", "y", "z")):
        pos = data[:, [col[c] for c in ("x", "y", "z")]]
        v = data[:, [col[c] for c in ("vx", "vy", "vz")]] if all(c in col for c in ("vx", "vy", "vz")) else None
        r.bases["base"] = dict(pos=pos, quat=None, v=v, w=None)
    r.kinetic = get("kinetic_energy")
    r.potential = get("potential_energy")
    r.contacts = get("contacts")
    r.normal_force = get("normal_force")
    r.iterations = get("iterations")
    r.residual = get("residual")
    r.penetration = get("max_penetration") if "max_penetration" in col else get("penetration")
    return r


def _save(fig, out: str, name: str, written: list):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)


def plot_run(r: Run, out: str) -> list:
    os.makedirs(out, exist_ok=True)
    written = []
    t = r.time
    if r.bases:
        fig, ax = plt.subplots(1, 2, figsize=(11, 4))
        for name, b in r.bases.items():
            for k, c in enumerate("xyz"):
                ax[0].plot(t, b["pos"][:, k], label=f"{name} {c}")
            ax[1].plot(b["pos"][:, 0], b["pos"][:, 1], label=name)
        ax[0].set_xlabel("t (s)"), ax[0].set_ylabel("position (m)"), ax[0].set_title("base position")
        ax[1].set_xlabel("x (m)"), ax[1].set_ylabel("y (m)"), ax[1].set_title("path"), ax[1].axis("equal")
        ax[0].legend(fontsize=7, ncol=2), ax[1].legend(fontsize=7)
        fig.suptitle(r.title)
        _save(fig, out, "base_trajectory.png", written)
        if any(b["v"] is not None for b in r.bases.values()):
            fig, ax = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True)
            for name, b in r.bases.items():
                if b["v"] is not None:
                    for k, c in enumerate("xyz"):
                        ax[0].plot(t, b["v"][:, k], label=f"{name} v{c}")
                if b.get("w") is not None:
                    for k, c in enumerate("xyz"):
                        ax[1].plot(t, b["w"][:, k], label=f"{name} w{c}")
            ax[0].set_ylabel("linear (m/s)"), ax[1].set_ylabel("angular (rad/s)"), ax[1].set_xlabel("t (s)")
            ax[0].legend(fontsize=7, ncol=3), ax[1].legend(fontsize=7, ncol=3)
            ax[0].set_title(f"{r.title}: base velocity (world frame)")
            _save(fig, out, "velocities.png", written)
    if r.contacts is not None:
        fig, ax = plt.subplots(figsize=(9, 3.8))
        ax.step(t, r.contacts, where="post", color="#1d3557", label="contacts")
        ax.set_xlabel("t (s)"), ax.set_ylabel("contacts")
        if r.normal_force is not None:
            ax2 = ax.twinx()
            ax2.plot(t, r.normal_force, color="#e76f51", lw=0.8, label="normal force")
            ax2.set_ylabel("total normal force (N)")
        ax.set_title(f"{r.title}: contacts")
        _save(fig, out, "contact_forces.png", written)
    if r.kinetic is not None and r.potential is not None:
        fig, ax = plt.subplots(figsize=(9, 3.8))
        ax.plot(t, r.kinetic, label="kinetic")
        ax.plot(t, r.potential - r.potential[0], label="potential - V(0)")
        ax.plot(t, r.kinetic + r.potential - r.potential[0], label="total - V(0)", color="k")
        ax.set_xlabel("t (s)"), ax.set_ylabel("energy (J)"), ax.legend(), ax.set_title(f"{r.title}: energy")
        _save(fig, out, "energy.png", written)
    if r.penetration is not None:
        fig, ax = plt.subplots(figsize=(9, 3.5))
        ax.plot(t, 1e3 * np.asarray(r.penetration), color="#6a4c93", lw=0.8)
        ax.set_xlabel("t (s)"), ax.set_ylabel("max penetration (mm)"), ax.set_title(f"{r.title}: penetration")
        _save(fig, out, "penetration.png", written)
    if r.iterations is not None:
        fig, ax = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
        ax[0].plot(t, r.iterations, lw=0.7)
        ax[0].set_ylabel("iterations")
        if r.residual is not None:
            res = np.where(np.asarray(r.residual) > 0, r.residual, np.nan)
            ax[1].semilogy(t, res, lw=0.7, color="#2a9d8f")
        ax[1].set_ylabel("residual"), ax[1].set_xlabel("t (s)")
        ax[0].set_title(f"{r.title}: solver")
        _save(fig, out, "solver.png", written)
    if r.joints is not None:
        names, q, tau = r.joints
        fig, ax = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
        for k, n in enumerate(names):
            ax[0].plot(t, q[:, k], lw=0.8, label=n)
            ax[1].plot(t, tau[:, k], lw=0.8, label=n)
        ax[0].set_ylabel("position (rad or m)"), ax[1].set_ylabel("effort (N m or N)"), ax[1].set_xlabel("t (s)")
        ax[0].legend(fontsize=6, ncol=4), ax[0].set_title(f"{r.title}: joints")
        _save(fig, out, "joints.png", written)
    return written


# columns of train_locomotion.py's train_log.csv that the training figure needs
TRAINING_COLUMNS = ("iteration", "time_s", "episode_return", "mean_reward", "action_std")


def is_training_log(path: str) -> bool:
    """Whether `path` is a CSV whose header names the training log's columns."""
    try:
        with _open_input(path) as f:
            header = next(csv.reader(_csv_lines(f, path)), [])
    except (UnicodeDecodeError, csv.Error, RecordingError):
        return False
    return all(c in header for c in TRAINING_COLUMNS)


def plot_training(path: str, out: str) -> list:
    """training.png of a train_log.csv: return, reward per step and action noise over wall time."""
    with _open_input(path) as f:
        rows = list(csv.DictReader(_csv_lines(f, path)))
    if not rows:
        raise RecordingError(f"training log '{path}': no data rows")
    try:
        col = {c: np.array([float(r[c]) for r in rows]) for c in TRAINING_COLUMNS}
    except (TypeError, ValueError) as e:
        raise RecordingError(f"training log '{path}': a row is not numeric ({e})") from None
    t = col["time_s"] / 60
    fig, ax = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    ax[0].plot(t, col["episode_return"], color="#1d3557")
    ax[0].set_ylabel("episode return")
    ax[1].plot(t, col["mean_reward"], color="#2a9d8f", lw=0.8)
    ax[1].set_ylabel("reward per step")
    ax[2].plot(t, col["action_std"], color="#e76f51")
    ax[2].set_ylabel("action noise (std)"), ax[2].set_xlabel("training time (min)")
    ax[0].set_title(f"{os.path.basename(os.path.dirname(os.path.abspath(path)))}: training, "
                    f"{len(rows)} iterations")
    os.makedirs(out, exist_ok=True)
    written: list = []
    _save(fig, out, "training.png", written)
    return written


def load(path: str) -> Run:
    with _open_input(path, binary=True) as f:
        head = f.read(8)
    return load_recording(path) if head == MAGIC else load_csv(path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="impulse plot", description="PNG figures of a recording or CSV log")
    p.add_argument("input")
    p.add_argument("--out", default="plots")
    a = p.parse_args(argv)
    try:
        if is_training_log(a.input):
            written = plot_training(a.input, a.out)
        else:
            run = load(a.input)
            written = plot_run(run, a.out)
    except (OSError, RecordingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except (UnicodeDecodeError, ValueError, csv.Error) as e:
        print(f"error: '{a.input}' is neither a recording nor a CSV log ({e})", file=sys.stderr)
        return 1
    except (KeyError, IndexError, TypeError) as e:  # a CSV log whose columns do not fit together
        print(f"error: '{a.input}' cannot be plotted ({type(e).__name__}: {e})", file=sys.stderr)
        return 1
    if not written:
        print(f"error: '{a.input}' has no series to plot", file=sys.stderr)
        return 1
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
