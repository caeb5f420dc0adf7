"""Reader of Impulse recordings (docs/recording.md, versions 1 and 2), pure Python + numpy.

    from impulse_viz.recording import Recording
    rec = Recording("run.imprec")
    rec.time                      # (n,) seconds
    rec.systems[0].poses          # (n, nb, 7): x y z qw qx qy qz of every body, world frame
    rec.systems[0].q, .u, .tau    # (n, nq), (n, nv), (n, nv)
    rec.contacts                  # structured (total,): position, normal, impulse, depth, ...
    rec.contact_frame             # (total,) frame index of each contact
    rec.contacts_of(k)            # the contacts of frame k
    rec.sensor("imu")             # (n, fields) readings of a recorded sensor (version 2)
    rec.sensor_fields("imu")      # their labels, e.g. ["acc_x", ..., "gyro_z"]

All arrays are views or copies of the file's bytes decoded in a few vectorised numpy passes; only
the frame boundaries are found by a loop (one integer read per frame), so 100k frames open in
well under a second.
"""
from __future__ import annotations

import errno
import json
import math
import mmap
import os
import stat
import struct
import warnings
from dataclasses import dataclass

import numpy as np

MAGIC = b"IMPREC\r\n"
VERSION = 2  # 2 adds sensor readings; 1 is still read
HEADER_BYTES = 40
FRAME_PREFIX_BYTES = 48
CONTACT_BYTES = 56

FRAME_PREFIX = [
    ("size", "<u4"),
    ("contact_count", "<u4"),
    ("step", "<u8"),
    ("time", "<f8"),
    ("status", "<u4"),
    ("iterations", "<u4"),
    ("residual", "<f4"),
    ("max_penetration", "<f4"),
    ("limits", "<u4"),
    ("step_us", "<f4"),
]

CONTACT_DTYPE = np.dtype(
    [
        ("position", "<f4", 3),
        ("normal", "<f4", 3),
        ("impulse", "<f4", 3),
        ("depth", "<f4"),
        ("system_a", "<i4"),
        ("body_a", "<i4"),
        ("system_b", "<i4"),
        ("body_b", "<i4"),
    ]
)
assert CONTACT_DTYPE.itemsize == CONTACT_BYTES

# StepStatus of the engine (stepper.hpp), by value
STATUS_NAMES = ["ok", "solver_not_converged", "solver_failed", "non_finite", "contact_overflow"]


class RecordingError(Exception):
    """A file that is not a readable Impulse recording; the message names the file."""


class RecordingWarning(UserWarning):
    """A recording whose last frame is incomplete (docs/recording.md, rule 12)."""


def _whole(v) -> bool:
    # rule 8: a JSON number with an integral value; bool is an int in Python but not a number in JSON
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v == math.floor(v)


