"""Vectorized environments following Gymnasium's vector-env conventions (no Gymnasium needed)."""
from .anymal import ANYMAL_CONFIG, AnymalLocomotion, anymal_config  # noqa: F401
from .locomotion import Locomotion, load_config  # noqa: F401
from .reach import Reach  # noqa: F401
from .spaces import Box  # noqa: F401
