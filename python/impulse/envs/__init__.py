"""Vectorized environments following Gymnasium's vector-env conventions (no Gymnasium needed)."""
from .anymal import AnymalLocomotion, Box  # noqa: F401
