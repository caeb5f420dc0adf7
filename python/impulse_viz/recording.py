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

import json
import struct
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
        try:
            buf = np.fromfile(self.path, dtype=np.uint8)
        except OSError as e:
            raise RecordingError(f"recording '{self.path}': cannot open: {e.strerror}") from None
        b = buf.tobytes() if buf.size < HEADER_BYTES else memoryview(buf)
        if buf.size < HEADER_BYTES or bytes(b[:8]) != MAGIC:
            raise RecordingError(f"recording '{self.path}': not an Impulse recording (bad magic)")
        version, header, nsys, fixed, contact, every = struct.unpack_from("<6I", b, 8)
        (self.dt,) = struct.unpack_from("<d", b, 32)
        if version not in (1, VERSION):
            raise RecordingError(f"recording '{self.path}': version {version} is not supported (reader: 1, {VERSION})")
        self.version = version
        # version 2 adds the number of sensor values per frame (u32) after the system sizes
        sizes_end = HEADER_BYTES + 12 * nsys + (8 if version >= 2 else 4)
        if header > buf.size or sizes_end > header or contact != CONTACT_BYTES:
            raise RecordingError(f"recording '{self.path}': truncated or corrupt header")
        sizes = np.frombuffer(buf, dtype="<u4", count=3 * nsys, offset=HEADER_BYTES).reshape(nsys, 3)
        if nsys and (sizes[:, 0].max() > 100000 or sizes[:, 1:].max() > 1000000):
            raise RecordingError(f"recording '{self.path}': corrupt header (system sizes)")
        sensor_floats = struct.unpack_from("<I", b, sizes_end - 8)[0] if version >= 2 else 0
        (scene_len,) = struct.unpack_from("<I", b, sizes_end - 4)
        self.scene = json.loads(bytes(b[sizes_end : sizes_end + scene_len]).decode("utf-8"))
        self.every = every

        fields = list(FRAME_PREFIX)
        for i, (nb, nq, nv) in enumerate(sizes):
            fields.append((f"s{i}", _system_dtype(int(nb), int(nq), int(nv))))
        if sensor_floats:
            fields.append(("sensors", "<f4", (int(sensor_floats),)))
        frame_dtype = np.dtype(fields)
        if frame_dtype.itemsize != fixed:
            raise RecordingError(f"recording '{self.path}': corrupt header (frame size {fixed}, expected {frame_dtype.itemsize})")

        # Every size in the layout is a multiple of 4 and the header one of 8, so frames start on
        # 4-byte words: work on the file as little-endian u32 words.
        nwords = buf.size // 4
        words = np.frombuffer(buf, dtype="<u4", count=nwords)
        mv = memoryview(words)  # fast scalar reads in the boundary loop
        fixed_w, contact_w = fixed // 4, contact // 4
        # frame boundaries: one read of the frame size and contact count per frame
        starts = []
        at, end = header // 4, nwords
        while at + 2 <= end:
            size, nc = mv[at], mv[at + 1]
            if size != fixed + nc * contact:
                raise RecordingError(f"recording '{self.path}': corrupt frame at byte {4 * at}")
            if at + size // 4 > end:
                break  # a run killed mid-frame: drop the partial frame
            starts.append(at)
            at += size // 4
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
        """Labels of the values of a recorded sensor (docs/recording.md, "Sensors")."""
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
