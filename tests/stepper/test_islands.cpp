// Islands, block-sparse Delassus, memory that grows with use (docs/architecture.md): islands found by
// union-find through contacts (static geometry joins nothing), block-sparse and dense island G
// equal and solved to the same impulses, the contact cap reported, no allocation in steady state,
// and the memory of a World with one ANYmal.
#include <algorithm>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/pgs.hpp"
#include "impulse/solvers/solver_result.hpp"
#include "impulse/world/world.hpp"
#include "support/alloc_counter.hpp"
#include "support/draw.hpp"
#include "support/matchers.hpp"
#include "support/sphere_bin.hpp"

using namespace impulse;

namespace {

const std::string kAnymal = impulse_test::source_path("models/anymal/anymal.urdf");

void place(ArticulatedSystem& s, const Vec3& p) {
  VecX q = s.q();
  q.head<3>() = p;
  s.set_q(q);
}

// A stack of `n` boxes (0.2 m cubes) at (x, y) on the ground, just touching.
void add_stack(World& w, Scalar x, Scalar y, int n) {
  for (int k = 0; k < n; ++k) {
    ArticulatedSystem& b = w.add_box("box", Vec3(0.2, 0.2, 0.2), 1.0);
    place(b, Vec3(x, y, 0.1 + 0.2 * k - 1e-4));
  }
}

// A pile of spheres (r = 0.1) in a lattice with random jitter, in a box of walls around it.
void add_pile(World& w, int nx, int ny, int nz, std::mt19937& rng) {
  std::uniform_real_distribution<Scalar> jitter(-0.0005, 0.0005);
  w.add_wall("wall", Vec3(1, 0, 0), -0.1);
  w.add_wall("wall", Vec3(0, 1, 0), -0.1);
  w.add_wall("wall", Vec3(-1, 0, 0), -(0.1999 * (nx - 1) + 0.1));
  w.add_wall("wall", Vec3(0, -1, 0), -(0.1999 * (ny - 1) + 0.1));
  for (int i = 0; i < nx; ++i)
    for (int j = 0; j < ny; ++j)
      for (int k = 0; k < nz; ++k) {
        ArticulatedSystem& s = w.add_sphere("ball", 0.1, 1.0);
        const Scalar jy = jitter(rng), jx = jitter(rng);  // g++'s order of the arguments
        place(s, Vec3(0.1999 * i + jx, 0.1999 * j + jy, 0.099 + 0.1999 * k));
      }
}

VecX anymal_stand_q(const ArticulatedSystem& robot, Scalar height) {
  VecX q = robot.model().neutral_configuration();
  q[2] = height;
  const Scalar hfe[4] = {0.4, 0.4, -0.4, -0.4}, kfe[4] = {-0.8, -0.8, 0.8, 0.8};
  for (int leg = 0; leg < 4; ++leg) {
    q[7 + 3 * leg + 1] = hfe[leg];
    q[7 + 3 * leg + 2] = kfe[leg];
  }
  return q;
}

// The ground, a 1.5 m platform (0.2 m high) and ANYmal with its feet just above the platform.
struct RobotOnBox {
  ArticulatedSystem* box;
  ArticulatedSystem* robot;
};
RobotOnBox add_robot_on_box(World& w) {
  w.add_ground();
  ArticulatedSystem& box = w.add_box("platform", Vec3(1.5, 1.5, 0.2), 50.0);
  place(box, Vec3(0, 0, 0.1 - 1e-4));
  ArticulatedSystem& robot = w.add_articulated_system(kAnymal);
  robot.set_q(anymal_stand_q(robot, 0.2 + 0.549));  // feet just above the box top (z = 0.2)
  return {&box, &robot};
}

}  // namespace

