// LM on the islands of piles (docs/solvers.md, "lm on large islands"): the proximal step leaves
// the plateaus of singular G, a problem without exact solution ends after one useless restart at
// its least-squares point, and the sparse paths (block pattern of G, reduced normal equations)
// solve real pile islands to the same velocities as projected Gauss-Seidel.
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/world/world.hpp"
#include "support/sphere_bin.hpp"

using namespace impulse;

namespace {

// Two frictionless contacts at one point of a body free to translate (M = I), both with normal
// +z: G = [[I, I], [I, I]] (rank 3 of 6). c_n = (-1, -0.5): the solution is lambda_n = (1, 0),
// v_n = (0, 0.5) (the second contact opens).
struct CoincidentContacts {
  MatX G = MatX::Zero(6, 6);
  VecX c = VecX::Zero(6);
  VecX mu = VecX::Zero(2);
  CoincidentContacts() {
    for (Index a = 0; a < 2; ++a)
      for (Index b = 0; b < 2; ++b) G.block<3, 3>(3 * a, 3 * b).setIdentity();
    c[2] = -1;
    c[5] = -0.5;
  }
  ContactProblem view() const { return ContactProblem(G, c, mu, 2, 0); }
};

}  // namespace

TEST_CASE("LM: the proximal step leaves the plateau of a singular G", "[solvers][lm]") {
  // Warm start lambda_n = (0.375, 0.375): both contacts closed with v_n = (-0.25, 0.25), the
  // least-squares point of that piece. The residual lies in null(G), so J^T r = 0 and the
  // Gauss-Newton step is zero; the restarts (which would also get out) are switched off.
  const CoincidentContacts p;
  const ContactProblem problem = p.view();
  VecX start = VecX::Zero(6);
  start[2] = start[5] = 0.375;

  LmSettings plain;
  plain.restart_sweeps = 0;
  plain.proximal = 0;
  LmSolver stuck(plain);
  VecX lambda = start;
  const SolverResult r0 = stuck.solve(problem, lambda);
  CHECK_FALSE(r0.converged());

  LmSettings proximal = plain;
  proximal.proximal = LmSettings().proximal;
  LmSolver solver(proximal);
  lambda = start;
  const SolverResult r1 = solver.solve(problem, lambda);
  INFO(to_string(r1.status) << " after " << r1.iterations << ", lambda " << lambda.transpose());
  REQUIRE(r1.converged());
  CHECK(lambda[2] == Approx(1).margin(1e-12));
  CHECK(std::abs(lambda[5]) <= 1e-12);
  CHECK(lambda.head<2>().norm() + lambda.segment<2>(3).norm() <= 1e-12);  // frictionless
}

TEST_CASE("LM: a problem without exact solution stops after one useless restart", "[solvers][lm]") {
  // A body between two walls (normals +x and -x), both contacts asking for a push-out speed
  // of 0.1 m/s: v_n0 + v_n1 = -0.2 whatever the impulses, so no lambda >= 0 gives v >= 0. The
  // least-squares point has v_n = (-0.1, -0.1).
  MatX J = MatX::Zero(6, 3);  // rows (t1, t2, n) per contact, body translation (x, y, z)
  J(0, 1) = 1, J(1, 2) = 1, J(2, 0) = 1;
  J(3, 1) = 1, J(4, 2) = 1, J(5, 0) = -1;
  const MatX G = J * J.transpose();
  VecX c = VecX::Zero(6);
  c[2] = c[5] = -0.1;
  const VecX mu = VecX::Zero(2);
  const ContactProblem problem(G, c, mu, 2, 0);

  const LmSettings s;
  LmSolver solver(s);
  VecX lambda = VecX::Zero(6);
  const SolverResult r = solver.solve(problem, lambda);
  INFO(to_string(r.status) << " after " << r.iterations << ", psi " << r.residual);
  CHECK(r.status == SolverStatus::MaxIterations);
  // without the restart rule: max_restarts (10) restarts of `watchdog` solves each
  CHECK(r.iterations <= 3 * s.watchdog);
  REQUIRE(lambda.allFinite());
  const VecX v = G * lambda + c;
  CHECK(v[2] == Approx(-0.1).margin(1e-9));
  CHECK(v[5] == Approx(-0.1).margin(1e-9));
  CHECK(lambda[2] >= 0);
  CHECK(lambda[5] >= 0);
}

namespace {

// Records the islands (dense G) a World hands to its solver, then solves them with PGS.
struct RecordingSolver final : ContactSolver {
  struct Problem {
    MatX G;
    VecX c, mu, lambda;
    Index nc = 0, nl = 0;
  };
  std::vector<Problem>* out = nullptr;
  bool record = false;
  PgsSolver pgs;
  const char* name() const override { return "recording"; }
  void reserve_impl(Index n) override { pgs.reserve(n); }
  SolverResult solve_impl(const ContactProblem& p, VecXref lambda) override {
    if (record && p.size() >= 24) out->push_back({p.dense(), p.c, p.mu.head(p.nc), lambda, p.nc, p.nl});
    return pgs.solve(p, lambda);
  }
};

}  // namespace

TEST_CASE("LM solves the islands of a pile of spheres to the velocities PGS reaches", "[solvers][lm]") {
  // 27 frictionless spheres dropped into a box: islands of up to ~30 contacts with a sparse G
  // (contacts on a common sphere) of rank below their rows. For monotone problems (mu = 0, G
  // symmetric PSD) the velocity G lambda + c of a solution is unique, so LM and PGS run to
  // 1e-13 must agree on it even where the impulses differ.
  std::vector<RecordingSolver::Problem> problems;
  World w;
  w.set_time_step(1e-3);
  test::add_sphere_bin(w, 3, 0.33);
  auto recorder = std::make_unique<RecordingSolver>();
  RecordingSolver* rec = recorder.get();
  rec->out = &problems;
  w.set_contact_solver(std::move(recorder));
  for (int step = 0; step < 500; ++step) {
    rec->record = step >= 250 && step % 25 == 0;
    w.integrate();
  }
  REQUIRE(problems.size() >= 5);

  int compared = 0;
  for (const auto& p : problems) {
    const ContactProblem problem(p.G, p.c, p.mu, p.nc, p.nl);
    PgsSettings ps;
    ps.tolerance = 0;
    ps.max_iterations = 20000;
    ps.stall_window = 0;
    PgsSolver pgs(ps);
    VecX lp = p.lambda;
    pgs.solve(problem, lp);
    const VecX vp = p.G * lp + p.c;
    Scalar err = 0;  // PGS's complementarity error: the problem has an exact solution if ~0
    for (Index i = 0; i < p.nc; ++i) err = std::max(err, std::abs(std::min(lp[3 * i + 2], vp[3 * i + 2])));
    if (err > 1e-13) continue;  // no exact solution (chains between walls): nothing to compare
    ++compared;
    LmSolver lm;
    VecX ll = p.lambda;
    const SolverResult r = lm.solve(problem, ll);
    INFO(problem.nc << " contacts: " << to_string(r.status) << " after " << r.iterations);
    REQUIRE(r.converged());
    const VecX vl = p.G * ll + p.c;
    for (Index i = 0; i < p.nc; ++i) CHECK(vl[3 * i + 2] == Approx(vp[3 * i + 2]).margin(1e-9));
  }
  CHECK(compared >= 3);
}
