"""Legged locomotion for any robot: N environments stepped in C++ (impulse.LocomotionTask) on a
thread pool, configured by a JSON file or dict (docs/bring_your_own_robot.md lists every key).

Follows Gymnasium's vector-env API (gymnasium.vector.VectorEnv, 0.29) without importing it:
``reset(seed=None) -> (obs, info)``, ``step(actions) -> (obs, reward, terminated, truncated, info)``,
automatic reset of finished environments (their last observation in ``info["final_observation"]``
with mask ``info["_final_observation"]``, and the finished episodes' return and length in
``info["episode"]`` with mask ``info["_episode"]``, as RecordEpisodeStatistics does).

The arrays returned by ``step`` and ``reset`` are reused by the next call (no allocation per
step): copy them if you keep them.
"""
from __future__ import annotations

import copy
import json
import os
from typing import Any, Dict, Mapping, Optional, Tuple, Union

import numpy as np

from .. import _impulse
from .spaces import Box

Config = Union[str, os.PathLike, Mapping[str, Any]]


def _merge(base: Dict[str, Any], overrides: Mapping[str, Any]) -> Dict[str, Any]:
    """base updated by overrides; nested objects (rewards, terrain, randomization) key by key."""
    out = copy.deepcopy(base)
    for k, v in overrides.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(dict(out[k]), v)
        else:
            out[k] = v
    return out


def load_config(config: Config, overrides: Optional[Mapping[str, Any]] = None) -> Tuple[Dict[str, Any], str, str]:
    """(config dict, directory its relative paths resolve against, name for errors)."""
    if isinstance(config, Mapping):
        d, base, name = dict(config), os.getcwd(), "locomotion config (dict)"
    else:
        path = os.fspath(config)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise _impulse.InvalidArgument(f"locomotion config '{path}': {e.strerror}") from None
        try:
            d = json.loads(text)
        except json.JSONDecodeError as e:
            raise _impulse.InvalidArgument(f"{path}: not valid JSON: {e}") from None
        if not isinstance(d, dict):
            raise _impulse.InvalidArgument(f"{path}: the config must be a JSON object")
        base, name = os.path.dirname(os.path.abspath(path)), path
    if overrides:
        d = _merge(d, overrides)
    return d, base, name


class Locomotion:
    """A legged robot tracking a commanded base velocity, ``num_envs`` copies in C++.

    Args:
        config: a JSON config file's path or the parsed dict (relative paths in a file resolve
            against the file's directory, in a dict against the working directory).
        num_envs: number of environments.
        num_threads: C++ threads (0 or None: one per hardware thread). Results do not depend on it.
        seed: seed of the initial states, commands and randomized parameters (environment k uses
            (seed, first_env + k)).
        first_env: global index of the first environment (for splitting one batch over MPI ranks).
        overrides: keys replacing the config's (nested objects merged key by key).

    With J joints and F feet: observation 9 + 3 J + F, action J (joint PD targets = nominal +
    action_scale * action, clipped to +-action_clip), privileged observation 4 + F + randomized
    parameters (``privileged_observation()``). See include/impulse/tasks/locomotion.hpp.
    """

    metadata: Dict[str, Any] = {"autoreset_mode": "next_step_in_info"}

    def __init__(self, config: Config, num_envs: int, num_threads: Optional[int] = 0, seed: int = 0,
                 first_env: int = 0, overrides: Optional[Mapping[str, Any]] = None):
        cfg, base, name = load_config(config, overrides)
        self.config: Dict[str, Any] = cfg
        s = _impulse.parse_locomotion_config(json.dumps(cfg), base, name)
        self._task = _impulse.LocomotionTask(s, int(num_envs), int(num_threads or 0), int(first_env))
        t = self._task
        n = self.num_envs = int(num_envs)
        self.first_env = int(first_env)
        self.physics_dt: float = s.physics_dt
        self.control_dt: float = t.control_dt
        self.joints = list(s.joints)
        self.feet = list(s.feet)
        self.single_observation_space = Box(-np.inf, np.inf, (t.obs_size,))
        self.single_action_space = Box(-s.action_clip, s.action_clip, (t.action_size,), seed=seed)
        self.observation_space = Box(-np.inf, np.inf, (n, t.obs_size))
        self.action_space = Box(-s.action_clip, s.action_clip, (n, t.action_size), seed=seed)
        self._seed = int(seed)
        # output buffers, allocated once
        self._obs = np.zeros((n, t.obs_size))
        self._final_obs = np.zeros_like(self._obs)
        self._reward = np.zeros(n)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._ep_return = np.zeros(n)
        self._ep_length = np.zeros(n)
        self._done = np.zeros(n, dtype=bool)
        self._actions = np.zeros((n, t.action_size))
        self.privileged_size: int = t.privileged_size
        self._priv = np.zeros((n, self.privileged_size))
        self._final_priv = np.full((n, self.privileged_size), np.nan)
        self._needs_reset = True

    @property
    def num_threads(self) -> int:
        return self._task.num_threads

    @property
    def task(self) -> "_impulse.LocomotionTask":
        """The C++ task (inspection: task.world(i), task.command(i), task.terrain_row(i))."""
        return self._task

    def _name(self) -> str:
        return type(self).__name__

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
            raise _impulse.Error(f"{self._name()}.step: call reset() first")
        a = actions
        if not (isinstance(a, np.ndarray) and a.dtype == np.float64 and a.flags.c_contiguous):
            a = np.ascontiguousarray(a, dtype=np.float64)
        if a.shape != self._actions.shape:
            raise _impulse.InvalidArgument(
                f"{self._name()}.step: actions must have shape {self._actions.shape}, got {a.shape}")
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
        velocity in the base frame * 2 (3), base height above the terrain (1), swing time of each
        foot in s (F), then the environment's randomized parameters.

        Returns (current, final): the current state of every environment (after the automatic
        reset, like the observation), and the last state of the environments that finished in the
        last step (rows of the others are stale). Both arrays are reused by the next call."""
        if self._needs_reset:
            raise _impulse.Error(f"{self._name()}.privileged_observation: call reset() first")
        self._task.privileged(self._priv, self._final_priv)
        return self._priv, self._final_priv

    def close(self) -> None:
        self._task = None

    def __repr__(self) -> str:
        return (f"{self._name()}(num_envs={self.num_envs}, num_threads={self.num_threads}, "
                f"control_dt={self.control_dt}, physics_dt={self.physics_dt})")
