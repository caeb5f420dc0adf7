"""The model-level algorithms (impulse.Data, impulse.rnea, ..., impulse.rnea_derivatives): the
same bits as the World system's queries where both exist, finite differences for the derivatives,
and one-line errors naming the argument."""
import numpy as np
import pytest

import impulse


@pytest.fixture
def anymal(anymal_urdf):
    w = impulse.World.from_urdf(anymal_urdf)
    r = w.system(0)
    rng = np.random.default_rng(4)
    q = r.model.neutral_configuration()
    q[:3] = [0.1, -0.2, 0.6]
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    q[7:] = rng.uniform(-0.5, 0.5, 12)
    u = rng.normal(size=18)
    r.set_state(q, u)
    return w, r, q, u


def test_same_bits_as_the_system_queries(anymal):
    w, r, q, u = anymal
    model = r.model
    data = impulse.Data(model)
    data.gravity = w.gravity
    zero = np.zeros(model.nv)
    # rnea at udot = 0 is the system's nonlinear_effects, bit for bit
    assert np.array_equal(impulse.rnea(model, data, q, u, zero), r.nonlinear_effects())
    assert np.array_equal(impulse.nonlinear_effects(model, data, q, u), r.nonlinear_effects())
    M = impulse.crba(model, data, q)
    assert np.array_equal(np.triu(M), np.triu(r.mass_matrix()))
    assert np.array_equal(impulse.frame_jacobian(model, data, q, "LF_FOOT"), r.frame_jacobian("LF_FOOT"))
    f = model.frame_id("LF_FOOT")
    assert np.array_equal(impulse.frame_placement(model, data, q, f), r.frame_pose("LF_FOOT"))
    assert np.array_equal(impulse.frame_placement(model, data, q, "LF_FOOT"), r.frame_pose("LF_FOOT"))
    poses = impulse.frame_placements(model, data, q)
    assert poses.shape == (len(model.frame_names), 4, 4)
    assert np.array_equal(poses[f], r.frame_pose("LF_FOOT"))
    assert np.array_equal(impulse.forward_kinematics(model, data, q)[0], r.body_pose(0))
    assert np.array_equal(impulse.center_of_mass(model, data, q), r.center_of_mass())
    assert impulse.kinetic_energy(model, data, q, u) == r.kinetic_energy()
    assert impulse.potential_energy(model, data, q) == r.potential_energy()
    # aba inverts rnea
    tau = np.linspace(-3, 3, model.nv)
    udot = impulse.aba(model, data, q, u, tau)
    np.testing.assert_allclose(impulse.rnea(model, data, q, u, udot), tau, atol=1e-9)
    np.testing.assert_allclose(M @ udot + r.nonlinear_effects(), tau, atol=1e-9)


def test_integrate_and_difference(anymal):
    _, r, q, u = anymal
    model = r.model
    q1 = model.integrate(q, u, 0.1)
    assert q1.shape == (model.nq,)
    np.testing.assert_allclose(q1[:3], q[:3] + 0.1 * u[:3])
    np.testing.assert_allclose(model.difference(q, q1), 0.1 * u, atol=1e-12)
    np.testing.assert_allclose(model.integrate(q, model.difference(q, q1)), q1, atol=1e-12)


def central_differences(model, q, u, f, h=1e-6):
    nv = model.nv
    dq, du = np.zeros((nv, nv)), np.zeros((nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = 1.0
        dq[:, j] = (f(model.integrate(q, e, h), u) - f(model.integrate(q, e, -h), u)) / (2 * h)
        du[:, j] = (f(q, u + h * e) - f(q, u - h * e)) / (2 * h)
    return dq, du


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_derivatives_match_finite_differences(anymal):
    _, r, q, u = anymal
    model = r.model
    data = impulse.Data(model)
    rng = np.random.default_rng(1)
    udot = rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nb, 6))
    dq, du, M = impulse.rnea_derivatives(model, data, q, u, udot, f_ext)
    np.testing.assert_allclose(M, impulse.crba(model, data, q), rtol=0, atol=1e-12)
    fq, fu = central_differences(model, q, u, lambda qq, uu: impulse.rnea(model, data, qq, uu, udot, f_ext))
    assert rel(dq, fq) < 1e-6 and rel(du, fu) < 1e-6
    tau = rng.normal(size=model.nv)
    adq, adu, adtau = impulse.aba_derivatives(model, data, q, u, tau)
    Mq = impulse.crba(model, data, q)
    np.testing.assert_allclose(adtau @ Mq, np.eye(model.nv), atol=1e-9)
    fq, fu = central_differences(model, q, u, lambda qq, uu: impulse.aba(model, data, qq, uu, tau))
    assert rel(adq, fq) < 1e-6 and rel(adu, fu) < 1e-6


def test_bad_arguments_raise_one_line_errors(anymal, anymal_urdf):
    _, r, q, u = anymal
    model = r.model
    data = impulse.Data(model)
    with pytest.raises(impulse.InvalidArgument, match=r"^q has size 3, the model needs nq = 19$"):
        impulse.rnea(model, data, q[:3], u, u)
    with pytest.raises(impulse.InvalidArgument, match=r"^udot has size 2, the model needs nv = 18$"):
        impulse.rnea_derivatives(model, data, q, u, u[:2])
    with pytest.raises(impulse.InvalidArgument, match=r"^tau has size 17"):
        impulse.aba_derivatives(model, data, q, u, u[1:])
    with pytest.raises(impulse.InvalidArgument, match=r"^f_ext has shape \(2, 6\)"):
        impulse.aba(model, data, q, u, u, np.zeros((2, 6)))
    with pytest.raises(impulse.InvalidArgument, match=r"^u has size 4"):
        model.integrate(q, u[:4])
    with pytest.raises(impulse.InvalidArgument, match=r"^q1 has size 1"):
        model.difference(q, q[:1])
    with pytest.raises(impulse.InvalidArgument, match="frame index 999 out of range"):
        impulse.frame_placement(model, data, q, 999)
    # a Data of another model is refused (a Data holds constants of its model)
    fixed = impulse.load_urdf(anymal_urdf, fixed_base=True)
    with pytest.raises(impulse.InvalidArgument, match="data was built for model"):
        impulse.crba(fixed, data, q[7:])
    # an equal model (another copy of the same description) is accepted
    same = impulse.load_urdf(anymal_urdf)
    assert np.array_equal(impulse.crba(same, data, q), impulse.crba(model, data, q))
