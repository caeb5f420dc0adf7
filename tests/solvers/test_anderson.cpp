// Anderson acceleration of the sweeping solvers (solvers/anderson.hpp): on a stack, where block
// Gauss-Seidel converges slowly, the accelerated bisection and PGS reach the same impulses as the
// plain sweeps in a fraction of the sweeps; problems solved within anderson_start sweeps are
// untouched; the settings are validated.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/solvers/anderson.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "solver_test_problems.hpp"

using namespace impulse;

namespace {

// A column of n point masses resting on the ground, contact k between body k - 1 and body k
// (body -1: the ground), each body pushed sideways by its own free velocity. In the contact frame
// (x, y tangent, z normal) contact k's rows act on body k with +I and on body k - 1 with -I, so
//     G_kk = (1/m_k + 1/m_{k-1}) I,   G_{k,k-1} = G_{k-1,k} = -(1/m_{k-1}) I.
// Gauss-Seidel needs O(n^2) sweeps to carry the weight of the top bodies down to the ground: the
// stack is the slow case of the per-contact solvers. The solution is unique (G is positive
// definite), with lambda_z,k = sum_{j >= k} m_j g dt when every contact sticks.
test::OwnedProblem stack_problem(Index n, Scalar mu, Scalar sideways) {
  const Scalar dt = 1e-3, g = 9.81;
  VecX mass(n), v_free(3 * n);
  for (Index k = 0; k < n; ++k) {
    mass[k] = 1.0 + 0.5 * std::sin(0.7 * static_cast<Scalar>(k));  // 0.5 .. 1.5 kg, uneven
    v_free.segment<3>(3 * k) = Vec3(sideways * std::cos(1.3 * k), sideways * std::sin(0.4 * k), -g * dt);
  }
  test::OwnedProblem p;
  p.nc = n;
  p.J = MatX::Zero(3 * n, 3 * n);
  p.Minv = MatX::Zero(3 * n, 3 * n);
  for (Index k = 0; k < n; ++k) {
    p.J.block<3, 3>(3 * k, 3 * k) = Mat3::Identity();
    if (k > 0) p.J.block<3, 3>(3 * k, 3 * (k - 1)) = -Mat3::Identity();
    p.Minv.block<3, 3>(3 * k, 3 * k) = Mat3::Identity() / mass[k];
  }
  p.G = p.J * p.Minv * p.J.transpose();
  p.c = p.J * v_free;
  p.mu = VecX::Constant(n, mu);
  return p;
}

std::unique_ptr<ContactSolver> solver(const std::string& name, Index memory, Index start = 10) {
  SolverSettings s;
  s.name = name;
  s.bisection.max_iterations = s.pgs.max_iterations = 20000;
  s.bisection.stall_window = s.pgs.stall_window = 0;  // converge to the tolerance
  s.bisection.tolerance = s.pgs.tolerance = 1e-9;
  s.bisection.anderson_memory = s.pgs.anderson_memory = memory;
  s.bisection.anderson_start = s.pgs.anderson_start = start;
  s.bisection.qp_start = 0;  // the sweeps alone (frictionless problems would switch to MPRGP)
  s.bisection.active_set_start = 0;  // (and problems with friction to the active-set stage)
  return make_contact_solver(s);
}

}  // namespace

TEST_CASE("Anderson acceleration: a 30-body stack converges to the same impulses in far fewer sweeps",
          "[solvers][anderson]") {
  for (const Scalar mu : {0.0, 0.8}) {
    // sideways pushes that the friction holds (sticking) and, with mu 0, that slide
    const test::OwnedProblem p = stack_problem(30, mu, 2e-4);
    for (const std::string name : {"bisection", "pgs"}) {
      VecX plain = VecX::Zero(p.G.rows()), mixed = VecX::Zero(p.G.rows());
      const SolverResult r0 = solver(name, 0)->solve(p.view(), plain);
      const SolverResult r1 = solver(name, 5)->solve(p.view(), mixed);
      INFO(name << ", mu " << mu << ": plain " << r0.iterations << " sweeps, accelerated " << r1.iterations);
      REQUIRE(r0.status == SolverStatus::Converged);
      REQUIRE(r1.status == SolverStatus::Converged);
      CHECK(r1.iterations * 4 < r0.iterations);
      // both are the unique solution: the weight of the bodies above each contact
      CHECK((plain - mixed).cwiseAbs().maxCoeff() < 1e-6);
      const VecX v = p.G * mixed + p.c;
      for (Index k = 0; k < p.nc; ++k) {
        CHECK(mixed[3 * k + 2] > 0);
        CHECK(std::abs(v[3 * k + 2]) < 1e-7);  // every contact closed
        if (mu > 0) CHECK(v.segment<2>(3 * k).norm() < 1e-7);  // and sticking
      }
    }
  }
}

