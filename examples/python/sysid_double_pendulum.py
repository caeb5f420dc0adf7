#!/usr/bin/env python3
"""System identification: link masses, joint damping and joint friction of the double pendulum
from a recorded run.

A "true" robot (models/double_pendulum.urdf with other link masses, viscous damping and Coulomb
friction set per joint: World.set_body_inertia, World.set_joint_damping, World.set_joint_friction)
is driven by a multisine torque; its joint positions, velocities and actuator torques are recorded
at every step (with optional noise on the torques). The identification knows only the URDF (1 kg
links, no damping, no friction) and the recording.

It uses the discrete equation of motion of the engine's step. For a system with damping the step
is semi-implicit Euler (docs/architecture.md, "One step"):

    M(q_k) (u_k+1 - u_k) / dt + h(q_k, u_k) + D u_k+1 + f sign(u_k+1) = tau_k

while the joints slide (a sticking joint's friction torque is anywhere in [-f, f]). Its first two
terms are impulse.rnea(model, data, q_k, u_k, a_k) with a_k = (u_k+1 - u_k) / dt. With a body's
centre of mass and rotational inertia fixed, RNEA is affine in the body's mass, so

    tau_k - rnea_0(q_k, u_k, a_k) = sum_b (m_b - m0_b) Y_b + D u_k+1 + f sign(u_k+1)

is linear in theta = (m_1, m_2, d_1, d_2, f_1, f_2): each column Y_b is the change of RNEA for one
kilogram more on body b. Least squares over the samples where both joints slide recovers theta.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/sysid_double_pendulum.py

prints the true and identified parameters and their relative errors; --json FILE writes them.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

import impulse

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "..", "..", "models", "double_pendulum.urdf")
BODIES = ("upper", "lower")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=10.0, help="length of the recorded run (s)")
    p.add_argument("--dt", type=float, default=0.001, help="time step (s)")
    p.add_argument("--masses", type=float, nargs=2, default=[1.3, 0.7], help="true link masses (kg)")
    p.add_argument("--damping", type=float, nargs=2, default=[0.2, 0.05], help="true joint damping (N m s/rad)")
    p.add_argument("--friction", type=float, nargs=2, default=[0.5, 0.3], help="true joint friction (N m)")
    p.add_argument("--torque-noise", type=float, default=0.0,
                   help="standard deviation of the noise added to the recorded torques (N m)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default="", help="write the results to this file")
    return p.parse_args(argv)


def make_world(dt: float) -> impulse.World:
    w = impulse.World()
    w.time_step = dt
    settings = w.contact_settings
    settings.joint_limits = False  # the run may swing over the URDF's +-pi limits
    w.set_contact_settings(settings)
    w.add_articulated_system(impulse.load_urdf(URDF))
    return w


def set_masses(w: impulse.World, masses) -> None:
    model = w.system(0).model
    for body, m in zip(BODIES, masses):
        _, com, inertia = model.body_inertia(body)
        w.set_body_inertia(0, body, float(m), com, inertia)


def record(args):
    """The true robot under a multisine torque: q_k, u_k (k = 0..N) and tau_k (k < N)."""
    w = make_world(args.dt)
    set_masses(w, args.masses)
    w.set_joint_damping(0, np.array(args.damping))
    w.set_joint_friction(0, np.array(args.friction))
    s = w.system(0)
    n = int(round(args.seconds / args.dt))
    rng = np.random.default_rng(args.seed)
    freqs = np.array([0.3, 0.7, 1.1, 1.7, 2.3])  # Hz: a persistently exciting sum of sines
    amp = rng.uniform(2.0, 6.0, (2, len(freqs)))
    phase = rng.uniform(0, 2 * np.pi, (2, len(freqs)))
    Q, U, TAU = np.zeros((n + 1, 2)), np.zeros((n + 1, 2)), np.zeros((n, 2))
    Q[0], U[0] = s.q, s.u
    for k in range(n):
        t = k * args.dt
        tau = (amp * np.sin(2 * np.pi * freqs * t + phase)).sum(axis=1)
        s.set_generalized_force(tau)
        w.integrate()
        TAU[k] = s.applied_torque  # what the actuator applied in this step
        Q[k + 1], U[k + 1] = s.q, s.u
    TAU += rng.normal(0.0, args.torque_noise, TAU.shape) if args.torque_noise > 0 else 0.0
    return Q, U, TAU


def identify(Q, U, TAU, dt: float, slide: float = 1e-3):
    """theta = (m_1, m_2, d_1, d_2, f_1, f_2) by linear least squares; the nominal model is the URDF."""
    w = make_world(dt)  # the nominal description: 1 kg links, no damping, no friction
    nominal = w.system(0).model
    m0 = np.array([nominal.body_inertia(b)[0] for b in BODIES])
    data = impulse.Data(nominal)
    # per body: the model with one kilogram more on it (its regressor column is the difference)
    plus = []
    for b, body in enumerate(BODIES):
        wb = make_world(dt)
        masses = m0.copy()
        masses[b] += 1.0
        set_masses(wb, masses)
        plus.append((wb.system(0).model, impulse.Data(wb.system(0).model)))
    rows, rhs = [], []
    for k in range(len(TAU)):
        u_next = U[k + 1]
        if np.any(np.abs(u_next) < slide):  # a joint that may stick: its friction is not -f sign(u)
            continue
        a = (U[k + 1] - U[k]) / dt
        tau0 = impulse.rnea(nominal, data, Q[k], U[k], a)
        Y = np.zeros((2, 6))
        for b, (mb, db) in enumerate(plus):
            Y[:, b] = impulse.rnea(mb, db, Q[k], U[k], a) - tau0  # affine in the mass: exact
        Y[:, 2:4] = np.diag(u_next)
        Y[:, 4:6] = np.diag(np.sign(u_next))
        rows.append(Y)
        # rnea_0 holds the nominal masses m0: theta's masses enter as m0 + (m - m0)
        rhs.append(TAU[k] - tau0 + Y[:, :2] @ m0)
    A, y = np.vstack(rows), np.concatenate(rhs)
    theta, *_ = np.linalg.lstsq(A, y, rcond=None)
    residual = float(np.sqrt(np.mean((A @ theta - y) ** 2)))
    return theta, len(rows), residual


def main(argv=None, log=print):
    args = parse_args(argv)
    Q, U, TAU = record(args)
    theta, samples, residual = identify(Q, U, TAU, args.dt)
    truth = np.array(list(args.masses) + list(args.damping) + list(args.friction))
    names = ["mass upper (kg)", "mass lower (kg)", "damping shoulder", "damping elbow", "friction shoulder (N m)",
             "friction elbow (N m)"]
    rel = np.abs(theta - truth) / np.abs(truth)
    log(f"{samples} samples of {len(TAU)} (both joints sliding), torque noise {args.torque_noise} N m, "
        f"rms residual {residual:.2e} N m")
    for name, t, e, r in zip(names, truth, theta, rel):
        log(f"  {name:26s} true {t:8.4f}  identified {e:10.6f}  relative error {r:.1e}")
    result = {"names": names, "true": truth.tolist(), "identified": theta.tolist(), "relative_error": rel.tolist(),
              "samples": samples, "residual_rms": residual, "torque_noise": args.torque_noise}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return result


if __name__ == "__main__":
    main()
    sys.exit(0)
