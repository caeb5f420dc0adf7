"""The control and identification examples (examples/python): iLQR on the step Jacobians swings the
double pendulum up and LQR holds it; least squares on the step's discrete dynamics recovers link
masses, joint damping and joint friction from a recorded run."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))

import ilqr_double_pendulum  # noqa: E402
import sysid_double_pendulum  # noqa: E402


def quiet(*_):
    pass


def test_ilqr_swings_the_double_pendulum_up_and_lqr_holds_it():
    results = {}
    for method in ("analytic", "fd"):
        r = ilqr_double_pendulum.main(["--iterations", "40", "--hold", "1.0", "--method", method], log=quiet)
        assert r["cost_final"] < 0.1 * r["cost_first"]
        assert r["final_error_open_loop"] < 0.1
        # from a start 0.05 rad off, the iLQR gains and then LQR bring it to the upright at rest
        assert r["final_error_closed_loop"] < 1e-2
        assert r["peak_torque"] < 100  # the URDF's effort limit
        results[method] = r
    # the two Jacobians agree to the differences' accuracy: the same optimum
    assert abs(results["analytic"]["cost_final"] - results["fd"]["cost_final"]) < 1e-3 * results["fd"]["cost_final"]


def test_sysid_recovers_masses_damping_and_friction():
    exact = sysid_double_pendulum.main(["--seconds", "5"], log=quiet)
    # noise-free data and the step's own discrete equation: exact up to roundoff
    assert max(exact["relative_error"]) < 1e-6
    noisy = sysid_double_pendulum.main(["--seconds", "5", "--torque-noise", "0.05"], log=quiet)
    assert max(noisy["relative_error"]) < 0.05
    assert noisy["samples"] > 4000
