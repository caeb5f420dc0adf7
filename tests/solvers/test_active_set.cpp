// The active-set Newton stage (solvers/active_set.hpp) and its use by the bisection solver: its
// answers satisfy the contact conditions (Signorini, cone, Coulomb) on random problems and on
// the singular G of boxes resting on boxes (the least-norm corner impulses) and on random sticking
// problems, and are continuous in c (no flicker of a resting box's corner impulses).
#include <catch2/catch.hpp>

#include <random>

#include "impulse/solvers/active_set.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/solver_result.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

Mat3 as_skew(const Vec3& p) {
  Mat3 S;
  S << 0, -p.z(), p.y(), p.z(), 0, -p.x(), -p.y(), p.x(), 0;
  return S;
}

// Boxes (side 0.1 m, 1 kg) stacked on the ground, four corner contacts under each box (frame:
// tangents x, y, normal z): 12 rows per box on 6 dofs each, so G is singular. u_free: each box
// at rest after one step of gravity (dt 1 ms) plus `push` (m/s along x on the top box).
struct Stack {
  test::OwnedProblem p;
  explicit Stack(Index boxes, Scalar push = 0, Scalar mu = 0.8) {
    const Scalar m = 1, h = 0.05, I = m * (0.1 * 0.1 + 0.1 * 0.1) / 12, dt = 1e-3;
    const Index dof = 6 * boxes, nc = 4 * boxes;
    p.nc = nc;
    p.J = MatX::Zero(3 * nc, dof);
    p.Minv = MatX::Zero(dof, dof);
    VecX u = VecX::Zero(dof);
    for (Index b = 0; b < boxes; ++b) {
      p.Minv.block<3, 3>(6 * b, 6 * b) = Mat3::Identity() / m;
      p.Minv.block<3, 3>(6 * b + 3, 6 * b + 3) = Mat3::Identity() / I;
      u[6 * b + 2] = -9.81 * dt;
      for (Index k = 0; k < 4; ++k) {
        const Index i = 4 * b + k;
        const Vec3 corner((k & 1) ? h : -h, (k & 2) ? h : -h, -h);  // under box b
        // v_contact = v_b + w_b x r on box b, minus the same point's velocity on the box below
        p.J.block<3, 3>(3 * i, 6 * b) = Mat3::Identity();
        p.J.block<3, 3>(3 * i, 6 * b + 3) = -as_skew(corner);
        if (b > 0) {
          const Vec3 top(corner.x(), corner.y(), h);
          p.J.block<3, 3>(3 * i, 6 * (b - 1)) = -Mat3::Identity();
          p.J.block<3, 3>(3 * i, 6 * (b - 1) + 3) = as_skew(top);
        }
      }
    }
    u[6 * (boxes - 1)] += push;
    p.G = p.J * p.Minv * p.J.transpose();
    p.c = p.J * u;
    p.mu = VecX::Constant(nc, mu);
  }
};

void check_conditions(const ContactProblem& problem, const VecX& lambda, Scalar tol) {
  const ContactResiduals r = evaluate_residuals(problem, lambda);
  INFO(r.to_string());
  CHECK(r.coulomb_violation() < tol);
  CHECK(ActiveSetStage::residual(problem, lambda, problem.G * lambda + problem.c) < tol);
}

}  // namespace

TEST_CASE("active set: resting boxes on a singular G, least-norm corner impulses", "[solvers][active_set]") {
  for (Index boxes : {1, 2, 5}) {
    const Stack s(boxes);
    const ContactProblem problem = s.p.view();
    ActiveSetStage stage;
    VecX lambda = VecX::Zero(problem.size());
    const ActiveSetReport r = stage.solve(problem, lambda, 1e-9);
    INFO(boxes << " boxes: " << r.solves << " solves, residual " << r.residual);
    REQUIRE(r.converged);
    check_conditions(problem, lambda, 1e-9);
    // the least-norm answer of a symmetric box: each corner carries a quarter of the weight above
    // it (m g dt per box), no friction
    for (Index i = 0; i < problem.nc; ++i) {
      const Index above = boxes - i / 4;
      CHECK(lambda[3 * i + 2] == Approx(above * 9.81e-3 / 4).epsilon(1e-6));
      CHECK(std::abs(lambda[3 * i]) < 1e-8);
      CHECK(std::abs(lambda[3 * i + 1]) < 1e-8);
    }
  }
}

