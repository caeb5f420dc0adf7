"""`impulse plot` writes non-empty PNG figures from a recording and from both CSV logs
(`impulse run --csv`, `impulse demo --csv`), and fails with one line for a file it cannot read.

usage: test_plot.py IMPULSE_BINARY SOURCE_DIR WORK_DIR
"""
import os
import subprocess
import sys

try:
    import matplotlib.image as mpimg
    import numpy as np
except ImportError as e:  # ctest: skipped
    print(f"SKIP: {e} (install python3-matplotlib python3-numpy: scripts/install-deps.sh)")
    sys.exit(77)

impulse, source, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
rec = os.path.join(work, "hang.imprec")
demo_csv = os.path.join(work, "hang.csv")
run_csv = os.path.join(work, "spheres.csv")
subprocess.run([impulse, "demo", "hang", "--steps", "600", "--record", rec, "--csv", demo_csv], check=True,
               stdout=subprocess.DEVNULL)
subprocess.run([impulse, "run", os.path.join(source, "models/worlds/spheres.xml"), "--steps", "300", "--csv", run_csv],
               check=True, stdout=subprocess.DEVNULL)


def check_pngs(inp, out, expected):
    r = subprocess.run([impulse, "plot", inp, "--out", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in expected:
        path = os.path.join(out, name)
        assert os.path.getsize(path) > 5000, path
        img = mpimg.imread(path)
        # a figure with data: many distinct colours, not a blank canvas
        assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 400, (path, img.shape)
        assert float(np.std(img[..., :3])) > 0.05, f"{path} looks blank"
    print(f"ok: {inp} -> {len(expected)} PNGs")


check_pngs(rec, os.path.join(work, "rec"), ["base_trajectory.png", "velocities.png", "contact_forces.png",
                                             "energy.png", "penetration.png", "solver.png", "joints.png"])
check_pngs(demo_csv, os.path.join(work, "demo_csv"), ["base_trajectory.png", "velocities.png", "contact_forces.png",
                                                      "penetration.png", "solver.png"])
check_pngs(run_csv, os.path.join(work, "run_csv"), ["base_trajectory.png", "velocities.png", "contact_forces.png",
                                                    "energy.png", "penetration.png", "solver.png"])

# the training log of examples/python/train_locomotion.py (its columns, three iterations)
train_csv = os.path.join(work, "train_log.csv")
with open(train_csv, "w") as f:
    f.write("iteration,time_s,rollout_s,update_s,mean_reward,episode_return,episodes,kl,lr,action_std\n")
    for k in range(3):
        f.write(f"{k},{0.6 * (k + 1)},0.3,0.3,{0.001 * k},{0.5 * k},{4 * k},0.01,0.001,{1 - 0.01 * k}\n")
check_pngs(train_csv, os.path.join(work, "train"), ["training.png"])
with open(train_csv, "a") as f:
    f.write("3,2.4,0.3,0.3,nan-ish,1.5,12,0.01,0.001,0.97\n")
r = subprocess.run([impulse, "plot", train_csv, "--out", os.path.join(work, "train_bad")], capture_output=True,
                   text=True)
assert r.returncode == 1 and "training log" in r.stderr and "not numeric" in r.stderr, r.stderr
print("ok: a training log with a bad row fails with one error line")

bad = os.path.join(work, "bad.csv")
with open(bad, "w") as f:
    f.write("a,b\nx,y\n")
r = subprocess.run([impulse, "plot", bad, "--out", os.path.join(work, "bad")], capture_output=True, text=True)
assert r.returncode == 1 and "error:" in r.stderr and bad in r.stderr, (r.returncode, r.stderr)
print("ok: a CSV that is not a log fails with one error line")

junk = os.path.join(work, "junk.bin")
with open(junk, "wb") as f:
    f.write(bytes(range(256)) * 4)
r = subprocess.run([impulse, "plot", junk, "--out", os.path.join(work, "junk")], capture_output=True, text=True)
assert r.returncode == 1 and r.stderr.count("\n") == 1 and "neither a recording nor a CSV" in r.stderr, r.stderr
print("ok: a binary file that is not a recording fails with one error line")
