#!/usr/bin/env python3
"""Swing-up of the double pendulum by iLQR on Impulse's step Jacobians, then LQR at the top.

The model is models/double_pendulum.urdf (two 1 kg balls on 1 m rods, both joints actuated),
with the joint limits off so that the pendulum can pass through the upright. The dynamics are the
engine's own step, x+ = step(x, tau) with x = (q, u): iLQR (Li and Todorov 2004; the
Levenberg-Marquardt regularization and line search of Tassa, Erez and Todorov 2012) linearizes it
along the trajectory with impulse.TransitionDifferentiator (A = dx+/dx, B = dx+/dtau of the
step, analytic by default, --method fd for centred differences of whole steps), and rolls the new
controls out on the same World. Cost: sum_t 1/2 (x_t - x*)' Q (x_t - x*) + 1/2 r |tau_t|^2, terminal weight Qf.

After the swing-up, the time-varying gains K_t of the last backward pass track the trajectory,
and the infinite-horizon LQR gain of the upright (the Riccati recursion on its step Jacobians)
holds it for --hold seconds, from a start pushed off the nominal one by --perturb rad.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/ilqr_double_pendulum.py

prints the cost per iteration and the final distance to the upright; --json FILE writes them.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

import impulse

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "..", "..", "models", "double_pendulum.urdf")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--horizon", type=float, default=2.5, help="swing-up time (s)")
    p.add_argument("--dt", type=float, default=0.01, help="the World's time step (s)")
    p.add_argument("--iterations", type=int, default=60, help="iLQR iterations at most")
    p.add_argument("--tolerance", type=float, default=1e-6, help="stop when the relative cost decrease is below")
    p.add_argument("--hold", type=float, default=2.0, help="seconds of LQR at the top after the swing-up")
    p.add_argument("--perturb", type=float, default=0.05, help="rad added to both joints of the start")
    p.add_argument("--method", choices=["analytic", "fd"], default="analytic",
                   help="step Jacobians through the step's equations (analytic) or by centred differences (fd)")
    p.add_argument("--eps", type=float, default=1e-6, help="finite-difference step of the Jacobians (fd)")
    p.add_argument("--threads", type=int, default=1, help="threads of the Jacobians' columns")
    p.add_argument("--json", default="", help="write the results to this file")
    return p.parse_args(argv)


def make_world(dt: float) -> impulse.World:
    w = impulse.World()
    w.time_step = dt
    settings = w.contact_settings
    settings.joint_limits = False  # the swing passes through the URDF's +-pi limits
    w.set_contact_settings(settings)
    w.add_articulated_system(impulse.load_urdf(URDF))
    return w


class Problem:
    """The step, its Jacobians and the cost on one World."""

    def __init__(self, world: impulse.World, eps: float, threads: int, method: str = "analytic"):
        self.w = world
        self.s = world.system(0)
        self.nx, self.nu = 2 * self.s.nv, self.s.nv
        self.diff = impulse.TransitionDifferentiator(world, eps=eps, centered=True, num_threads=threads, method=method)
        self.goal = np.array([np.pi, 0.0, 0.0, 0.0])  # upright, at rest
        self.Q = np.diag([1.0, 1.0, 0.1, 0.1])
        self.Qf = np.diag([2000.0, 2000.0, 200.0, 200.0])
        self.r = 1e-2

    def step(self, x: np.ndarray, tau: np.ndarray) -> np.ndarray:
        n = self.s.nv
        self.s.set_state(x[:n], x[n:])
        self.s.set_generalized_force(tau)
        self.w.integrate()
        return np.concatenate([self.s.q, self.s.u])

    def jacobians(self, x: np.ndarray, tau: np.ndarray):
        n = self.s.nv
        self.s.set_state(x[:n], x[n:])
        self.s.set_generalized_force(tau)
        return self.diff.compute(self.w)

    def cost(self, X: np.ndarray, U: np.ndarray) -> float:
        E = X[:-1] - self.goal
        running = 0.5 * np.einsum("ti,ij,tj->", E, self.Q, E) + 0.5 * self.r * np.sum(U * U)
        e = X[-1] - self.goal
        return float(running + 0.5 * e @ self.Qf @ e)

    def rollout(self, x0, U, X_ref=None, k=None, K=None, alpha=1.0):
        """Open loop (X_ref None) or the iLQR update tau = U + alpha k + K (x - X_ref)."""
        X = np.zeros((len(U) + 1, self.nx))
        X[0] = x0
        U_new = U.copy()
        for t in range(len(U)):
            if X_ref is not None:
                U_new[t] = U[t] + alpha * k[t] + K[t] @ (X[t] - X_ref[t])
            X[t + 1] = self.step(X[t], U_new[t])
            if not np.all(np.isfinite(X[t + 1])):
                return None, None
        return X, U_new


def backward_pass(p: Problem, X, U, mu: float):
    """The Riccati recursion of iLQR with regularization mu on Quu (Tassa et al. 2012, eq. 10)."""
    T = len(U)
    k = np.zeros((T, p.nu))
    K = np.zeros((T, p.nu, p.nx))
    Vx = p.Qf @ (X[-1] - p.goal)
    Vxx = p.Qf.copy()
    expected = 0.0
    for t in reversed(range(T)):
        A, B = p.jacobians(X[t], U[t])
        Qx = p.Q @ (X[t] - p.goal) + A.T @ Vx
        Qu = p.r * U[t] + B.T @ Vx
        Qxx = p.Q + A.T @ Vxx @ A
        Quu = p.r * np.eye(p.nu) + B.T @ Vxx @ B
        Qux = B.T @ Vxx @ A
        Quu_reg = Quu + mu * np.eye(p.nu)
        try:
            L = np.linalg.cholesky(Quu_reg)
        except np.linalg.LinAlgError:
            return None
        k[t] = -np.linalg.solve(L.T, np.linalg.solve(L, Qu))
        K[t] = -np.linalg.solve(L.T, np.linalg.solve(L, Qux))
        Vx = Qx + K[t].T @ Quu @ k[t] + K[t].T @ Qu + Qux.T @ k[t]
        Vxx = Qxx + K[t].T @ Quu @ K[t] + K[t].T @ Qux + Qux.T @ K[t]
        Vxx = 0.5 * (Vxx + Vxx.T)
        expected += k[t] @ Qu + 0.5 * k[t] @ Quu @ k[t]
    return k, K, expected


def ilqr(p: Problem, x0, U, iterations: int, tolerance: float, log=print):
    X, U = p.rollout(x0, U)
    J = p.cost(X, U)
    mu, history = 1e-6, [J]
    K = None
    for it in range(iterations):
        bp = backward_pass(p, X, U, mu)
        if bp is None:
            mu *= 10
            continue
        k, K_new, expected = bp
        accepted = False
        for alpha in (1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125):
            Xn, Un = p.rollout(x0, U, X, k, K_new, alpha)
            if Xn is None:
                continue
            Jn = p.cost(Xn, Un)
            if Jn < J:  # any decrease (the expected one, alpha expected, is for the log)
                accepted = True
                break
        if not accepted:
            mu = max(mu * 10, 1e-6)
            if mu > 1e6:
                break
            continue
        decrease = (J - Jn) / max(J, 1e-12)
        X, U, J, K = Xn, Un, Jn, K_new
        mu = max(mu / 10, 1e-9)
        history.append(J)
        log(f"iteration {it:3d}  cost {J:12.5f}  alpha {alpha:.4f}  mu {mu:.1e}")
        if decrease < tolerance:
            break
    return X, U, K, history


def lqr_gain(p: Problem, x, tau, iterations=2000):
    """Infinite-horizon discrete LQR about a fixed point (x, tau) of the step: the Riccati
    recursion run to its fixed point on the step Jacobians there."""
    A, B = p.jacobians(x, tau)
    P = p.Qf.copy()
    for _ in range(iterations):
        Kl = np.linalg.solve(p.r * np.eye(p.nu) + B.T @ P @ B, B.T @ P @ A)
        P_next = p.Q + A.T @ P @ (A - B @ Kl)
        if np.max(np.abs(P_next - P)) < 1e-10 * np.max(np.abs(P)):
            break
        P = P_next
    return -Kl


def main(argv=None, log=print):
    args = parse_args(argv)
    world = make_world(args.dt)
    p = Problem(world, args.eps, args.threads, args.method)
    T = int(round(args.horizon / args.dt))
    x0 = np.zeros(p.nx)  # hanging at rest
    t0 = time.time()
    X, U, K, history = ilqr(p, x0, np.zeros((T, p.nu)), args.iterations, args.tolerance, log)
    solve_s = time.time() - t0
    err_nominal = float(np.linalg.norm(X[-1] - p.goal))

    # closed loop from a pushed start: the iLQR gains along the swing, then LQR at the top
    hold_steps = int(round(args.hold / args.dt))
    tau_top = np.zeros(p.nu)  # upright: gravity has no torque there
    K_top = lqr_gain(p, p.goal, tau_top)
    x = x0 + np.array([args.perturb, args.perturb, 0.0, 0.0])
    peak = 0.0
    for t in range(T):
        tau = U[t] + K[t] @ (x - X[t])
        peak = max(peak, float(np.max(np.abs(tau))))
        x = p.step(x, tau)
    for _ in range(hold_steps):
        tau = tau_top + K_top @ (x - p.goal)
        peak = max(peak, float(np.max(np.abs(tau))))
        x = p.step(x, tau)
    err_closed = float(np.linalg.norm(x - p.goal))
    result = {"iterations": len(history) - 1, "cost_first": history[0], "cost_final": history[-1],
              "final_error_open_loop": err_nominal, "final_error_closed_loop": err_closed,
              "perturbation_rad": args.perturb, "hold_s": args.hold, "peak_torque": peak,
              "solve_seconds": solve_s, "steps": T, "dt": args.dt, "method": args.method}
    log(f"swing-up: {result['iterations']} iterations, cost {history[0]:.3f} -> {history[-1]:.5f}, "
        f"|x_T - x*| = {err_nominal:.2e} ({solve_s:.1f} s)")
    log(f"closed loop from a start pushed by {args.perturb} rad, then {args.hold} s of LQR at the top: "
        f"|x - x*| = {err_closed:.2e}, peak torque {peak:.1f} N m")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
    sys.exit(0)
