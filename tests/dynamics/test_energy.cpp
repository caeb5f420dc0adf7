// Conservation laws and closed-form motions (RBDA sec. 2.13-2.14 for energy and momentum):
// free motion without gravity conserves energy and, for floating trees, linear and angular
// momentum; a single pendulum and a spinning free-falling body match their closed forms.
#include <catch2/catch.hpp>

#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "support/rk4.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {
// RK4 steps of 1e-4 s: 1 s of motion in optimised builds; 0.1 s in Debug / sanitizer builds,
// which run the fixed-size Eigen code ~100x slower (the drift bounds hold on either horizon).
#ifdef NDEBUG
constexpr int kEnergySteps = 10000;
#else
constexpr int kEnergySteps = 1000;
#endif
}  // namespace

TEST_CASE("energy: free motion conserves energy and momentum over 1 s (RKMK4, dt = 1e-4)", "[dynamics]") {
  const Scalar dt = 1e-4;
  Scalar worst_T = 0, worst_p = 0, worst_k = 0;
  for (NamedModel nm : dynamics_test_models(false)) {
    INFO(nm.name);
    Model& model = nm.model;
    model.gravity.setZero();
    Data data(model);
    std::mt19937 rng(17);
    VecX q, u;
    random_state(model, rng, q, u, 1.0);
    const Scalar T0 = kinetic_energy(model, data, q, u);
    const Vec6 h0 = momentum(model, data, q, u);
    Rk4 rk4(model);
    for (int s = 0; s < kEnergySteps; ++s) rk4.step(q, u, dt);
    const Scalar dT = std::abs(kinetic_energy(model, data, q, u) - T0) / T0;
    worst_T = std::max(worst_T, dT);
    CHECK(dT < 1e-11);  // reached: 2e-13
    if (model.floating_base) {
      const Vec6 h1 = momentum(model, data, q, u);
      const Scalar dp = (h1.head<3>() - h0.head<3>()).norm() / (1 + h0.head<3>().norm());
      const Scalar dk = (h1.tail<3>() - h0.tail<3>()).norm() / (1 + h0.tail<3>().norm());
      worst_p = std::max(worst_p, dp);
      worst_k = std::max(worst_k, dk);
      CHECK(dp < 1e-11);
      CHECK(dk < 1e-11);
    }
  }
  WARN("1 s free motion, RKMK4 dt=1e-4: worst relative drift of energy " << worst_T << ", linear momentum " << worst_p
                                                                       << ", angular momentum " << worst_k);
}

TEST_CASE("energy: gravity potential makes total energy conserved too", "[dynamics]") {
  Model model = quadruped(0.0);
  Data data(model);
  std::mt19937 rng(2);
  VecX q, u;
  random_state(model, rng, q, u, 1.0);
  const Scalar E0 = kinetic_energy(model, data, q, u) + potential_energy(model, data, q);
  const Vec3 p0 = momentum(model, data, q, u).head<3>();
  Rk4 rk4(model);
  const Scalar dt = 1e-4;
  for (int s = 0; s < kEnergySteps; ++s) rk4.step(q, u, dt);
  const Scalar E1 = kinetic_energy(model, data, q, u) + potential_energy(model, data, q);
  CHECK(std::abs(E1 - E0) < 1e-11 * (std::abs(E0) + model.total_mass() * 9.81));
  // linear momentum grows by m g t
  const Vec3 p1 = momentum(model, data, q, u).head<3>();
  CHECK(rel_err(p1, Vec3(p0 + model.total_mass() * model.gravity * (kEnergySteps * dt))) < 1e-9);
}

namespace {
// Complete elliptic integral of the first kind K(k) by the arithmetic-geometric mean.
Scalar elliptic_K(Scalar k) {
  Scalar a = 1, b = std::sqrt(1 - k * k);
  for (int i = 0; i < 30; ++i) {
    const Scalar an = 0.5 * (a + b);
    b = std::sqrt(a * b);
    a = an;
  }
  return M_PI / (2 * a);
}
}  // namespace

