// Contact solvers on contact problems from ANYmal configurations (Hwangbo, Lee, Hutter, RA-L 2018,
// Fig. 6).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/cone.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/solvers/solver_result.hpp"
#include "scenarios/anymal_problems.hpp"
#include "scenarios/problem_sampler.hpp"
#include "scenarios/scenario.hpp"

using namespace impulse;

namespace {


// Residuals of the default solvers on ANYmal problems: what each promises, to its own tolerance.
struct PromiseStats {
  int problems = 0, converged = 0;
  Scalar worst_signorini = 0, worst_cone = 0, worst_model = 0;  // model: max_dissipation / coulomb / slip
  long iterations = 0;
};

PromiseStats check_solver_on_anymal(const std::string& name, Index contacts, int count, unsigned seed) {
  scenarios::AnymalProblemBuilder builder;
  std::mt19937 rng(seed);
  auto solver = make_contact_solver(name);
  PromiseStats st;
  for (int k = 0; k < count; ++k) {
    const scenarios::AnymalProblem p = builder.make(rng, contacts);
    const ContactProblem problem = p.view();
    VecX lambda = VecX::Zero(problem.size());
    const SolverResult r = solver->solve(problem, lambda);
    ++st.problems;
    REQUIRE(lambda.allFinite());
    if (!r.converged()) continue;
    ++st.converged;
    st.iterations += r.iterations;
    const ContactResiduals res = evaluate_residuals(problem, lambda);
    INFO(name << ", " << contacts << " contacts, problem " << k << ": " << res.to_string());
    CHECK(res.negative_impulse <= 1e-12);
    st.worst_signorini = std::max(st.worst_signorini, res.signorini());
    st.worst_cone = std::max(st.worst_cone, res.cone);
    if (name == "bisection") {
      // Alg. 2 stops on the exact violation (Signorini + cone + eq. 8 optimality) < 1e-6
      CHECK(res.exact_violation() <= 1e-6);
      st.worst_model = std::max(st.worst_model, res.max_dissipation);
    } else if (name == "pgs") {
      // stops when sum |delta lambda| + sum max(0, -v_z) < 1e-6: penetration below it, the cone
      // exact (projection); Coulomb's law to within the velocity a 1e-6 N s step corresponds to,
      // |G| 1e-6 / alpha per contact (checked with a factor 10 for the accumulated sweep)
      const Scalar g = problem.G.diagonal().maxCoeff();
      CHECK(res.penetration <= 1e-6);
      CHECK(res.cone <= 1e-12);
      CHECK(res.coulomb_violation() <= 10 * g * 1e-6 / 0.6);
      st.worst_model = std::max(st.worst_model, res.coulomb);
    } else if (name == "lm") {
      // psi = |r|^2 / 2 < 1e-30 (or rounding level): Coulomb model eq. 6 essentially exact
      CHECK(res.coulomb_violation() <= 1e-9);
      st.worst_model = std::max(st.worst_model, res.coulomb);
    } else {
      // no-slip: zero tangential velocity and Signorini, exact up to rounding, except for the
      // normal targets no zero-slip impulse can meet (erp correction on torso corners locked by
      // their tilted tangent planes, 0.018 m/s here; test_noslip.cpp certifies them): those
      // rows get zero impulse and the solver reports the unmet target.
      const auto& noslip = dynamic_cast<const NoSlipSolver&>(*solver);
      CHECK(res.slip <= 1e-10);
      CHECK(res.complementarity <= 1e-10);
      CHECK(res.penetration <= noslip.unmet_target() + 1e-10);
      CHECK(noslip.unmet_target() <= 0.018 + 1e-9);
      if (contacts == scenarios::AnymalProblemBuilder::kFeet) CHECK(noslip.unmet_target() == 0);
      st.worst_model = std::max(st.worst_model, res.slip);
    }
  }
  return st;
}

}  // namespace

TEST_CASE("every solver keeps its promises on ANYmal contact problems (4 and 8 contacts)", "[solvers]") {
  constexpr int kCount = 30;
  for (const Index nc : {scenarios::AnymalProblemBuilder::kFeet, scenarios::AnymalProblemBuilder::kFeetAndTorso}) {
    for (const std::string& name : contact_solver_names()) {
      const PromiseStats st = check_solver_on_anymal(name, nc, kCount, 500 + static_cast<unsigned>(nc));
      WARN("ANYmal " << nc << " contacts, " << name << ": converged " << st.converged << "/" << st.problems
                     << ", mean iterations " << double(st.iterations) / std::max(1, st.converged)
                     << ", worst signorini " << st.worst_signorini << ", cone " << st.worst_cone
                     << ", model residual " << st.worst_model);
      // What each solver promises is checked above on every converged solve. The convergence
      // rate from a cold start is a known limit, not a promise (docs/solvers.md): LM on
      // |r|^2 / 2 is a local method (14-24 of 30 cold starts at 8 contacts stalled before the
      // LM restarts); block SOR (bisection) and PGS have no convergence proof on
      // rank-deficient G (8 contacts: 24 rows on 18 DOF) and can hit their sweep caps. The floors
      // below catch a regression, not rounding: in the stepper all of them run warm-started.
      if (name == "lm") {
        // cold start: sticking start + kink search + watchdog restarts (lm.cpp "Departures");
        // measured 30/30 (4 contacts) and 28/30 (8); before them 23/30 and 14/30
        CHECK(st.converged >= st.problems - (nc == 4 ? 1 : 3));
      } else if (name == "noslip") {
        // pivoting is exact: every problem, also with the torso corners (24 rows on 18 DOF)
        CHECK(st.converged == st.problems);
      } else if (nc == 4) {
        CHECK(st.converged >= st.problems - 1);
      } else {
        CHECK(st.converged >= st.problems * 4 / 5);
      }
    }
  }
}

