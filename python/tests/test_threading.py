"""Threading rules (docs/threading.md) and pickling from Python.

One World (or VecWorld, LocomotionTask) is used by one thread at a time. Stepping releases the
GIL; a call of another Python thread on the same object meanwhile raises ConcurrentUseError
instead of racing with the step, and the object stays usable. Separate Worlds step in parallel.
Every compiled type pickles with every protocol, or raises TypeError with every protocol.
"""
import os
import pickle
import threading

import numpy as np
import pytest

import impulse


def hammer(calls, threads=3, rounds=300, most_rounds=None):
    """Runs `calls` (functions without arguments) in a loop on several threads at once; returns the
    exceptions other than ConcurrentUseError, and the number of refused calls. Each thread runs
    `rounds` rounds, and goes on (up to `most_rounds`, 20 times `rounds` by default) until some
    call was refused: on a loaded machine the threads may not overlap within the first rounds."""
    errors, refused = [], [0]
    most_rounds = 20 * rounds if most_rounds is None else most_rounds

    def loop():
        for k in range(most_rounds):
            if k >= rounds and refused[0] > 0:
                break
            for f in calls:
                try:
                    f()
                except impulse.ConcurrentUseError:
                    refused[0] += 1
                except Exception as e:  # noqa: BLE001 - any other error fails the test
                    errors.append(e)

    running = [threading.Thread(target=loop) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    return errors, refused[0]


def test_threads_stepping_one_world_are_refused_not_crashed(stand_file):
    w = impulse.World.from_file(stand_file)
    r = w.system(0)
    errors, refused = hammer([
        lambda: w.integrate(5),
        lambda: r.q.sum(),
        lambda: w.contacts(),
        lambda: r.set_pd_targets(r.q_target.copy(), np.zeros(18)),
        lambda: w.stats(),
        lambda: r.frame_pose("LF_FOOT"),
    ])
    assert errors == []
    assert refused > 0, "the threads never overlapped: the test did not exercise concurrency"
    # the World is whole and usable afterwards
    assert np.isfinite(r.q).all()
    assert w.integrate(10).stepped


def test_a_refused_call_names_the_world_and_the_call(stand_file):
    w = impulse.World.from_file(stand_file)
    started = threading.Event()

    def step():
        started.set()
        w.integrate(3000)  # about a second or more with the GIL released

    t = threading.Thread(target=step)
    t.start()
    started.wait()
    refused = None
    for _ in range(2000):
        try:
            w.integrate()
        except impulse.ConcurrentUseError as e:
            refused = str(e)
            break
    t.join()
    assert refused is not None
    assert "World.integrate" in refused and "another thread" in refused
    assert isinstance(impulse.ConcurrentUseError("x"), impulse.Error)


def test_separate_worlds_step_in_parallel_threads_as_alone(stand_file):
    worlds = [impulse.World.from_file(stand_file) for _ in range(3)]
    threads = [threading.Thread(target=w.integrate, args=(200,)) for w in worlds]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ref = impulse.World.from_file(stand_file)
    ref.integrate(200)
    for w in worlds:
        assert np.array_equal(w.system(0).q, ref.system(0).q)


def test_vecworld_two_threads_refused_not_crashed(stand_file):
    v = impulse.VecWorld(stand_file, 4, 2)
    q = np.zeros((4, 19))
    errors, refused = hammer([lambda: v.integrate(2), lambda: v.get_q(0, np.zeros((4, 19))), lambda: v.status],
                             threads=2, rounds=100)
    assert errors == []
    assert refused > 0, "the threads never overlapped: the test did not exercise concurrency"
    v.get_q(0, q)
    assert np.isfinite(q).all()


def test_batch_counts_beyond_the_machine_are_refused_up_front(stand_file):
    with pytest.raises(impulse.InvalidArgument, match="exceeds the limit of 256"):
        impulse.VecWorld(stand_file, 2, 10**6)
    with pytest.raises(impulse.InvalidArgument, match="more than this machine's"):
        impulse.VecWorld(stand_file, 2 * 10**9, 1)
    with pytest.raises(impulse.InvalidArgument, match="exceeds the limit of 256"):
        impulse.envs.AnymalLocomotion(num_envs=2, num_threads=10**6)


# --- pickling with every protocol ---------------------------------------------------------------

PROTOCOLS = range(0, pickle.HIGHEST_PROTOCOL + 1)


def instances(stand_file):
    w = impulse.World.from_file(stand_file)
    w.integrate(3)
    s = impulse.ContactSettings()
    s.erp = 0.3
    b = impulse.BisectionSettings()
    b.max_iterations = 77
    loc = impulse.Range(0.5, 1.25)
    return {
        "World": w,
        "WorldState": w.save_state(),
        "ContactSettings": s,
        "BisectionSettings": b,
        "SolverSettings": impulse.SolverSettings(),
        "Range": loc,
        "StepStats": w.stats(),
        "StepReport": w.last_report,
        "ArticulatedSystem": w.system(0),
        "PositionUpdate": impulse.PositionUpdate.Euler,
    }


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_every_type_pickles_with_every_protocol_or_raises_type_error(stand_file, protocol):
    objs = instances(stand_file)
    for name in ("World", "StepStats", "StepReport", "ArticulatedSystem"):
        with pytest.raises(TypeError, match=f"cannot pickle 'impulse.{name}'"):
            pickle.dumps(objs[name], protocol=protocol)
    state = pickle.loads(pickle.dumps(objs["WorldState"], protocol=protocol))
    assert state.to_bytes() == objs["WorldState"].to_bytes()
    s = pickle.loads(pickle.dumps(objs["ContactSettings"], protocol=protocol))
    assert s.erp == 0.3 and s.slop == impulse.ContactSettings().slop
    assert pickle.loads(pickle.dumps(objs["BisectionSettings"], protocol=protocol)).max_iterations == 77
    r = pickle.loads(pickle.dumps(objs["Range"], protocol=protocol))
    assert (r.lo, r.hi) == (0.5, 1.25)
    ss = pickle.loads(pickle.dumps(objs["SolverSettings"], protocol=protocol))
    assert ss.name == impulse.SolverSettings().name
    assert pickle.loads(pickle.dumps(objs["PositionUpdate"], protocol=protocol)) == impulse.PositionUpdate.Euler


def test_every_compiled_class_has_a_pickling_rule():
    """No class is left to Python's generic protocol 0/1 path, which aborts on pybind11 objects."""
    from impulse import _impulse

    for name in dir(_impulse):
        cls = getattr(_impulse, name)
        if isinstance(cls, type) and not issubclass(cls, BaseException) and not name.startswith("_"):
            assert "__reduce_ex__" in vars(cls), name


def test_pickle_protocol_0_in_a_child_process_does_not_abort(stand_file):
    """The abort took the interpreter down: check in a child process that it exits normally."""
    import subprocess
    import sys

    code = (
        "import pickle, impulse\n"
        f"w = impulse.World.from_file({stand_file!r})\n"
        "for x in (w, w.save_state(), impulse.ContactSettings(), w.stats(), impulse.Range(0, 1)):\n"
        "    try:\n"
        "        pickle.loads(pickle.dumps(x, protocol=0))\n"
        "    except TypeError:\n"
        "        pass\n"
        "print('ok')\n"
    )
    env = dict(os.environ)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_state_saved_before_the_first_step_reads_back(root):
    for name in ("anymal_stand.xml", "box_on_ground.xml", "spheres.xml"):
        w = impulse.World.from_file(os.path.join(root, "models", "worlds", name))
        for steps in (0, 1, 7):
            w.integrate(steps)
            b = w.save_state().to_bytes()
            assert impulse.WorldState.from_bytes(b).to_bytes() == b, (name, steps)
