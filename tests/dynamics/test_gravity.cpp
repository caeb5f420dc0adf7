// Gravity belongs to the Data (set by its owner, e.g. World::set_gravity), not to the immutable
// Model: every algorithm that sees gravity (RNEA, nonlinear effects, gravity torques, ABA,
// potential energy) reads Data::gravity, which starts as the Model's default.
#include <catch2/catch.hpp>

#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("gravity: the algorithms take it from Data; a Model built with that gravity agrees bit for bit",
          "[dynamics]") {
  const Vec3 g(0.3, -1.2, -3.7);
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;  // default gravity (0, 0, -9.81)
    Model model_g = model;          // the same description with g as its default
    model_g.gravity = g;
    Data data(model), data_g(model_g);
    CHECK(data.gravity == model.gravity);
    data.gravity = g;  // what World::set_gravity does
    std::mt19937 rng(3);
    VecX q, u;
    random_state(model, rng, q, u);
    const VecX tau = VecX::Random(model.nv), udot = VecX::Random(model.nv);
    CHECK(rnea(model, data, q, u, udot) == rnea(model_g, data_g, q, u, udot));
    CHECK(nonlinear_effects(model, data, q, u) == nonlinear_effects(model_g, data_g, q, u));
    CHECK(gravity_torques(model, data, q) == gravity_torques(model_g, data_g, q));
    CHECK(aba(model, data, q, u, tau) == aba(model_g, data_g, q, u, tau));
    CHECK(potential_energy(model, data, q) == potential_energy(model_g, data_g, q));
    CHECK(model.gravity == Vec3(0, 0, -9.81));  // untouched
    // and gravity really enters: the gravity torques are linear in g (g_tau(2 g) = 2 g_tau(g))
    const VecX t1 = gravity_torques(model, data, q);
    data.gravity = 2 * g;
    CHECK(rel_err(gravity_torques(model, data, q), VecX(2 * t1)) < 1e-13);
    // ABA with gravity g: M udot = tau - h(q, u) with h from RNEA at the same gravity
    data.gravity = g;
    const VecX a = aba(model, data, q, u, tau);
    const VecX h = nonlinear_effects(model, data, q, u);
    crba(model, data, q);
    ltdl_factor(model, data);
    VecX x = tau - h;
    ltdl_solve(model, data, VecXref(x));
    CHECK(rel_err(a, x) < 1e-10);
  }
}
