"""ANYmal velocity tracking: N environments stepped in C++ (impulse.LocomotionTask) on a thread pool.

Follows Gymnasium's vector-env API (gymnasium.vector.VectorEnv, 0.29) without importing it:
``reset(seed=None) -> (obs, info)``, ``step(actions) -> (obs, reward, terminated, truncated, info)``,
automatic reset of finished environments (their last observation in ``info["final_observation"]``
with mask ``info["_final_observation"]``, and the finished episodes' return and length in
``info["episode"]`` with mask ``info["_episode"]``, as RecordEpisodeStatistics does).

The arrays returned by ``step`` and ``reset`` are reused by the next call (no allocation per
step): copy them if you keep them.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple

import numpy as np

from .. import _impulse


class Box:
    """A minimal stand-in for gymnasium.spaces.Box (low, high, shape, dtype, sample, contains)."""

    def __init__(self, low: float, high: float, shape: Tuple[int, ...], dtype=np.float64, seed: Optional[int] = None):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.low = np.full(self.shape, low, dtype=self.dtype)
        self.high = np.full(self.shape, high, dtype=self.dtype)
        self._rng = np.random.default_rng(seed)

    def sample(self) -> np.ndarray:
        lo = np.where(np.isfinite(self.low), self.low, -1.0)
        hi = np.where(np.isfinite(self.high), self.high, 1.0)
        return self._rng.uniform(lo, hi).astype(self.dtype)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))

    def __repr__(self) -> str:
        return f"Box({self.low.min()}, {self.high.max()}, {self.shape}, {self.dtype})"


def _default_urdf() -> str:
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "anymal.urdf")


class AnymalLocomotion:
    """ANYmal tracking a commanded base velocity on flat ground, ``num_envs`` copies in C++.

    Observation (49): gravity direction in the base frame (3), base angular velocity * 0.25 (3),
    joint positions - standing pose (12), joint velocities * 0.05 (12), previous action (12),
    command (vx * 2, vy * 2, yaw rate * 0.25) (3), foot contact flags LF RF LH RH (4).
    Action (12): joint PD targets = standing pose + action_scale * action (clipped to +-action_clip).
    Reward: velocity tracking minus penalties (see include/impulse/tasks/locomotion.hpp), clipped at 0
    (``only_positive_rewards``), times control_dt.
    Privileged observation (8, for a critic: ``privileged_observation()``): base linear velocity in
    the base frame * 2 (3), base height (1), swing time of each foot (4).

    Args:
        num_envs: number of environments.
        num_threads: C++ threads (None: one per hardware thread). Results do not depend on it.
        seed: seed of the initial states and commands (environment k uses (seed, first_env + k)).
        first_env: global index of the first environment (for splitting one batch over MPI ranks).
        **settings: fields of impulse.LocomotionSettings (physics_dt, substeps, kp, kd, command_vx_min, ...).
    """

    metadata: Dict[str, Any] = {"autoreset_mode": "next_step_in_info"}

    def __init__(self, num_envs: int, num_threads: Optional[int] = None, seed: int = 0, first_env: int = 0,
                 **settings: Any):
        s = _impulse.LocomotionSettings()
        s.urdf = _default_urdf()
        for k, v in settings.items():
            if not hasattr(s, k):
                raise _impulse.InvalidArgument(f"AnymalLocomotion: unknown setting '{k}'")
            setattr(s, k, v)
        self._task = _impulse.LocomotionTask(s, int(num_envs), 0 if num_threads is None else int(num_threads),
                                             int(first_env))
        n = self.num_envs = int(num_envs)
        self.first_env = int(first_env)
        self.physics_dt: float = s.physics_dt
        self.control_dt: float = self._task.control_dt
        self.single_observation_space = Box(-np.inf, np.inf, (_impulse.LocomotionTask.obs_size,))
        self.single_action_space = Box(-s.action_clip, s.action_clip, (_impulse.LocomotionTask.action_size,),
                                       seed=seed)
        self.observation_space = Box(-np.inf, np.inf, (n, _impulse.LocomotionTask.obs_size))
        self.action_space = Box(-s.action_clip, s.action_clip, (n, _impulse.LocomotionTask.action_size), seed=seed)
        self._seed = int(seed)
        # output buffers, allocated once
        self._obs = np.zeros((n, _impulse.LocomotionTask.obs_size))
        self._final_obs = np.zeros_like(self._obs)
        self._reward = np.zeros(n)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._ep_return = np.zeros(n)
        self._ep_length = np.zeros(n)
        self._done = np.zeros(n, dtype=bool)
        self._actions = np.zeros((n, _impulse.LocomotionTask.action_size))
        self.privileged_size: int = _impulse.LocomotionTask.privileged_size
        self._priv = np.zeros((n, self.privileged_size))
        self._final_priv = np.full((n, self.privileged_size), np.nan)
        self._needs_reset = True

    @property
    def num_threads(self) -> int:
        return self._task.num_threads

    @property
    def task(self) -> "_impulse.LocomotionTask":
        """The C++ task (inspection: task.world(i), task.command(i))."""
        return self._task

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> Tuple[np.ndarray, dict]:
        """Resets every environment; seed=None reuses the constructor's seed."""
        if seed is not None:
            self._seed = int(seed)
        self._task.reset(self._seed, self._obs)
        self._needs_reset = False
        return self._obs, {}

    def step(self, actions) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One control step (control_dt) of every environment; finished environments reset at once."""
        if self._needs_reset:
            raise _impulse.Error("AnymalLocomotion.step: call reset() first")
        a = actions
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous):
            a = np.ascontiguousarray(a, dtype=np.float64)
        if a.shape != self._actions.shape:
            raise _impulse.InvalidArgument(
                f"AnymalLocomotion.step: actions must have shape {self._actions.shape}, got {a.shape}")
        self._task.step(a, self._obs, self._reward, self._terminated, self._truncated, self._final_obs,
                        self._ep_return, self._ep_length)
        np.logical_or(self._terminated, self._truncated, out=self._done)
        info: dict = {}
        if self._done.any():
            done = self._done.copy()
            info = {"final_observation": np.where(done[:, None], self._final_obs, np.nan), "_final_observation": done,
                    "episode": {"r": np.where(done, self._ep_return, 0.0), "l": np.where(done, self._ep_length, 0)},
                    "_episode": done}
        return self._obs, self._reward, self._terminated, self._truncated, info

    def privileged_observation(self) -> Tuple[np.ndarray, np.ndarray]:
        """State the robot's sensors do not give, for a critic (asymmetric actor-critic): base linear
        velocity in the base frame * 2 (3), base height (1), swing time of each foot in s (4).

        Returns (current, final): the current state of every environment (after the automatic
        reset, like the observation), and the last state of the environments that finished in the
        last step (rows of the others are stale). Both arrays are reused by the next call."""
        if self._needs_reset:
            raise _impulse.Error("AnymalLocomotion.privileged_observation: call reset() first")
        self._task.privileged(self._priv, self._final_priv)
        return self._priv, self._final_priv

    def close(self) -> None:
        self._task = None

    def __repr__(self) -> str:
        return (f"AnymalLocomotion(num_envs={self.num_envs}, num_threads={self.num_threads}, "
                f"control_dt={self.control_dt}, physics_dt={self.physics_dt})")
