// Derivatives of frame velocities, classical accelerations and Jacobians, of the centre of mass
// and of the energies (kinematics_derivatives.hpp) against centred finite differences in the
// tangent space, computed from independent algorithms (rnea's body-frame twists and accelerations,
// frame_jacobian, center_of_mass, kinetic_energy, potential_energy), on the random trees of the
// dynamics tests and on the public robots of ../shared/models; the RNEA and ABA derivatives on
// those robots too; and the identity dM/dt - 2C skew-symmetric (C = 1/2 d tau / du).
#include <catch2/catch.hpp>

#include <filesystem>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/kinematics_derivatives.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "support/matchers.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {

Scalar rel_frob(const MatX& A, const MatX& B) { return (A - B).norm() / std::max(B.norm(), Scalar(1e-300)); }

// Richardson-extrapolated centred differences (as test_derivatives.cpp) of an m-vector f(q, u)
// along the tangent of q and along u: m x nv each, steps h and h / 2.
template <typename F>
void finite_differences(const Model& model, const VecX& q, const VecX& u, F f, MatX& d_dq, MatX& d_du,
                        Scalar h = 1e-4) {
  const auto centred = [&](Scalar h, MatX& dq, MatX& du) {
    const Index m = f(q, u).size();
    dq.resize(m, model.nv);
    du.resize(m, model.nv);
    VecX qp(model.nq), qm(model.nq);
    for (Index j = 0; j < model.nv; ++j) {
      const VecX e = VecX::Unit(model.nv, j);
      model.integrate(q, e, h, qp);
      model.integrate(q, e, -h, qm);
      dq.col(j) = (f(qp, u) - f(qm, u)) / (2 * h);
      du.col(j) = (f(q, VecX(u + h * e)) - f(q, VecX(u - h * e))) / (2 * h);
    }
  };
  MatX dq1, du1, dq2, du2;
  centred(h, dq1, du1);
  centred(h / 2, dq2, du2);
  d_dq = (4 * dq2 - dq1) / 3;
  d_du = (4 * du2 - du1) / 3;
}

// d/dt of a matrix-valued g(q) along q(t) = q (+) t u, Richardson-extrapolated.
template <typename G>
MatX time_derivative(const Model& model, const VecX& q, const VecX& u, G g) {
  const auto centred = [&](Scalar h) {
    VecX qp(model.nq), qm(model.nq);
    model.integrate(q, u, h, qp);
    model.integrate(q, u, -h, qm);
    return MatX((g(qp) - g(qm)) / (2 * h));
  };
  return (4 * centred(5e-5) - centred(1e-4)) / 3;
}

// [v_P; w] and the classical [a_P; wdot] of the point p_B on `body`, world frame, from rnea's
// body-frame twist and acceleration with gravity off (an algorithm independent of the one tested).
struct PointMotion {
  VecX vel, acc;
};
PointMotion point_motion(const Model& model, Data& data, Index body, const Vec3& p_B, const VecX& q, const VecX& u,
                         const VecX& udot) {
  data.gravity.setZero();
  rnea(model, data, q, u, udot);
  const Mat3& R = data.oMi[body].R;
  const Vec6& v = data.v[body];
  const Vec6& a = data.a[body];
  const Vec3 w = v.tail<3>(), vP = v.head<3>() + w.cross(p_B);
  const Vec3 aP = a.head<3>() + a.tail<3>().cross(p_B) + w.cross(vP);
  PointMotion pm;
  pm.vel.resize(6);
  pm.acc.resize(6);
  pm.vel << R * vP, R * w;
  pm.acc << R * aP, R * a.tail<3>();
  return pm;
}

// The public robots of ../shared/models/example-robot-data (fixed and floating bases), or none
// when the folder is absent; a robot whose file does not load is skipped with a message.
std::vector<NamedModel> public_robots() {
  std::vector<NamedModel> robots;
  const std::string dir = impulse_test::shared_path("models");
  const char* files[] = {"solo_description/robots/solo12.urdf", "hyq_description/robots/hyq_no_sensors.urdf",
                         "panda_description/urdf/panda.urdf", "talos_data/robots/talos_reduced.urdf",
                         "double_pendulum_description/urdf/double_pendulum.urdf"};
  for (const char* f : files) {
    const std::string path = dir + "/example-robot-data/robots/" + f;
    if (!std::filesystem::exists(path)) {
      WARN("skipped: " << path << " not found");
      continue;
    }
    UrdfOptions options;
    options.package_paths = {dir};
    options.on_warning = [](const std::string&) {};
    try {
      robots.push_back({f, load_urdf(path, options)});
    } catch (const std::exception& e) {
      WARN("skipped: " << path << ": " << e.what());
    }
  }
  return robots;
}

