"""examples/python/train_locomotion.py: two PPO iterations with 2 MPI ranks give the parameters of one
process with the same seed and total environment count (to 1e-4 relative); --out writes what the
plot and view tools read."""
import os
import re
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "python", "train_locomotion.py")
ARGS = ["--iterations", "2", "--num-envs", "8", "--seed", "3", "--steps", "8", "--eval-envs", "0",
        "--threads", "1"]


def env():
    e = dict(os.environ)
    import impulse
    e["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(impulse.__file__)), e.get("PYTHONPATH", "")])
    # Open MPI in a container and as root (CI): allow root, oversubscribe the 2 cores, shared memory only
    e.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
              "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_btl": "self,vader",
              "OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_plm_rsh_agent": ""})
    return e


def final(out):
    m = re.search(r"^final: return=(\S+) params=(\S+)$", out, re.M)
    assert m, out
    assert out.strip().splitlines()[-1].startswith("final: ")
    return float(m.group(1)), float(m.group(2))


def test_one_rank_equals_two_ranks():
    pytest.importorskip("torch")
    one = subprocess.run([sys.executable, SCRIPT] + ARGS, env=env(), capture_output=True, text=True, timeout=600)
    assert one.returncode == 0, one.stderr
    r1, p1 = final(one.stdout)
    mpirun = shutil.which("mpirun")
    assert mpirun, "mpirun not found (Debian: openmpi-bin python3-mpi4py)"
    two = subprocess.run([mpirun, "-n", "2", "--oversubscribe", sys.executable, SCRIPT, "--mpi"] + ARGS, env=env(),
                         capture_output=True, text=True, timeout=600)
    assert two.returncode == 0, two.stdout + two.stderr
    r2, p2 = final(two.stdout)
    assert abs(p2 - p1) <= 1e-4 * abs(p1), (p1, p2)
    assert abs(r2 - r1) <= 1e-4 * max(abs(r1), 1e-12), (r1, r2)


def test_outputs_for_the_plot_and_view_tools(tmp_path):
    """--out writes the policy, the training log that `impulse plot` draws and a recording of one
    evaluation episode that `impulse view` replays."""
    torch = pytest.importorskip("torch")
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, SCRIPT] + ARGS + ["--out", str(out)], env=env(), capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    ck = torch.load(out / "policy.pt")
    assert ck["obs_size"] == 49 and ck["critic_obs_size"] == 49 + 8 and ck["act_size"] == 12
    sys.path.append(os.path.join(ROOT, "python"))  # the tools' readers (after the impulse under test)
    from impulse_viz.plot import is_training_log
    from impulse_viz.recording import Recording

    assert is_training_log(str(out / "train_log.csv"))
    rec = Recording(str(out / "walk.imprec"))
    assert len(rec) >= 1 and rec.system(0).q.shape[1] == 19
    assert f"recorded {len(rec)} frames" in r.stdout