TEST_CASE("islands: two separate stacks are two islands, the ground joins nothing", "[stepper][islands]") {
  World w;
  w.add_ground();
  add_stack(w, 0, 0, 3);
  add_stack(w, 2, 0, 2);
  ArticulatedSystem& lone = w.add_sphere("lone", 0.1, 1.0);
  place(lone, Vec3(-3, 0, 2));  // in the air: no rows, no island
  for (int i = 0; i < 20; ++i) REQUIRE(w.integrate() == StepStatus::Ok);
  const StepStats& st = w.stats();
  CHECK(st.islands == 2);
  CHECK(st.largest_island == 3);
  const DelassusAssembler& a = w.assembler();
  REQUIRE(a.num_islands() == 2);
  // every contact of the first stack in one island, the second stack's in the other
  for (Index i = 0; i < a.num_contacts(); ++i) {
    const Vec3 p = w.contacts()[i].position;
    CHECK(a.contact_island(i) == (p.x() < 1 ? a.contact_island(0) : 1 - a.contact_island(0)));
  }
  CHECK(a.island(0).num_systems + a.island(1).num_systems == 5);
  CHECK(a.island(0).problem.size() + a.island(1).problem.size() == a.num_rows());
}

TEST_CASE("islands: the step reports each island's solve; the aggregates are over them", "[stepper][islands]") {
  // the per-island records against the assembler's islands and the step's aggregates, for the
  // default solve, a budget that runs out and a solve finished by the active-set stage
  auto check_aggregates = [](const StepStats& st) {
    REQUIRE(static_cast<Index>(st.island_results.size()) == st.islands);
    Index not_converged = 0, active_set = 0, iterations = 0;
    Scalar residual = 0;
    for (const IslandResult& r : st.island_results) {
      not_converged += r.solver.converged() ? 0 : 1;
      active_set += r.solver.converged() && r.solver.method == SolverMethod::ActiveSet ? 1 : 0;
      iterations = std::max(iterations, r.solver.iterations);
      residual = std::max(residual, r.solver.residual);
    }
    CHECK(not_converged == st.islands_not_converged);
    CHECK(active_set == st.islands_active_set);
    CHECK(iterations == st.solver.iterations);
    CHECK(residual == st.solver.residual);
    CHECK((not_converged == 0) == st.solver.converged());
  };
  SECTION("two stacks: one record per island, its size the assembler's") {
    World w;
    w.add_ground();
    add_stack(w, 0, 0, 3);
    add_stack(w, 2, 0, 2);
    for (int i = 0; i < 20; ++i) REQUIRE(w.integrate() == StepStatus::Ok);
    const StepStats& st = w.stats();
    check_aggregates(st);
    const DelassusAssembler& a = w.assembler();
    REQUIRE(st.island_results.size() == 2);
    for (Index k = 0; k < 2; ++k) {
      const IslandResult& r = st.island_results[static_cast<std::size_t>(k)];
      CHECK(r.systems == a.island(k).num_systems);
      CHECK(r.contacts == a.island(k).problem.nc);
      CHECK(r.rows == a.island(k).problem.size());
      CHECK(r.contacts > 0);
      CHECK(r.solver.converged());
      CHECK_FALSE(r.at_cap());
    }
    CHECK(st.island_results[0].systems + st.island_results[1].systems == 5);
  }
  SECTION("a budget of 2 sweeps: every island at the cap") {
    World w;
    w.add_ground();
    add_stack(w, 0, 0, 3);
    add_stack(w, 2, 0, 2);
    BisectionSettings bs;
    bs.max_iterations = 2;
    bs.active_set_start = 0;
    bs.newton_start = 0;  // (the Newton stage would finish them at the cap)
    w.set_contact_solver(std::make_unique<BisectionSolver>(bs));
    StepStatus status = StepStatus::Ok;
    for (int i = 0; i < 3; ++i) status = w.integrate();
    CHECK(status == StepStatus::SolverNotConverged);
    const StepStats& st = w.stats();
    check_aggregates(st);
    REQUIRE(st.island_results.size() == 2);
    for (const IslandResult& r : st.island_results) {
      CHECK(r.solver.status == SolverStatus::MaxIterations);
      CHECK(r.solver.iterations == 2);
      CHECK_FALSE(r.solver.stalled);
      CHECK(r.at_cap());
    }
  }
  SECTION("a box stack: the record names the active-set stage that finished it") {
    World w;
    w.set_default_material(0.8, 0.0);
    w.add_ground();
    for (int k = 0; k < 4; ++k) {
      ArticulatedSystem& b = w.add_box("box", Vec3(0.1, 0.1, 0.1), 1.0);
      place(b, Vec3(0, 0, 0.05 + 0.1 * k));
    }
    BisectionSettings bs;
    bs.active_set_start = 1;
    w.set_contact_solver(std::make_unique<BisectionSolver>(bs));
    Index by_stage = 0;
    for (int i = 0; i < 50; ++i) {
      w.integrate();
      check_aggregates(w.stats());
      for (const IslandResult& r : w.stats().island_results)
        if (r.solver.converged() && r.solver.method == SolverMethod::ActiveSet) ++by_stage;
    }
    CHECK(by_stage > 0);
  }
}

