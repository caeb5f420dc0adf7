// CRBA (RBDA Table 6.2) against RNEA (RBDA Table 5.1): M e_i = RNEA(q, 0, e_i) - RNEA(q, 0, 0),
// M symmetric positive definite, and kinetic energy 1/2 u^T M u.
#include <Eigen/Eigenvalues>
#include <catch2/catch.hpp>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("crba: M is symmetric positive definite and equals RNEA column by column", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(42);
    for (int trial = 0; trial < 5; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u);
      const MatX M = crba(model, data, q);
      // symmetric: exactly (crba copies the upper triangle)
      CHECK((M - M.transpose()).cwiseAbs().maxCoeff() == 0.0);
      // positive definite
      const VecX eig = Eigen::SelfAdjointEigenSolver<MatX>(M).eigenvalues();
      CHECK(eig.minCoeff() > 0);
      // M e_i = RNEA(q, 0, e_i) - RNEA(q, 0, 0) (removes gravity)
      const VecX zero = VecX::Zero(model.nv);
      const VecX g = rnea(model, data, q, zero, zero);
      MatX M_rnea(model.nv, model.nv);
      for (Index i = 0; i < model.nv; ++i) {
        const VecX e = VecX::Unit(model.nv, i);
        M_rnea.col(i) = rnea(model, data, q, zero, e) - g;
      }
      const Scalar err = (M - M_rnea).cwiseAbs().maxCoeff() / M.cwiseAbs().maxCoeff();
      CHECK(err < 1e-12);
      // gravity_torques == rnea(q, 0, 0)
      CHECK(rel_err(gravity_torques(model, data, q), g) < 1e-14);
      // nonlinear effects == rnea(q, u, 0)
      const VecX h = rnea(model, data, q, u, zero);
      CHECK(rel_err(nonlinear_effects(model, data, q, u), h) < 1e-14);
      // linearity in udot: rnea(q, u, a) == M a + h
      const VecX a = random_vector(model.nv, rng);
      CHECK(rel_err(rnea(model, data, q, u, a), VecX(M * a + h)) < 1e-12);
    }
  }
}

TEST_CASE("crba: kinetic energy equals 1/2 u^T M u", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models(false)) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(7);
    VecX q, u;
    random_state(model, rng, q, u);
    const MatX M = crba(model, data, q);
    const Scalar T = kinetic_energy(model, data, q, u);
    CHECK(std::abs(T - 0.5 * u.dot(M * u)) < 1e-12 * (1 + T));
  }
}

TEST_CASE("crba: M only has nonzeros on branch-related dof pairs", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(3);
    const MatX M = crba(model, data, model.random_configuration(rng));
    for (Index i = 0; i < model.nv; ++i) {
      for (Index j = 0; j < i; ++j) {
        bool related = false;
        for (Index k = model.dof_parent[i]; k >= 0; k = model.dof_parent[k]) related |= (k == j);
        if (!related) CHECK(M(i, j) == 0.0);
      }
    }
  }
}
