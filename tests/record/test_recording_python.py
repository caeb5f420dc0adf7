"""Recording round trip across languages: `impulse run --record` (C++) read by
python/impulse_viz/recording.py must give the same state as the CSV log of the same run
(`--csv`, written by an independent route with 10 significant digits).

A recording with sensors, written by the C++ test of tests/record/test_recording.cpp, must read
back the same readings.

usage: test_recording_python.py IMPULSE_BINARY SOURCE_DIR WORK_DIR IMPULSE_TESTS_BINARY
"""
import csv
import os
import subprocess
import sys

try:
    import numpy as np
except ImportError as e:  # ctest: skipped
    print(f"SKIP: {e} (install python3-numpy: scripts/install-deps.sh)")
    sys.exit(77)

impulse, source, work, tests = sys.argv[1:5]
sys.path.insert(0, os.path.join(source, "python"))
from impulse_viz.recording import Recording, RecordingError  # noqa: E402

os.makedirs(work, exist_ok=True)
world = os.path.join(source, "models", "worlds", "spheres.xml")
rec_path = os.path.join(work, "spheres.imprec")
csv_path = os.path.join(work, "spheres.csv")
subprocess.run([impulse, "run", world, "--steps", "400", "--every", "4", "--record", rec_path, "--csv", csv_path],
               check=True, stdout=subprocess.DEVNULL)

rec = Recording(rec_path)
with open(csv_path) as f:
    rows = list(csv.DictReader(f))
assert len(rec) == len(rows) == 100, (len(rec), len(rows))
t = np.array([float(r["time"]) for r in rows])
assert np.allclose(rec.time, t, atol=1e-9), "time"
assert list(rec.step[:3]) == [4, 8, 12], rec.step[:3]
names = [s["name"] for s in rec.scene["systems"]]
assert names == ["ball", "bouncer", "cube", "pill", "can"], names
for s in rec.systems:
    xyz = np.array([[float(r[f"{s.name}.{c}"]) for c in "xyz"] for r in rows])
    quat = np.array([[float(r[f"{s.name}.{c}"]) for c in ("qw", "qx", "qy", "qz")] for r in rows])
    # body 0 pose == base pose of the CSV == q[0:7]; binary32 against 10 significant digits
    assert np.allclose(s.poses[:, 0, :3], xyz, atol=2e-6), s.name
    assert np.allclose(s.q[:, :3], xyz, atol=2e-6), s.name
    assert np.allclose(np.abs(np.sum(s.poses[:, 0, 3:] * quat, axis=1)), 1, atol=1e-6), s.name
ke = np.array([float(r["kinetic_energy"]) for r in rows])
pe = np.array([float(r["potential_energy"]) for r in rows])
ke_rec = sum(s.kinetic.astype(float) for s in rec.systems)
pe_rec = sum(s.potential.astype(float) for s in rec.systems)
assert np.allclose(ke_rec, ke, rtol=1e-5, atol=1e-5), "kinetic energy"
assert np.allclose(pe_rec, pe, rtol=1e-5, atol=1e-5), "potential energy"
contacts = np.array([int(r["contacts"]) for r in rows])
assert np.array_equal(rec.contact_count, contacts), "contact counts"
iters = np.array([int(r["iterations"]) for r in rows])
assert np.array_equal(rec.iterations, iters), "solver iterations"
# every contact is with a static object here except sphere-sphere ones; normals are unit vectors
assert len(rec.contacts) == contacts.sum()
assert np.allclose(np.linalg.norm(rec.contacts["normal"], axis=1), 1, atol=1e-6)
# the resting ball carries its weight: sum of normal impulses / dt ~ m g at the end
k = len(rec) - 1
ball = rec.contacts_of(k)[rec.contacts_of(k)["system_a"] == 0]
assert abs(ball["impulse"][:, 2].sum() / rec.dt - 9.81) < 0.05, ball["impulse"]

# a file that is not a recording
bad = os.path.join(work, "bad.imprec")
with open(bad, "wb") as f:
    f.write(b"not a recording" * 4)
try:
    Recording(bad)
except RecordingError as e:
    assert "bad magic" in str(e) and bad in str(e), str(e)
else:
    raise AssertionError("no error for a bad file")
assert rec.version == 2 and rec.scene["sensors"] == []
try:
    rec.sensor("imu")
except KeyError:
    pass
else:
    raise AssertionError("no KeyError for a sensor the recording does not hold")

# sensors: the C++ test that records an IMU, joint, contact, force-torque and height-scan sensor
# writes its file here; the Python reader must give the same readings
sensors_path = os.path.join(work, "sensors.imprec")
subprocess.run([tests, "a recording carries the readings of the sensors given to it\\, as they were at each step"],
               check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, IMPULSE_KEEP_RECORDING=sensors_path))
srec = Recording(sensors_path)
assert len(srec) == 50, len(srec)
assert [s["name"] for s in srec.scene["sensors"]] == ["imu", "joints", "foot", "hip", "scan"]
imu = srec.sensor("imu")
assert imu.shape == (50, 6) and srec.sensor_fields("imu")[:3] == ["acc_x", "acc_y", "acc_z"]
assert abs(imu[-1, 2] - 9.81) < 0.05, imu[-1]
joints = srec.sensor("joints")
assert srec.sensor_fields("joints")[0] == "q:LF_HAA" and joints.shape == (50, 36)
anymal = srec.system("anymal")
assert np.array_equal(joints[:, :12], anymal.q[:, 7:]), "joint positions: sensor vs state"  # the same doubles as f32
scan = srec.sensor("scan").reshape(50, -1, 3)
assert scan.shape == (50, 6, 3) and np.allclose(scan[:, :, 2], 0, atol=1e-6), "height scan over the ground"
print(f"ok: {len(rec)} frames, {len(rec.contacts)} contacts, systems {names}; sensors {len(srec)} frames")
