"""VecWorld's per-environment parameters and batched sensors, checked against physics: momentum
from a pushed body, weight carried by the feet, the Coulomb deceleration of a sliding box, and
the terrain under a height scan."""
import os

import numpy as np
import pytest

import impulse

MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models")


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


def _link_urdf(tmp_path):
    # 1 kg at 1 m on a hinge about y: gravity torque 9.81 N m, I = 1 + 1e-4 kg m^2
    p = tmp_path / "link.urdf"
    p.write_text("""<robot name="link"><link name="world"/>
  <link name="arm"><inertial><origin xyz="1 0 0"/><mass value="1"/>
    <inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="world"/><child link="arm"/><axis xyz="0 1 0"/></joint>
</robot>""")
    return str(p)


def test_joint_friction_and_damping_per_world(tmp_path):
    w = impulse.World()
    w.add_articulated_system(impulse.load_urdf(_link_urdf(tmp_path)))
    vec = impulse.VecWorld(w, 3, num_threads=2)
    # no friction: falls at 9.81 / I; 20 N m holds it; 5 N m slips at (9.81 - 5) / I
    vec.set_joint_friction(0, np.array([[0.0], [20.0], [5.0]]))
    vec.integrate(100)
    u = np.zeros((3, 1))
    vec.get_u(0, u)
    inertia = 1 + 1e-4
    np.testing.assert_allclose(u[:, 0] / 0.1, [9.81 / inertia, 0.0, (9.81 - 5) / inertia], rtol=2e-2, atol=1e-12)
    # damping (its effect: test_world_set_joint_damping_steps_as_a_model_built_with_it)
    vec.set_joint_damping(0, np.array([[0.0], [0.0], [2.0]]))
    np.testing.assert_array_equal(vec.world(2).system(0).model.damping, [2.0])
    np.testing.assert_array_equal(vec.world(1).system(0).model.friction, [20.0])
    with pytest.raises(impulse.InvalidArgument, match="finite and >= 0"):
        vec.set_joint_damping(0, np.array([[0.0], [-1.0], [0.0]]))
    with pytest.raises(impulse.InvalidArgument, match="shape"):
        vec.set_joint_friction(0, np.zeros((2, 1)))


def test_world_set_joint_damping_steps_as_a_model_built_with_it(tmp_path):
    text = open(_link_urdf(tmp_path)).read()
    damped = tmp_path / "damped.urdf"
    damped.write_text(text.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1 0"/><dynamics damping="2" friction="3"/>'))
    a, b = impulse.World(), impulse.World()
    sa = a.add_articulated_system(impulse.load_urdf(_link_urdf(tmp_path)))
    sb = b.add_articulated_system(impulse.load_urdf(str(damped)))
    a.set_joint_damping(0, np.array([2.0]))
    a.set_joint_friction(0, np.array([3.0]))
    for _ in range(200):
        a.integrate()
        b.integrate()
    assert np.array_equal(sa.q, sb.q) and np.array_equal(sa.u, sb.u)
    assert sa.u[0] > 0  # slipping: 9.81 N m > 3 N m
    with pytest.raises(impulse.InvalidArgument, match="1 velocity dofs, got 2"):
        a.set_joint_damping(0, np.zeros(2))


def test_a_model_handed_out_stays_valid_after_the_system_replaces_it():
    w = impulse.World()
    s = w.add_articulated_system(impulse.load_urdf(os.path.join(MODELS, "double_pendulum.urdf")))
    old = s.model
    mass, com, inertia = old.body_inertia("upper")
    w.set_body_inertia(0, "upper", 2 * mass, com, inertia)
    w.set_body_inertia(0, "lower", 3 * mass, com, inertia)
    w.set_joint_damping(0, np.array([0.5, 0.5]))
    # the system steps with a new Model; the one handed out before is still the URDF's
    assert old.body_names == ["upper", "lower"]
    assert old.body_inertia("lower")[0] == mass
    assert s.model.body_inertia("lower")[0] == 3 * mass
    np.testing.assert_array_equal(s.model.damping, [0.5, 0.5])
    np.testing.assert_array_equal(old.damping, [0.0, 0.0])


def test_lanes_give_the_bits_of_one_by_one(stand_file):
    """VecWorld.lanes: environments stepped together in SIMD lanes end in the same state, bit for
    bit, as stepped one by one (width 1); a width other than 1, 2, 4, 8 is refused."""
    n = 6
    runs = []
    for lanes in (1, None):
        vec = impulse.VecWorld(stand_file, n, 1)
        if lanes is not None:
            assert vec.lanes in (2, 4, 8)  # the default: the widest the CPU runs
        else:
            vec.lanes = 1
        q = np.zeros((n, 19))
        u = np.zeros((n, 18))
        vec.get_q(0, q)
        u[:, 0] = 0.05 * np.arange(n)  # the worlds differ
        vec.set_state(0, q, u)
        vec.integrate(100)
        vec.get_q(0, q)
        runs.append(q.copy())
    assert np.array_equal(runs[0], runs[1])
    assert runs[0][0, 0] != runs[0][n - 1, 0]
    with pytest.raises(ValueError, match="width must be 1, 2, 4 or 8, got 3"):
        impulse.VecWorld(stand_file, 2, 1).lanes = 3
