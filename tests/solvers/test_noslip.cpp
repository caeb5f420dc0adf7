// No-slip solver (Drumwright 2015, sec. VI, Algorithms 1-2, Theorem 1) on rank-deficient
// problems: more contact rows than DOF, where the rank decisions of FIND-INDICES and of the PPM
// decide whether the answer is right or 1e14 N s. Known answers on a box resting on a plane
// (4 coplanar corners plus a duplicated contact: 15 rows on 6 DOF), and the ANYmal problems
// with feet, torso corners and shanks (up to 96 rows on 18 DOF), checked against an
// independent certificate of which normal targets no zero-slip impulse can meet.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/solver_result.hpp"
#include "scenarios/anymal_problems.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

constexpr Scalar kDt = 1e-3, kGravity = 9.81, kMass = 2.0;

// A free box (6 DOF, u = (v_com, omega) in world axes) touching the ground at its 4 bottom
// corners plus a second contact at corner 0 (as a collision pipeline reporting a vertex twice
// would). Contact i has frame (t1, t2, n_i); flat: n_i = z, tilted: n_i tilted by ~0.1 rad in
// a different direction per contact (uneven ground). Gravity acted for one step (u_free =
// -g dt z); `target` is a normal velocity target folded into c as the assembler does
// (c_n = J_n u_free - target, e.g. erp position correction).
struct BoxProblem {
  test::OwnedProblem p;
  MatX M;
  VecX u_free;
};

BoxProblem make_box(bool tilted, Scalar target) {
  const Vec3 half(0.3, 0.2, 0.1);
  const Vec3 inertia = kMass / 3 * Vec3(half.y() * half.y() + half.z() * half.z(),
                                        half.x() * half.x() + half.z() * half.z(),
                                        half.x() * half.x() + half.y() * half.y());
  BoxProblem b;
  b.M = MatX::Zero(6, 6);
  b.M.diagonal() << kMass, kMass, kMass, inertia;
  const Vec3 corners[5] = {{half.x(), half.y(), -half.z()},  {-half.x(), half.y(), -half.z()},
                           {-half.x(), -half.y(), -half.z()}, {half.x(), -half.y(), -half.z()},
                           {half.x(), half.y(), -half.z()}};
  const Vec3 tilts[5] = {{0.1, 0.03, 1}, {-0.05, 0.1, 1}, {-0.1, -0.06, 1}, {0.04, -0.1, 1}, {0.07, 0.07, 1}};
  constexpr Index nc = 5;
  test::OwnedProblem& p = b.p;
  p.nc = nc;
  p.nl = 0;
  p.J = MatX::Zero(3 * nc, 6);
  for (Index i = 0; i < nc; ++i) {
    const Vec3 n = tilted ? tilts[i].normalized() : Vec3::UnitZ();
    const Vec3 t1 = tilted ? n.unitOrthogonal() : Vec3::UnitX();
    const Vec3 t2 = n.cross(t1);
    const Vec3 axes[3] = {t1, t2, n};
    for (Index k = 0; k < 3; ++k) {  // d . (v + omega x r) = d . v + omega . (r x d)
      p.J.block<1, 3>(3 * i + k, 0) = axes[k].transpose();
      p.J.block<1, 3>(3 * i + k, 3) = corners[i].cross(axes[k]).transpose();
    }
  }
  p.Minv = b.M.inverse();
  p.G = p.J * p.Minv * p.J.transpose();
  p.mu = VecX::Constant(nc, 0.5);
  b.u_free = VecX::Zero(6);
  b.u_free[2] = -kGravity * kDt;
  p.c = p.J * b.u_free;
  for (Index i = 0; i < nc; ++i) p.c[3 * i + 2] -= target;
  return b;
}

}  // namespace