TEST_CASE("active set: a start that meets the tolerance is returned as it is, unfactored", "[solvers][active_set]") {
  // the sweeps hand over an iterate that meets the stage's tolerance (a projected right side the
  // sweeps already satisfy): no classification is tried and the impulses stay bit for bit
  const Stack s(3);
  const ContactProblem problem = s.p.view();
  ActiveSetStage stage;
  VecX lambda = VecX::Zero(problem.size());
  REQUIRE(stage.solve(problem, lambda, 1e-9).converged);
  const VecX answer = lambda;
  const ActiveSetReport r = stage.solve(problem, lambda, 1e-9);
  CHECK(r.converged);
  CHECK(r.factorizations == 0);
  CHECK(r.solves == 0);
  CHECK((lambda.array() == answer.array()).all());
}

TEST_CASE("active set: corner impulses are continuous in c (no flicker between steps)", "[solvers][active_set]") {
  // a resting stack whose top box is pushed a little harder each step, well inside the cone:
  // the impulses must follow c smoothly, step to step, from the last step's answer
  ActiveSetStage stage;
  VecX lambda = VecX::Zero(48), previous;
  Scalar largest_jump = 0;
  for (int step = 0; step <= 100; ++step) {
    const Stack s(4, 1e-5 * step);
    const ContactProblem problem = s.p.view();
    previous = lambda;
    REQUIRE(stage.solve(problem, lambda, 1e-10).converged);
    if (step > 0) largest_jump = std::max(largest_jump, (lambda - previous).lpNorm<Eigen::Infinity>());
  }
  // a 1e-5 m/s push on 1 kg changes the impulses by ~1e-5 N s; a flicker between corners would be
  // of the order of the corner loads, 2.5e-3 N s and more
  CHECK(largest_jump < 5e-5);
}

TEST_CASE("active set: random sticking problems are solved to their one solution", "[solvers][active_set]") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 20; ++trial) {
    const Index nc = 1 + trial % 4, nl = trial % 3, dof = 3 * nc + nl + 2;
    VecX lambda_star;
    const test::OwnedProblem p = test::make_sticking_problem(rng, nc, nl, dof, lambda_star);
    const ContactProblem problem = p.view();
    ActiveSetStage stage;
    VecX lambda = VecX::Zero(problem.size());
    const ActiveSetReport r = stage.solve(problem, lambda, 1e-9);
    INFO("trial " << trial << ": " << r.solves << " solves, residual " << r.residual);
    CHECK(r.converged);
    check_conditions(problem, lambda, 1e-8);
    CHECK((lambda - lambda_star).lpNorm<Eigen::Infinity>() < 1e-6 * (1 + lambda_star.lpNorm<Eigen::Infinity>()));
  }
}

TEST_CASE("bisection: the active-set stage finishes a stack, warm starts take one sweep", "[solvers][active_set][bisection]") {
  const Stack s(6, 0.01);
  const ContactProblem problem = s.p.view();
  BisectionSettings bs;
  bs.active_set_start = 50;  // the stage after 50 sweeps, or on a plateau
  BisectionSolver bisection(bs);
  VecX lambda = VecX::Zero(problem.size());
  const SolverResult r = bisection.solve(problem, lambda);
  CHECK(r.converged());
  CHECK(r.method == SolverMethod::ActiveSet);
  CHECK(r.iterations < 100);
  check_conditions(problem, lambda, 2e-6);
  // warm started with its own answer, the next solve takes one sweep
  const SolverResult again = bisection.solve(problem, lambda);
  CHECK(again.converged());
  CHECK(again.iterations == 1);
}

TEST_CASE("active set: least squares where the corners' targets disagree (a right side outside the range of G)",
          "[solvers][active_set]") {
  // Two resting boxes; the ground box's four corner targets get +e, -e, -e, +e on their normal
  // rows: no motion of a rigid box changes its corners' normal velocities in that pattern (they
  // are affine in the corner's x and y), so no impulse meets c with all four corners loaded. The
  // stage as written answers exactly by opening the two corners the pattern lifts (the box on a
  // diagonal: which two is decided by nanometres of gap). With least squares it moves c by the
  // pattern and keeps the four corners loaded: the answer of the consistent problem.
  const Scalar e = 1e-6;
  Stack s(2);
  const Scalar sign[4] = {1, -1, -1, 1};  // corners (-,-), (+,-), (-,+), (+,+)
  for (Index k = 0; k < 4; ++k) s.p.c[3 * k + 2] += e * sign[k];
  const ContactProblem problem = s.p.view();
  const Scalar quarter = 2 * 9.81e-3 / 4;  // (two boxes above each ground corner)

  ActiveSetStage plain;
  VecX lambda = VecX::Zero(problem.size());
  REQUIRE(plain.solve(problem, lambda, 1e-9).converged);
  check_conditions(problem, lambda, 1e-9);
  for (Index k = 0; k < 4; ++k) {
    if (sign[k] > 0) {
      CHECK(lambda[3 * k + 2] < 1e-9);  // (lifted)
    } else {
      CHECK(lambda[3 * k + 2] == Approx(2 * quarter).epsilon(1e-3));
    }
  }

  ActiveSetSettings ls;
  ls.least_squares = true;
  ActiveSetStage stage;
  lambda.setZero();
  const ActiveSetReport r = stage.solve(problem, lambda, 1e-9, ls);
  INFO(r.solves << " solves, residual " << r.residual);
  REQUIRE(r.converged);
  const VecX moved = VecX(stage.right_side()) - problem.c;
  CHECK(moved.lpNorm<Eigen::Infinity>() == Approx(e).epsilon(1e-6));
  for (Index k = 0; k < 4; ++k) CHECK(moved[3 * k + 2] == Approx(-e * sign[k]).epsilon(1e-6));
  CHECK(moved.tail(problem.size() - 12).lpNorm<Eigen::Infinity>() < 1e-12);  // (the top box's rows: consistent)
  const VecX c_moved = stage.right_side();
  check_conditions(problem.with_c(c_moved), lambda, 1e-9);
  for (Index k = 0; k < 4; ++k) CHECK(lambda[3 * k + 2] > 0.9 * quarter);
}

