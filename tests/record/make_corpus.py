"""Writes the corpus of recordings that tests the readers' validation rules (docs/recording.md,
"Validation") from one good recording: each file breaks one rule, or is valid in an unusual way,
and manifest.json gives the verdict every reader must reach.

    impulse run models/worlds/box_on_ground.xml --steps 150 --every 30 --record good.imprec
    /usr/bin/python3 tests/record/make_corpus.py good.imprec tests/record/corpus

The good recording must have version 2, at least one system, no sensors and at least 3 frames, one
of them (not the last) with contacts. Only the standard library is used: the corpus does not depend
on the reader under test.
"""
import json
import math
import os
import struct
import sys


class Layout:
    """The parts of a recording the variants change (offsets of docs/recording.md)."""

    def __init__(self, data: bytes):
        assert data[:8] == b"IMPREC\r\n"
        self.data = data
        (self.version, self.header, self.nsys, self.fixed, self.contact, self.every) = struct.unpack_from("<6I", data, 8)
        assert self.version == 2 and self.nsys >= 1
        self.sizes_end = 40 + 12 * self.nsys + 8
        (self.sensor_floats, self.scene_len) = struct.unpack_from("<2I", data, self.sizes_end - 8)
        assert self.sensor_floats == 0
        self.scene = json.loads(data[self.sizes_end : self.sizes_end + self.scene_len])
        self.frames = []  # (offset, size, contacts)
        at = self.header
        while at < len(data):
            size, nc = struct.unpack_from("<2I", data, at)
            self.frames.append((at, size, nc))
            at += size
        assert at == len(data) and len(self.frames) >= 3

    def with_header(self, scene: bytes, version: int = 2) -> bytes:
        """The recording with another scene text (version 1: without the sensor count)."""
        d = self.data
        sizes = d[40 : 40 + 12 * self.nsys]
        tail = struct.pack("<2I", 0, len(scene)) if version == 2 else struct.pack("<I", len(scene))
        header = 40 + len(sizes) + len(tail) + len(scene)
        header = (header + 7) // 8 * 8
        h = bytearray(d[:40]) + sizes + tail + scene
        h += b" " * (header - len(h))
        struct.pack_into("<2I", h, 8, version, header)
        return bytes(h) + d[self.header :]


def patch(data: bytes, at: int, fmt: str, *values) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, at, *values)
    return bytes(b)