TEST_CASE("no-slip: box on four coplanar corners plus a duplicate, known answer", "[solvers][noslip]") {
  // flat ground: the 10 tangential rows have rank 3 (x, y, yaw), the 5 normals rank 3 (z, roll,
  // pitch); with a uniform target b the box leaves at v_z = b: u+ = (0, 0, b, 0, 0, 0), total
  // normal impulse m (g dt + b), zero slip; b = 0 is a box at rest (total m g dt).
  for (const Scalar target : {0.0, 0.01}) {
    const BoxProblem b = make_box(false, target);
    const ContactProblem problem = b.p.view();
    NoSlipSolver solver;
    VecX lambda = VecX::Zero(problem.size());
    const SolverResult r = solver.solve(problem, lambda);
    INFO("target " << target << ": " << to_string(r.status) << ", lambda " << lambda.transpose());
    REQUIRE(r.converged());
    CHECK(solver.unmet_target() == 0);
    CHECK(solver.equality_rows() == 3);
    CHECK(solver.equality_rows() + solver.active_rows() <= 6);
    const ContactResiduals res = evaluate_residuals(problem, lambda);
    INFO(res.to_string());
    CHECK(res.slip <= 1e-10);
    CHECK(res.signorini() <= 1e-10);
    Scalar total_normal = 0;
    for (Index i = 0; i < problem.nc; ++i) total_normal += lambda[3 * i + 2];
    const Scalar expected = kMass * (kGravity * kDt + target);
    CHECK(std::abs(total_normal - expected) <= 1e-10 * expected);
    VecX u_expected = VecX::Zero(6);
    u_expected[2] = target;
    const VecX u_next = b.u_free + b.p.Minv * b.p.J.transpose() * lambda;
    CHECK((u_next - u_expected).norm() <= 1e-10);
    CHECK(lambda.cwiseAbs().maxCoeff() <= 2 * expected);  // no huge cancelling impulses
  }
}

TEST_CASE("no-slip: box on tilted corners, locked by the no-slip rows", "[solvers][noslip]") {
  // Each corner has its own tangent plane: the 10 tangential rows have rank 6, so zero slip
  // alone fixes u+ = 0 and every normal row is a combination of tangential ones. Without a
  // target (c = J u_free) the box stops: J^T lambda = -M u_free (weight m g dt carried through
  // the tilted tangent planes). With a normal target b > 0 no impulse can meet it (the box may
  // not move): the solver keeps zero slip, stops the box and reports b as unmet, instead of
  // the 1e14 N s an exact LCP pivot towards a null direction gives.
  for (const Scalar target : {0.0, 0.01}) {
    const BoxProblem b = make_box(true, target);
    const ContactProblem problem = b.p.view();
    MatX J_T(2 * problem.nc, 6);
    for (Index i = 0; i < problem.nc; ++i) J_T.middleRows(2 * i, 2) = b.p.J.middleRows(3 * i, 2);
    REQUIRE(Eigen::FullPivLU<MatX>(J_T).rank() == 6);
    NoSlipSolver solver;
    VecX lambda = VecX::Zero(problem.size());
    const SolverResult r = solver.solve(problem, lambda);
    INFO("target " << target << ": " << to_string(r.status) << ", lambda " << lambda.transpose());
    REQUIRE(r.converged());
    CHECK(solver.equality_rows() == 6);
    CHECK(solver.active_rows() == 0);
    const ContactResiduals res = evaluate_residuals(problem, lambda);
    INFO(res.to_string());
    CHECK(res.slip <= 1e-10);
    CHECK(res.negative_impulse <= 1e-12);
    CHECK(res.complementarity <= 1e-10);
    CHECK(std::abs(solver.unmet_target() - target) <= 1e-10);
    CHECK(std::abs(r.residual - target) <= 1e-10);
    CHECK(res.penetration <= target + 1e-10);
    const VecX u_next = b.u_free + b.p.Minv * b.p.J.transpose() * lambda;
    CHECK(u_next.norm() <= 1e-10);
    CHECK(lambda.cwiseAbs().maxCoeff() <= 100 * kMass * kGravity * kDt);
  }
}

