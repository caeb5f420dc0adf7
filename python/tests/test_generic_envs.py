"""impulse.envs.Locomotion from configs (the shipped ANYmal config is AnymalLocomotion's),
impulse.envs.Reach on the batched API, and VecWorld's batched calls: masked reset, frame poses
and velocities against the single-World queries, contact forces, per-environment parameters."""
import json
import os

import numpy as np
import pytest

import impulse
from impulse.envs import ANYMAL_CONFIG, AnymalLocomotion, Locomotion, Reach

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, "examples", "configs")
SHARED = os.path.join(ROOT, "..", "shared", "models", "example-robot-data")


def test_the_anymal_config_file_is_the_packaged_one():
    with open(os.path.join(CONFIGS, "anymal.json")) as f:
        cfg = json.load(f)
    assert {k: v for k, v in cfg.items() if k not in ("urdf", "description")} == \
        {k: v for k, v in ANYMAL_CONFIG.items() if k not in ("urdf", "description")}


def run(env, steps, seed=3):
    obs, _ = env.reset(seed=seed)
    out = [obs.copy()]
    for k in range(steps):
        a = np.sin(0.37 * k + 1.3 * np.arange(env.num_envs)[:, None] + 0.7 * np.arange(env.action_space.shape[1]))
        obs, r, term, trunc, _ = env.step(a)
        out += [obs.copy(), r.copy()]
    return out


def test_config_file_and_packaged_anymal_step_alike():
    a = run(Locomotion(os.path.join(CONFIGS, "anymal.json"), 3, num_threads=1), 30)
    b = run(AnymalLocomotion(3, num_threads=2), 30)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_config_errors_name_the_key(tmp_path):
    with pytest.raises(impulse.InvalidArgument, match="unknown key 'rewards.speed'"):
        AnymalLocomotion(1, rewards={"speed": 1})
    with pytest.raises(impulse.InvalidArgument, match="joints: no joint 'LF_KNEE'"):
        AnymalLocomotion(1, joints=["LF_KNEE"] + ANYMAL_CONFIG["joints"][1:])
    with pytest.raises(impulse.InvalidArgument, match="feet: no frame or link 'TOE'"):
        AnymalLocomotion(1, feet=["TOE"])
    bad = tmp_path / "bad.json"
    bad.write_text('{"urdf": "x.urdf"')
    with pytest.raises(impulse.InvalidArgument, match="not valid JSON"):
        Locomotion(str(bad), 1)
    bad.write_text(json.dumps({"urdf": "x.urdf", "joints": ["a"], "feet": ["b"], "nominal": [0]}))
    with pytest.raises(impulse.InvalidArgument, match="missing key 'base_height'"):
        Locomotion(str(bad), 1)
    assert "randomization.added_mass" in impulse.locomotion_config_keys()


def test_a_smaller_robot_description_sizes_the_spaces():
    # two feet and six joints of ANYmal's left side: the sizes follow the config
    env = AnymalLocomotion(2, joints=ANYMAL_CONFIG["joints"][:6], nominal=ANYMAL_CONFIG["nominal"][:6],
                           feet=["LF_FOOT", "RF_FOOT"], max_episode_steps=3)
    assert env.single_observation_space.shape == (9 + 3 * 6 + 2,)
    assert env.single_action_space.shape == (6,)
    assert env.privileged_size == 4 + 2
    env.reset()
    obs, r, term, trunc, _ = env.step(np.zeros((2, 6)))
    assert obs.shape == (2, 29) and np.all(np.isfinite(r))


def test_randomization_is_per_environment_and_in_the_privileged_observation():
    env = AnymalLocomotion(4, num_threads=2, randomization={"friction": [0.3, 1.2], "added_mass": [-1, 3]})
    env.reset()
    p, _ = env.privileged_observation()
    assert p.shape == (4, 4 + 4 + 2)
    friction, mass = p[:, 8], p[:, 9]
    assert len(set(friction)) == 4 and np.all((friction >= 0.3) & (friction <= 1.2))
    assert np.all((mass >= -1) & (mass <= 3))
    base = impulse.load_urdf(env.config["urdf"]).total_mass()
    for i in range(4):
        assert env.task.world(i).system(0).model.total_mass() == pytest.approx(base + mass[i])


@pytest.mark.skipif(not os.path.isdir(SHARED), reason="../shared/models not present")
def test_reach_on_the_batched_api():
    env = Reach(os.path.join(CONFIGS, "panda_reach.json"), 4, num_threads=2, seed=1,
                overrides={"max_episode_steps": 5})
    obs, _ = env.reset()
    assert obs.shape == (4, 3 * 7 + 9)
    # the observation's end-effector position is the frame's pose from the single World
    w = env.world(2)
    np.testing.assert_allclose(obs[2, 21:24], w.system(0).frame_position("panda_hand_tcp"), atol=1e-12)
    d0 = env.distance().copy()
    for k in range(4):
        obs, r, term, trunc, info = env.step(np.zeros((4, 7)))
        assert not term.any() and not trunc.any()
    obs, r, term, trunc, info = env.step(np.zeros((4, 7)))
    assert trunc.all() and np.all(np.isfinite(info["final_distance"]))
    assert not np.allclose(env.distance(), d0)  # new targets
    with pytest.raises(impulse.InvalidArgument, match="unknown key 'speed'"):
        Reach(os.path.join(CONFIGS, "panda_reach.json"), 1, overrides={"speed": 1})
    with pytest.raises(impulse.ModelError, match="package 'nope'.*not found"):
        Reach(os.path.join(CONFIGS, "panda_reach.json"), 1, overrides={"urdf": "package://nope/arm.urdf"})
    # a split of the environments (first_env) draws the same targets
    a = Reach(os.path.join(CONFIGS, "panda_reach.json"), 4, num_threads=1, seed=5)
    b = Reach(os.path.join(CONFIGS, "panda_reach.json"), 2, num_threads=1, seed=5, first_env=2)
    oa, _ = a.reset()
    ob, _ = b.reset()
    np.testing.assert_array_equal(oa[2:], ob)
    # spread episodes end at different steps, each after at most max_episode_steps
    c = Reach(os.path.join(CONFIGS, "panda_reach.json"), 8, num_threads=1, seed=2, overrides={"max_episode_steps": 6})
    c.reset()
    c.spread_episodes()
    ended = np.full(8, -1)
    for k in range(6):
        _, _, _, trunc, _ = c.step(np.zeros((8, 7)))
        ended[(ended < 0) & trunc] = k
    assert np.all(ended >= 0) and len(set(ended.tolist())) > 1


