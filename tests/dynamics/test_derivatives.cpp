// Analytic RNEA / ABA derivatives (rnea_derivatives.hpp) against centred finite differences
// (Richardson-extrapolated) in the tangent space (q (+) h e_j by Model::integrate), on random
// trees with every joint type (fixed and floating bases), the quadruped and ANYmal; the identities
// d tau / d udot = M (crba) and d udot / d tau = M^-1; no allocation; argument checks.
#include <catch2/catch.hpp>

#include <limits>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "support/alloc_counter.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {

// |A - B|_F / |B|_F
Scalar deriv_rel_frob(const MatX& A, const MatX& B) { return (A - B).norm() / std::max(B.norm(), Scalar(1e-300)); }

// Centred differences of f(q, u) (an nv-vector) in the tangent space of q and along u, with one
// Richardson step: D = (4 D(h/2) - D(h)) / 3 has an O(h^4) truncation error (~1e-16 relative at
// h = 1e-4) and an O(eps / h) round-off (~1e-12, times the conditioning of f: ABA's solve with M
// made a plain centred difference at h = 1e-6 err by 1.6e-6 on one random tree).
constexpr Scalar kStep = 1e-4;
template <typename F>
void centred(const Model& model, const VecX& q, const VecX& u, F f, Scalar h, MatX& d_dq, MatX& d_du) {
  d_dq.resize(model.nv, model.nv);
  d_du.resize(model.nv, model.nv);
  VecX qp(model.nq), qm(model.nq);
  for (Index j = 0; j < model.nv; ++j) {
    const VecX e = VecX::Unit(model.nv, j);
    model.integrate(q, e, h, qp);
    model.integrate(q, e, -h, qm);
    d_dq.col(j) = (f(qp, u) - f(qm, u)) / (2 * h);
    d_du.col(j) = (f(q, VecX(u + h * e)) - f(q, VecX(u - h * e))) / (2 * h);
  }
}
template <typename F>
void deriv_finite_differences(const Model& model, const VecX& q, const VecX& u, F f, MatX& d_dq, MatX& d_du) {
  MatX dq1, du1, dq2, du2;
  centred(model, q, u, f, kStep, dq1, du1);
  centred(model, q, u, f, kStep / 2, dq2, du2);
  d_dq = (4 * dq2 - dq1) / 3;
  d_du = (4 * du2 - du1) / 3;
}

// Random body-frame wrenches on every body.
Vec6Vector random_wrenches(const Model& model, std::mt19937& rng) {
  Vec6Vector f(model.nb);
  for (Index i = 0; i < model.nb; ++i) f[i] = random_vector(6, rng, 3.0);
  return f;
}

}  // namespace

TEST_CASE("rnea_derivatives: match centred finite differences in the tangent space", "[dynamics]") {
  Scalar worst = 0;
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data data(model), fd(model);
    std::mt19937 rng(17);
    for (int trial = 0; trial < 3; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u, 2.0);
      const VecX udot = random_vector(model.nv, rng, 3.0);
      // trial 1: external wrenches; trial 2: a tilted gravity as well
      const Vec6Vector f_ext = random_wrenches(model, rng);
      const Vec6Vector* fe = trial >= 1 ? &f_ext : nullptr;
      if (trial == 2) data.gravity = fd.gravity = Vec3(1.5, -2.0, -9.0);
      MatX dq(model.nv, model.nv), du(model.nv, model.nv);
      rnea_derivatives(model, data, q, u, udot, dq, du, fe);
      // byproducts: tau and M = d tau / d udot
      const VecX tau = rnea(model, fd, q, u, udot, fe);
      CHECK(rel_err(data.tau, tau) < 1e-12);
      CHECK(rel_err(data.M, crba(model, fd, q)) < 1e-12);
      MatX fd_dq, fd_du;
      deriv_finite_differences(
          model, q, u, [&](const VecX& qq, const VecX& uu) { return VecX(rnea(model, fd, qq, uu, udot, fe)); }, fd_dq,
          fd_du);
      const Scalar eq = deriv_rel_frob(dq, fd_dq), eu = deriv_rel_frob(du, fd_du);
      worst = std::max({worst, eq, eu});
      CHECK(eq < 1e-6);
      CHECK(eu < 1e-6);
    }
  }
  WARN("rnea_derivatives vs finite differences: worst relative Frobenius error " << worst);
}