std::vector<NamedModel> all_models() {
  std::vector<NamedModel> models = dynamics_test_models();
  for (NamedModel& r : public_robots()) models.push_back(std::move(r));
  return models;
}

// A few bodies of the model, each with a random point on it.
std::vector<std::pair<Index, Vec3>> some_points(const Model& model, std::mt19937& rng) {
  std::vector<std::pair<Index, Vec3>> pts;
  for (Index b : {Index(0), model.nb / 2, model.nb - 1}) {
    const VecX p = random_vector(3, rng, 0.3);
    pts.emplace_back(b, Vec3(p));
  }
  return pts;
}

}  // namespace

TEST_CASE("kinematics derivatives: frame velocity, classical acceleration and dJ/dt match finite differences",
          "[dynamics]") {
  Scalar worst = 0;
  for (const NamedModel& nm : all_models()) {
    const Model& model = nm.model;
    Data data(model), fd(model);
    std::mt19937 rng(31);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    const VecX udot = random_vector(model.nv, rng, 3.0);
    compute_kinematics_derivatives(model, data, q, u, udot);
    const Index nv = model.nv;
    MatX dv_dq(6, nv), dv_du(6, nv), da_dq(6, nv), da_du(6, nv), da_dudot(6, nv), dJ(6, nv), J(6, nv);
    for (const auto& point : some_points(model, rng)) {
      // (not structured bindings: C++17 lambdas cannot capture them, and clang refuses)
      const Index body = point.first;
      const Vec3 p_B = point.second;
      INFO(nm.name << ", body " << body);
      point_velocity_derivatives(model, data, body, p_B, dv_dq, dv_du);
      point_acceleration_derivatives(model, data, body, p_B, da_dq, da_du, da_dudot);
      point_jacobian_time_variation(model, data, body, p_B, dJ);
      MatX fd_dq, fd_du;
      finite_differences(
          model, q, u, [&](const VecX& qq, const VecX& uu) { return point_motion(model, fd, body, p_B, qq, uu, udot).vel; },
          fd_dq, fd_du);
      const Scalar ev = std::max(rel_frob(dv_dq, fd_dq), rel_frob(dv_du, fd_du));
      CHECK(ev < 1e-6);
      finite_differences(
          model, q, u, [&](const VecX& qq, const VecX& uu) { return point_motion(model, fd, body, p_B, qq, uu, udot).acc; },
          fd_dq, fd_du);
      const Scalar ea = std::max(rel_frob(da_dq, fd_dq), rel_frob(da_du, fd_du));
      CHECK(ea < 1e-6);
      // d/d udot and d/du of the velocity are the frame Jacobian; a = J udot + Jdot u
      compute_joint_jacobians(model, fd, q);
      frame_jacobian(model, fd, body, p_B, J);
      CHECK(rel_frob(da_dudot, J) < 1e-12);
      CHECK(rel_frob(dv_du, J) < 1e-12);
      const VecX acc = point_motion(model, fd, body, p_B, q, u, udot).acc;
      CHECK(rel_err(VecX(J * udot + dJ * u), acc) < 1e-12);
      const MatX fd_dJ = time_derivative(model, q, u, [&](const VecX& qq) {
        compute_joint_jacobians(model, fd, qq);
        MatX Jq(6, nv);
        frame_jacobian(model, fd, body, p_B, Jq);
        return Jq;
      });
      const Scalar ej = (dJ - fd_dJ).norm() / std::max(fd_dJ.norm(), Scalar(1e-3));
      CHECK(ej < 1e-6);
      worst = std::max({worst, ev, ea, ej});
    }
  }
  WARN("frame derivatives vs finite differences: worst relative Frobenius error " << worst);
}