def main(good_path: str, out: str) -> None:
    with open(good_path, "rb") as f:
        good = f.read()
    g = Layout(good)
    frames = g.frames
    with_contacts = next(k for k, (_, _, nc) in enumerate(frames[:-1]) if nc > 0)
    fat, fsize, fnc = frames[with_contacts]
    contact0 = fat + g.fixed  # the first contact of that frame
    scene_text = json.dumps(g.scene, separators=(",", ":"))

    def scene_variant(change) -> bytes:
        s = json.loads(scene_text)
        change(s)
        return g.with_header(json.dumps(s, separators=(",", ":")).encode())

    files = {}

    def valid(name, data, dropped=0):
        files[name] = (data, {"verdict": "valid", "dropped_bytes": dropped})

    def invalid(name, data, rule):
        files[name] = (data, {"verdict": "invalid", "rule": rule})

    # valid files: as written, version 1, no frames, a run killed mid-frame
    valid("good.imprec", good)
    valid("version1.imprec", g.with_header(scene_text.replace(',"sensors":[]', "").encode(), version=1))
    valid("no_frames.imprec", good[: g.header])
    valid("killed_mid_frame.imprec", good[:-5], dropped=frames[-1][1] - 5)
    valid("killed_in_size_fields.imprec", good[: frames[-1][0] + 3], dropped=3)
    # a consistent frame size that runs past the end of the file: frame 1 claims 1000 more
    # contacts, so frames 1.. are one partial last frame (rule 12: dropped, with the warning)
    a1, s1, n1 = frames[1]
    valid("size_past_end.imprec", patch(good, a1, "<2I", s1 + 56 * 1000, n1 + 1000), dropped=len(good) - a1)
    valid("scene_whole_float.imprec",
          g.with_header(scene_text.replace('"nb":%d' % g.scene["systems"][0]["nb"],
                                           '"nb":%d.0' % g.scene["systems"][0]["nb"], 1).encode()))
    # rule 2
    invalid("empty.imprec", b"", 2)
    invalid("short.imprec", good[:40], 2)
    invalid("bad_magic.imprec", b"IMPREC\n\n" + good[8:], 2)
    # rule 3
    invalid("version_3.imprec", patch(good, 8, "<I", 3), 3)
    invalid("version_0.imprec", patch(good, 8, "<I", 0), 3)
    # rule 4
    invalid("contact_bytes_48.imprec", patch(good, 24, "<I", 48), 4)
    # rule 5
    invalid("every_0.imprec", patch(good, 28, "<I", 0), 5)
    invalid("dt_nan.imprec", patch(good, 32, "<d", math.nan), 5)
    invalid("dt_zero.imprec", patch(good, 32, "<d", 0.0), 5)
    invalid("dt_negative.imprec", patch(good, 32, "<d", -0.001), 5)
    invalid("dt_infinite.imprec", patch(good, 32, "<d", math.inf), 5)
    # rule 6
    invalid("header_not_multiple_of_8.imprec", patch(good, 12, "<I", g.header + 4), 6)
    invalid("header_past_end.imprec", patch(good, 12, "<I", (len(good) + 8) // 8 * 8), 6)
    invalid("systems_past_header.imprec", patch(good, 16, "<I", 0x10000000), 6)
    invalid("scene_past_header.imprec", patch(good, g.sizes_end - 4, "<I", g.header), 6)
    invalid("scene_length_huge.imprec", patch(good, g.sizes_end - 4, "<I", 0xFFFFFFF8), 6)
    # rule 7
    invalid("nb_huge.imprec", patch(good, 40, "<I", 0xFFFFFFFF), 7)
    invalid("fixed_bytes_off.imprec", patch(good, 20, "<I", g.fixed + 4), 7)
    invalid("sensor_count_without_values.imprec", patch(good, g.sizes_end - 8, "<I", 1), 7)
    # rule 8
    invalid("scene_not_json.imprec", g.with_header(b"{" + scene_text.encode()[2:]), 8)
    invalid("scene_bad_utf8.imprec", g.with_header(scene_text.replace('"name":"', '"name":"\xff', 1).encode("latin-1")), 8)
    invalid("scene_bom.imprec", g.with_header(b"\xef\xbb\xbf" + scene_text.encode()), 8)
    invalid("scene_nan.imprec", g.with_header(scene_text.replace('"dt":', '"dt":NaN,"x":', 1).encode()), 8)
    invalid("scene_array.imprec", g.with_header(b"[" + scene_text.encode() + b"]"), 8)
    invalid("scene_no_systems.imprec", scene_variant(lambda s: s.pop("systems")), 8)
    invalid("scene_systems_missing_one.imprec", scene_variant(lambda s: s["systems"].pop()), 8)
    invalid("scene_nb_mismatch.imprec", scene_variant(lambda s: s["systems"][0].update(nb=s["systems"][0]["nb"] + 1)), 8)
    invalid("scene_nb_bool.imprec", scene_variant(lambda s: s["systems"][0].update(nb=True))
            if g.scene["systems"][0]["nb"] == 1 else None, 8)
    invalid("scene_name_not_string.imprec", scene_variant(lambda s: s["systems"][0].update(name=7)), 8)
    invalid("scene_body_missing.imprec", scene_variant(lambda s: s["systems"][0]["bodies"].pop()), 8)
    invalid("scene_joint_outside.imprec",
            scene_variant(lambda s: s["systems"][0]["joints"][0].update(idx_q=s["systems"][0]["nq"])), 8)
    invalid("scene_joint_fraction.imprec", scene_variant(lambda s: s["systems"][0]["joints"][0].update(nv=0.5)), 8)
    invalid("scene_sensors_not_array.imprec", scene_variant(lambda s: s.update(sensors={})), 8)
    invalid("scene_sensor_fields_mismatch.imprec",
            scene_variant(lambda s: s.update(sensors=[{"name": "imu", "type": "imu", "fields": ["acc_x"]}])), 8)
    # rule 9
    invalid("frame_size_inconsistent.imprec", patch(good, a1, "<I", s1 + 4), 9)
    invalid("frame_count_inconsistent.imprec", patch(good, a1 + 4, "<I", n1 + 1), 9)
    # rule 10
    invalid("status_7.imprec", patch(good, frames[2][0] + 24, "<I", 7), 10)
    # rule 11
    invalid("contact_system_unknown.imprec", patch(good, contact0 + 40, "<i", g.nsys), 11)
    invalid("contact_body_unknown.imprec", patch(good, contact0 + 40, "<2i", 0, 1000), 11)
    invalid("contact_static_with_body.imprec", patch(good, contact0 + 48, "<2i", -1, 0), 11)
    invalid("contact_system_negative.imprec", patch(good, contact0 + 48, "<2i", -2, -1), 11)
    # two faults: a bad status in frame 0 and an inconsistent size in a later frame; rules 9 and
    # 12 are checked on all frames first
    invalid("status_then_size.imprec", patch(patch(good, frames[0][0] + 24, "<I", 9), a1, "<I", s1 + 4), 9)

    os.makedirs(out, exist_ok=True)
    for old in os.listdir(out):
        if old.endswith(".imprec"):
            os.remove(os.path.join(out, old))
    manifest = {}
    for name, (data, verdict) in sorted(files.items()):
        assert data is not None, name
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        if verdict["verdict"] == "valid":
            # frames: the whole frames before the dropped bytes
            n = 0
            header = struct.unpack_from("<I", data, 12)[0]
            at, end = header, len(data) - verdict["dropped_bytes"]
            while at < end:
                at += struct.unpack_from("<I", data, at)[0]
                n += 1
            assert at == end, name
            verdict = {"verdict": "valid", "frames": n, "dropped_bytes": verdict["dropped_bytes"]}
        manifest[name] = verdict
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
