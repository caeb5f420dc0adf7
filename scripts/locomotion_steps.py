"""Steps AnymalLocomotion for instruction counts of the batched physics step.

    valgrind --tool=callgrind --toggle-collect='*WorldLanes::integrate*' \\
        /usr/bin/python3 scripts/locomotion_steps.py W A      (PYTHONPATH=build/python)

256 environments (examples/configs/anymal.json) on one thread, reset, the lanes of width W
(1: the scalar path), 50 control steps (64 000 physics steps) with actions uniform in +-A drawn
from numpy.random.default_rng(0) (A = 0: zero actions). Divide callgrind's total by 64 000.
"""
import sys

import numpy as np

from impulse.envs import AnymalLocomotion


def main():
    width, amplitude = int(sys.argv[1]), float(sys.argv[2])
    env = AnymalLocomotion(256, num_threads=1, seed=0)
    env.reset()
    env.task.lanes = width
    rng = np.random.default_rng(0)
    for _ in range(50):
        env.step(rng.uniform(-amplitude, amplitude, (256, 12)) if amplitude > 0 else np.zeros((256, 12)))


if __name__ == "__main__":
    main()