TEST_CASE("kinematics derivatives: model frames by index, world frames, argument checks", "[dynamics]") {
  Model anymal;
  const Model model = load_anymal(anymal) ? anymal : quadruped(0.01);
  Data data(model), ref(model);
  std::mt19937 rng(5);
  VecX q, u;
  random_state(model, rng, q, u);
  const VecX udot = random_vector(model.nv, rng);
  compute_kinematics_derivatives(model, data, q, u, udot);
  const Index nv = model.nv;
  MatX A(6, nv), B(6, nv), C(6, nv), A2(6, nv), B2(6, nv), C2(6, nv);
  const Index f = static_cast<Index>(model.frames.size()) - 1;
  const Frame& fr = model.frames[static_cast<std::size_t>(f)];
  REQUIRE(fr.body >= 0);
  frame_acceleration_derivatives(model, data, f, A, B, C);
  point_acceleration_derivatives(model, data, fr.body, fr.X_BF.p, A2, B2, C2);
  CHECK(A == A2);
  CHECK(B == B2);
  CHECK(C == C2);
  frame_velocity_derivatives(model, data, f, A, B);
  compute_joint_jacobians(model, ref, q);
  frame_jacobian(model, ref, f, C);
  CHECK(rel_frob(B, C) < 1e-12);  // d v / du = J
  frame_jacobian_time_variation(model, data, f, A);
  point_jacobian_time_variation(model, data, fr.body, fr.X_BF.p, A2);
  CHECK(A == A2);
  MatX bad(6, nv - 1);
  CHECK_THROWS_WITH(frame_velocity_derivatives(model, data, f, A, bad), "dv_du is 6 x " + std::to_string(nv - 1) +
                                                                           ", it must be 6 x nv = 6 x " +
                                                                           std::to_string(nv));
  CHECK_THROWS_WITH(frame_jacobian_time_variation(model, data, 100000, A), "frame index 100000 out of range [0, " +
                                                                               std::to_string(model.frames.size()) +
                                                                               ")");
  CHECK_THROWS_WITH(compute_kinematics_derivatives(model, data, q, u, VecX::Zero(2)),
                    "udot has size 2, the model needs nv = " + std::to_string(nv));
  CHECK_THROWS_AS(point_velocity_derivatives(model, data, model.nb, Vec3::Zero(), A, B), InvalidArgument);
}

TEST_CASE("centre-of-mass and energy derivatives match finite differences; dV/dq is the gravity torque",
          "[dynamics]") {
  Scalar worst = 0;
  for (NamedModel& nm : all_models()) {
    Model& model = nm.model;
    model.armature.setZero();  // the energies count the body inertias only
    Data data(model), fd(model);
    data.gravity = fd.gravity = Vec3(1.0, -2.0, -9.0);
    std::mt19937 rng(41);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    INFO(nm.name);
    const Index nv = model.nv;
    MatX Jcom(3, nv), dvc_dq(3, nv), dvc_du(3, nv), Jcom_dot(3, nv), fd_dq, fd_du;
    center_of_mass_jacobian(model, data, q, Jcom);
    CHECK(rel_err(data.com, center_of_mass(model, fd, q)) < 1e-12);
    center_of_mass_velocity_derivatives(model, data, q, u, dvc_dq, dvc_du, Jcom_dot);
    center_of_mass(model, fd, q, u);
    CHECK(rel_err(data.vcom, fd.vcom) < 1e-12);
    CHECK(rel_frob(dvc_du, Jcom) < 1e-12);
    finite_differences(
        model, q, u, [&](const VecX& qq, const VecX&) { return VecX(center_of_mass(model, fd, qq)); }, fd_dq, fd_du);
    const Scalar ec = rel_frob(Jcom, fd_dq);
    CHECK(ec < 1e-6);
    finite_differences(
        model, q, u,
        [&](const VecX& qq, const VecX& uu) {
          center_of_mass(model, fd, qq, uu);
          return VecX(fd.vcom);
        },
        fd_dq, fd_du);
    const Scalar ev = rel_frob(dvc_dq, fd_dq);
    CHECK(ev < 1e-6);
    const MatX fd_Jdot = time_derivative(model, q, u, [&](const VecX& qq) {
      MatX Jq(3, nv);
      center_of_mass_jacobian(model, fd, qq, Jq);
      return Jq;
    });
    const Scalar ejd = (Jcom_dot - fd_Jdot).norm() / std::max(fd_Jdot.norm(), Scalar(1e-3));
    CHECK(ejd < 1e-6);

    VecX dT_dq(nv), dT_du(nv), dV_dq(nv);
    kinetic_energy_derivatives(model, data, q, u, dT_dq, dT_du);
    CHECK(data.kinetic == Approx(kinetic_energy(model, fd, q, u)).epsilon(1e-12));
    finite_differences(
        model, q, u, [&](const VecX& qq, const VecX& uu) { return VecX::Constant(1, kinetic_energy(model, fd, qq, uu)); },
        fd_dq, fd_du);
    const Scalar et = std::max(rel_err(dT_dq, VecX(fd_dq.row(0).transpose())), rel_err(dT_du, VecX(fd_du.row(0).transpose())));
    CHECK(et < 1e-6);
    CHECK(rel_err(dT_du, VecX(crba(model, fd, q) * u)) < 1e-12);  // dT/du = M u
    potential_energy_derivatives(model, data, q, dV_dq);
    CHECK(data.potential == Approx(potential_energy(model, fd, q)).epsilon(1e-12));
    finite_differences(
        model, q, u, [&](const VecX& qq, const VecX&) { return VecX::Constant(1, potential_energy(model, fd, qq)); },
        fd_dq, fd_du);
    const Scalar ep = rel_err(dV_dq, VecX(fd_dq.row(0).transpose()));
    CHECK(ep < 1e-6);
    CHECK(rel_err(dV_dq, rnea(model, fd, q, VecX::Zero(nv), VecX::Zero(nv))) < 1e-12);
    worst = std::max({worst, ec, ev, ejd, et, ep});
  }
  WARN("centre-of-mass / energy derivatives vs finite differences: worst relative error " << worst);
}