TEST_CASE("no-slip on ANYmal problems with torso and shank contacts: zero slip, least violation",
          "[solvers][noslip]") {
  // 8 to 32 contacts on 18 DOF (24 to 96 rows). The assembler folds an erp target of
  // 0.2 (1e-4 - 1e-5) / 1e-3 = 0.018 m/s into every normal row (depth 1e-4 m). The certificate,
  // computed here independently of the solver: a normal row j whose G row is a combination
  // alpha of the tangential rows has v_j = c_j - alpha^T c_T whenever v_T = 0, so no zero-slip
  // impulse can make it better than that. The solver must meet Signorini on every other row,
  // and on those rows reach exactly that velocity with zero impulse.
  scenarios::AnymalProblemBuilder builder;
  NoSlipSolver solver;
  solver.reserve(3 * 32);
  int certified_rows = 0;
  for (const Index nc : {Index(8), Index(16), Index(32)}) {
    std::mt19937 rng(900 + static_cast<unsigned>(nc));
    for (int k = 0; k < 10; ++k) {
      const scenarios::AnymalProblem p = builder.make(rng, nc);
      const ContactProblem problem = p.view();
      VecX lambda = VecX::Zero(problem.size());
      const SolverResult r = solver.solve(problem, lambda);
      INFO(nc << " contacts, problem " << k << ": " << to_string(r.status) << " after " << r.iterations
              << " pivots, |E| " << solver.equality_rows() << ", |B| " << solver.active_rows());
      REQUIRE(r.converged());
      REQUIRE(lambda.allFinite());
      // Theorem 1 and FIND-INDICES keep independent rows only: at most rank(G) = 18 of them
      CHECK(solver.equality_rows() + solver.active_rows() <= 18);
      CHECK(r.iterations <= 2 * 18);  // pivots bounded by the DOF, not by the contact count
      const ContactResiduals res = evaluate_residuals(problem, lambda);
      INFO(res.to_string());
      CHECK(res.slip <= 1e-10);
      CHECK(res.negative_impulse <= 1e-12);
      CHECK(res.complementarity <= 1e-10);
      CHECK(solver.unmet_target() <= 0.018 + 1e-9);
      // independent certificate of the unavoidable normal velocities
      MatX G_T(problem.size(), 2 * nc);
      VecX c_T(2 * nc);
      for (Index i = 0; i < nc; ++i) {
        for (Index t = 0; t < 2; ++t) {
          G_T.col(2 * i + t) = p.G.col(3 * i + t);
          c_T[2 * i + t] = p.c[3 * i + t];
        }
      }
      const test::LeastSquares least_squares(G_T, 1e-10);
      const VecX v = p.G * lambda + p.c;
      for (Index i = 0; i < nc; ++i) {
        const Index j = 3 * i + 2;
        const VecX alpha = least_squares.solve(p.G.col(j));
        const bool in_span = (G_T * alpha - p.G.col(j)).norm() <= 1e-9 * p.G.col(j).norm();
        INFO("contact " << i << ": v_n " << v[j] << ", lambda_n " << lambda[j] << ", in span " << in_span);
        if (in_span) {
          ++certified_rows;
          const Scalar fixed = p.c[j] - alpha.dot(c_T);
          CHECK(std::abs(v[j] - fixed) <= 1e-9);
          if (fixed < 0) CHECK(lambda[j] == 0);
        } else {
          CHECK(v[j] >= -1e-10);
        }
      }
    }
  }
  CHECK(certified_rows > 0);  // the torso corners at least: the case this test is about
}

TEST_CASE("no-slip on random rank-deficient problems with physical c: exact Signorini", "[solvers][noslip]") {
  // c = J u (no targets): the LCP is solvable (Baraff) and the solver must meet every promise
  // exactly, also with up to 3 x 16 + 2 rows on 18 DOF and nothing reported unmet.
  std::mt19937 rng(4504);
  for (int k = 0; k < 20; ++k) {
    const Index nc = 6 + k % 11;  // nc + nl <= 18 (make_physical_problem)
    const test::OwnedProblem p = test::make_physical_problem(rng, nc, k % 3, 18, 0.5, 0.5);
    NoSlipSolver solver;
    VecX lambda = VecX::Zero(p.view().size());
    const SolverResult r = solver.solve(p.view(), lambda);
    INFO(nc << " contacts: " << to_string(r.status) << " after " << r.iterations);
    REQUIRE(r.converged());
    CHECK(solver.unmet_target() == 0);
    CHECK(solver.equality_rows() + solver.active_rows() <= 18);
    const ContactResiduals res = evaluate_residuals(p.view(), lambda);
    INFO(res.to_string());
    CHECK(res.slip <= 1e-9);
    CHECK(res.signorini() <= 1e-10);
  }
}