TEST_CASE("aba_derivatives: finite differences, M^-1 and the RNEA derivatives", "[dynamics]") {
  Scalar worst = 0, worst_udot = 0;
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data data(model), fd(model);
    std::mt19937 rng(23);
    for (int trial = 0; trial < 2; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u, 2.0);
      const VecX tau = random_vector(model.nv, rng, 5.0);
      const Vec6Vector f_ext = random_wrenches(model, rng);
      const Vec6Vector* fe = trial == 1 ? &f_ext : nullptr;
      MatX da_dq(model.nv, model.nv), da_du(model.nv, model.nv), da_dtau(model.nv, model.nv);
      aba_derivatives(model, data, q, u, tau, da_dq, da_du, da_dtau, fe);
      const VecX udot = aba(model, fd, q, u, tau, fe);
      // data.udot solves M udot = tau - h by M's factor (as the stepper does), not by ABA's
      // recursion: the two agree to the rounding times the conditioning of M
      const Scalar e_udot = rel_err(data.udot, udot);
      worst_udot = std::max(worst_udot, e_udot);
      CHECK(e_udot < 1e-10);
      // d udot / d tau = M^-1
      const MatX M = crba(model, fd, q);
      CHECK(rel_err(VecX(M * data.udot), VecX(tau - rnea(model, fd, q, u, VecX::Zero(model.nv), fe))) < 1e-10);
      CHECK(rel_err(MatX(da_dtau * M), MatX(MatX::Identity(model.nv, model.nv))) < 1e-9);
      // consistent with the RNEA derivatives at udot: d udot/dq = -M^-1 d tau/dq
      MatX dq(model.nv, model.nv), du(model.nv, model.nv);
      rnea_derivatives(model, fd, q, u, udot, dq, du, fe);
      CHECK(deriv_rel_frob(MatX(-M * da_dq), dq) < 1e-9);
      CHECK(deriv_rel_frob(MatX(-M * da_du), du) < 1e-9);
      MatX fd_dq, fd_du;
      deriv_finite_differences(
          model, q, u, [&](const VecX& qq, const VecX& uu) { return VecX(aba(model, fd, qq, uu, tau, fe)); }, fd_dq,
          fd_du);
      const Scalar eq = deriv_rel_frob(da_dq, fd_dq), eu = deriv_rel_frob(da_du, fd_du);
      worst = std::max({worst, eq, eu});
      CHECK(eq < 1e-6);
      CHECK(eu < 1e-6);
      // tau given as a field of the Data that the passes write (data.tau): the same results
      Data alias(model);
      alias.tau = tau;
      MatX a_dq(model.nv, model.nv), a_du(model.nv, model.nv), a_dtau(model.nv, model.nv);
      aba_derivatives(model, alias, q, u, alias.tau, a_dq, a_du, a_dtau, fe);
      CHECK(a_dq == da_dq);
      CHECK(a_du == da_du);
      CHECK(a_dtau == da_dtau);
      CHECK(alias.tau == tau);
    }
  }
  WARN("aba_derivatives vs finite differences: worst relative Frobenius error " << worst
                                                                                  << "; udot against aba " << worst_udot);
}

TEST_CASE("aba_derivatives: a floating root with armature", "[dynamics]") {
  // The floating root's columns come from M^-1 times the columns of the root's subtree rows, less
  // an armature term on the root's own dofs (rnea_derivatives.hpp): against -M^-1 times the RNEA
  // derivatives with an armature on every dof.
  for (const NamedModel& nm : dynamics_test_models()) {
    Model model = nm.model;
    if (model.joint_type[0] != JointType::Floating) continue;
    for (Index k = 0; k < model.nv; ++k) model.armature[k] = 0.05 * (k + 1);
    INFO(nm.name);
    Data data(model), fd(model);
    std::mt19937 rng(29);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    const VecX tau = random_vector(model.nv, rng, 5.0);
    MatX da_dq(model.nv, model.nv), da_du(model.nv, model.nv), da_dtau(model.nv, model.nv);
    aba_derivatives(model, data, q, u, tau, da_dq, da_du, da_dtau);
    const VecX udot = aba(model, fd, q, u, tau);
    const MatX M = crba(model, fd, q);
    MatX dq(model.nv, model.nv), du(model.nv, model.nv);
    rnea_derivatives(model, fd, q, u, udot, dq, du);
    CHECK(deriv_rel_frob(MatX(-M * da_dq), dq) < 1e-9);
    CHECK(deriv_rel_frob(MatX(-M * da_du), du) < 1e-9);
    CHECK(rel_err(MatX(da_dtau * M), MatX(MatX::Identity(model.nv, model.nv))) < 1e-9);
  }
}