TEST_CASE("islands: a robot standing on a box joins it; limit rows belong to their system", "[stepper][islands]") {
  World w;
  const RobotOnBox rb = add_robot_on_box(w);
  ArticulatedSystem& box = *rb.box;
  ArticulatedSystem& robot = *rb.robot;
  const VecX q = robot.q();
  VecX kp = VecX::Zero(18), kd = VecX::Zero(18);
  kp.tail(12).setConstant(300);
  kd.tail(12).setConstant(8);
  robot.set_pd_gains(kp, kd);
  robot.set_pd_targets(q, VecX::Zero(18));
  ArticulatedSystem& ball = w.add_sphere("ball", 0.1, 1.0);
  place(ball, Vec3(3, 0, 0.1 - 1e-4));  // on the ground, far away: its own island
  bool joined = false;
  for (int i = 0; i < 300; ++i) {
    w.integrate();
    bool robot_on_box = false;
    for (const Contact& c : w.contacts()) {
      const Index ra = robot.collision_object(), bo = box.collision_object();
      robot_on_box = robot_on_box || (c.object_a == ra && c.object_b == bo) || (c.object_a == bo && c.object_b == ra);
    }
    if (!robot_on_box) continue;
    joined = true;
    CHECK(w.stats().islands == 2);
    CHECK(w.stats().largest_island == 2);
  }
  CHECK(joined);
}

namespace {
// 27 spheres (3 x 3 x 3) on the ground after 5 steps: one factored island.
void settle_small_pile(World& w, std::mt19937& rng) {
  w.add_ground();
  add_pile(w, 3, 3, 3, rng);
  for (int i = 0; i < 5; ++i) w.integrate();
}
}  // namespace

TEST_CASE("islands: a pile is one factored island; its G matches its dense global problem", "[stepper][islands][sparse]") {
  World w;
  std::mt19937 rng(7);
  settle_small_pile(w, rng);
  const DelassusAssembler& a = w.assembler();
  REQUIRE(a.num_islands() == 1);
  const IslandView isl = a.island(0);
  REQUIRE(isl.problem.is_factored());
  CHECK(isl.num_systems == 27);
  // the factored G scattered to the global rows is problem(): symmetric, and the products
  // and rows the solvers use agree with it
  const MatX Gl = isl.problem.dense();
  const MatX G = a.problem().G;
  CHECK((Gl - Gl.transpose()).norm() <= 1e-12 * Gl.norm());
  std::normal_distribution<Scalar> nd(0, 1);
  const VecX x = VecX::NullaryExpr(Gl.rows(), [&]() { return nd(rng); });
  VecX y(Gl.rows()), xg = VecX::Zero(G.rows());
  isl.problem.multiply(x, y);
  CHECK_ALL_CLOSE(y, VecX(Gl * x), 1e-12, 1e-12);
  for (Index r = 0; r < Gl.rows(); ++r) {
    CHECK(std::abs(isl.problem.row_dot(r, x) - Gl.row(r).dot(x)) <= 1e-12 * (1 + std::abs(Gl.row(r).dot(x))));
    xg[isl.global_row[r]] = x[r];
  }
  for (Index r = 0; r < Gl.rows(); ++r) CHECK(std::abs(G.row(isl.global_row[r]).dot(xg) - y[r]) <= 1e-12 * (1 + std::abs(y[r])));
  // factored storage: one piece per dynamic side of each contact (ground contacts have one)
  const FactoredG& F = *isl.problem.factored;
  CHECK(F.begin[isl.problem.nc] - F.begin[0] < 2 * isl.problem.nc);
  CHECK(F.nz == 27 * 6);
  // a Gauss-Seidel-like walk: change one contact (or row) at a time, keep G x current with the
  // DelassusProduct's updates, and compare every read with the dense product
  DelassusProduct product;
  VecX xs = x;
  product.reset(isl.problem, xs);
  for (int step = 0; step < 200; ++step) {
    const Index i = step % isl.problem.nc;
    const Vec3 delta = test::draw3(nd, rng);
    xs.segment<3>(3 * i) += delta;
    product.add_contact(i, delta);
    const Index r = (7 * step) % Gl.rows();
    xs[r] += 0.5;
    product.add_row(r, 0.5);
    const Index j = (3 * step + 1) % isl.problem.nc;
    CHECK_ALL_CLOSE(product.contact(j, xs), Vec3(Gl.middleRows<3>(3 * j) * xs), 1e-11, 1e-11);
    CHECK(std::abs(product.row(r, xs) - Gl.row(r).dot(xs)) <= 1e-11 * (1 + std::abs(Gl.row(r).dot(xs))));
  }
}

