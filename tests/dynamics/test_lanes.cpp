// StepLanes (dynamics/lanes.hpp): W worlds' compute_step_dynamics + ltdl_factor (+ ltdl_solve) in
// SIMD lanes against the scalar functions on each world, bit for bit, for every width this CPU runs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>

#include "impulse/core/error.hpp"
#include "impulse/dynamics/lanes.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

namespace {

// The widths this CPU runs; the others are named once in the test output.
std::vector<int> runnable_widths() {
  std::vector<int> widths;
  for (int w : {1, 2, 4, 8}) {
    if (w <= lanes_max_width()) {
      widths.push_back(w);
    } else {
      static bool said[9] = {};
      if (!said[w]) std::cout << "test_lanes: width " << w << " skipped (this CPU lacks its instruction set)\n";
      said[w] = true;
    }
  }
  return widths;
}

// The models: the dynamics test set (random trees with every joint type, the quadruped, ANYmal),
// a tree with Rodrigues and coordinate axes mixed in, and a lone free body (ltdl_factor's small
// dense chain).
std::vector<NamedModel> lane_test_models() {
  std::vector<NamedModel> models = dynamics_test_models();
  RandomTreeOptions one;
  one.num_bodies = 1;
  one.max_depth = 1;
  models.push_back({"free body", random_tree(3, one)});
  return models;
}

// a == b bit for bit; where the scalar code may contract a * b + c into an FMA (a target with FMA:
// IMPULSE_NATIVE; GCC 12 and Clang both contract, also in ISO C++ mode), to 1e-13 relative
bool same(Scalar a, Scalar b, Scalar scale) {
#ifdef __FMA__
  return std::abs(a - b) <= 1e-13 * (1 + scale);
#else
  (void)scale;
  return std::memcmp(&a, &b, sizeof a) == 0;  // (also tells -0 from +0)
#endif
}

template <class A, class B>
int count_differences(const A& a, const B& b) {
  const Scalar scale = b.cwiseAbs().maxCoeff();
  int bad = 0;
  for (Index e = 0; e < b.size(); ++e) bad += same(a.data()[e], b.data()[e], scale) ? 0 : 1;
  return bad;
}

}  // namespace

TEST_CASE("lanes: step dynamics and LTDL factor equal the scalar functions per world", "[dynamics][lanes]") {
  for (const NamedModel& nm : lane_test_models()) {
    const Model& model = nm.model;
    REQUIRE(lanes_supported(model));
    for (int width : runnable_widths()) {
      INFO(nm.name << ", width " << width);
      StepLanes lanes(model, width);
      std::mt19937 rng(17 + static_cast<unsigned>(width));
      std::vector<VecX> qs(width), us(width);
      for (int w = 0; w < width; ++w) {
        random_state(model, rng, qs[w], us[w]);
        lanes.set_state(w, qs[w], us[w]);
      }
      const unsigned pd = lanes.run();
      // a right-hand side per lane, solved in the lanes (the stepper's free velocity)
      std::vector<VecX> rhs(width);
      for (int w = 0; w < width; ++w) {
        rhs[w] = random_vector(model.nv, rng, 2.0);
        const StepLanes::LaneBlock b = lanes.lane_block(w);
        for (Index k = 0; k < model.nv; ++k) b.rhs[k * b.stride] = rhs[w][k];
      }
      lanes.solve();
      Data scalar(model), got(model), step(model);
      for (int w = 0; w < width; ++w) {
        INFO("lane " << w);
        compute_step_dynamics(model, scalar, qs[w], us[w]);
        const bool scalar_pd = ltdl_factor(model, scalar);
        CHECK(((pd >> w) & 1u) == (scalar_pd ? 1u : 0u));
        ltdl_solve(model, scalar, rhs[w]);
        CHECK(count_differences(Eigen::Map<const VecX>(lanes.solution(w), model.nv), rhs[w]) == 0);
        lanes.get_step(w, step);  // (all but M)
        for (Index i = 0; i < model.nb; ++i) {
          CHECK(count_differences(step.oMi[i].R, scalar.oMi[i].R) == 0);
          CHECK(count_differences(step.oMi[i].p, scalar.oMi[i].p) == 0);
        }
        CHECK(count_differences(step.J, scalar.J) == 0);
        CHECK(count_differences(step.h, scalar.h) == 0);
        CHECK(count_differences(step.D, scalar.D) == 0);
        CHECK(count_differences(step.Dinv, scalar.Dinv) == 0);
        CHECK(count_differences(step.L_anc, scalar.L_anc) == 0);
        lanes.get(w, got);
        for (Index i = 0; i < model.nb; ++i) {
          CHECK(count_differences(got.oMi[i].R, scalar.oMi[i].R) == 0);
          CHECK(count_differences(got.oMi[i].p, scalar.oMi[i].p) == 0);
        }
        CHECK(count_differences(got.J, scalar.J) == 0);
        CHECK(count_differences(got.h, scalar.h) == 0);
        CHECK(count_differences(got.M, scalar.M) == 0);  // M above, L below, D on the diagonal
        CHECK(count_differences(got.D, scalar.D) == 0);
        CHECK(count_differences(got.Dinv, scalar.Dinv) == 0);
        CHECK(count_differences(got.L_anc, scalar.L_anc) == 0);
        CHECK(lanes.h(w, model.nv - 1) == scalar.h[model.nv - 1]);
        CHECK(lanes.D(w, 0) == scalar.D[0]);
      }
    }
  }
}

