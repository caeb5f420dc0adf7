"""State, step reports, warnings, statistics, solver settings and fidelity settings from Python:
save -> step -> restore -> step replays bit for bit (also through bytes, files, pickle, clone and
reset), bad input raises with the engine's message and changes nothing, and the new settings act
on the physics (push-out velocity bound, effort limit, solver iteration cap)."""
import copy
import pickle

import numpy as np
import pytest

import impulse


def trajectory(w, steps):
    """q and u of every system after each of `steps` steps (copies)."""
    out = []
    for _ in range(steps):
        w.integrate()
        out.append(np.concatenate([np.r_[s.q, s.u] for s in w.systems]))
    return np.array(out)


def walking_world(stand_file):
    """ANYmal on the ground with moving PD targets and a push: contacts come and go, so the
    solver's warm start and the pending wrench matter for the next steps."""
    w = impulse.World.from_file(stand_file)
    r = w.system("anymal")
    qt = r.q_target.copy()
    qt[8] += 0.5  # LF_KFE
    r.set_pd_targets(qt, np.zeros(18))
    w.integrate(40)
    r.set_external_force(0, [30.0, 0.0, 0.0], r.q[:3])  # pending for the next step: part of the state
    return w


def test_save_step_restore_step_is_bit_identical(stand_file):
    w = walking_world(stand_file)
    s = w.save_state()
    assert s.time == w.time and s.system_names == ["anymal"]
    np.testing.assert_array_equal(s.q(0), w.system(0).q)
    first = trajectory(w, 60)
    w.restore_state(s)
    assert w.time == s.time
    second = trajectory(w, 60)
    assert np.array_equal(first, second)  # bit for bit, every step
    # the state is a copy: stepping does not change it, and it restores again
    w.restore_state(s)
    assert np.array_equal(trajectory(w, 60), first)


