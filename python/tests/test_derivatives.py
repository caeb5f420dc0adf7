"""Frame, centre-of-mass and energy derivatives (impulse.frame_velocity_derivatives, ...) against
finite differences of the plain algorithms, and World.transition_derivatives: shapes, the same bits
for any thread count, the World left unchanged, one-line errors."""
import numpy as np
import pytest

import impulse


@pytest.fixture
def anymal(anymal_urdf):
    model = impulse.load_urdf(anymal_urdf)
    rng = np.random.default_rng(7)
    q = model.neutral_configuration()
    q[:3] = [0.1, -0.2, 0.6]
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(-0.5, 0.5, 12)
    return model, q, rng.normal(size=18), rng.normal(size=18)


def differences(model, q, u, f, h=1e-6):
    """Centred differences of the vector f(q, u) along the tangent of q and along u."""
    m = np.asarray(f(q, u)).size
    dq, du = np.zeros((m, model.nv)), np.zeros((m, model.nv))
    for j in range(model.nv):
        e = np.zeros(model.nv)
        e[j] = 1.0
        dq[:, j] = (np.ravel(f(model.integrate(q, e, h), u)) - np.ravel(f(model.integrate(q, e, -h), u))) / (2 * h)
        du[:, j] = (np.ravel(f(q, u + h * e)) - np.ravel(f(q, u - h * e))) / (2 * h)
    return dq, du


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_frame_velocity_and_jacobian_derivatives(anymal):
    model, q, u, udot = anymal
    data = impulse.Data(model)

    def velocity(qq, uu):
        return impulse.frame_jacobian(model, data, qq, "LF_FOOT") @ uu

    dq, du = impulse.frame_velocity_derivatives(model, data, q, u, "LF_FOOT")
    fq, fu = differences(model, q, u, velocity)
    assert rel(dq, fq) < 1e-6 and rel(du, fu) < 1e-6
    # classical acceleration J udot + dJ/dt u; its derivatives
    dJ = impulse.frame_jacobian_time_variation(model, data, q, u, "LF_FOOT")
    h = 1e-6
    fdJ = (impulse.frame_jacobian(model, data, model.integrate(q, u, h), "LF_FOOT")
           - impulse.frame_jacobian(model, data, model.integrate(q, u, -h), "LF_FOOT")) / (2 * h)
    assert rel(dJ, fdJ) < 1e-6

    def acceleration(qq, uu):
        J = impulse.frame_jacobian(model, data, qq, "LF_FOOT")
        return J @ udot + impulse.frame_jacobian_time_variation(model, data, qq, uu, "LF_FOOT") @ uu

    aq, au, audot = impulse.frame_acceleration_derivatives(model, data, q, u, udot, "LF_FOOT")
    fq, fu = differences(model, q, u, acceleration)
    assert rel(aq, fq) < 1e-6 and rel(au, fu) < 1e-6
    assert np.array_equal(audot, impulse.frame_jacobian(model, data, q, "LF_FOOT"))


def test_com_and_energy_derivatives(anymal):
    model, q, u, _ = anymal
    data = impulse.Data(model)
    J = impulse.center_of_mass_jacobian(model, data, q)
    fq, _ = differences(model, q, u, lambda qq, uu: impulse.center_of_mass(model, data, qq))
    assert rel(J, fq) < 1e-6
    dvq, dvu, Jdot = impulse.center_of_mass_velocity_derivatives(model, data, q, u)
    fq, fu = differences(model, q, u, lambda qq, uu: impulse.center_of_mass_jacobian(model, data, qq) @ uu)
    assert rel(dvq, fq) < 1e-6 and rel(dvu, fu) < 1e-6
    np.testing.assert_allclose(dvu, J, rtol=0, atol=1e-12)
    h = 1e-6
    fJdot = (impulse.center_of_mass_jacobian(model, data, model.integrate(q, u, h))
             - impulse.center_of_mass_jacobian(model, data, model.integrate(q, u, -h))) / (2 * h)
    assert rel(Jdot, fJdot) < 1e-6
    dTq, dTu = impulse.kinetic_energy_derivatives(model, data, q, u)
    fq, fu = differences(model, q, u, lambda qq, uu: [impulse.kinetic_energy(model, data, qq, uu)])
    assert rel(dTq, fq[0]) < 1e-6 and rel(dTu, fu[0]) < 1e-6
    dV = impulse.potential_energy_derivatives(model, data, q)
    fq, _ = differences(model, q, u, lambda qq, uu: [impulse.potential_energy(model, data, qq)])
    assert rel(dV, fq[0]) < 1e-6


def test_transition_derivatives(anymal_urdf):
    w = impulse.World.from_urdf(anymal_urdf)
    r = w.system(0)
    q = r.model.neutral_configuration()
    q[2] = 3.0  # in flight
    u = np.zeros(18)
    u[2] = 1.0
    r.set_state(q, u)
    A, B = w.transition_derivatives()
    assert A.shape == (36, 36) and B.shape == (36, 18)
    assert np.isfinite(A).all() and np.isfinite(B).all()
    A2, B2 = w.transition_derivatives(num_threads=2)
    assert np.array_equal(A, A2) and np.array_equal(B, B2)
    kept = impulse.TransitionDifferentiator(w, num_threads=2)
    for _ in range(2):
        Ak, Bk = kept.compute(w)
        assert np.array_equal(A, Ak) and np.array_equal(B, Bk)
    Af, Bf = w.transition_derivatives(eps=1e-6, centered=False)
    assert rel(Af, A) < 1e-4 and rel(Bf, B) < 1e-4
    # the World was not stepped
    assert w.time == 0 and np.array_equal(r.q, q) and np.array_equal(r.u, u)
    # x+ = (dq+, u+): the base moves by dt u+
    dt = w.time_step
    np.testing.assert_allclose(A[:3, 18:21], dt * np.eye(3), atol=1e-6)
    with pytest.raises(impulse.InvalidArgument, match=r"^transition_derivatives: eps must be finite and > 0, got -1$"):
        w.transition_derivatives(eps=-1)
    # analytically (in flight: no contact), without differences
    Aa, Ba = w.transition_derivatives(method="analytic")
    assert rel(Aa, A) < 1e-6 and rel(Ba, B) < 1e-6
    Ak, Bk = impulse.TransitionDifferentiator(w, method="analytic").compute(w)
    assert np.array_equal(Aa, Ak) and np.array_equal(Ba, Bk)
    with pytest.raises(impulse.InvalidArgument,
                       match=r"^transition_derivatives: method must be 'fd' or 'analytic', got 'exact'$"):
        w.transition_derivatives(method="exact")