TEST_CASE("lanes: a diagonal changed between compute and factor, as the stepper changes it", "[dynamics][lanes]") {
  // the stepper factors M + dt (damping + Kd) + dt^2 Kp: per world, two additions to M_kk
  std::vector<NamedModel> models = dynamics_test_models();
  models.erase(models.begin() + 2, models.end() - 1);  // (a floating tree, a fixed one, ANYmal)
  for (const NamedModel& nm : models) {
    const Model& model = nm.model;
    for (int width : runnable_widths()) {
      INFO(nm.name << ", width " << width);
      StepLanes lanes(model, width);
      std::mt19937 rng(3);
      std::vector<VecX> qs(width), us(width), add1(width), add2(width);
      for (int w = 0; w < width; ++w) {
        random_state(model, rng, qs[w], us[w]);
        add1[w] = random_vector(model.nv, rng, 1e-3).cwiseAbs();
        add2[w] = random_vector(model.nv, rng, 0.1).cwiseAbs();
        lanes.set_state(w, qs[w], us[w]);
      }
      lanes.compute();
      for (int w = 0; w < width; ++w) {
        for (Index k = 0; k < model.nv; ++k) {
          lanes.add_to_diagonal(w, k, add1[w][k]);
          lanes.add_to_diagonal(w, k, add2[w][k]);
        }
      }
      const unsigned pd = lanes.factor();
      Data scalar(model), got(model);
      for (int w = 0; w < width; ++w) {
        INFO("lane " << w);
        compute_step_dynamics(model, scalar, qs[w], us[w]);
        for (Index k = 0; k < model.nv; ++k) scalar.M(k, k) += add1[w][k], scalar.M(k, k) += add2[w][k];
        CHECK(((pd >> w) & 1u) == (ltdl_factor(model, scalar) ? 1u : 0u));
        lanes.get(w, got);
        CHECK(count_differences(got.M, scalar.M) == 0);
        CHECK(count_differences(got.D, scalar.D) == 0);
        CHECK(count_differences(got.L_anc, scalar.L_anc) == 0);
      }
    }
  }
}

