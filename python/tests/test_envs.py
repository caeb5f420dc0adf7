"""impulse.envs.AnymalLocomotion: Gymnasium vector-env conventions, seeding, determinism across
thread counts, auto reset with the final observation, errors."""
import numpy as np
import pytest

import impulse
from impulse.envs import AnymalLocomotion


def test_spaces_and_timing():
    env = AnymalLocomotion(4, num_threads=1, seed=0)
    assert env.single_observation_space.shape == (49,)
    assert env.single_action_space.shape == (12,)
    assert env.observation_space.shape == (4, 49) and env.action_space.shape == (4, 12)
    assert env.physics_dt == pytest.approx(0.002)
    assert env.control_dt == pytest.approx(0.01)
    assert env.action_space.contains(env.action_space.sample())
    obs, info = env.reset()
    assert obs.shape == (4, 49) and obs.dtype == np.float64 and info == {}
    np.testing.assert_allclose(obs[:, 0:3], [[0, 0, -1]] * 4, atol=1e-12)  # level base at reset
    assert np.all((obs[:, 42] >= 2 * 0.5) & (obs[:, 42] <= 2 * 1.0))  # forward command 0.5-1 m/s


def test_seeding():
    a = AnymalLocomotion(3, num_threads=1, seed=5)
    b = AnymalLocomotion(3, num_threads=1, seed=6)
    oa, _ = a.reset()
    ob, _ = b.reset()
    assert not np.array_equal(oa, ob)
    ob, _ = b.reset(seed=5)
    np.testing.assert_array_equal(oa, ob)
    # the environments of a split (first_env) are those of the whole batch
    c = AnymalLocomotion(2, num_threads=1, seed=5, first_env=1)
    oc, _ = c.reset()
    np.testing.assert_array_equal(oc, oa[1:])


def run(env, steps, seed=3):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = []
    for _ in range(steps):
        a = rng.uniform(-1, 1, env.action_space.shape)
        obs, r, term, trunc, info = env.step(a)
        out.append((obs.copy(), r.copy(), term.copy(), trunc.copy()))
    return out


def test_identical_with_1_and_2_threads():
    one = run(AnymalLocomotion(8, num_threads=1), 40)
    two = run(AnymalLocomotion(8, num_threads=2), 40)
    for x, y in zip(one, two):
        for a, b in zip(x, y):
            np.testing.assert_array_equal(a, b)


def test_auto_reset_and_final_observation():
    env = AnymalLocomotion(3, num_threads=2, seed=1, max_episode_steps=5)
    env.reset()
    zeros = np.zeros((3, 12))
    for k in range(4):
        obs, r, term, trunc, info = env.step(zeros)
        assert not term.any() and not trunc.any() and info == {}
        assert np.all(np.isfinite(r))
    last = obs.copy()
    obs, r, term, trunc, info = env.step(zeros)
    assert trunc.all() and not term.any()
    assert info["_final_observation"].all() and info["_episode"].all()
    np.testing.assert_array_equal(info["episode"]["l"], [5, 5, 5])
    fin = info["final_observation"]
    assert fin.shape == (3, 49)
    assert np.abs(fin[:, 6:18] - last[:, 6:18]).max() < 0.2  # continues the old episode
    np.testing.assert_array_equal(obs[:, 30:42], 0)  # new episode: no previous action
    obs, r, term, trunc, info = env.step(zeros)
    assert not trunc.any()


def test_privileged_observation():
    env = AnymalLocomotion(2, num_threads=1, seed=3, max_episode_steps=2)
    with pytest.raises(impulse.Error, match="reset"):
        env.privileged_observation()
    env.reset()
    p, f = env.privileged_observation()
    assert p.shape == f.shape == (2, env.privileged_size) == (2, 8)
    np.testing.assert_array_equal(p[:, 3], 0.56)  # base height at reset
    env.step(np.zeros((2, 12)))
    p, f = env.privileged_observation()
    assert np.isnan(f).all()  # no episode has ended yet
    for i in range(2):  # base velocity in the base frame * 2
        r = env.task.world(i).system(0)
        w, x, y, z = r.q[3:7]
        R = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                      [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                      [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])
        np.testing.assert_allclose(p[i, :3], 2 * R.T @ r.u[:3], atol=1e-12)
        assert p[i, 3] == r.q[2]
    height = p[:, 3].copy()
    env.step(np.zeros((2, 12)))  # time limit: reset
    p, f = env.privileged_observation()
    assert np.isfinite(f).all() and np.all(np.abs(f[:, 3] - height) < 0.01)  # the old episode's end
    np.testing.assert_array_equal(p[:, 3], 0.56)  # the new episode


def test_actions_are_validated():
    env = AnymalLocomotion(2, num_threads=1)
    with pytest.raises(impulse.Error, match="reset"):
        env.step(np.zeros((2, 12)))
    env.reset()
    with pytest.raises(impulse.InvalidArgument, match=r"\(2, 12\)"):
        env.step(np.zeros((3, 12)))
    with pytest.raises(impulse.InvalidArgument, match="finite"):
        env.step(np.full((2, 12), np.nan))
    env.step(np.zeros((2, 12), dtype=np.float32))  # converted
    env.step([[0.0] * 12] * 2)
    with pytest.raises(impulse.InvalidArgument, match="unknown key 'kpp'"):
        AnymalLocomotion(2, kpp=3)
    with pytest.raises(impulse.InvalidArgument, match="num_envs"):
        AnymalLocomotion(0)