TEST_CASE("active set: least squares steps from the start's impulses, not to the least-norm answer",
          "[solvers][active_set]") {
  // A consistent resting stack and a start with an internal load along the null space of G (the
  // ground box's corners pressed +d, -d, -d, +d: no net force or torque, v unchanged): the stage
  // as written answers with the least-norm corner loads, the least-squares stage keeps the start's
  // internal load (the step of least norm from it), inside the cones as the start was.
  const Stack s(2);
  const ContactProblem problem = s.p.view();
  VecX start = VecX::Zero(problem.size());
  for (Index i = 0; i < problem.nc; ++i) start[3 * i + 2] = (2 - i / 4) * 9.81e-3 / 4;
  const Scalar d = 1e-3, sign[4] = {1, -1, -1, 1};
  for (Index k = 0; k < 4; ++k) start[3 * k + 2] += d * sign[k];
  for (Index k = 4; k < 8; ++k) start[3 * k + 2] *= 1.01;  // (the top box off its answer: a step to make)
  VecX plain_answer = start, ls_answer = start;
  ActiveSetStage plain, stage;
  REQUIRE(plain.solve(problem, plain_answer, 1e-10).converged);
  ActiveSetSettings ls;
  ls.least_squares = true;
  REQUIRE(stage.solve(problem, ls_answer, 1e-10, ls).converged);
  for (Index k = 0; k < 4; ++k) {
    CHECK(plain_answer[3 * k + 2] == Approx(2 * 9.81e-3 / 4).epsilon(1e-6));
    CHECK(ls_answer[3 * k + 2] == Approx(2 * 9.81e-3 / 4 + d * sign[k]).epsilon(1e-6));
  }
  check_conditions(problem, ls_answer, 1e-10);
}

TEST_CASE("active set: above retry_rows the stage stops after three classifications far from its start",
          "[solvers][active_set]") {
  // 16 boxes resting in a column (192 rows) from their answer, whose corners' targets then
  // disagree by 1 um/s in a pattern no rigid motion meets: the start's residual is about 1e-6,
  // and the stage's first classifications put impulses of order 1e-6 / eps on the corners, far
  // above it. Below retry_rows the stage keeps going and converges; above it, it stops after its
  // third classification and hands back its start bit for bit (none of its iterates beat it).
  const Index boxes = 16;
  Stack s(boxes);
  VecX start = VecX::Zero(12 * boxes);
  ActiveSetStage first;
  REQUIRE(first.solve(s.p.view(), start, 1e-10).converged);
  for (Index i = 0; i < 4 * boxes; ++i) {
    const unsigned h = static_cast<unsigned>(i) * 2654435761u;
    s.p.c[3 * i + 2] += 1e-6 * (((h >> 13) & 1) ? 1 : -1);
  }
  const ContactProblem problem = s.p.view();
  REQUIRE(problem.size() == 192);

  ActiveSetSettings cheap;  // (the default retry_rows, 400: the island is below it)
  ActiveSetStage stage;
  VecX lambda = start;
  const ActiveSetReport full = stage.solve(problem, lambda, 1e-9, cheap);
  INFO("below retry_rows: " << full.factorizations << " factorizations, residual " << full.residual);
  CHECK(full.converged);
  CHECK(full.factorizations > 3);
  check_conditions(problem, lambda, 1e-9);

  ActiveSetSettings costly;
  costly.retry_rows = 100;
  lambda = start;
  const ActiveSetReport stopped = stage.solve(problem, lambda, 1e-9, costly);
  CHECK_FALSE(stopped.converged);
  CHECK(stopped.factorizations == 3);
  CHECK((lambda.array() == start.array()).all());
}