def _scene_problem(scene, sizes, sensor_floats: int):
    """Rule 8 on the parsed scene: the problem, or None."""
    if not isinstance(scene, dict):
        return "the scene is not a JSON object"
    systems = scene.get("systems")
    if not isinstance(systems, list):
        return 'the scene has no "systems" array'
    if len(systems) != len(sizes):
        return f"the scene has {len(systems)} systems, the header {len(sizes)}"
    for i, (s, (nb, nq, nv)) in enumerate(zip(systems, sizes)):
        at = f"scene system {i}"
        if not isinstance(s, dict) or not isinstance(s.get("name"), str):
            return f'{at} is not an object with a "name"'
        for key, value in (("nb", nb), ("nq", nq), ("nv", nv)):
            if not _whole(s.get(key)) or s[key] != value:
                return f'{at}: "{key}" is not {value} as in the header'
        bodies = s.get("bodies")
        if not isinstance(bodies, list) or len(bodies) != nb:
            return f'{at}: "bodies" is not an array of {nb}'
        if not all(isinstance(b, dict) and isinstance(b.get("name"), str) for b in bodies):
            return f'{at}: a body is not an object with a "name"'
        joints = s.get("joints")
        if not isinstance(joints, list):
            return f'{at}: no "joints" array'
        for j in joints:
            if not isinstance(j, dict) or not isinstance(j.get("name"), str):
                return f'{at}: a joint is not an object with a "name"'
            v = [j.get(k) for k in ("idx_q", "nq", "idx_v", "nv")]
            if not all(_whole(x) and x >= 0 for x in v) or v[0] + v[1] > nq or v[2] + v[3] > nv:
                return f"{at}: joint '{j['name']}' has coordinates outside the system's"
    if "sensors" not in scene:
        return f'the scene has no "sensors" for the header\'s {sensor_floats} values' if sensor_floats else None
    sensors = scene["sensors"]
    if not isinstance(sensors, list):
        return "the scene's \"sensors\" is not an array"
    fields = 0
    for c in sensors:
        if not isinstance(c, dict) or not isinstance(c.get("name"), str) or not isinstance(c.get("type"), str):
            return 'a scene sensor is not an object with a "name" and a "type"'
        f = c.get("fields")
        if not isinstance(f, list):
            return f"scene sensor '{c['name']}' has no \"fields\" array"
        if not all(isinstance(x, str) for x in f):
            return f"scene sensor '{c['name']}' has a field that is not a string"
        fields += len(f)
    if fields != sensor_floats:
        return f"the scene's sensors have {fields} fields, the header {sensor_floats} values"
    return None


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def _map_regular_file(path: str):
    """Rule 1: the bytes of the regular file `path`, mapped read-only (None for an empty file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        what = "file not found" if e.errno == errno.ENOENT else e.strerror
        raise RecordingError(f"recording '{path}': {what}") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise RecordingError(f"recording '{path}': is a directory, not a file")
        if not stat.S_ISREG(st.st_mode):
            raise RecordingError(f"recording '{path}': is not a regular file (device, FIFO or socket)")
        if st.st_size == 0:
            return None
        return mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)


def _system_dtype(nb: int, nq: int, nv: int) -> np.dtype:
    return np.dtype(
        [
            ("kinetic", "<f4"),
            ("potential", "<f4"),
            ("com", "<f4", 3),
            ("poses", "<f4", (nb, 7)),
            ("q", "<f4", (nq,)),
            ("u", "<f4", (nv,)),
            ("tau", "<f4", (nv,)),
        ]
    )


@dataclass
class SystemTrack:
    """The recorded trajectory of one articulated system."""

    name: str
    scene: dict
    kinetic: np.ndarray  # (n,) J
    potential: np.ndarray  # (n,) J
    com: np.ndarray  # (n, 3) m
    poses: np.ndarray  # (n, nb, 7)
    q: np.ndarray  # (n, nq)
    u: np.ndarray  # (n, nv)
    tau: np.ndarray  # (n, nv)

    @property
    def body_names(self) -> list[str]:
        return [b["name"] for b in self.scene["bodies"]]

    def joint(self, name: str) -> dict:
        """The scene entry of a joint (idx_q, nq, idx_v, nv) by its URDF name."""
        for j in self.scene["joints"]:
            if j["name"] == name:
                return j
        raise KeyError(f"system '{self.name}' has no joint '{name}'")


class Recording:
    def __init__(self, path: str):
        self.path = str(path)
        # The checks are the rules of docs/recording.md ("Validation"), in the same order as the
        # C++ reader (src/record/recording.cpp) and the page's (viewer/src/recording.js).
        head = f"recording '{self.path}': "

        def fail(problem, at, rule):
            raise RecordingError(f"{head}{problem} at byte {at} (rule {rule})")

        mapped = _map_regular_file(self.path)  # rule 1
        size = len(mapped) if mapped is not None else 0
        if size < 48:  # rule 2
            fail(f"not an Impulse recording (bad magic: the file has {size} bytes)", 0, 2)
        buf = np.frombuffer(mapped, dtype=np.uint8)
        b = mapped
        if bytes(b[:8]) != MAGIC:
            fail("not an Impulse recording (bad magic)", 0, 2)
        version, header, nsys, fixed, contact, every = struct.unpack_from("<6I", b, 8)
        (self.dt,) = struct.unpack_from("<d", b, 32)
        if version not in (1, VERSION):  # rule 3
            fail(f"version {version} is not supported (this build reads 1 and {VERSION})", 8, 3)
        self.version = version
        if contact != CONTACT_BYTES:  # rule 4
            fail(f"contact_bytes is {contact}, not 56", 24, 4)
        if every < 1:  # rule 5
            fail("every is 0, not >= 1", 28, 5)
        if not (math.isfinite(self.dt) and self.dt > 0):
            fail(f"dt is {self.dt!r}, not a finite number > 0", 32, 5)
        # rule 6: the header fits in the file and holds its parts
        if header % 8:
            fail(f"header_bytes {header} is not a multiple of 8", 12, 6)
        if header > size:
            fail(f"header_bytes {header} is beyond the end of the file ({size} bytes)", 12, 6)
        # version 2 adds the number of sensor values per frame (u32) after the system sizes
        sizes_end = HEADER_BYTES + 12 * nsys + (8 if version >= 2 else 4)
        if sizes_end > header:
            fail(f"{nsys} systems do not fit in header_bytes {header}", 16, 6)
        (scene_len,) = struct.unpack_from("<I", b, sizes_end - 4)
        if sizes_end + scene_len > header:
            fail(f"the scene's {scene_len} bytes do not fit in header_bytes {header}", sizes_end - 4, 6)
        # rule 7: sizes with a sanity bound, and the frame size they give
        sizes = [struct.unpack_from("<3I", b, HEADER_BYTES + 12 * i) for i in range(nsys)]
        for i, (nb, nq, nv) in enumerate(sizes):
            if nb > 100000 or nq > 1000000 or nv > 1000000:
                fail(f"system {i} sizes (nb {nb}, nq {nq}, nv {nv}) are out of bounds", HEADER_BYTES + 12 * i, 7)
        sensor_floats = struct.unpack_from("<I", b, sizes_end - 8)[0] if version >= 2 else 0
        if sensor_floats > 100000000:
            fail(f"{sensor_floats} sensor values per frame are out of bounds", sizes_end - 8, 7)
        fields = list(FRAME_PREFIX)
        for i, (nb, nq, nv) in enumerate(sizes):
            fields.append((f"s{i}", _system_dtype(int(nb), int(nq), int(nv))))
        if sensor_floats:
            fields.append(("sensors", "<f4", (int(sensor_floats),)))
        expect = FRAME_PREFIX_BYTES + sum(4 * (5 + 7 * nb + nq + 2 * nv) for nb, nq, nv in sizes) + 4 * sensor_floats
        if expect != fixed:
            fail(f"fixed_bytes is {fixed}, the sizes give {expect}", 20, 7)
        frame_dtype = np.dtype(fields)
        assert frame_dtype.itemsize == fixed
        # rule 8: the scene (strict UTF-8 and JSON: no NaN or Infinity)
        try:
            self.scene = json.loads(bytes(b[sizes_end : sizes_end + scene_len]).decode("utf-8"),
                                    parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            fail("the scene is not valid UTF-8 JSON", sizes_end, 8)
        problem = _scene_problem(self.scene, sizes, sensor_floats)
        if problem:
            fail(problem, sizes_end, 8)
        self.every = every
        self.dropped_bytes = 0
        self.size = size

        # rules 9 to 12: the frames. Every size in the layout is a multiple of 4 and the header one
        # of 8 (rule 6), so frames start on 4-byte words: work on the file as little-endian u32 words.
        nwords = size // 4
        words = np.frombuffer(buf, dtype="<u4", count=nwords)
        mv = memoryview(words)  # fast scalar reads in the boundary loop
        fixed_w, contact_w = fixed // 4, contact // 4
        # frame boundaries: one read of the frame size and contact count per frame
        starts = []
        at = header // 4
        while 4 * at < size:
            if size - 4 * at < 8:  # rule 12: a partial last frame, too short for its size fields
                self.dropped_bytes = size - 4 * at
                break
            fsize, nc = mv[at], mv[at + 1]
            if fsize != fixed + nc * contact:  # rule 9
                fail(f"frame {len(starts)} has size {fsize}, not fixed_bytes + 56 x {nc} contacts = {fixed + nc * contact}",
                     4 * at, 9)
            if fsize > size - 4 * at:  # rule 12: a partial last frame (the file of a run that was killed)
                self.dropped_bytes = size - 4 * at
                break
            starts.append(at)
            at += fsize // 4
        if self.dropped_bytes:
            warnings.warn(self.dropped_warning(), RecordingWarning, stacklevel=2)
        starts = np.asarray(starts, dtype=np.int64)
        self.offsets = 4 * starts

        # gather the fixed parts and the contact records with index arithmetic (in chunks, to
        # bound the index arrays), then view the words as the structured dtypes
        parts = []
        cols = np.arange(fixed_w, dtype=np.int64)
        for k in range(0, len(starts), 16384):
            parts.append(words[starts[k : k + 16384, None] + cols])
        fixed_words = np.concatenate(parts) if parts else np.zeros((0, fixed_w), dtype="<u4")
        frames = np.ascontiguousarray(fixed_words).view(frame_dtype).reshape(len(starts))
        self.frames = frames
        counts = frames["contact_count"].astype(np.int64)
        total = int(counts.sum())
        self.contact_frame = np.repeat(np.arange(len(frames)), counts)
        self.contact_start = np.concatenate(([0], np.cumsum(counts)))
        first = np.repeat(starts + fixed_w, counts)
        within = np.arange(total, dtype=np.int64) - np.repeat(self.contact_start[:-1], counts)
        cstart = first + contact_w * within
        cwords = words[cstart[:, None] + np.arange(contact_w, dtype=np.int64)] if total else np.zeros((0, contact_w), "<u4")
        self.contacts = np.ascontiguousarray(cwords).view(CONTACT_DTYPE).reshape(total)
        # rules 10 and 11, frame by frame: the first frame with a bad status or a bad contact
        bad_status = np.flatnonzero(frames["status"] > 4)
        k_status = int(bad_status[0]) if bad_status.size else len(frames)
        bad_contact, side = None, 0
        if total:
            nbs = np.array([nb for nb, _, _ in sizes] + [0], dtype=np.int64)  # index -1: no body
            ok_sides = []
            for sk, bk in (("system_a", "body_a"), ("system_b", "body_b")):
                system = self.contacts[sk].astype(np.int64)
                body = self.contacts[bk].astype(np.int64)
                known = (system >= -1) & (system < nsys)
                nb_of = nbs[np.where(known, system, -1)]
                ok_sides.append(known & np.where(system == -1, body == -1, (body >= 0) & (body < nb_of)))
            bad = np.flatnonzero(~(ok_sides[0] & ok_sides[1]))
            if bad.size:
                bad_contact = int(bad[0])
                side = 0 if not ok_sides[0][bad_contact] else 1
        k_contact = int(self.contact_frame[bad_contact]) if bad_contact is not None else len(frames)
        if k_status < len(frames) and k_status <= k_contact:  # rule 10
            fail(f"frame {k_status} has status {int(frames['status'][k_status])}, not 0..4", int(4 * starts[k_status]) + 24, 10)
        if bad_contact is not None:  # rule 11
            c, k = bad_contact, k_contact
            sk, bk = ("system_a", "body_a") if side == 0 else ("system_b", "body_b")
            within = c - int(self.contact_start[k])
            fail(f"frame {k} contact {within} has system {int(self.contacts[sk][c])} and body "
                 f"{int(self.contacts[bk][c])}, not a body of the recording",
                 int(4 * starts[k]) + fixed + 56 * within + 40 + 8 * side, 11)

        self.time = frames["time"]
        self.step = frames["step"]
        self.status = frames["status"]
        self.iterations = frames["iterations"]
        self.residual = frames["residual"]
        self.max_penetration = frames["max_penetration"]
        self.limits = frames["limits"]
        self.step_us = frames["step_us"]
        self.contact_count = frames["contact_count"]
        self.systems = []
        for i, s in enumerate(self.scene["systems"]):
            f = frames[f"s{i}"]
            self.systems.append(
                SystemTrack(s["name"], s, f["kinetic"], f["potential"], f["com"], f["poses"], f["q"], f["u"], f["tau"])
            )

    def dropped_warning(self) -> str:
        """The one-line warning for a partial last frame (rule 12)."""
        return (f"recording '{self.path}': the last frame is incomplete (a run that was killed?): its "
                f"{self.dropped_bytes} bytes at byte {self.size - self.dropped_bytes} are dropped (rule 12)")

    def __len__(self) -> int:
        return len(self.frames)

    def system(self, name_or_index) -> SystemTrack:
        if isinstance(name_or_index, int):
            return self.systems[name_or_index]
        for s in self.systems:
            if s.name == name_or_index:
                return s
        raise KeyError(f"recording '{self.path}' has no system '{name_or_index}'")

    def sensor_fields(self, name: str) -> list[str]:
        """Labels of the values of a recorded sensor (docs/recording.md, "Scene")."""
        return self._sensor(name)[2]

    def sensor(self, name: str) -> np.ndarray:
        """(frames, values) readings of a recorded sensor, float32."""
        start, n, _ = self._sensor(name)
        return self.frames["sensors"][:, start : start + n]

    def _sensor(self, name: str):
        start = 0
        for s in self.scene.get("sensors", []):
            n = len(s["fields"])
            if s["name"] == name:
                return start, n, list(s["fields"])
            start += n
        raise KeyError(f"recording '{self.path}' has no sensor '{name}'")

    def contacts_of(self, k: int) -> np.ndarray:
        return self.contacts[self.contact_start[k] : self.contact_start[k + 1]]

    @property
    def energy(self) -> np.ndarray:
        """Total mechanical energy (kinetic + potential of every system), J."""
        e = np.zeros(len(self), dtype=np.float64)
        for s in self.systems:
            e += s.kinetic.astype(np.float64) + s.potential.astype(np.float64)
        return e

    def normal_force(self) -> np.ndarray:
        """Sum over contacts of the normal impulse divided by the recorded step, per frame (N)."""
        lam_n = np.einsum("ij,ij->i", self.contacts["impulse"].astype(np.float64), self.contacts["normal"].astype(np.float64))
        total = np.bincount(self.contact_frame, weights=lam_n, minlength=len(self))
        return total / self.dt


def _main(argv=None) -> int:
    import argparse
    import time

    p = argparse.ArgumentParser(description="Summarise an Impulse recording")
    p.add_argument("recording")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    rec = Recording(a.recording)
    dt = time.perf_counter() - t0
    print(f"{a.recording}: {len(rec)} frames, {len(rec.contacts)} contacts, {len(rec.systems)} systems, "
          f"t = {rec.time[0] if len(rec) else 0:.4f} .. {rec.time[-1] if len(rec) else 0:.4f} s, opened in {dt * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
