"""The World API from Python: round trips, numpy views, errors carrying the engine's message,
queries checked against each other (Jacobian vs frame velocity, M vs kinetic energy, contact
impulses vs weight), solver choice, the GIL released while stepping, and Python-stepped vs
C++-stepped trajectories."""
import os
import threading

import numpy as np
import pytest

import impulse


def test_load_world_file_and_step(stand_file):
    w = impulse.World.from_file(stand_file)
    assert not w.stage_timing  # off by default
    w.stage_timing = True
    assert w.time_step == pytest.approx(1e-3)
    r = w.system("anymal")
    assert (r.nq, r.nv) == (19, 18)
    assert r.model.nq == 19 and "LF_KFE" in r.model.joint_names and "LF_FOOT" in r.model.frame_names
    assert w.integrate(300) == impulse.StepStatus.Ok
    assert w.time == pytest.approx(0.3)
    s = w.stats()
    assert s.contacts == 4 and s.solver.converged and s.times.total > 0
    assert 0.5 < r.q[2] < 0.56  # standing
    # stage timers off: the times read 0 and the motion is the same to the bit
    w2 = impulse.World.from_file(stand_file)
    w2.stage_timing = True
    assert w2.stage_timing and w2.settings.stage_timing
    w2.stage_timing = False
    assert not w2.settings.stage_timing
    assert w2.integrate(300) == impulse.StepStatus.Ok
    assert w2.stats().times.total == 0
    assert np.array_equal(w2.system("anymal").q, r.q) and np.array_equal(w2.system("anymal").u, r.u)


def test_state_arrays_are_read_only_views(stand_file):
    w = impulse.World.from_file(stand_file)
    r = w.system(0)
    q = r.q
    assert not q.flags.writeable and not q.flags.owndata
    with pytest.raises(ValueError):
        q[0] = 1.0
    before = q.copy()
    w.integrate(10)
    assert not np.array_equal(q, before)  # the view follows the engine's state (no copy)
    q2 = before.copy()
    q2[0] += 0.25
    r.set_q(q2)
    np.testing.assert_array_equal(r.q, q2)
    u = np.arange(18, dtype=float) * 0.01
    r.set_u(u)
    np.testing.assert_array_equal(r.u, u)
    r.set_generalized_force(np.ones(18))
    np.testing.assert_array_equal(r.generalized_force, np.ones(18))
    kp = np.r_[np.zeros(6), np.full(12, 50.0)]
    r.set_pd_gains(kp, kp * 0.1)
    np.testing.assert_array_equal(r.kp, kp)
    r.set_pd_targets(q2, np.zeros(18))
    np.testing.assert_array_equal(r.q_target, q2)
    # a list works as well as an array
    r.set_u([0.0] * 18)
    assert not r.u.any()


def test_errors_carry_the_engine_message(stand_file, tmp_path):
    w = impulse.World.from_file(stand_file)
    r = w.system(0)
    q0 = r.q.copy()
    with pytest.raises(impulse.InvalidArgument, match="system 'anymal': q has size 5, expected 19"):
        r.set_q(np.zeros(5))
    bad = q0.copy()
    bad[8] = np.nan
    with pytest.raises(ValueError, match="anymal"):  # InvalidArgument is a ValueError too
        r.set_q(bad)
    bad = q0.copy()
    bad[3:7] = 0
    with pytest.raises(impulse.Error):
        r.set_q(bad)
    np.testing.assert_array_equal(r.q, q0)  # nothing half applied
    with pytest.raises(impulse.InvalidArgument, match="NOPE"):
        r.frame_pose("NOPE")
    with pytest.raises(impulse.InvalidArgument, match="bisection"):
        w.set_contact_solver("nope")
    with pytest.raises(impulse.InvalidArgument):
        w.system("nobody")
    with pytest.raises(impulse.InvalidArgument):
        w.time_step = -1.0
    with pytest.raises(impulse.InvalidArgument, match="steps must be >= 0"):
        w.integrate(-1)
    f = tmp_path / "bad.xml"
    f.write_text('<world dt="0.001">\n  <ground heigth="0"/>\n</world>\n')
    with pytest.raises(impulse.WorldFileError, match=r"bad.xml:2:.*heigth"):
        impulse.World.from_file(str(f))
    with pytest.raises(impulse.Error):
        impulse.load_urdf(str(tmp_path / "missing.urdf"))
    assert issubclass(impulse.ModelError, impulse.Error) and issubclass(impulse.Error, RuntimeError)
    w.integrate(5)  # the World stays usable