TEST_CASE("rnea_derivatives / aba_derivatives match finite differences on the public robots", "[dynamics]") {
  for (const NamedModel& nm : public_robots()) {
    const Model& model = nm.model;
    Data data(model), fd(model);
    std::mt19937 rng(43);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    const VecX tau = random_vector(model.nv, rng, 5.0);
    INFO(nm.name);
    const Index nv = model.nv;
    MatX dq(nv, nv), du(nv, nv), dtau(nv, nv), fd_dq, fd_du;
    rnea_derivatives(model, data, q, u, tau, dq, du);
    finite_differences(
        model, q, u, [&](const VecX& qq, const VecX& uu) { return VecX(rnea(model, fd, qq, uu, tau)); }, fd_dq, fd_du);
    CHECK(rel_frob(dq, fd_dq) < 1e-6);
    CHECK(rel_frob(du, fd_du) < 1e-6);
    aba_derivatives(model, data, q, u, tau, dq, du, dtau);
    // a larger step: the light double pendulum on a floating base accelerates at ~4e3 m/s^2 here,
    // and the round-off of aba's differences at 1e-4 (~1e-5 relative) hides the derivative
    finite_differences(
        model, q, u, [&](const VecX& qq, const VecX& uu) { return VecX(aba(model, fd, qq, uu, tau)); }, fd_dq, fd_du,
        1e-3);
    CHECK(rel_frob(dq, fd_dq) < 1e-6);
    CHECK(rel_frob(du, fd_du) < 1e-6);
    CHECK(rel_frob(MatX(dtau * crba(model, fd, q)), MatX::Identity(nv, nv)) < 1e-9);
  }
}

TEST_CASE("rnea_derivatives: dM/dt - 2C is skew-symmetric (C = 1/2 d tau / du)", "[dynamics]") {
  // With u = qdot (revolute and prismatic joints), tau = M qdd + C(q, qd) qd + g and the Christoffel
  // C satisfies d(C qd)/d qd = 2C, so C = 1/2 d tau/du, and dM/dt - 2C is skew (passivity). With
  // quasi-velocities (spherical, floating joints) only u^T (dM/dt - 2C) u = 0 (energy balance).
  int skew_models = 0;
  for (const NamedModel& nm : all_models()) {
    const Model& model = nm.model;
    bool coordinates = true;
    for (Index i = 0; i < model.nb; ++i) {
      coordinates = coordinates && (model.joint_type[i] == JointType::Revolute ||
                                    model.joint_type[i] == JointType::Prismatic || model.joint_type[i] == JointType::Fixed);
    }
    Data data(model), fd(model);
    std::mt19937 rng(47);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    INFO(nm.name);
    const Index nv = model.nv;
    MatX dq(nv, nv), du(nv, nv);
    rnea_derivatives(model, data, q, u, VecX::Zero(nv), dq, du);
    const MatX Mdot = time_derivative(model, q, u, [&](const VecX& qq) { return MatX(crba(model, fd, qq)); });
    const MatX N = Mdot - du;
    const Scalar scale = Mdot.norm() + du.norm();
    CHECK(std::abs(u.dot(N * u)) < 1e-7 * scale * u.squaredNorm());
    if (coordinates) {
      ++skew_models;
      CHECK((N + N.transpose()).norm() < 1e-7 * scale);
    }
  }
  CHECK(skew_models >= 1);
}