TEST_CASE("aba_derivatives: the outputs' previous contents are never read", "[dynamics]") {
  // d udot / dq and d udot / du first hold d tau / dq and d tau / du on their nonzero entries
  // only: outputs full of NaN give the same bits as zeroed ones
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(29);
    VecX q, u;
    random_state(model, rng, q, u, 2.0);
    const VecX tau = random_vector(model.nv, rng, 5.0);
    const Index n = model.nv;
    MatX dq = MatX::Zero(n, n), du = MatX::Zero(n, n), dtau = MatX::Zero(n, n);
    aba_derivatives(model, data, q, u, tau, dq, du, dtau);
    const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
    MatX nq = MatX::Constant(n, n, nan), nu = MatX::Constant(n, n, nan), ntau = MatX::Constant(n, n, nan);
    aba_derivatives(model, data, q, u, tau, nq, nu, ntau);
    CHECK(nq == dq);
    CHECK(nu == du);
    CHECK(ntau == dtau);
  }
}

TEST_CASE("rnea_derivatives: a pendulum's closed form", "[dynamics]") {
  // one revolute joint about x, centre of mass at distance l along -z: tau = (I + m l^2) qdd +
  // m g l sin(q), so d tau / dq = m g l cos(q) and d tau / du = 0
  ModelBuilder mb("pendulum");
  const Scalar m = 2.0, l = 0.7, Ixx = 0.05;
  mb.add_body(-1, "j", JointType::Revolute, SE3(), Vec3::UnitX(), JointLimits(), "b",
              Inertia(m, Vec3(0, 0, -l), Vec3(Ixx, Ixx, 0.01).asDiagonal()));
  const Model model = mb.finalize();
  Data data(model);
  const VecX q = VecX::Constant(1, 0.4), u = VecX::Constant(1, 1.3), udot = VecX::Constant(1, -0.8);
  MatX dq(1, 1), du(1, 1);
  rnea_derivatives(model, data, q, u, udot, dq, du);
  CHECK(dq(0, 0) == Approx(m * 9.81 * l * std::cos(0.4)).epsilon(1e-12));
  CHECK(std::abs(du(0, 0)) < 1e-12);
  CHECK(data.M(0, 0) == Approx(Ixx + m * l * l).epsilon(1e-12));
}

TEST_CASE("rnea_derivatives / aba_derivatives: wrong sizes throw a one-line error naming the argument",
          "[dynamics]") {
  const Model model = quadruped();
  Data data(model);
  const VecX q = model.neutral_configuration(), u = VecX::Zero(model.nv);
  MatX A(model.nv, model.nv), B(model.nv, model.nv), C(model.nv, model.nv), bad(model.nv, model.nv - 1);
  CHECK_THROWS_WITH(rnea_derivatives(model, data, q, u, VecX::Zero(3), A, B),
                    "udot has size 3, the model needs nv = 18");
  CHECK_THROWS_WITH(rnea_derivatives(model, data, VecX::Zero(18), u, u, A, B), "q has size 18, the model needs nq = 19");
  CHECK_THROWS_WITH(rnea_derivatives(model, data, q, u, u, A, bad), "dtau_du is 18 x 17, the model needs nv x nv = 18 x 18");
  CHECK_THROWS_WITH(aba_derivatives(model, data, q, u, VecX::Zero(2), A, B, C), "tau has size 2, the model needs nv = 18");
  CHECK_THROWS_WITH(aba_derivatives(model, data, q, u, u, A, B, bad),
                    "dudot_dtau is 18 x 17, the model needs nv x nv = 18 x 18");
  const Vec6Vector few(2);
  CHECK_THROWS_AS(rnea_derivatives(model, data, q, u, u, A, B, &few), InvalidArgument);
  // the Data stays usable
  rnea_derivatives(model, data, q, u, u, A, B);
  CHECK(A.allFinite());
}

TEST_CASE("rnea_derivatives / aba_derivatives: no allocation after Data construction", "[dynamics]") {
  if (!alloc_counter_available()) return;
  Model anymal;
  const Model model = load_anymal(anymal) ? anymal : quadruped(0.01);
  Data data(model);
  std::mt19937 rng(3);
  VecX q, u;
  random_state(model, rng, q, u);
  const VecX udot = random_vector(model.nv, rng), tau = random_vector(model.nv, rng);
  const Vec6Vector f_ext = random_wrenches(model, rng);
  MatX A(model.nv, model.nv), B(model.nv, model.nv), C(model.nv, model.nv);
  alloc_counter_start();
  rnea_derivatives(model, data, q, u, udot, A, B);
  rnea_derivatives(model, data, q, u, udot, A, B, &f_ext);
  aba_derivatives(model, data, q, u, tau, A, B, C);
  aba_derivatives(model, data, q, u, tau, A, B, C, &f_ext);
  CHECK(alloc_counter_stop() == 0);
}
