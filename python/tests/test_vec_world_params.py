"""VecWorld's per-environment parameters and batched sensors, checked against physics: momentum
from a pushed body, weight carried by the feet, the Coulomb deceleration of a sliding box, and
the terrain under a height scan."""
import numpy as np
import pytest

import impulse


def free_box_world(gravity=(0.0, 0.0, 0.0)):
    w = impulse.World()
    w.gravity = np.array(gravity)
    w.add_box("box", [0.4, 0.2, 0.1], 2.0)
    return w


def test_external_wrenches_change_momentum_by_their_impulse():
    w = free_box_world()
    vec = impulse.VecWorld(w, 3, num_threads=2)
    body = vec.body_ids(0, [0])
    wrench = np.array([[5.0, 0, 0, 0, 0, 0], [0, -3.0, 1.0, 0, 0, 0.2], [0, 0, 0, 0.1, 0, 0]])
    vec.set_external_wrenches(0, body, wrench)
    vec.integrate(1)
    u = np.zeros((3, 6))
    vec.get_u(0, u)
    dt = w.time_step
    inertia_diag = 2.0 / 12 * np.array([0.2**2 + 0.1**2, 0.4**2 + 0.1**2, 0.4**2 + 0.2**2])
    for i in range(3):
        # body frame = world frame at rest: dv = F dt / m, dw = I^-1 tau dt
        np.testing.assert_allclose(u[i, :3], wrench[i, :3] * dt / 2.0, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(u[i, 3:], wrench[i, 3:] * dt / inertia_diag, rtol=1e-6, atol=1e-15)
    # for the next step only
    vec.integrate(1)
    u2 = np.zeros((3, 6))
    vec.get_u(0, u2)
    np.testing.assert_allclose(u2[:, :3], u[:, :3], rtol=1e-12, atol=1e-15)
    with pytest.raises(impulse.InvalidArgument, match="shape"):
        vec.set_external_wrenches(0, body, np.zeros((3, 5)))
    with pytest.raises(impulse.InvalidArgument, match="finite"):
        vec.set_external_wrenches(0, body, np.full((3, 6), np.nan))


def test_body_mass_per_world_is_carried_by_the_feet(stand_file):
    vec = impulse.VecWorld(stand_file, 2, num_threads=2)
    base = vec.body_ids(0, ["base"])[0]
    model = vec.world(0).system(0).model
    m0 = model.total_mass()
    base_mass, base_com, _ = model.body_inertia("base")
    # world 0 keeps its mass; world 1 gets 5 kg more on the base
    mass = np.array([0.0, 5.0])
    com = np.tile(base_com, (2, 1))
    vec.set_body_mass(0, base, base_mass + mass, com)
    assert vec.world(1).system(0).model.total_mass() == pytest.approx(m0 + 5.0)
    assert vec.world(0).system(0).model.total_mass() == pytest.approx(m0)
    vec.integrate(600)
    feet = vec.body_ids(0, ["LF_SHANK", "RF_SHANK", "LH_SHANK", "RH_SHANK"])
    f = np.zeros((2, 12))
    vec.get_contact_forces(0, feet, f)
    fz = f[:, 2::3].sum(axis=1)
    g = 9.81
    np.testing.assert_allclose(fz, [m0 * g, (m0 + 5.0) * g], rtol=0.02)
    with pytest.raises(impulse.InvalidArgument, match="row 1.*negative mass"):
        vec.set_body_mass(0, base, np.array([1.0, -1.0]), com)


def test_material_friction_per_world_sets_the_coulomb_deceleration():
    w = impulse.World()
    w.add_ground(material="floor")
    box = w.add_box("box", [0.2, 0.2, 0.2], 1.0, material="rubber")
    box.set_state(np.array([0, 0, 0.1, 1, 0, 0, 0.0]), np.array([2.0, 0, 0, 0, 0, 0]))
    vec = impulse.VecWorld(w, 2, num_threads=2)
    vec.set_material_friction("floor", "rubber", np.array([0.2, 0.5]))
    steps = 200
    vec.integrate(steps)
    u = np.zeros((2, 6))
    vec.get_u(0, u)
    t = steps * w.time_step
    # sliding: v = v0 - mu g t (still sliding at 0.2 s for both)
    np.testing.assert_allclose(u[:, 0], 2.0 - np.array([0.2, 0.5]) * 9.81 * t, atol=0.02)
    with pytest.raises(impulse.InvalidArgument, match="no material 'ice'"):
        vec.set_material_friction("ice", "rubber", np.array([0.2, 0.5]))


def test_height_scan_finds_the_terrain_under_the_pattern():
    w = impulse.World()
    w.add_ground()
    w.add_static_box("step", [1.0, 0.0, 0.1], [0.5, 2.0, 0.2])  # top at z = 0.2, x in [0.75, 1.25]
    w.add_box("probe", [0.1, 0.1, 0.1], 1.0).set_state(np.array([0, 0, 0.5, 1, 0, 0, 0.0]), np.zeros(6))
    vec = impulse.VecWorld(w, 2, num_threads=2)
    frame = vec.frame_ids(0, [0])[0]
    pattern = np.array([[0.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [0.0, 1.0]])
    out = np.zeros((2, 4))
    vec.get_height_scan(0, frame, pattern, out)
    np.testing.assert_allclose(out, [[0.0, 0.2, 0.0, 0.0]] * 2, atol=1e-9)
    # nothing within reach: NaN
    vec.get_height_scan(0, frame, pattern, out, ray_start=-1.0, max_distance=0.1)
    assert np.isnan(out).all()
    with pytest.raises(impulse.InvalidArgument, match="shape"):
        vec.get_height_scan(0, frame, pattern, np.zeros((2, 3)))


def test_applied_torques_match_each_world(stand_file):
    vec = impulse.VecWorld(stand_file, 2, num_threads=2)
    vec.integrate(20)
    nv = vec.world(0).system(0).nv
    tau = np.zeros((2, nv))
    vec.get_applied_torques(0, tau)
    for i in range(2):
        np.testing.assert_array_equal(tau[i], vec.world(i).system(0).applied_torque)
    assert np.abs(tau).max() > 1.0  # the legs hold the robot up