TEST_CASE("islands: evaluate_residuals measures a factored island as its dense copy", "[stepper][islands][sparse]") {
  // (a factored problem has no dense G: reading it would be out of bounds)
  World w;
  std::mt19937 rng(11);
  settle_small_pile(w, rng);
  const IslandView isl = w.assembler().island(0);
  REQUIRE(isl.problem.is_factored());
  const MatX G = isl.problem.dense();
  const ContactProblem dense(G, isl.problem.c, isl.problem.mu, isl.problem.nc, isl.problem.nl, isl.problem.nb,
                             isl.problem.box);
  std::normal_distribution<Scalar> nd(0, 1);
  VecX lambda(isl.problem.size());
  for (Index r = 0; r < lambda.size(); ++r) lambda[r] = r % 3 == 2 ? std::abs(nd(rng)) : 0.3 * nd(rng);
  const ContactResiduals a = evaluate_residuals(isl.problem, lambda), b = evaluate_residuals(dense, lambda);
  CHECK(a.penetration > 0);  // (a random lambda violates the conditions: the comparison means something)
  for (const auto& [x, y] : {std::pair{a.penetration, b.penetration}, {a.negative_impulse, b.negative_impulse},
                             {a.complementarity, b.complementarity}, {a.cone, b.cone}, {a.coulomb, b.coulomb},
                             {a.max_dissipation, b.max_dissipation}, {a.slip, b.slip}})
    CHECK(std::abs(x - y) <= 1e-10 * (1 + std::abs(y)));
  VecX short_lambda(isl.problem.size() - 1);
  CHECK_THROWS_AS(evaluate_residuals(isl.problem, short_lambda), InvalidArgument);
  const MatX wrong = MatX::Zero(3, 3);
  CHECK_THROWS_AS(evaluate_residuals(ContactProblem(wrong, isl.problem.c, isl.problem.mu, isl.problem.nc,
                                                    isl.problem.nl), lambda),
                  InvalidArgument);
}