TEST_CASE("lanes: the implicit PD first pass of every lane equals width 1's per world", "[dynamics][lanes]") {
  // StepLanes::implicit_pd: first-guess actuator clamps (effort limits, velocity limits that
  // narrow the interval, unlimited dofs), M~'s diagonal and the right-hand side; then factor and
  // solve, and the test for a second pass. Width 1 runs the stepper's scalar operations on one
  // world; each lane must equal it.
  std::vector<NamedModel> models = dynamics_test_models();
  models.erase(models.begin() + 2, models.end() - 1);  // (a floating tree, a fixed one, ANYmal)
  int clamps_seen = 0, second_passes = 0, settled = 0;
  for (NamedModel& nm : models) {
    Model& model = nm.model;
    std::mt19937 rng(11);
    std::uniform_real_distribution<Scalar> pick(0, 1);
    for (Index k = 0; k < model.nv; ++k) {  // a third unlimited, a third effort only, a third both
      const Scalar r = pick(rng);
      model.effort_limit[k] = r < 1.0 / 3 ? 0.0 : 20.0;
      model.velocity_limit[k] = r < 2.0 / 3 ? 0.0 : 1.0;
      model.damping[k] = 0.5 * pick(rng);
    }
    for (int width : runnable_widths()) {
      if (width == 1) continue;
      INFO(nm.name << ", width " << width);
      StepLanes lanes(model, width), one(model, 1);
      const Scalar dt = 1e-3;
      std::vector<VecX> qs(width), us(width), tau(width), kp(width), kd(width), qt(width), ut(width);
      for (int w = 0; w < width; ++w) {
        random_state(model, rng, qs[w], us[w], 2.0);  // (|u| beyond the velocity limit 1 on some dofs)
        tau[w] = random_vector(model.nv, rng, 30.0);  // (beyond the effort limit 20 on some)
        kp[w] = random_vector(model.nv, rng, 200.0).cwiseAbs();
        kd[w] = random_vector(model.nv, rng, 5.0).cwiseAbs();
        qt[w] = qs[w] + random_vector(model.nq, rng, 0.2);
        ut[w] = random_vector(model.nv, rng, 1.0);
        lanes.set_state(w, qs[w], us[w]);
        lanes.set_drive(w, tau[w], kp[w], kd[w], qt[w], ut[w]);
      }
      lanes.compute();
      lanes.implicit_pd(dt);
      const unsigned pd = lanes.factor();
      lanes.solve();
      Data got(model), ref(model);
      for (int w = 0; w < width; ++w) {
        INFO("lane " << w);
        one.set_state(0, qs[w], us[w]);
        one.set_drive(0, tau[w], kp[w], kd[w], qt[w], ut[w]);
        one.compute();
        one.implicit_pd(dt);
        CHECK(((pd >> w) & 1u) == one.factor());
        one.solve();
        lanes.get(w, got);
        one.get(0, ref);
        CHECK(count_differences(got.M, ref.M) == 0);
        CHECK(count_differences(got.D, ref.D) == 0);
        CHECK(count_differences(Eigen::Map<const VecX>(lanes.solution(w), model.nv), Eigen::Map<const VecX>(one.solution(0), model.nv)) == 0);
        std::vector<unsigned char> c_lane(model.nv, 7), c_one(model.nv, 7);
        VecX t_lane = VecX::Zero(model.nv), t_one = VecX::Zero(model.nv);
        CHECK(lanes.clamps(w, c_lane.data(), t_lane.data()) == one.clamps(0, c_one.data(), t_one.data()));
        CHECK(c_lane == c_one);
        CHECK(count_differences(t_lane, t_one) == 0);
        CHECK(lanes.second_pass(w) == one.second_pass(0));
        for (unsigned char c : c_one) clamps_seen += c;
        (one.second_pass(0) ? second_passes : settled) += 1;
      }
    }
  }
  // (clamped dofs, and lanes with and without a second pass: the checks are not vacuous)
  CHECK(clamps_seen > 0);
  CHECK(second_passes > 0);
  CHECK(settled > 0);
}

