"""ANYmal velocity tracking: impulse.envs.Locomotion with the ANYmal config shipped with the package.

``AnymalLocomotion(num_envs, ..., **overrides)`` is ``Locomotion(ANYMAL_CONFIG, num_envs, ...)``
with the package's ANYmal URDF; keyword arguments replace config keys (e.g. max_episode_steps=5).
examples/configs/anymal.json is the same config for the repository's model.
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

from .locomotion import Locomotion
from .spaces import Box  # noqa: F401  (impulse.envs.Box)

# legged_gym's flat ANYmal task at 100 Hz (Rudin et al. 2022), the repository's ANYmal
ANYMAL_CONFIG: Dict[str, Any] = {
    "description": "ANYmal (models/anymal) walking forward at 0.5-1 m/s on flat ground",
    "urdf": "anymal.urdf",
    "joints": ["LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
               "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"],
    "feet": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
    # standing pose: front legs HFE +0.4, KFE -0.8; hind legs mirrored (models/worlds/anymal_stand.xml)
    "nominal": [0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8],
    "base_height": 0.56,
    "kp": 80, "kd": 2, "action_scale": 0.3, "action_clip": 4,
    "physics_dt": 0.002, "substeps": 5, "solver": "bisection", "max_contacts": 16, "friction": 0.8,
    "max_episode_steps": 1000,
    "command_vx": [0.5, 1.0], "command_vy": [0, 0], "command_yaw": [0, 0],
    "init_joint_noise": 0.1, "init_velocity_noise": 0.1,
    "min_base_height": 0.3, "min_uprightness": 0.5,
    # the standing height under zero action is 0.50-0.52 m
    "rewards": {"base_height_target": 0.5},
}


def anymal_config() -> Dict[str, Any]:
    """ANYMAL_CONFIG with the package's URDF path."""
    cfg = dict(ANYMAL_CONFIG)
    cfg["urdf"] = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "anymal.urdf")
    return cfg


class AnymalLocomotion(Locomotion):
    """ANYmal tracking a commanded forward velocity on flat ground (Locomotion with ANYMAL_CONFIG).

    Observation (49), action (12), privileged observation (8): see Locomotion with J = 12, F = 4.
    """

    def __init__(self, num_envs: int, num_threads: Optional[int] = None, seed: int = 0, first_env: int = 0,
                 **overrides: Any):
        super().__init__(anymal_config(), num_envs, num_threads=num_threads, seed=seed, first_env=first_env,
                         overrides=overrides)
