#!/usr/bin/env python3
"""Benchmarks of impulse.envs.AnymalLocomotion (docs/benchmarks.md, "Python and batched environments").

    PYTHONPATH=build/python /usr/bin/python3 examples/python/bench_envs.py [--envs 256] [--steps 200] [--repeats 5]

Reports, as medians over --repeats runs of --steps control steps with random actions after a
warm-up: physics steps per second in total (num_envs x substeps per control step) for the Python
loop (env.step) and the C++ loop alone (LocomotionTask.bench, zero actions) with 1 and 2 threads,
the Python overhead per step() (1 - C++ time / Python time, on the same zero actions; and
directly: env.step vs the bound task.step per call on 1 environment), memory per environment
(resident set growth / envs, after reset and after 10 steps) and the start-up time of --startup-envs environments.
Prints one JSON object.
"""
import argparse
import json
import os
import resource
import statistics
import time

import numpy as np

from impulse.envs import AnymalLocomotion


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def median_time(fn, repeats):
    return statistics.median([fn() for _ in range(repeats)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--envs", type=int, default=256)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--startup-envs", type=int, default=4096)
    args = p.parse_args()
    out = {"envs": args.envs, "steps": args.steps, "repeats": args.repeats, "load_before": os.getloadavg()[0]}
    for threads in (1, 2):
        env = AnymalLocomotion(args.envs, num_threads=threads, seed=0)
        sub = env.task.settings.substeps
        env.reset()
        zeros = np.zeros((args.envs, 12))
        for _ in range(50):
            env.step(zeros)  # past the landing

        cpu = []  # process CPU seconds (all threads) of each run

        def py_loop(actions):
            t, c = time.perf_counter(), time.process_time()
            for _ in range(args.steps):
                env.step(actions)
            cpu.append(("py", time.process_time() - c))
            return time.perf_counter() - t

        def cpp_loop():
            c = time.process_time()
            t = env.task.bench(args.steps)
            cpu.append(("cpp", time.process_time() - c))
            return t

        # the two loops alternate, so that a change of the machine's load hits both alike; the
        # overhead is the median of the per-pair ratios
        pairs = [(py_loop(zeros), cpp_loop()) for _ in range(args.repeats)]
        t_py = statistics.median(p for p, _ in pairs)
        t_cpp = statistics.median(c for _, c in pairs)
        c_py = statistics.median([c for k, c in cpu if k == "py"])
        c_cpp = statistics.median([c for k, c in cpu if k == "cpp"])
        cpu_pairs = list(zip([c for k, c in cpu if k == "py"], [c for k, c in cpu if k == "cpp"]))
        n_phys = args.envs * sub * args.steps
        # wall clock (depends on the machine's load) and CPU time (all threads of this process:
        # steps per CPU-second, what one unloaded core would give)
        out[f"threads{threads}"] = {"python_steps_per_s": n_phys / t_py, "cpp_steps_per_s": n_phys / t_cpp,
                                    "python_steps_per_cpu_s": n_phys / c_py, "cpp_steps_per_cpu_s": n_phys / c_cpp,
                                    "python_overhead_wall": statistics.median(1 - c / p for p, c in pairs),
                                    "python_overhead_cpu": statistics.median(1 - c / p for p, c in cpu_pairs),
                                    "us_per_step_call": 1e6 * t_py / args.steps}
    # Python overhead measured directly: env.step vs the bound task.step on the same buffers, one
    # environment and one physics step per call (so the physics does not hide the difference);
    # the overhead is per call, whatever the number of environments
    one = AnymalLocomotion(1, num_threads=1, seed=0, substeps=1)
    one.reset()
    a1 = np.zeros((1, 12))
    t1 = one.task
    bufs = (one._obs, one._reward, one._terminated, one._truncated, one._final_obs, one._ep_return, one._ep_length)
    calls = 20000

    def env_calls():
        t = time.perf_counter()
        for _ in range(calls):
            one.step(a1)
        return time.perf_counter() - t

    def task_calls():
        t = time.perf_counter()
        for _ in range(calls):
            t1.step(a1, *bufs)
        return time.perf_counter() - t

    us_env = 1e6 * median_time(env_calls, args.repeats) / calls
    us_task = 1e6 * median_time(task_calls, args.repeats) / calls
    us_call = out["threads2"]["us_per_step_call"]
    out["python_overhead_direct"] = {"env_step_us": us_env, "task_step_us": us_task,
                                     "overhead_us_per_call": us_env - us_task,
                                     "fraction_of_256_env_step_2_threads": (us_env - us_task) / us_call}
    out["speedup_2_over_1"] = out["threads2"]["python_steps_per_s"] / out["threads1"]["python_steps_per_s"]
    # memory and start-up
    base = rss_kib()
    t = time.perf_counter()
    big = AnymalLocomotion(args.startup_envs, num_threads=2, seed=0)
    t_create = time.perf_counter() - t
    t = time.perf_counter()
    big.reset()
    t_reset = time.perf_counter() - t
    kib_reset = (rss_kib() - base) / args.startup_envs
    # the engine's workspaces grow with use (contact rows on landing): measure again after steps
    zeros = np.zeros((args.startup_envs, 12))
    for _ in range(10):
        big.step(zeros)
    out["startup"] = {"envs": args.startup_envs, "construct_s": t_create, "reset_s": t_reset,
                      "kib_per_env_after_reset": kib_reset,
                      "kib_per_env_after_10_steps": (rss_kib() - base) / args.startup_envs,
                      "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    out["load_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
