"""Observation and action spaces without Gymnasium (the attributes vector-env users read)."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np


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