TEST_CASE("no-slip: a nearly duplicated contact is dropped, its slip bounded and reported", "[solvers][noslip]") {
  // Contact 4 sits where contact 0 is, its frame rotated by theta = 3e-6 rad about t1 (a contact
  // reported twice with slightly different normals). Its t2 row is cos t2_0 + sin n_0, so against
  // the kept tangential rows its Schur pivot is ~theta^2 G_nn: below rank_tolerance, above the
  // rounding noise. FIND-INDICES keeps one of t2_0, t2_4 and drops the other; the dropped row's
  // velocity is then exactly +-tan/sin(theta) v_n0 (zero while contact 0 stays closed, ~theta
  // times its opening speed otherwise). Every other promise holds to rounding, and the answer
  // is the 4-contact answer (impulses of a normal size, not the 1e4 N s of locking the point).
  std::mt19937 rng(1931);
  const Scalar theta = 3e-6;
  int slipping = 0;
  for (int k = 0; k < 40; ++k) {
    const test::OwnedProblem p4 = test::make_physical_problem(rng, 4, 0, 18, 0.5, 0.5);
    test::OwnedProblem p = p4;
    const Index n = 15;
    const Scalar ct = std::cos(theta), st = std::sin(theta);
    p.J.conservativeResize(n, 18);
    p.J.row(12) = p4.J.row(0);
    p.J.row(13) = ct * p4.J.row(1) + st * p4.J.row(2);
    p.J.row(14) = -st * p4.J.row(1) + ct * p4.J.row(2);
    p.c.conservativeResize(n);  // c = J u for the same u
    p.c[12] = p4.c[0];
    p.c[13] = ct * p4.c[1] + st * p4.c[2];
    p.c[14] = -st * p4.c[1] + ct * p4.c[2];
    p.nc = 5;
    p.G = p.J * p.Minv * p.J.transpose();
    p.G = 0.5 * (p.G + p.G.transpose());
    p.mu = VecX::Constant(5, 0.5);

    NoSlipSolver solver;
    VecX lambda = VecX::Zero(n);
    const SolverResult r = solver.solve(p.view(), lambda);
    INFO("problem " << k << ": " << to_string(r.status) << ", |E| " << solver.equality_rows());
    REQUIRE(r.converged());
    CHECK(solver.equality_rows() == 8);
    const VecX v = p.G * lambda + p.c;
    const ContactResiduals res = evaluate_residuals(p.view(), lambda);
    INFO(res.to_string() << "\nv " << v.transpose());
    CHECK(res.signorini() <= 1e-10);
    CHECK(solver.unmet_target() == 0);
    for (const Index row : {0, 3, 4, 6, 7, 9, 10, 12}) CHECK(std::abs(v[row]) <= 1e-10);
    // the pair t2_0 (row 1), t2_4 (row 13): one is zero, the other is the twin's normal motion
    const Scalar expected = std::tan(theta) * std::abs(v[2]);
    const Scalar dropped = std::max(std::abs(v[1]), std::abs(v[13]));
    CHECK(std::min(std::abs(v[1]), std::abs(v[13])) <= 1e-10);
    CHECK(std::abs(dropped - expected) <= 1e-10 + 1e-3 * expected);
    CHECK(std::abs(solver.dropped_slip() - dropped) <= 1e-12);
    CHECK(r.residual >= solver.dropped_slip());
    slipping += dropped > 1e-9;
    // the same motion as without the duplicate: M^-1 J^T lambda against the 4-contact solve
    VecX lambda4 = VecX::Zero(12);
    REQUIRE(NoSlipSolver().solve(p4.view(), lambda4).converged());
    const VecX du = p.Minv * p.J.transpose() * lambda, du4 = p4.Minv * p4.J.transpose() * lambda4;
    CHECK((du - du4).norm() <= 1e-4 * (1 + du4.norm()));
    CHECK(lambda.cwiseAbs().maxCoeff() <= 10 * (1 + lambda4.cwiseAbs().maxCoeff()));
  }
  WARN("nearly duplicated contact: the dropped row slips (contact 0 opens) in " << slipping << " of 40 problems");
  CHECK(slipping > 0);
}
