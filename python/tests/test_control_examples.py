"""The control and identification examples (examples/python): iLQR on the step Jacobians swings the
double pendulum up and LQR holds it; linear MPC on the step Jacobians through the feet's contacts
holds ANYmal's stance under a push; least squares on the step's discrete dynamics recovers link
masses, joint damping and joint friction from a recorded run."""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))

import ilqr_double_pendulum  # noqa: E402
import lqr_anymal_push  # noqa: E402
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


def test_mpc_on_the_contact_jacobians_holds_anymal_under_a_push():
    results = {}
    for method in ("analytic", "fd"):
        r = lqr_anymal_push.main(["--method", method, "--seconds", "1.0"], log=quiet)
        pd, mpc = r["pd"], r["mpc"]
        # the push moves the base by centimetres under the PD alone; the MPC torques, a few N m,
        # keep it to a third and bring it back to rest
        assert pd["peak_displacement_m"] > 5e-3
        assert mpc["peak_displacement_m"] < 0.5 * pd["peak_displacement_m"]
        assert mpc["final_distance"] < 0.2 * pd["final_distance"]
        assert mpc["final_speed"] < 1e-3
        assert mpc["peak_mpc_torque_Nm"] < 40
        results[method] = mpc
    # the analytic Jacobians and centred differences give the same controller
    a, f = results["analytic"], results["fd"]
    assert abs(a["peak_displacement_m"] - f["peak_displacement_m"]) < 0.02 * f["peak_displacement_m"]


def test_sysid_recovers_masses_damping_and_friction():
    exact = sysid_double_pendulum.main(["--seconds", "5"], log=quiet)
    # noise-free data and the step's own discrete equation: exact up to roundoff
    assert max(exact["relative_error"]) < 1e-6
    noisy = sysid_double_pendulum.main(["--seconds", "5", "--torque-noise", "0.05"], log=quiet)
    assert max(noisy["relative_error"]) < 0.05
    assert noisy["samples"] > 4000