def test_bytes_file_pickle_and_copy_round_trips(stand_file, tmp_path):
    w = walking_world(stand_file)
    s = w.save_state()
    ref = trajectory(w, 40)
    data = s.to_bytes()
    assert isinstance(data, bytes) and data[:4] == b"IMPS"
    assert impulse.WorldState.from_bytes(data).to_bytes() == data
    path = tmp_path / "state.imps"
    s.save(str(path))
    assert path.read_bytes() == data
    for t in (impulse.WorldState.from_bytes(data), impulse.WorldState.load(str(path)),
              pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        w.restore_state(t)
        assert np.array_equal(trajectory(w, 40), ref)
    # into a fresh World built from the same description
    fresh = impulse.World.from_file(stand_file)
    fresh.restore_state(impulse.WorldState.from_bytes(data))
    assert np.array_equal(trajectory(fresh, 40), ref)


def test_clone_and_reset_replay(stand_file):
    w = walking_world(stand_file)
    c = w.clone()
    assert c is not w and c.time == w.time and c.contact_solver == w.contact_solver
    assert np.array_equal(trajectory(c, 50), trajectory(w, 50))
    # reset returns to the state before the first step (captured automatically)
    fresh = impulse.World.from_file(stand_file)
    assert not fresh.has_initial_state
    start = trajectory(fresh, 30)
    assert fresh.has_initial_state
    fresh.integrate(20)
    fresh.reset()
    assert fresh.time == 0.0
    assert np.array_equal(trajectory(fresh, 30), start)
    # mark_initial_state moves the reset point
    fresh.mark_initial_state()
    t0 = fresh.time
    after = trajectory(fresh, 10)
    fresh.reset()
    assert fresh.time == t0 and np.array_equal(trajectory(fresh, 10), after)
    assert copy.deepcopy(fresh).time == fresh.time


def test_bad_state_input_raises_with_the_message_and_changes_nothing(stand_file, tmp_path):
    w = walking_world(stand_file)
    data = w.save_state().to_bytes()
    with pytest.raises(impulse.StateFormatError, match="checksum"):
        impulse.WorldState.from_bytes(data[:-3])
    with pytest.raises(impulse.StateFormatError, match="magic"):
        impulse.WorldState.from_bytes(b"XXXX" + data[4:])
    with pytest.raises(impulse.StateFormatError):
        impulse.WorldState.from_bytes(b"")
    with pytest.raises(impulse.StateFormatError, match="state file '.*missing.imps'"):
        impulse.WorldState.load(str(tmp_path / "missing.imps"))
    with pytest.raises(impulse.Error, match="cannot write"):
        w.save_state().save(str(tmp_path / "no" / "such" / "dir"))
    # a state of another world: InvalidArgument (a ValueError) naming the mismatch
    other = impulse.World()
    other.add_ground()
    other.add_sphere("ball", 0.1, 1.0)
    other.add_sphere("ball2", 0.1, 1.0)
    before = np.r_[w.system(0).q, w.system(0).u]
    t = w.time
    with pytest.raises(impulse.InvalidArgument, match="restore_state: the state is of a world with 2 systems and 3 collision objects, this world has 1 and 2"):
        w.restore_state(other.save_state())
    with pytest.raises(ValueError, match="system 0 'anymal': the state names it 'ball'"):
        two = impulse.World()
        two.add_ground()
        two.add_sphere("ball", 0.1, 1.0)
        w2 = impulse.World()
        w2.add_ground()
        w2.add_sphere("anymal", 0.1, 1.0)
        w2.restore_state(two.save_state())
    assert w.time == t and np.array_equal(np.r_[w.system(0).q, w.system(0).u], before)
    assert w.integrate(5).ok  # still usable
    with pytest.raises(impulse.InvalidArgument, match="system index 3 out of range"):
        w.save_state().q(3)


def test_step_report_warnings_and_contacts_dropped(stand_file):
    w = impulse.World.from_file(stand_file)
    rep = w.integrate(5)
    assert isinstance(rep, impulse.StepReport)
    assert rep.ok and rep.stepped and rep == impulse.StepStatus.Ok and rep.contacts == 4
    assert w.describe() == "ok" and w.last_report.contacts == 4
    w.set_max_contacts(2)  # four feet on the ground: two dropped every step
    rep = w.integrate(10)
    assert not rep.ok and rep.contact_overflow and rep.status == impulse.StepStatus.ContactOverflow
    assert rep == impulse.StepStatus.ContactOverflow and rep.contacts == 2
    assert "contact overflow" in w.describe(rep)
    assert w.stats().contacts_dropped >= 2
    assert w.time == pytest.approx(0.015)  # all 10 steps were taken
    warn = w.warnings()
    assert warn[impulse.WarningKind.ContactOverflow].count == 10  # one per step
    w.integrate()
    assert w.warning(impulse.WarningKind.ContactOverflow).count == 11
    assert w.warning(impulse.WarningKind.ContactOverflow).last_info >= 2
    assert w.warning(impulse.WarningKind.ContactOverflow).last_time == pytest.approx(w.time - w.time_step)
    assert w.warning(impulse.WarningKind.NonFinite).count == 0
    w.clear_warnings()
    assert all(c.count == 0 for c in w.warnings().values())


def test_island_statistics():
    w = impulse.World()
    w.add_ground()
    for k, x in enumerate((0.0, 1.0, 2.0)):
        b = w.add_sphere(f"s{k}", 0.1, 1.0)
        b.set_q([x, 0.0, 0.099, 1.0, 0.0, 0.0, 0.0])
    top = w.add_sphere("top", 0.1, 1.0)
    top.set_q([2.0, 0.0, 0.298, 1.0, 0.0, 0.0, 0.0])  # resting on s2: one island of two systems
    w.integrate()
    st = w.stats()
    assert st.contacts == 4
    assert st.islands == 3 and st.largest_island == 2
    assert st.largest_island_rows == 6 and st.islands_not_converged == 0
    # one record per island: sizes, the solver's result and what finished it
    records = st.island_results
    assert len(records) == 3
    assert sorted(r.systems for r in records) == [1, 1, 2]
    assert sorted(r.contacts for r in records) == [1, 1, 2]
    assert max(r.rows for r in records) == st.largest_island_rows
    for r in records:
        assert r.solver.converged and not r.at_cap
        # the spheres alone on the ground: the sweeps; the two stacked spheres' sweeps crawl from
        # the cold start, and the active-set stage finishes them at sweep 5 (active_set_early)
        expected = impulse.SolverMethod.ActiveSet if r.systems == 2 else impulse.SolverMethod.Iteration
        assert r.solver.method == expected
    assert max(r.solver.iterations for r in records) == st.solver.iterations


def test_applied_torque_is_the_pd_torque_within_the_effort_limit(stand_file):
    w = impulse.World.from_file(stand_file)
    r = w.system(0)
    assert r.applied_torque.shape == (18,) and not r.applied_torque.flags.writeable
    w.integrate(50)
    q, u = r.q, r.u
    tau = r.applied_torque
    joints = slice(6, 18)  # u layout: 6 base dofs, then 12 joints; q has 7 base coordinates
    expected = r.kp[joints] * (r.q_target[7:] - q[7:]) + r.kd[joints] * (r.u_target[joints] - u[joints])
    np.testing.assert_allclose(tau[joints], expected, rtol=1e-9, atol=1e-9)
    assert not tau[:6].any()
    # a target far away saturates at the URDF effort limit
    limit = r.model.effort_limit
    assert np.isfinite(limit[joints]).all()
    qt = r.q_target.copy()
    qt[7:] += 3.0
    r.set_pd_targets(qt, np.zeros(18))
    w.integrate()
    assert np.all(np.abs(r.applied_torque[joints]) <= limit[joints] * (1 + 1e-12))
    assert np.any(np.isclose(np.abs(r.applied_torque[joints]), limit[joints]))


def test_solver_settings_through_the_registry(stand_file):
    names = [n for n, _ in impulse.solver_registry()]
    assert names == impulse.contact_solver_names() == ["bisection", "pgs", "lm", "noslip"]
    w = impulse.World.from_file(stand_file)
    s = impulse.SolverSettings("pgs")
    s.pgs.max_iterations = 3
    s.pgs.alpha = 0.5
    s.pgs.stall_window = 0
    w.set_contact_solver(s)
    assert w.contact_solver == "pgs"
    back = w.solver_settings
    assert back.name == "pgs" and back.pgs.max_iterations == 3 and back.pgs.alpha == 0.5
    assert back.pgs.stall_window == 0
    rep = w.integrate()
    assert rep.solver_iterations <= 3 and not w.stats().solver.stalled
    assert w.clone().solver_settings.pgs.max_iterations == 3  # clone keeps the settings
    lm = impulse.LmSettings()
    lm.max_iterations = 7
    w.set_contact_solver(lm)
    assert w.solver_settings.name == "lm" and w.solver_settings.lm.max_iterations == 7
    # bad settings: the message names the setting; the solver is unchanged
    bad = impulse.PgsSettings()
    with pytest.raises(impulse.InvalidArgument, match=r"solver 'pgs': alpha must be in \(0, 2\], got 3"):
        bad.alpha = 3.0
    assert bad.alpha == 0.6  # unchanged
    bad = impulse.BisectionSettings()
    bad.alpha_min = 1.5  # in its range, but above alpha: checked when applied
    with pytest.raises(impulse.InvalidArgument, match=r"solver 'bisection': need 0 < alpha_min <= alpha"):
        w.set_contact_solver(bad)
    with pytest.raises(impulse.InvalidArgument, match="unknown.*bisection, pgs, lm, noslip"):
        w.set_contact_solver(impulse.SolverSettings("newton"))
    with pytest.raises(ValueError):
        impulse.SolverSettings("newton").validate()
    assert w.contact_solver == "lm"
    # Anderson acceleration of the sweeping solvers: on for bisection (memory 5), off for PGS by
    # default; set and read back, validated
    b = impulse.BisectionSettings()
    assert b.anderson_memory == 5 and b.anderson_start == 10
    assert impulse.PgsSettings().anderson_memory == 0
    b.anderson_memory = 0
    w.set_contact_solver(b)
    assert w.solver_settings.bisection.anderson_memory == 0
    assert w.clone().solver_settings.bisection.anderson_memory == 0
    with pytest.raises(impulse.InvalidArgument, match=r"anderson_memory must be in \[0, 8\], got 9"):
        b.anderson_memory = 9
    assert w.solver_settings.bisection.anderson_memory == 0  # unchanged


@pytest.mark.parametrize("bound", [0.25, 1.0])
def test_max_push_velocity_bounds_the_push_out(bound):
    # the default split correction moves q at the bounded push-out speed and adds no velocity; the
    # velocity-level one leaves that speed in u
    for correction in (None, impulse.PositionCorrection.Velocity):
        w = impulse.World()
        w.add_ground()
        ball = w.add_sphere("ball", 0.1, 1.0)
        ball.set_q([0.0, 0.0, 0.05, 1.0, 0.0, 0.0, 0.0])  # 5 cm deep: erp depth / dt = 10 m/s
        c = w.contact_settings
        assert c.max_push_velocity == 1.0  # the default
        c.erp = 0.2
        c.max_push_velocity = bound
        if correction is not None:
            c.position_correction = correction
        w.set_contact_settings(c)
        assert w.contact_settings.max_push_velocity == bound and w.settings.contact.max_push_velocity == bound
        w.integrate()
        dt = w.settings.dt
        assert bound * 0.95 * dt < ball.q[2] - 0.05 <= bound * dt + 1e-12
        if correction is None:
            assert w.contact_settings.position_correction == impulse.PositionCorrection.Split
            assert abs(ball.u[2]) < 1e-12
        else:
            assert bound * 0.95 < ball.u[2] <= bound + 1e-9
    with pytest.raises(impulse.InvalidArgument, match="max_push_velocity must be finite and > 0 m/s, got -1"):
        c.max_push_velocity = -1.0
    assert w.contact_settings.max_push_velocity == bound  # unchanged


LINK_URDF = """<robot name="link">
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-10" upper="10" effort="0" velocity="0"/>
    <dynamics friction="{friction}"/>
  </joint>
</robot>
"""


@pytest.mark.parametrize("friction, holds", [(20.0, True), (5.0, False)])
def test_joint_friction_holds_or_slips_and_is_reported(tmp_path, friction, holds):
    # 1 kg at 1 m on a horizontal hinge: gravity needs 9.81 N m; 20 N m of friction holds it
    # (stick), 5 N m slips at the bound and the reported torque is the bound
    path = tmp_path / "link.urdf"
    path.write_text(LINK_URDF.format(friction=friction))
    w = impulse.World()
    arm = w.add_articulated_system(str(path), fixed_base=True)
    w.integrate(100)
    assert w.stats().friction_rows == 1
    tau = arm.joint_friction_torque
    assert tau.shape == (1,) and not tau.flags.writeable
    if holds:
        assert abs(arm.q[0]) < 1e-9
        assert abs(abs(tau[0]) - 9.81 * 1.0) < 1e-6 * 9.81
    else:
        assert abs(arm.q[0]) > 1e-3
        assert abs(abs(tau[0]) - friction) < 1e-9 * friction
    # switched off, the same link swings freely
    s = w.contact_settings
    s.joint_friction = False
    w2 = impulse.World()
    w2.set_contact_settings(s)
    arm2 = w2.add_articulated_system(str(path), fixed_base=True)
    w2.integrate(100)
    assert w2.stats().friction_rows == 0 and abs(arm2.q[0]) > 1e-2