TEST_CASE("islands: the non-finite guard reads every entry of a factored G, or the blocks that cover them",
          "[stepper][islands][sparse]") {
  World w;
  std::mt19937 rng(7);
  settle_small_pile(w, rng);
  const IslandView isl = w.assembler().island(0);
  REQUIRE(isl.problem.is_factored());
  CHECK(problem_is_finite(isl.problem));
  // a copy of the factored storage, so single entries can be corrupted
  const FactoredG& F = *isl.problem.factored;
  const Index ng = isl.problem.nc + isl.problem.nl + isl.problem.nb;
  Index entries = 0;
  for (Index k = F.begin[0]; k < F.begin[ng]; ++k) entries = std::max(entries, F.piece[k].y + F.piece[k].len);
  std::vector<Scalar> Y(F.Y, F.Y + 3 * entries), DY(F.DY, F.DY + 3 * entries);
  std::vector<Mat3> diag(F.diag, F.diag + ng);
  // The assembler's blocks cover its pieces: the diagonal of G_gg sums D^-1 Y_r * Y_r over the
  // paths of the group's pieces (on different systems: no cross terms), the products a NaN or an
  // infinity in Y, D^-1 or D^-1 Y would poison.
  REQUIRE(isl.problem.diagonal_covers);
  Index covered = 0;
  for (Index g = 0; g < ng; ++g) {
    bool one_system_each = true;
    for (Index a = F.begin[g]; a < F.begin[g + 1]; ++a)
      for (Index b = a + 1; b < F.begin[g + 1]; ++b) one_system_each = one_system_each && F.piece[a].z != F.piece[b].z;
    if (!one_system_each) continue;
    const Index rows = F.piece[F.begin[g]].nrows;
    for (Index r = 0; r < rows; ++r) {
      Scalar sum = 0;
      for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
        const FactoredPiece& p = F.piece[k];
        for (Index t = 0; t < p.len; ++t) sum += F.DY[3 * (p.y + t) + r] * F.Y[3 * (p.y + t) + r];
      }
      CHECK(std::abs(diag[g](r, r) - sum) <= 1e-12 * std::abs(sum));
      ++covered;
    }
  }
  CHECK(covered >= 3 * isl.problem.nc);
  FactoredG copy = F;
  copy.Y = Y.data();
  copy.DY = DY.data();
  copy.diag = diag.data();
  bool covers = false;  // a FactoredG from elsewhere: every entry is read
  const auto view = [&]() {
    ContactProblem p(copy, isl.problem.c, isl.problem.mu, isl.problem.nc, isl.problem.nl);
    p.diagonal_covers = covers;
    return p;
  };
  CHECK(problem_is_finite(view()));
  const FactoredPiece& first = F.piece[F.begin[0]];
  REQUIRE(first.nrows == 3);
  REQUIRE(first.len >= 2);
  const Index dy_entry = 3 * (first.y + 1) + 2;  // the first piece's second dof, third row
  const FactoredPiece& last = F.piece[F.begin[ng] - 1];
  const Index y_entry = 3 * (last.y + last.len - 1) + last.nrows - 1;  // the last entry in use
  for (const Scalar bad : {std::numeric_limits<Scalar>::quiet_NaN(), std::numeric_limits<Scalar>::infinity()}) {
    Y[y_entry] = bad;
    CHECK_FALSE(problem_is_finite(view()));
    Y[y_entry] = F.Y[y_entry];
    DY[dy_entry] = bad;
    CHECK_FALSE(problem_is_finite(view()));
    DY[dy_entry] = F.DY[dy_entry];
    diag[ng - 1](1, 2) = bad;
    CHECK_FALSE(problem_is_finite(view()));
    covers = true;  // the assembler's: the blocks alone are read
    CHECK_FALSE(problem_is_finite(view()));
    covers = false;
    diag[ng - 1] = F.diag[ng - 1];
  }
  Y[0] = Y[3] = 1e308;  // huge but finite entries are finite
  CHECK(problem_is_finite(view()));
}

TEST_CASE("islands: a dense island's guard reads its diagonal, which bounds every entry", "[stepper][islands]") {
  // A robot on a box: one dense island of two systems, with cross terms between their pieces.
  World w;
  add_robot_on_box(w);
  Index k = -1;
  for (int i = 0; i < 300 && k < 0; ++i) {
    w.integrate();
    for (Index j = 0; j < w.assembler().num_islands(); ++j) {
      if (w.assembler().island(j).num_systems == 2 && w.assembler().island(j).problem.nc >= 2) k = j;
    }
  }
  REQUIRE(k >= 0);
  const IslandView isl = w.assembler().island(k);
  REQUIRE_FALSE(isl.problem.is_factored());
  REQUIRE(isl.problem.diagonal_covers);
  CHECK(isl.problem.with_c(isl.problem.c).diagonal_covers);
  // G = J M^-1 J^T is positive semidefinite: |G_pq| <= sqrt(G_pp G_qq), so an entry that is NaN
  // or infinite comes from path products that make a diagonal entry NaN or infinite too
  const MatX G = isl.problem.G;
  for (Index p = 0; p < G.rows(); ++p)
    for (Index q = 0; q < G.cols(); ++q)
      CHECK(std::abs(G(p, q)) <= std::sqrt(G(p, p) * G(q, q)) * (1 + 1e-12) + 1e-300);
  MatX bad = G;
  const auto view = [&](bool covers) {
    ContactProblem pr(bad, isl.problem.c, isl.problem.mu, isl.problem.nc, isl.problem.nl, isl.problem.nb, isl.problem.box);
    pr.diagonal_covers = covers;
    return pr;
  };
  CHECK(problem_is_finite(view(false)));
  CHECK(problem_is_finite(view(true)));
  for (const Scalar nan_or_inf : {std::numeric_limits<Scalar>::quiet_NaN(), std::numeric_limits<Scalar>::infinity()}) {
    bad(0, G.cols() - 1) = nan_or_inf;  // a G given any other way: every entry is read
    CHECK_FALSE(problem_is_finite(view(false)));
    bad = G;
    bad(G.rows() - 1, G.rows() - 1) = nan_or_inf;
    CHECK_FALSE(problem_is_finite(view(true)));
    bad = G;
  }
}