TEST_CASE("on sticking ANYmal problems all four solvers agree", "[solvers]") {
  scenarios::AnymalProblemBuilder builder;
  std::mt19937 rng(4711);
  int lm_converged = 0;
  constexpr int kCount = 15;
  for (int k = 0; k < kCount; ++k) {
    VecX lambda_star;
    // 4 feet: 12 rows on 18 DOF, G regular, so lambda* is the unique solution of every model
    const scenarios::AnymalProblem p = builder.make_sticking(rng, scenarios::AnymalProblemBuilder::kFeet, lambda_star);
    for (const std::string& name : contact_solver_names()) {
      auto solver = make_contact_solver(name);
      VecX lambda = VecX::Zero(p.view().size());
      const SolverResult r = solver->solve(p.view(), lambda);
      INFO("problem " << k << ", " << name << ": " << to_string(r.status) << " after " << r.iterations
                      << "\nlambda " << lambda.transpose() << "\nexpect " << lambda_star.transpose());
      if (name == "lm" && !r.converged()) continue;  // local method: counted below
      lm_converged += name == "lm";
      REQUIRE(r.converged());
      // LM's cold start is the sticking point -K G^-1 c: the solution up to rounding, one solve
      if (name == "lm") CHECK(r.iterations <= 2);
      // default tolerances: 1e-6 N s (bisection, PGS impulse change); LM and no-slip exact
      CHECK((lambda - lambda_star).norm() <= 1e-4 * lambda_star.norm());
    }
  }
  WARN("sticking ANYmal problems: LM (cold start) converged on " << lm_converged << "/" << kCount);
  CHECK(lm_converged == kCount);
}

// Hwangbo 2018 Fig. 6: bisection (eq. 8 model) against PGS run to 1e-20 (Coulomb, eq. 6) on the
// contact problems of the ANYmal scenarios, |lambda_b - lambda_p| / |lambda_p| per contact.
// The two models coincide where no contact slips (the sticking impulse, v = 0, solves both) and
// genuinely differ at slipping contacts with normal-tangential coupling in G_ii (eq. 8 minimizes
// the energy on the conic section v_z = 0, Coulomb makes lambda_T oppose v_T). So the property
// is asserted on the contacts of problems whose Coulomb solution has no slipping contact; that
// the remaining disagreement is the model and not convergence is asserted by LM (Coulomb, a
// different algorithm) agreeing with PGS everywhere.
TEST_CASE("Fig. 6: bisection and PGS (1e-20) agree within 1% where the models coincide", "[solvers][fig6]") {
  scenarios::SampleOptions o;
#ifdef NDEBUG
  o.steps = 2000;
  o.every = 40;
#else
  o.steps = 800;  // Debug + sanitizers: PGS to 1e-20 costs minutes on the full sample
  o.every = 80;
#endif
  PgsSettings ps;
  ps.tolerance = 1e-20;
  ps.max_iterations = 50000;
  PgsSolver pgs(ps);
  BisectionSolver bis;
  LmSolver lm;
  long all = 0, all_within = 0, coincide = 0, coincide_within = 0, slipping = 0, coulomb = 0, coulomb_within = 0;
  auto rel = [](const Vec3& x, const Vec3& ref) {
    return ref.norm() > 0 ? (x - ref).norm() / ref.norm() : (x.norm() > 0 ? 1e300 : 0.0);
  };
  for (const std::string& name : scenarios::scenario_names()) {
    for (const auto& sp : scenarios::sample_contact_problems(name, o)) {
      const ContactProblem p = sp.view();
      VecX lb = VecX::Zero(p.size()), lp = lb, ll = lb;
      bis.solve(p, lb);
      pgs.solve(p, lp);
      const bool lm_ok = lm.solve(p, ll).converged();
      const VecX vp = p.G * lp + p.c;
      bool slip = false;
      for (Index i = 0; i < p.nc; ++i)
        slip = slip || (lp[3 * i + 2] > 0 && std::hypot(vp[3 * i], vp[3 * i + 1]) > 1e-6);
      for (Index i = 0; i < p.nc; ++i) {
        const bool ok = rel(lb.segment<3>(3 * i), lp.segment<3>(3 * i)) < 1e-2;
        ++all;
        all_within += ok;
        if (!slip) {
          ++coincide;
          coincide_within += ok;
        }
        if (lm_ok) {
          ++coulomb;
          coulomb_within += rel(ll.segment<3>(3 * i), lp.segment<3>(3 * i)) < 1e-2;
        }
      }
      slipping += slip;
    }
  }
  const double f_all = double(all_within) / all, f_coincide = double(coincide_within) / coincide,
               f_coulomb = double(coulomb_within) / coulomb;
  WARN("Fig. 6 on the ANYmal scenarios: within 1% on " << f_all << " of all " << all << " contacts; on "
       << f_coincide << " of the " << coincide << " contacts of problems without slip; LM vs PGS (both Coulomb) "
       << f_coulomb << " of " << coulomb << "; problems with a slipping contact: " << slipping);
#ifdef NDEBUG
  // (292 contacts: one is 0.34 %. The sample follows the scenarios' trajectories, which any change
  // of the stepper moves: 289 of 292 are within 1 %. The target is tracked on `impulse demo
  // table2`, Fig. 6.)
  CHECK(f_coincide >= 0.985);
#else
  // The Debug sample has ~55 such contacts, each 1.8 %: a smoke check. Up to 3 outside 1 % is
  // within its sampling noise (the trajectories move with any change of the stepper; the Release
  // sample above is the measure).
  CHECK(coincide - coincide_within <= 3);
#endif
  CHECK(f_coulomb >= 0.99);
}