TEST_CASE("Anderson acceleration leaves problems solved within anderson_start sweeps bit for bit",
          "[solvers][anderson]") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const test::OwnedProblem p = test::make_physical_problem(rng, 4, 1, 12, 0.3, 1.0);
    for (const std::string name : {"bisection", "pgs"}) {
      VecX a = VecX::Zero(p.G.rows()), b = VecX::Zero(p.G.rows());
      const SolverResult ra = solver(name, 0)->solve(p.view(), a);
      const SolverResult rb = solver(name, 5, ra.iterations)->solve(p.view(), b);
      INFO(name << ", trial " << trial);
      CHECK(ra.iterations == rb.iterations);
      CHECK(a == b);
    }
  }
}

TEST_CASE("Anderson settings are validated", "[solvers][anderson]") {
  SolverSettings s;
  s.bisection.anderson_memory = 9;
  CHECK_THROWS_WITH(make_contact_solver(s), Catch::Contains("anderson_memory must be in [0, 8], got 9"));
  s.bisection.anderson_memory = 3;
  s.bisection.anderson_start = -1;
  CHECK_THROWS_WITH(make_contact_solver(s), Catch::Contains("anderson_start must be in [0, 1e8], got -1"));
  s.name = "pgs";
  s.pgs.anderson_memory = -2;
  CHECK_THROWS_WITH(make_contact_solver(s), Catch::Contains("solver 'pgs': anderson_memory must be in [0, 8], got -2"));
}

TEST_CASE("Anderson mixing: the cached dF^T dF gives Walker and Ni's mixed point as the window slides",
          "[solvers][anderson]") {
  // Rows of one-row constraints (projection max(0, .)) and the Jacobi map T(x) = x - D^-1 (G x + c)
  // of a positive definite G; memory 3 over 12 sweeps: the window of difference columns wraps
  // three times. The reference recomputes every product of the normal equations (eq. 3.1 of
  // Walker and Ni with the moving window) from the stored differences, oldest first.
  const Index n = 9, memory = 3;
  const MatX B = MatX::Random(n, n);
  test::OwnedProblem p;
  p.nc = 0;
  p.nl = n;
  p.G = B * B.transpose() + n * MatX::Identity(n, n);
  p.c = -p.G * VecX::Constant(n, 1.0) + 0.1 * VecX::Random(n);
  p.mu = VecX::Zero(1);
  const ContactProblem problem = p.view();
  const VecX w = p.G.diagonal().cwiseSqrt();
  auto jacobi = [&](const VecX& x) { return VecX(x - (p.G * x + p.c).cwiseQuotient(p.G.diagonal())); };

  AndersonAcceleration aa;
  aa.reserve(n, memory);
  aa.begin(problem, memory);
  aa.prime();
  std::vector<VecX> dF, dG;  // the reference's window, oldest first
  VecX f_prev, g_prev;
  VecX x = VecX::Zero(n);
  Index mixes = 0;
  for (int k = 0; k < 12; ++k) {
    aa.before_sweep(x);
    const VecX g = jacobi(x);
    const VecX f = w.cwiseProduct(g - x);
    if (k > 0) {
      dF.push_back(f - f_prev);
      dG.push_back(g - g_prev);
      if (static_cast<Index>(dF.size()) > memory) dF.erase(dF.begin()), dG.erase(dG.begin());
    }
    f_prev = f;
    g_prev = g;
    VecX expected = g;
    if (!dF.empty()) {
      const Index q = static_cast<Index>(dF.size());
      MatX A(q, q);
      VecX b(q);
      for (Index a = 0; a < q; ++a) {
        b[a] = dF[a].dot(f);
        for (Index c = 0; c < q; ++c) A(a, c) = dF[a].dot(dF[c]);
      }
      A.diagonal().array() += 1e-10 * A.diagonal().maxCoeff();
      const VecX gamma = A.ldlt().solve(b);
      for (Index a = 0; a < q; ++a) expected -= gamma[a] * dG[a];
      expected = expected.cwiseMax(0);
    }
    VecX lambda = g;
    const bool mixed = aa.after_sweep(lambda, 1.0 / (k + 1));  // (a falling error: no restart)
    INFO("sweep " << k);
    CHECK(mixed == !dF.empty());
    mixes += mixed;
    CHECK((lambda - expected).norm() <= 1e-9 * (1 + expected.norm()));
    x = lambda;
  }
  CHECK(mixes == 11);
}