def test_frames_jacobians_mass_matrix(anymal_urdf):
    w = impulse.World.from_urdf(anymal_urdf)
    r = w.system(0)
    rng = np.random.default_rng(0)
    q = r.model.neutral_configuration()
    q[2] = 1.0
    q[7:] = rng.uniform(-0.5, 0.5, 12)
    quat = rng.normal(size=4)
    q[3:7] = quat / np.linalg.norm(quat)
    u = rng.normal(size=18)
    r.set_state(q, u)
    J = r.frame_jacobian("LF_FOOT")
    assert J.shape == (6, 18)
    np.testing.assert_allclose(J[:3] @ u, r.frame_linear_velocity("LF_FOOT"), atol=1e-12)
    np.testing.assert_allclose(J[3:] @ u, r.frame_angular_velocity("LF_FOOT"), atol=1e-12)
    M = r.mass_matrix()
    np.testing.assert_allclose(M, M.T, atol=1e-12)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    assert 0.5 * u @ M @ u == pytest.approx(r.kinetic_energy(), rel=1e-12)
    T = r.frame_pose("LF_FOOT")
    np.testing.assert_allclose(T[:3, 3], r.frame_position("LF_FOOT"))
    np.testing.assert_allclose(T[:3, :3] @ T[:3, :3].T, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(r.body_pose(0)[:3, 3], q[:3])
    assert M[0, 0] == pytest.approx(r.model.total_mass(), rel=1e-12)
    Jp = r.point_jacobian(0, [0.1, 0.0, 0.0])
    assert Jp.shape == (3, 18)


def test_contact_impulses_carry_the_weight(stand_file):
    w = impulse.World.from_file(stand_file)
    r = w.system(0)
    w.integrate(1500)
    reports = w.contact_reports()
    assert len(reports) == 4
    total = sum(c.impulse for c in reports)
    weight_impulse = r.model.total_mass() * 9.81 * w.time_step
    assert total[2] == pytest.approx(weight_impulse, rel=2e-2)
    per_body = r.contact_impulses()
    assert len(per_body) == 4
    np.testing.assert_allclose(sum(b.impulse for b in per_body), total, atol=1e-12)
    assert all(b.touching for b in per_body)  # standing: every foot carries weight
    # a ball 3 mm above the ground, at rest: within the contact margin, listed, but not touching
    w2 = impulse.World()
    w2.add_ground()
    ball = w2.add_sphere("ball", 0.1, 1.0)
    q = ball.q.copy()
    q[2] = 0.103
    ball.set_q(q)
    w2.integrate()
    near = ball.contact_impulses()
    assert len(near) == 1 and not near[0].touching and np.all(near[0].impulse == 0)
    for c in w.contacts():
        np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-12)
        assert c.mu == pytest.approx(0.8)


def test_solver_choice_and_settings(stand_file):
    assert impulse.contact_solver_names() == ["bisection", "pgs", "lm", "noslip"]
    for name in impulse.contact_solver_names():
        w = impulse.World.from_file(stand_file)
        w.set_contact_solver(name)
        assert w.contact_solver == name
        w.integrate(50)
        assert w.system(0).q[2] > 0.5
    w = impulse.World.from_file(stand_file)
    s = impulse.PgsSettings()
    s.max_iterations = 3
    w.set_contact_solver(s)
    assert w.contact_solver == "pgs"
    w.integrate(1)
    assert w.stats().solver.iterations <= 3
    c = impulse.ContactSettings()
    c.erp = 0.1
    w.set_contact_settings(c)
    assert w.contact_settings.erp == pytest.approx(0.1)