TEST_CASE("lanes: revolute angles beyond sincos' reduction range and non-finite states", "[dynamics][lanes]") {
  // sincos hands |q| >= 2^20 pi/2 and NaN to libm; a lane with such an angle takes the same path,
  // and a NaN lane reports a failed factor without disturbing its neighbours
  Model model;
  REQUIRE(load_anymal(model));
  const Index rev = model.idx_q[1];  // (body 1: ANYmal's first leg joint, revolute)
  REQUIRE(model.joint_type[1] == JointType::Revolute);
  for (int width : runnable_widths()) {
    if (width < 2) continue;
    INFO("width " << width);
    StepLanes lanes(model, width);
    std::mt19937 rng(5);
    std::vector<VecX> qs(width), us(width);
    const Scalar angles[] = {3e6, -1e7, 0x1p20 * 1.5707963267948966, 2.5, std::numeric_limits<Scalar>::quiet_NaN()};
    for (int w = 0; w < width; ++w) {
      random_state(model, rng, qs[w], us[w]);
      qs[w][rev] = angles[w % 5];
      lanes.set_state(w, qs[w], us[w]);
    }
    const unsigned pd = lanes.run();
    Data scalar(model), got(model);
    for (int w = 0; w < width; ++w) {
      INFO("lane " << w);
      compute_step_dynamics(model, scalar, qs[w], us[w]);
      const bool scalar_pd = ltdl_factor(model, scalar);
      CHECK(scalar_pd == !std::isnan(qs[w][rev]));
      CHECK(((pd >> w) & 1u) == (scalar_pd ? 1u : 0u));
      lanes.get(w, got);
      if (!scalar_pd) continue;
      CHECK(count_differences(got.h, scalar.h) == 0);
      CHECK(count_differences(got.M, scalar.M) == 0);
      CHECK(count_differences(got.L_anc, scalar.L_anc) == 0);
    }
  }
}

TEST_CASE("lanes: widths and arguments are checked", "[dynamics][lanes]") {
  const Model model = quadruped(0.01);
  CHECK(lanes_supported(model));
  CHECK((lanes_max_width() == 2 || lanes_max_width() == 4 || lanes_max_width() == 8));
  CHECK_THROWS_AS(StepLanes(model, 3), InvalidArgument);
  CHECK_THROWS_AS(StepLanes(model, 16), InvalidArgument);
  if (lanes_max_width() < 8) CHECK_THROWS_AS(StepLanes(model, 8), InvalidArgument);
  StepLanes lanes(model, 2);
  CHECK_THROWS_AS(lanes.set_state(2, model.neutral_configuration(), VecX::Zero(model.nv)), InvalidArgument);
  CHECK_THROWS_AS(lanes.set_state(0, VecX::Zero(model.nq + 1), VecX::Zero(model.nv)), InvalidArgument);
  Data other(random_tree(1));
  CHECK_THROWS_AS(lanes.get(0, other), InvalidArgument);
  // IMPULSE_LANES forces a width (1: the scalar path); a bad value is named
  const char* before = std::getenv("IMPULSE_LANES");
  const std::string saved = before ? before : "";
  ::unsetenv("IMPULSE_LANES");
  CHECK(lanes_default_width() == lanes_max_width());
  ::setenv("IMPULSE_LANES", "1", 1);
  CHECK(lanes_default_width() == 1);
  ::setenv("IMPULSE_LANES", "2", 1);
  CHECK(lanes_default_width() == 2);
  ::setenv("IMPULSE_LANES", "3", 1);
  CHECK_THROWS_WITH(lanes_default_width(), Catch::Contains("IMPULSE_LANES=3"));
  if (lanes_max_width() < 8) {
    ::setenv("IMPULSE_LANES", "8", 1);
    CHECK_THROWS_WITH(lanes_default_width(), Catch::Contains("at most"));
  }
  if (before) {
    ::setenv("IMPULSE_LANES", saved.c_str(), 1);
  } else {
    ::unsetenv("IMPULSE_LANES");
  }
}