def test_vec_world_batched_queries_match_the_single_world(stand_file):
    vec = impulse.VecWorld(stand_file, 3, num_threads=2)
    vec.integrate(200)
    frames = vec.frame_ids(0, ["LF_FOOT", "RH_FOOT", "base"])
    poses = np.zeros((3, 21))
    vels = np.zeros((3, 18))
    vec.get_frame_poses(0, frames, poses)
    vec.get_frame_velocities(0, frames, vels)
    for i in range(3):
        r = vec.world(i).system(0)
        for k, name in enumerate(["LF_FOOT", "RH_FOOT", "base"]):
            np.testing.assert_allclose(poses[i, 7 * k:7 * k + 3], r.frame_position(name), atol=1e-12)
            np.testing.assert_allclose(np.linalg.norm(poses[i, 7 * k + 3:7 * k + 7]), 1.0, atol=1e-12)
            np.testing.assert_allclose(vels[i, 6 * k:6 * k + 3], r.frame_linear_velocity(name), atol=1e-12)
            np.testing.assert_allclose(vels[i, 6 * k + 3:6 * k + 6], r.frame_angular_velocity(name), atol=1e-12)
    # standing: the feet carry the robot's weight
    feet = vec.body_ids(0, ["LF_SHANK", "RF_SHANK", "LH_SHANK", "RH_SHANK"])
    forces = np.zeros((3, 12))
    vec.get_contact_forces(0, feet, forces)
    weight = vec.world(0).system(0).model.total_mass() * 9.81
    assert forces[:, 2::3].sum(axis=1) == pytest.approx([weight] * 3, rel=0.05)
    with pytest.raises(impulse.InvalidArgument, match=r"expected an array of shape \(3, 21\)"):
        vec.get_frame_poses(0, frames, np.zeros((3, 20)))


def test_vec_world_masked_reset_and_parameters(stand_file):
    w = impulse.World.from_file(stand_file)
    vec = impulse.VecWorld(w, 4, num_threads=2)
    nq, nv = w.system(0).nq, w.system(0).nv
    q0 = np.zeros((4, nq))
    vec.get_q(0, q0)
    vec.integrate(50)
    q = np.zeros((4, nq))
    vec.get_q(0, q)
    new = q0.copy()
    new[:, 2] += 0.1
    mask = np.array([True, False, True, False])
    vec.reset(mask, 0, new, np.zeros((4, nv)))
    after = np.zeros((4, nq))
    vec.get_q(0, after)
    np.testing.assert_array_equal(after[mask], new[mask])
    np.testing.assert_array_equal(after[~mask], q[~mask])
    assert vec.world(0).time == 0 and vec.world(1).time > 0
    bad = new.copy()
    bad[2, 3] = 2.0  # not a unit quaternion: nothing changes
    with pytest.raises(impulse.InvalidArgument, match="row 2"):
        vec.reset(mask, 0, bad, np.zeros((4, nv)))
    again = np.zeros((4, nq))
    vec.get_q(0, again)
    np.testing.assert_array_equal(again, after)
    # per-environment gravity: world 1 without, world 0 with, both released 0.3 m up
    g = np.tile([0.0, 0.0, -9.81], (4, 1))
    g[1] = 0
    vec.set_gravity(g)
    up = q0.copy()
    up[:, 2] += 0.3
    vec.reset(np.ones(4, dtype=bool), 0, up, np.zeros((4, nv)))
    vec.integrate(150)  # 0.15 s: a fall of 0.11 m under gravity
    vec.get_q(0, q)
    assert q[1, 2] == pytest.approx(up[1, 2], abs=1e-9) and q[0, 2] < up[0, 2] - 0.08
    # per-environment friction: the same sideways kick slides the robot on ice (world 3) further
    vec.set_gravity(np.tile([0.0, 0.0, -9.81], (4, 1)))
    vec.set_friction(np.array([0.8, 0.8, 0.8, 0.0]))
    vec.reset(np.ones(4, dtype=bool), 0, q0, np.zeros((4, nv)))
    vec.integrate(100)
    u = np.zeros((4, nv))
    vec.get_q(0, q)
    u[:, 1] = 0.5
    vec.set_state(0, q.copy(), u)
    x0 = q[:, 1].copy()
    vec.integrate(200)
    vec.get_q(0, q)
    assert q[3, 1] - x0[3] > 2 * (q[2, 1] - x0[2])
    with pytest.raises(impulse.InvalidArgument, match="friction must be finite and >= 0"):
        vec.set_friction(np.array([0.8, -1, 0.1, 0.8]))
    with pytest.raises(impulse.InvalidArgument, match="row 1"):
        vec.set_pd_gains(0, np.zeros((4, nv)), np.full((4, nv), -1.0) * np.array([[0], [1], [0], [0]]))