TEST_CASE("contact cap: a scene above max_contacts reports the dropped contacts", "[stepper][islands]") {
  World w;
  w.add_ground();
  add_stack(w, 0, 0, 3);  // 12 contacts
  w.set_max_contacts(5);
  CHECK(w.integrate() == StepStatus::ContactOverflow);
  CHECK(w.stats().contacts == 5);
  CHECK(w.stats().contacts_dropped >= 1);
  w.set_max_contacts(64);
  CHECK(w.integrate() == StepStatus::Ok);
  CHECK(w.stats().contacts_dropped == 0);
  CHECK(w.stats().contacts >= 12);
}

#ifdef NDEBUG  // 700 steps of 216 spheres: a second in Release, minutes under the sanitizers
TEST_CASE("islands: every island of a settling frictionless pile converges (default solver)", "[stepper][islands]") {
  // The bench's pile216 (docs/benchmarks.md): 216 spheres dropped as a 6x6x6 lattice into a bin,
  // mu = 0. Its islands of 50-80 contacts on fewer dofs plateau just above the tolerance; the
  // sweeps' plateau guard stopped them after 20 sweeps, before bisection's exact QP at qp_start
  // (3 islands in these 700 steps; 42 with Anderson mixing, which flattens the error sooner).
  // A plateau before qp_start now goes to the QP, which solves every island.
  World w;
  test::add_sphere_bin(w, 6, 0.65);
  Index not_converged = 0, largest = 0;
  for (int step = 0; step < 700; ++step) {
    const StepStatus st = w.integrate();
    INFO("step " << step);
    REQUIRE((st == StepStatus::Ok || st == StepStatus::SolverNotConverged));
    not_converged += w.stats().islands_not_converged;
    largest = std::max(largest, w.stats().largest_island_rows);
  }
  CHECK(largest > 100);  // the pile formed large islands
  CHECK(not_converged == 0);
}
#endif

namespace {
// Bisection behind a solver that does not declare one_row_frictionless: the stepper builds its
// frictionless contacts in the three-row form.
class IslandsThreeRowBisection final : public ContactSolver {
 public:
  const char* name() const override { return "three-row bisection"; }
  bool supports_factored() const override { return true; }

 protected:
  void reserve_impl(Index max_rows) override { inner_.reserve(max_rows); }
  SolverResult solve_impl(const ContactProblem& problem, VecXref lambda) override {
    return inner_.solve(problem, lambda);
  }

 private:
  BisectionSolver inner_;
};
}  // namespace

