"""Steps AnymalLocomotion for instruction counts of the batched physics step.

    valgrind --tool=callgrind --toggle-collect='*WorldLanes::integrate*' \\
        /usr/bin/python3 scripts/locomotion_steps.py W A [N]      (PYTHONPATH=build/python)

256 environments (examples/configs/anymal.json) on one thread, reset, the lanes of width W
(1: the scalar path), N control steps (default 50: 64 000 physics steps) with actions uniform in
+-A drawn from numpy.random.default_rng(0) (A = 0: zero actions). Divide callgrind's total by
1 280 N. Prints the physics steps per second of the N control steps.
"""
import sys
import time

import numpy as np

from impulse.envs import AnymalLocomotion


def main():
    width, amplitude = int(sys.argv[1]), float(sys.argv[2])
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    env = AnymalLocomotion(256, num_threads=1, seed=0)
    env.reset()
    env.task.lanes = width
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(steps):
        env.step(rng.uniform(-amplitude, amplitude, (256, 12)) if amplitude > 0 else np.zeros((256, 12)))
    print("width %d: %.0f physics steps/s" % (width, 256 * 5 * steps / (time.perf_counter() - start)))


if __name__ == "__main__":
    main()
