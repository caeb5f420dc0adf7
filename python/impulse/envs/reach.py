"""Reaching with a fixed-base arm: N environments on impulse.VecWorld (the batched simulation API),
configured by a JSON file or dict (docs/bring_your_own_robot.md, "Arms: reaching").

Each episode draws a target point uniformly in a box; the arm's joint PD targets are the nominal
pose plus action_scale times the action, and the reward pays for bringing the end-effector frame
to the target. Gymnasium's vector-env API as impulse.envs.Locomotion: automatic masked resets
(one VecWorld.reset call for the environments that ended), ``info["final_observation"]``,
``info["episode"]``, arrays reused between calls.

Observation (3 J + 9): joint positions - nominal, joint velocities * 0.1, previous action,
end-effector position, target, target - end-effector (world frame, m).
Reward (times control_dt): rewards.distance |d| + rewards.precision exp(-|d| / rewards.precision_scale)
+ rewards.action_rate |a - a_prev|^2 + rewards.posture |q - nominal|^2, with d = target - end-effector.
The posture term holds the joints an arm has beyond the three a point target needs (a Panda has
seven): without it they drift to wherever the last update left them, towards their limits.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Mapping, Optional, Tuple

import numpy as np

from .. import _impulse
from .locomotion import Config, load_config
from .spaces import Box

DEFAULTS: Dict[str, Any] = {
    "task": "reach",
    "description": "",
    "urdf": None,                 # required: path (relative to the config) or package:// URI
    "package_path": [],
    "joints": None,               # required: actuated joints, action order
    "end_effector": None,         # required: frame or link name
    "nominal": None,              # required: joint positions of the start pose, joints order
    "kp": 400.0, "kd": 40.0,      # one number or one per joint (N m/rad, N m s/rad)
    "action_scale": 0.5, "action_clip": 2.0,
    "physics_dt": 0.002, "substeps": 5,
    "max_episode_steps": 200,
    "target_center": [0.5, 0.0, 0.4],     # m, world frame
    "target_half_extent": [0.15, 0.3, 0.2],  # m: the target box's half sizes
    "init_joint_noise": 0.1,      # rad, uniform +-
    # per second (the reward is times control_dt): a 2 s episode at the target scores about 20,
    # the scale of the locomotion tasks' returns, which the critic of train_locomotion.py fits well
    "rewards": {"distance": -10.0, "precision": 10.0, "precision_scale": 0.02, "action_rate": -0.1,
                "posture": -0.1},
}
REQUIRED = ("urdf", "joints", "end_effector", "nominal")


def _resolve(path: str, base: str) -> str:
    if path.startswith(("package://", "file://")) or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(base, path))


def _check_keys(cfg: Mapping[str, Any], name: str) -> Dict[str, Any]:
    out = json.loads(json.dumps(DEFAULTS))
    for k, v in cfg.items():
        if k not in DEFAULTS:
            raise _impulse.InvalidArgument(f"{name}: unknown key '{k}' (known: {', '.join(DEFAULTS)})")
        if k == "rewards":
            if not isinstance(v, Mapping):
                raise _impulse.InvalidArgument(f"{name}: key 'rewards' must be an object")
            for rk, rv in v.items():
                if rk not in DEFAULTS["rewards"]:
                    raise _impulse.InvalidArgument(
                        f"{name}: unknown key 'rewards.{rk}' (known: {', '.join(DEFAULTS['rewards'])})")
                out["rewards"][rk] = float(rv)
        else:
            out[k] = v
    for k in REQUIRED:
        if out[k] is None:
            raise _impulse.InvalidArgument(f"{name}: missing key '{k}'")
    if out["task"] != "reach":
        raise _impulse.InvalidArgument(f"{name}: key 'task' must be \"reach\" for impulse.envs.Reach")
    return out


class Reach:
    """A fixed-base arm bringing its end effector to random targets, ``num_envs`` copies.

    Args: as impulse.envs.Locomotion (config, num_envs, num_threads, seed, first_env, overrides).
    """

    metadata: Dict[str, Any] = {"autoreset_mode": "next_step_in_info"}
    privileged_size = 0

    def __init__(self, config: Config, num_envs: int, num_threads: Optional[int] = 0, seed: int = 0,
                 first_env: int = 0, overrides: Optional[Mapping[str, Any]] = None):
        raw, base, name = load_config(config, overrides)
        c = self.config = _check_keys(raw, name)
        n = self.num_envs = int(num_envs)
        if n < 1:
            raise _impulse.InvalidArgument(f"Reach: num_envs must be >= 1, got {n}")
        self.first_env = int(first_env)
        packages = [_resolve(p, base) for p in c["package_path"]]
        model = _impulse.load_urdf(_resolve(c["urdf"], base), fixed_base=True, package_paths=packages)
        self.joints = list(c["joints"])
        J = len(self.joints)
        if len(c["nominal"]) != J:
            raise _impulse.InvalidArgument(f"{name}: nominal has {len(c['nominal'])} values for {J} joints")
        for j in self.joints:
            if j not in model.joint_names:
                raise _impulse.InvalidArgument(f"{name}: joints: no joint '{j}' in {c['urdf']}")
        ji = [model.joint_names.index(j) for j in self.joints]
        self._qi = np.array([model.idx_q[i] for i in ji])
        self._vi = np.array([model.idx_v[i] for i in ji])
        kp = np.broadcast_to(np.asarray(c["kp"], dtype=float), (J,))
        kd = np.broadcast_to(np.asarray(c["kd"], dtype=float), (J,))
        self._nominal = np.asarray(c["nominal"], dtype=float)
        self.physics_dt = float(c["physics_dt"])
        self.control_dt = self.physics_dt * int(c["substeps"])
        w = _impulse.World()
        w.time_step = self.physics_dt
        robot = w.add_articulated_system(model, name="arm")
        self._nq, self._nv = robot.nq, robot.nv
        q0 = np.array(model.neutral_configuration(), dtype=float)
        q0[self._qi] = self._nominal
        # every dof under PD: the actuated joints with the config's gains, the others (fingers)
        # held at their start position with the first joint's gains
        gkp, gkd = np.full(self._nv, kp[0]), np.full(self._nv, kd[0])
        gkp[self._vi], gkd[self._vi] = kp, kd
        robot.set_pd_gains(gkp, gkd)
        robot.set_pd_targets(q0, np.zeros(self._nv))
        robot.set_state(q0, np.zeros(self._nv))
        w.mark_initial_state()
        self._q0 = q0
        self._vec = _impulse.VecWorld(w, n, int(num_threads or 0))
        try:
            self._ee = self._vec.frame_ids(0, [c["end_effector"]])
        except _impulse.Error:
            raise _impulse.InvalidArgument(f"{name}: end_effector: no frame '{c['end_effector']}' in {c['urdf']}") \
                from None
        self._rew = c["rewards"]
        self._center = np.asarray(c["target_center"], dtype=float)
        self._half = np.asarray(c["target_half_extent"], dtype=float)
        self.max_episode_steps = int(c["max_episode_steps"])
        clip = float(c["action_clip"])
        self.single_observation_space = Box(-np.inf, np.inf, (3 * J + 9,))
        self.single_action_space = Box(-clip, clip, (J,), seed=seed)
        self.observation_space = Box(-np.inf, np.inf, (n, 3 * J + 9))
        self.action_space = Box(-clip, clip, (n, J), seed=seed)
        self._seed = int(seed)
        self._q = np.zeros((n, self._nq))
        self._u = np.zeros((n, self._nv))
        self._qt = np.tile(q0, (n, 1))
        self._ut = np.zeros((n, self._nv))
        self._pose = np.zeros((n, 7))
        self._target = np.zeros((n, 3))
        self._action = np.zeros((n, J))
        self._prev = np.zeros((n, J))
        self._steps = np.zeros(n, dtype=np.int64)
        self._ret = np.zeros(n)
        self._obs = np.zeros((n, 3 * J + 9))
        self._rngs = []
        self._needs_reset = True

    @property
    def num_threads(self) -> int:
        return self._vec.num_threads

    @property
    def vec(self) -> "_impulse.VecWorld":
        """The batched worlds (impulse.VecWorld)."""
        return self._vec

    def world(self, i: int) -> "_impulse.World":
        return self._vec.world(i)

    def target(self, i: int) -> np.ndarray:
        return self._target[i].copy()

    def _draw(self, mask: np.ndarray) -> None:
        """New start states and targets for the masked environments, one call to VecWorld.reset."""
        noise = float(self.config["init_joint_noise"])
        for i in np.nonzero(mask)[0]:
            rng = self._rngs[i]
            q = self._q0.copy()
            q[self._qi] += rng.uniform(-noise, noise, len(self._qi))
            self._q[i] = q
            self._u[i] = 0
            self._target[i] = self._center + rng.uniform(-1, 1, 3) * self._half
            self._action[i] = 0
            self._prev[i] = 0
            self._steps[i] = 0
            self._ret[i] = 0
        self._vec.reset(mask, 0, self._q, self._u)
        self._qt[mask] = self._q0

    def _observe(self, out: np.ndarray) -> None:
        self._vec.get_q(0, self._q)
        self._vec.get_u(0, self._u)
        self._vec.get_frame_poses(0, self._ee, self._pose)
        J = len(self._qi)
        ee = self._pose[:, :3]
        out[:, :J] = self._q[:, self._qi] - self._nominal
        out[:, J:2 * J] = 0.1 * self._u[:, self._vi]
        out[:, 2 * J:3 * J] = self._action
        out[:, 3 * J:3 * J + 3] = ee
        out[:, 3 * J + 3:3 * J + 6] = self._target
        out[:, 3 * J + 6:] = self._target - ee

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        if seed is not None:
            self._seed = int(seed)
        # environment k's generator depends on (seed, first_env + k) only: any split gives the same runs
        self._rngs = [np.random.default_rng([self._seed, self.first_env + i]) for i in range(self.num_envs)]
        self._draw(np.ones(self.num_envs, dtype=bool))
        self._observe(self._obs)
        self._needs_reset = False
        return self._obs, {}

    def spread_episodes(self) -> None:
        """Moves each environment to a random point of its first episode (a uniform step count in
        [0, max_episode_steps)), so that later episodes end at different times. Without terminations
        all episodes would start and end together, and every batch of a rollout would hold the same
        phase of the episode (legged_gym's init_at_random_ep_len). For training; call after reset()."""
        if self._needs_reset:
            raise _impulse.Error("Reach.spread_episodes: call reset() first")
        for i in range(self.num_envs):
            self._steps[i] = int(self._rngs[i].integers(0, self.max_episode_steps))

    def distance(self) -> np.ndarray:
        """|target - end effector| of every environment now (m)."""
        return np.linalg.norm(self._obs[:, -3:], axis=1)

    def step(self, actions) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._needs_reset:
            raise _impulse.Error("Reach.step: call reset() first")
        a = np.asarray(actions, dtype=float)
        if a.shape != self._action.shape:
            raise _impulse.InvalidArgument(f"Reach.step: actions must have shape {self._action.shape}, got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise _impulse.InvalidArgument("Reach.step: actions must be finite")
        clip = float(self.config["action_clip"])
        self._prev[:] = self._action
        self._action[:] = np.clip(a, -clip, clip)
        self._qt[:, self._qi] = self._nominal + float(self.config["action_scale"]) * self._action
        self._vec.set_pd_targets(0, self._qt, self._ut)
        self._vec.integrate(int(self.config["substeps"]))
        failed = np.asarray(self._vec.status) != 0
        self._observe(self._obs)
        d = np.linalg.norm(self._obs[:, -3:], axis=1)
        r = (self._rew["distance"] * d + self._rew["precision"] * np.exp(-d / self._rew["precision_scale"])
             + self._rew["action_rate"] * np.sum((self._action - self._prev) ** 2, axis=1)
             + self._rew["posture"] * np.sum(self._obs[:, :len(self._qi)] ** 2, axis=1)) * self.control_dt
        r = np.where(np.isfinite(r), r, 0.0)
        self._steps += 1
        self._ret += r
        term = failed | ~np.all(np.isfinite(self._q), axis=1)
        trunc = ~term & (self._steps >= self.max_episode_steps)
        done = term | trunc
        info: dict = {}
        if done.any():
            info = {"final_observation": np.where(done[:, None], self._obs, np.nan), "_final_observation": done.copy(),
                    "final_distance": np.where(done, d, np.nan),
                    "episode": {"r": np.where(done, self._ret, 0.0), "l": np.where(done, self._steps, 0)},
                    "_episode": done.copy()}
            self._draw(done)
            self._observe(self._obs)
        return self._obs, r, term, trunc, info

    def privileged_observation(self) -> Tuple[np.ndarray, np.ndarray]:
        """Nothing beyond the observation (the arm's state is fully observed): (N, 0) arrays."""
        z = np.zeros((self.num_envs, 0))
        return z, z

    def close(self) -> None:
        self._vec = None

    def __repr__(self) -> str:
        return f"Reach(num_envs={self.num_envs}, num_threads={self.num_threads}, control_dt={self.control_dt})"