def test_build_world_in_python():
    w = impulse.World()
    w.add_ground()
    ball = w.add_sphere("ball", 0.1, 1.0)
    ball.set_q([0, 0, 1.0, 1, 0, 0, 0])
    w.integrate(100)
    # free fall for 0.1 s: z = 1 - g t^2 / 2, exact (the default position update, Bodies, moves a
    # free body at the midpoint)
    n, dt = 100, 1e-3
    assert impulse.ContactSettings().position_update == impulse.PositionUpdate.Bodies
    assert ball.q[2] == pytest.approx(1.0 - 9.81 * (n * dt) ** 2 / 2, rel=1e-12)
    # semi-implicit Euler on request: - g dt^2 n(n+1)/2
    w2 = impulse.World()
    c = impulse.ContactSettings()
    c.position_update = impulse.PositionUpdate.Euler
    w2.set_contact_settings(c)
    b2 = w2.add_sphere("ball", 0.1, 1.0)
    b2.set_q([0, 0, 1.0, 1, 0, 0, 0])
    w2.integrate(100)
    assert b2.q[2] == pytest.approx(1.0 - 9.81 * dt * dt * n * (n + 1) / 2, rel=1e-12)
    assert w.num_systems == 1 and w.systems[0].name == "ball"


def test_gil_released_while_stepping(stand_file):
    w = impulse.World.from_file(stand_file)
    ticks = []
    t = threading.Thread(target=w.integrate, args=(3000,))
    t.start()
    while t.is_alive():
        ticks.append(1)  # runs only if integrate released the GIL
    t.join()
    assert len(ticks) > 1
    assert w.time == pytest.approx(3.0)


def test_python_stepped_equals_cpp_stepped(stand_file):
    a = impulse.World.from_file(stand_file)
    q = a.system(0).q.copy()
    u = np.zeros(18)
    u[0], u[5] = 0.3, 0.2
    a.system(0).set_state(q, u)
    traj = []
    for _ in range(300):
        a.integrate()
        traj.append(a.system(0).q.copy())
    vec = impulse.VecWorld(stand_file, 2, num_threads=2)
    vec.set_state(0, np.stack([q, q]), np.stack([u, u]))
    vec.integrate(300)
    out = np.zeros((2, 19))
    vec.get_q(0, out)
    np.testing.assert_array_equal(out[0], traj[-1])
    np.testing.assert_array_equal(out[1], traj[-1])


def test_vec_world_thread_count_independent(stand_file):
    outs = []
    for threads in (1, 2):
        vec = impulse.VecWorld(stand_file, 5, num_threads=threads)
        assert len(vec) == 5 and vec.num_threads == threads
        q = np.zeros((5, 19))
        vec.get_q(0, q)
        u = np.zeros((5, 18))
        u[:, 1] = np.linspace(-0.5, 0.5, 5)
        vec.set_state(0, q, u)
        vec.integrate(200)
        vec.get_q(0, q)
        outs.append(q)
        assert vec.status == [0] * 5
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0][0, 1] != outs[0][4, 1]
    with pytest.raises(impulse.InvalidArgument, match=r"shape \(5, 19\), got \(4, 19\)"):
        vec.get_q(0, np.zeros((4, 19)))
    with pytest.raises(TypeError):  # not float64: no silent copy for an output array
        vec.get_q(0, np.zeros((5, 19), dtype=np.float32))


GRIPPER = """<robot name="gripper"><link name="world"/>
  <link name="hand"><inertial><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="weld" type="fixed"><parent link="world"/><child link="hand"/></joint>
  <link name="left"><inertial><mass value="0.5"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="right"><inertial><mass value="0.3"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="finger1" type="prismatic"><parent link="hand"/><child link="left"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/></joint>
  <joint name="finger2" type="prismatic"><parent link="hand"/><child link="right"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="10"/><mimic joint="finger1" multiplier="-1" offset="0.01"/></joint>
</robot>"""


