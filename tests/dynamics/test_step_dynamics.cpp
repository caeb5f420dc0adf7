// compute_step_dynamics (fused RNEA in world coordinates + CRBA + joint Jacobians from one
// kinematics pass) against the separate calls rnea / nonlinear_effects (the body-frame recursion:
// an independent computation of h), crba and compute_joint_jacobians.
#include <catch2/catch.hpp>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("step_dynamics: fused h, M, J equal the separate calls", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data fused(model), sep(model);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 4; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u);
      // without external forces: M, J and the poses from the same code as the separate calls,
      // bit for bit; h from the world-frame recursion, equal to round-off
      compute_step_dynamics(model, fused, q, u);
      const VecX h = nonlinear_effects(model, sep, q, u);
      const MatX M = crba(model, sep, q);
      const Mat6X J = compute_joint_jacobians(model, sep, q);
      CHECK(rel_err(fused.h, h) <= 1e-13);
      CHECK((fused.M - M).cwiseAbs().maxCoeff() == 0.0);
      CHECK((fused.J - J).cwiseAbs().maxCoeff() == 0.0);
      for (Index i = 0; i < model.nb; ++i) {
        CHECK((fused.oMi[i].R - sep.oMi[i].R).cwiseAbs().maxCoeff() == 0.0);
        CHECK((fused.oMi[i].p - sep.oMi[i].p).cwiseAbs().maxCoeff() == 0.0);
      }
      // with external forces: h - sum J^T f_ext = rnea(q, u, 0, f_ext)
      Vec6Vector f_ext(model.nb);
      for (Vec6& f : f_ext) f = random_vector(6, rng);
      compute_step_dynamics(model, fused, q, u, &f_ext);
      const VecX tau = rnea(model, sep, q, u, VecX::Zero(model.nv), &f_ext);
      CHECK(rel_err(fused.h, tau) <= 1e-13);
      CHECK((fused.M - M).cwiseAbs().maxCoeff() == 0.0);
      CHECK((fused.J - J).cwiseAbs().maxCoeff() == 0.0);
    }
  }
}
