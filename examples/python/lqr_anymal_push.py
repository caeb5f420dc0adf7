#!/usr/bin/env python3
"""ANYmal standing under pushes: linear MPC on Impulse's step Jacobians through the feet's contacts.

ANYmal stands on its four feet under the joint PD of models/worlds/anymal_stand.xml. After it has
settled, World.transition_derivatives gives the step's Jacobians A = dx+/dx and B = dx+/dtau at the
standing state (x = (tangent of q, u), 36 entries; analytic by default: the implicit function
theorem on the solved contact problem, the four feet sticking), and B's columns of the twelve
joints are the inputs. The controller is unconstrained linear MPC: the finite-horizon Riccati
recursion over --horizon seconds on (A, B) with the cost sum 1/2 x' Q x + 1/2 tau' R tau gives
the gain K of the horizon's first step, the same at every step because the model is the same (a
receding horizon of a time-invariant model); the joint torques tau = -K (x - x_eq) are added to
the PD's. An infinite horizon has no answer here: six modes of A sit at |eig| = 1 and no torque
moves them (the feet's positions while they stick), so the gain is that of a horizon.

Then a push: a horizontal force on the base for --push seconds, once with the PD alone and once
with the PD and the MPC torques, from the same saved state. The program prints the largest
displacement and tilt of the base and its distance to the standing state at the end.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/lqr_anymal_push.py

--json FILE writes the results. A push that makes the feet slip (about 250 N for 0.1 s here)
moves the robot to another standing place, which no regulator of the first one brings back.
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np

import impulse

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = os.path.join(HERE, "..", "..", "models", "worlds", "anymal_stand.xml")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--settle", type=float, default=2.0, help="seconds of standing before the linearization")
    p.add_argument("--force", type=float, default=150.0, help="push on the base (N)")
    p.add_argument("--direction", type=float, nargs=2, default=[0.0, 1.0], help="push direction in the ground plane")
    p.add_argument("--push", type=float, default=0.1, help="duration of the push (s)")
    p.add_argument("--seconds", type=float, default=1.5, help="simulated time from the start of the push (s)")
    p.add_argument("--horizon", type=float, default=0.3, help="MPC horizon (s)")
    p.add_argument("--r", type=float, default=1e-4, help="torque weight R = r I (1 / (N m)^2)")
    p.add_argument("--method", choices=["analytic", "fd"], default="analytic",
                   help="step Jacobians through the solved contact problem (analytic) or by centred differences (fd)")
    p.add_argument("--eps", type=float, default=1e-6, help="finite-difference step of the Jacobians (fd)")
    p.add_argument("--json", default="", help="write the results to this file")
    return p.parse_args(argv)


def state_weights(nv: int) -> np.ndarray:
    """Q: the base's position and orientation most, then its velocity, the joints little."""
    joints = nv - 6
    return np.diag(np.r_[[100.0] * 6, [1.0] * joints, [10.0] * 6, [0.1] * joints])


def horizon_gain(A: np.ndarray, B: np.ndarray, Q: np.ndarray, R: np.ndarray, steps: int) -> np.ndarray:
    """The first-step gain of the finite-horizon LQR (terminal cost Q): the Riccati recursion
    P <- Q + A' P (A - B K), K = (R + B' P B)^-1 B' P A, `steps` times backwards."""
    P = Q.copy()
    K = np.zeros((B.shape[1], A.shape[0]))
    for _ in range(steps):
        BtP = B.T @ P
        K = np.linalg.solve(R + BtP @ B, BtP @ A)
        P = Q + A.T @ P @ (A - B @ K)
        P = 0.5 * (P + P.T)
    return K


def main(argv=None, log=print):
    args = parse_args(argv)
    world = impulse.load_world(WORLD)
    dt = world.time_step
    world.integrate(int(round(args.settle / dt)))
    robot = world.system(0)
    model = robot.model
    q_eq, u_eq = robot.q.copy(), robot.u.copy()
    nv = model.nv

    if args.method == "analytic":
        A, B = world.transition_derivatives(method="analytic")
    else:
        A, B = world.transition_derivatives(eps=args.eps, centered=True, method="fd")
    Bj = B[:, 6:]  # the joints' torques (the floating base has no actuator)
    K = horizon_gain(A, Bj, state_weights(nv), args.r * np.eye(nv - 6), int(round(args.horizon / dt)))
    closed = np.abs(np.linalg.eigvals(A - Bj @ K))
    log(f"settled: base at {q_eq[0]:.4f} {q_eq[1]:.4f} {q_eq[2]:.4f} m; A {A.shape[0]}x{A.shape[1]}, "
        f"largest |eig| open loop {np.abs(np.linalg.eigvals(A)).max():.9f}, closed loop {closed.max():.9f}")

    start = world.save_state()
    direction = np.array([args.direction[0], args.direction[1], 0.0])
    direction /= np.linalg.norm(direction)
    push_steps = int(round(args.push / dt))

    def run(with_mpc: bool) -> dict:
        world.restore_state(start)
        peak_move = peak_tilt = peak_torque = 0.0
        for k in range(int(round(args.seconds / dt))):
            if k < push_steps:  # (an external force lasts one step)
                robot.set_external_force(0, (args.force * direction).tolist(), robot.q[:3].tolist())
            if with_mpc:
                x = np.r_[model.difference(q_eq, robot.q), robot.u - u_eq]
                tau = np.zeros(nv)
                tau[6:] = -K @ x
                peak_torque = max(peak_torque, float(np.abs(tau).max()))
                robot.set_generalized_force(tau)
            world.integrate()
            d = model.difference(q_eq, robot.q)
            peak_move = max(peak_move, float(np.linalg.norm(d[:3])))
            peak_tilt = max(peak_tilt, float(np.linalg.norm(d[3:6])))
        d = model.difference(q_eq, robot.q)
        return {"peak_displacement_m": peak_move, "peak_tilt_rad": peak_tilt,
                "final_distance": float(np.linalg.norm(np.r_[d[:6], robot.u[:6] - u_eq[:6]])),
                "final_speed": float(np.abs(robot.u).max()), "peak_mpc_torque_Nm": peak_torque}

    results = {"force_N": args.force, "push_s": args.push, "method": args.method,
               "closed_loop_max_abs_eig": float(closed.max()), "pd": run(False), "mpc": run(True)}
    for name in ("pd", "mpc"):
        r = results[name]
        log(f"{name:>3}: peak displacement {1e3 * r['peak_displacement_m']:.2f} mm, peak tilt "
            f"{1e3 * r['peak_tilt_rad']:.2f} mrad, after {args.seconds:g} s: distance to the stance "
            f"{r['final_distance']:.2e}, largest speed {r['final_speed']:.2e}"
            + (f", MPC torques up to {r['peak_mpc_torque_Nm']:.1f} N m" if name == "mpc" else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    return results


if __name__ == "__main__":
    main()
