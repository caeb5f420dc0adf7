"""Terrain and sensors from Python: a heightfield built from a numpy array carries a resting box at
its height; generators; the IMU of a standing robot reads gravity; joint, contact and
force-torque sensors agree with the system's own state and weight; a height scan reads the
terrain's heights; readings are read-only views that follow update(); SDF worlds load."""
import os

import numpy as np
import pytest

import impulse


def test_heightfield_from_numpy_carries_a_box_at_its_height():
    h = np.full((41, 41), 0.25)
    hf = impulse.Heightfield(h, 0.05, 0.05)
    assert (hf.nx, hf.ny) == (41, 41)
    assert hf.x0 == pytest.approx(-1.0) and hf.y0 == pytest.approx(-1.0)
    np.testing.assert_array_equal(hf.heights, h)
    assert not hf.heights.flags.writeable
    assert hf.height(0.3, -0.2) == pytest.approx(0.25)
    assert hf.height(5.0, 0.0) is None  # outside the grid
    w = impulse.World()
    w.add_heightfield("terrain", hf)
    box = w.add_box("box", [0.2, 0.2, 0.2], 1.0)
    q = np.array(box.q)
    q[2] = 0.45
    box.set_q(q)
    w.integrate(1500)
    assert box.q[2] == pytest.approx(0.35, abs=1e-3)  # 0.25 + half the box
    assert np.linalg.norm(box.u) < 1e-6


def test_heightfield_generators_and_bad_input():
    rough = impulse.Heightfield.random_rough(2.0, 2.0, 0.05, 0.05, 7)
    assert rough.min_height == pytest.approx(0.0) and rough.max_height == pytest.approx(0.05)
    again = impulse.Heightfield.random_rough(2.0, 2.0, 0.05, 0.05, 7)
    np.testing.assert_array_equal(rough.heights, again.heights)  # seeded
    stairs = impulse.Heightfield.stairs(4.0, 2.0, 0.02, 0.3, 0.1)
    assert stairs.max_height > 0.5
    with pytest.raises(impulse.InvalidArgument, match="heightfield"):
        impulse.Heightfield(np.array([[0.0, np.nan], [0.0, 0.0]]), 0.1, 0.1)
    with pytest.raises(impulse.InvalidArgument, match="heightfield"):
        impulse.Heightfield(np.zeros((1, 5)), 0.1, 0.1)


def test_imu_joint_contact_and_force_torque_sensors_on_a_standing_robot(stand_file):
    w = impulse.World.from_file(stand_file)
    robot = w.system("anymal")
    w.integrate(1000)  # settled
    imu = impulse.Imu(w, robot, "base")
    joints = impulse.JointSensor(robot)
    foot = impulse.ContactSensor(w, robot, "LF_SHANK")
    hip = impulse.ForceTorqueSensor(w, robot, "LF_HAA")
    acc = imu.linear_acceleration
    assert not acc.flags.writeable and not acc.flags.owndata
    for _ in range(200):
        w.integrate()
        for s in (imu, joints, foot, hip):
            s.update()
    g = np.linalg.norm(acc)  # the view follows the sensor
    assert g == pytest.approx(9.81, abs=1e-3)
    assert np.linalg.norm(imu.angular_velocity) < 1e-3
    assert joints.names[0] == "LF_HAA" and len(joints.names) == 12
    np.testing.assert_array_equal(joints.position, robot.q[7:])
    np.testing.assert_array_equal(joints.velocity, robot.u[6:])
    assert foot.in_contact and foot.count >= 1
    total = robot.model.total_mass() * 9.81
    assert 0.1 * total < foot.force[2] < 0.5 * total  # one of four feet
    assert foot.normal[2] == pytest.approx(1.0, abs=1e-6)
    assert np.linalg.norm(hip.force) > 0.1 * foot.force[2]
    assert hip.force.shape == (3,) and hip.torque.shape == (3,)


def test_height_scan_reads_the_terrain():
    w = impulse.World()
    hf = impulse.Heightfield.slope(4.0, 4.0, 0.05, 0.2, 0.0)
    w.add_heightfield("slope", hf)
    probe = w.add_sphere("probe", 0.1, 1.0)
    q = np.array(probe.q)
    q[2] = 1.0
    probe.set_q(q)
    pattern = impulse.HeightScan.grid(1.0, 0.6, 0.1)
    assert pattern.shape == (11 * 7, 2)
    scan = impulse.HeightScan(w, probe, "probe", pattern)
    scan.update()
    assert scan.size == len(pattern)
    for k, (x, y) in enumerate(pattern):
        assert scan.heights[k] == pytest.approx(hf.height(x, y), abs=1e-12)
    np.testing.assert_allclose(scan.points[:, :2], pattern, atol=1e-12)
    np.testing.assert_allclose(scan.points[:, 2], scan.heights)
    noisy = impulse.HeightScan(w, probe, "probe", pattern, impulse.SensorNoise(0.01, 0.002), seed=3)
    noisy.update()
    err = noisy.heights - scan.heights
    assert abs(err.mean() - 0.002) < 0.004 and 0.005 < err.std() < 0.02


def test_sdf_world_loads(root):
    path = os.path.join(root, "models", "worlds", "shapes.sdf")
    try:
        w = impulse.load_world(path)
    except impulse.WorldFileError as e:
        if "reads no SDF" in str(e):
            pytest.skip("this build reads no SDF")
        raise
    assert w.time_step == pytest.approx(1e-3)
    w.integrate(2000)
    assert w.system("box").q[2] == pytest.approx(0.1, abs=2e-3)