TEST_CASE("energy: single pendulum matches its closed form", "[dynamics]") {
  // body on a revolute joint about y, centre of mass at distance l below the axis
  const Scalar m = 1.3, l = 0.7, Iyy = 0.02, g = 9.81;
  ModelBuilder mb("pendulum");
  mb.add_body(-1, "pin", JointType::Revolute, SE3(), Vec3::UnitY(), JointLimits(), "bob",
              Inertia(m, Vec3(0, 0, -l), Vec3(0.03, Iyy, 0.01).asDiagonal()));
  const Model model = mb.finalize();
  Data data(model);
  const Scalar I_O = Iyy + m * l * l;  // about the axis
  // theta'' = -m g l sin(theta) / I_O exactly, at any angle and rate
  for (Scalar th : {-2.5, -1.0, 0.0, 0.3, 1.7, 3.0}) {
    VecX q(1), u(1), tau = VecX::Zero(1);
    q << th;
    u << 0.8;
    const Scalar udot = aba(model, data, q, u, tau)[0];
    CHECK(udot == Approx(-m * g * l * std::sin(th) / I_O).epsilon(1e-14).margin(1e-14));
  }
  // large-amplitude period T = 4 sqrt(I_O / (m g l)) K(sin(theta0 / 2)); find the first return to
  // the release angle by the first downward zero crossing of the rate
  const Scalar theta0 = 2.0;
  const Scalar T_exact = 4 * std::sqrt(I_O / (m * g * l)) * elliptic_K(std::sin(theta0 / 2));
  VecX q(1), u(1);
  q << theta0;
  u << 0.0;
  Rk4 rk4(model);
  const Scalar dt = 1e-4;
  Scalar t = 0, T_num = 0;
  Scalar u_prev = 0;
  for (int s = 0; s < 200000; ++s) {
    rk4.step(q, u, dt);
    t += dt;
    // the rate returns to zero from above at t = T (and from below at T/2)
    if (t > 0.75 * T_exact && u_prev > 0 && u[0] <= 0) {
      T_num = t - dt * u[0] / (u[0] - u_prev);  // linear interpolation of the zero crossing
      break;
    }
    u_prev = u[0];
  }
  CHECK(T_num == Approx(T_exact).epsilon(1e-9));
  WARN("pendulum period: relative error " << std::abs(T_num - T_exact) / T_exact);
}

TEST_CASE("energy: spinning free-falling body follows a parabola with constant angular momentum", "[dynamics]") {
  std::mt19937 rng(8);
  ModelBuilder mb("body");
  const Inertia I(2.5, Vec3(0.1, -0.05, 0.2), Vec3(0.08, 0.12, 0.17).asDiagonal());
  mb.add_body(-1, "root", JointType::Floating, SE3(), Vec3::UnitZ(), JointLimits(), "body", I);
  const Model model = mb.finalize();
  Data data(model);
  VecX q = model.random_configuration(rng);
  VecX u(6);
  u << 0.5, -1.0, 3.0, 4.0, -2.0, 6.0;  // fast tumbling about all axes
  // exact accelerations: the centre of mass falls at g; Euler's equations I wdot + w x I w = 0
  {
    const VecX udot = aba(model, data, q, u, VecX::Zero(6));
    const Mat3 R = data.oMi[0].R;
    const Vec3 r = R * I.c, w = u.tail<3>();
    const Vec3 vd = udot.head<3>(), wd = udot.tail<3>();
    // v_c = v + w x r  =>  a_c = vdot + wdot x r + w x (w x r)  (vdot: world-frame base accel.)
    CHECK(rel_err(Vec3(vd + wd.cross(r) + w.cross(w.cross(r))), model.gravity) < 1e-13);
    const Mat3 Iw = R * I.Ic * R.transpose();
    CHECK((Iw * wd + w.cross(Iw * w)).norm() < 1e-12);
  }
  center_of_mass(model, data, q, u);
  const Vec3 c0 = data.com, vc0 = data.vcom;
  const Vec6 h0 = momentum(model, data, q, u);
  const Vec3 kG0 = h0.tail<3>() - c0.cross(h0.head<3>());
  const Scalar Trot0 = kinetic_energy(model, data, q, u) - 0.5 * model.total_mass() * vc0.squaredNorm();
  Rk4 rk4(model);
  const Scalar dt = 1e-4;
  for (int s = 0; s < kEnergySteps; ++s) rk4.step(q, u, dt);
  const Scalar t = kEnergySteps * dt;
  center_of_mass(model, data, q, u);
  const Vec3 c_exact = c0 + vc0 * t + 0.5 * model.gravity * t * t;
  CHECK((data.com - c_exact).norm() < 1e-12);
  CHECK((data.vcom - (vc0 + model.gravity * t)).norm() < 1e-12);
  const Vec6 h1 = momentum(model, data, q, u);
  const Vec3 kG1 = h1.tail<3>() - data.com.cross(h1.head<3>());
  CHECK((kG1 - kG0).norm() < 1e-12 * kG0.norm());
  const Scalar Trot1 = kinetic_energy(model, data, q, u) - 0.5 * model.total_mass() * data.vcom.squaredNorm();
  CHECK(std::abs(Trot1 - Trot0) < 1e-12 * Trot0);
  WARN("free fall 1 s: CoM error " << (data.com - c_exact).norm() << " m, |dk_G|/|k_G| "
                                   << (kG1 - kG0).norm() / kG0.norm() << ", rotational energy drift "
                                   << std::abs(Trot1 - Trot0) / Trot0);
}