def test_mimic_joints_are_coupled(tmp_path):
    f = tmp_path / "gripper.urdf"
    f.write_text(GRIPPER)
    assert impulse.load_urdf(str(f)).mimic == [("finger2", "finger1", -1.0, 0.01)]
    w = impulse.World()
    g = w.add_articulated_system(str(f))
    g.set_state([0.0, 0.01], [0.0, 0.0])
    for _ in range(100):
        g.set_generalized_force([2.0, 0.0])
        w.integrate()
    assert w.stats().mimic_rows == 1
    assert g.q[1] == pytest.approx(-g.q[0] + 0.01, abs=1e-9)
    assert g.u[0] == pytest.approx(2.0 / (0.5 + 0.3) * 0.1, rel=1e-9)  # F / (m1 + m^2 m2) t


def test_recorder_writes_a_recording_the_viewer_reads(stand_file, tmp_path):
    import sys

    # the recording reader of the viewer and plot tools (python/impulse_viz; appended, so that the
    # `impulse` package under test stays the one already imported)
    sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from impulse_viz.recording import Recording

    w = impulse.World.from_file(stand_file)
    path = str(tmp_path / "stand.imprec")
    with impulse.Recorder(path, w, every=2) as rec:
        for _ in range(10):
            w.integrate()
            rec.record(w)
        assert rec.frames == 5 and rec.path == path
    assert rec.bytes == os.path.getsize(path)
    r = Recording(path)
    assert len(r) == 5
    s = r.system(0)
    np.testing.assert_allclose(s.q[-1], w.system(0).q)  # the last frame is the World's state
    with pytest.raises(impulse.InvalidArgument, match="every must be >= 1"):
        impulse.Recorder(str(tmp_path / "x.imprec"), w, every=0)
    with pytest.raises(impulse.Error, match="cannot open for writing"):
        impulse.Recorder(str(tmp_path / "no" / "dir.imprec"), w)


def test_models_compare_by_value(tmp_path):
    f = tmp_path / "gripper.urdf"
    f.write_text(GRIPPER)
    a, b = impulse.load_urdf(str(f)), impulse.load_urdf(str(f))
    assert a == b and not (a != b)
    g = tmp_path / "gripper2.urdf"
    g.write_text(GRIPPER.replace('multiplier="-1"', 'multiplier="-2"'))
    assert impulse.load_urdf(str(g)) != a


def test_load_urdf_collides_meshes_as_convex_hulls_unless_asked_for_triangles(tmp_path):
    cube = tmp_path / "cube.obj"
    cube.write_text("".join(f"v {x} {y} {z}\n" for z in (-0.05, 0.05) for y in (-0.05, 0.05) for x in (-0.05, 0.05))
                    + "f 1 3 2\nf 2 3 4\nf 5 6 7\nf 6 8 7\nf 1 2 5\nf 2 6 5\n"
                    + "f 3 7 4\nf 4 7 8\nf 1 5 3\nf 3 5 7\nf 2 4 6\nf 4 8 6\n")
    f = tmp_path / "cube.urdf"
    f.write_text('<robot name="c"><link name="b"><inertial><mass value="1"/><inertia ixx="1e-3" iyy="1e-3" '
                 'izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><mesh filename="'
                 + str(cube) + '"/></geometry></collision></link></robot>')
    hull = impulse.load_urdf(str(f))
    assert hull == impulse.load_urdf(str(f), mesh_collision="convex_hull")
    assert hull != impulse.load_urdf(str(f), mesh_collision="triangles")
    with pytest.raises(impulse.InvalidArgument, match="mesh_collision 'hull' is not one of convex_hull, triangles"):
        impulse.load_urdf(str(f), mesh_collision="hull")