TEST_CASE("islands: frictionless contacts as one row step the pile as the three-row form", "[stepper][islands]") {
  // 27 frictionless spheres dropped into a bin (two layers land within the 300 steps): the
  // default bisection (its frictionless contacts built as one row, contact/delassus.hpp) and the
  // same solver given the three-row form solve the same problems, so the bodies follow the same
  // paths to within what the solver's tolerance (1e-6 N s, m/s) lets them drift apart.
  World one, three;
  for (World* w : {&one, &three}) test::add_sphere_bin(*w, 3, 0.35);
  three.set_contact_solver(std::make_unique<IslandsThreeRowBisection>());
  Scalar largest = 0;
  Index contacts = 0;
  for (int step = 0; step < 300; ++step) {
    REQUIRE(one.integrate() == StepStatus::Ok);
    REQUIRE(three.integrate() == StepStatus::Ok);
    contacts = std::max(contacts, one.stats().contacts);
    for (Index i = 0; i < one.num_systems(); ++i) {
      largest = std::max(largest, (one.system(i).q() - three.system(i).q()).cwiseAbs().maxCoeff());
      largest = std::max(largest, (one.system(i).u() - three.system(i).u()).cwiseAbs().maxCoeff());
    }
  }
  INFO("largest difference of q or u: " << largest);
  CHECK(contacts >= 27);  // every sphere touches something at the end
  CHECK(largest < 1e-6);
}

TEST_CASE("memory grows with use: no allocation in steady state of a sparse pile", "[stepper][islands][alloc]") {
  if (!test::alloc_counter_available()) return;
  std::mt19937 rng(3);
  World w;
  w.add_ground();
  add_pile(w, 1, 1, 30, rng);  // a column of 30 spheres in a square pipe: one island of 90 rows
  for (int i = 0; i < 200; ++i) w.integrate();
  REQUIRE(w.stats().largest_island_rows > DelassusAssembler::kDefaultDenseLimit);  // block-sparse
  for (int i = 0; i < 50; ++i) w.integrate();  // sizes seen; the contact count may still wiggle
  test::alloc_counter_start();
  for (int i = 0; i < 20; ++i) w.integrate();
  const long n = test::alloc_counter_stop();
  CHECK(n == 0);
}

TEST_CASE("memory: a World with one ANYmal and the ground costs at most 256 KiB", "[stepper][islands][alloc]") {
  if (!test::alloc_counter_available()) return;
  test::alloc_counter_start();
  long bytes = 0;
  {
    auto w = std::make_unique<World>();
    w->add_ground();
    ArticulatedSystem& robot = w->add_articulated_system(kAnymal);
    robot.set_q(anymal_stand_q(robot, 0.549));
    for (int i = 0; i < 200; ++i) w->integrate();
    bytes = test::alloc_counter_bytes();  // still counting: held by the live World
    test::alloc_counter_stop();
    INFO("World with ANYmal and ground: " << bytes << " bytes");
    CHECK(bytes <= 256 * 1024);
    CHECK(w->settings().max_contacts >= 4096);  // the cap is large, the memory is not
  }
}

TEST_CASE("islands: a column resting along any gravity axis takes the same sweeps", "[stepper][islands][sparse]") {
  // The same column of 30 frictionless spheres (30 contacts: a block-sparse island) resting on a
  // plane under gravity, once along -z and once along -y (the scene turned by 90 degrees about
  // x). The physics is the same, so the work of the solver must be too (the bottom-up contact
  // order of block-sparse islands follows the gravity of the World, Stepper::prepare).
  auto run = [](int axis) {
    World w;
    w.set_default_material(0.0, 0.0);
    Vec3 up = Vec3::Zero();
    up[axis] = 1;
    w.set_gravity(-9.81 * up);
    w.add_wall("floor", up, 0.0);
    // added top first, so that the contacts come top-down out of the collision stage
    for (int k = 29; k >= 0; --k) place(w.add_sphere("ball", 0.1, 1.0), (0.1 + 0.2 * k - 1e-6) * up);
    long sweeps = 0;
    for (int step = 0; step < 50; ++step) {
      REQUIRE(w.integrate() != StepStatus::SolverFailed);
      REQUIRE(w.stats().largest_island_rows > 64);
      sweeps += w.stats().solver.iterations;
    }
    return sweeps;
  };
  const long along_z = run(2), along_y = run(1);
  INFO("sweeps over 50 steps: gravity along -z " << along_z << ", along -y " << along_y);
  CHECK(along_z < 50 * 1000);  // converged (the sweep cap is 1000)
  CHECK(std::abs(along_y - along_z) <= 0.02 * along_z);  // equal here; 7066 vs 6676 with the order fixed to +z
}
