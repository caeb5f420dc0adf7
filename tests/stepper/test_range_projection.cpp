// The bisection solver's range projection (BisectionSettings::range_projections) in a small
// brick wall in running bond: each brick of an odd course rests on two below, every face pair
// on four coplanar corners, loops of contacts through the ground. The bricks' drift of fractions
// of a micrometre leaves gaps nanometres apart that no motion of the wall closes at once; at
// 1 ms their targets -gap / dt differ by the solver's tolerance, and without the projection the
// sweeps and the active-set stage can stop on a plateau.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "impulse/solvers/bisection.hpp"
#include "impulse/world/world.hpp"

using namespace impulse;

namespace {

struct RangeProjectionWall {
  Index not_converged = 0;
  Index by_stage = 0;  // island solves the active-set stage finished
  Scalar moved = 0;  // m, largest displacement of a brick from its start
  std::vector<VecX> q;  // the bricks' final configurations
};

RangeProjectionWall range_projection_wall(const BisectionSettings& s, int courses, int bricks, int steps) {
  World w;
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  const Scalar L = 0.2, T = 0.1, H = 0.05;
  std::vector<ArticulatedSystem*> bs;
  std::vector<Vec3> start;
  for (int row = 0; row < courses; ++row) {
    const bool odd = row % 2 == 1;
    for (int j = 0; j < (odd ? bricks - 1 : bricks); ++j) {
      ArticulatedSystem& b = w.add_box("brick", Vec3(L, T, H), 1.0);
      VecX q = b.q();
      q.head<3>() = Vec3((j + (odd ? 0.5 : 0.0)) * L, 0, H * (row + 0.5));
      b.set_q(q);
      bs.push_back(&b);
      start.push_back(q.head<3>());
    }
  }
  w.set_contact_solver(std::make_unique<BisectionSolver>(s));
  RangeProjectionWall run;
  for (int k = 0; k < steps; ++k) {
    const StepStatus st = w.integrate();  // (an unconverged island: SolverNotConverged, counted)
    REQUIRE((st == StepStatus::Ok || st == StepStatus::SolverNotConverged));
    run.not_converged += w.stats().islands_not_converged;
    run.by_stage += w.stats().islands_active_set;
  }
  for (std::size_t i = 0; i < bs.size(); ++i) {
    run.moved = std::max(run.moved, (bs[i]->q().head<3>() - start[i]).norm());
    run.q.push_back(bs[i]->q());
  }
  return run;
}

// the default solver with `projections` range projections; slip searches started afresh when
// not `hinted` (slip_newton off)
BisectionSettings wall_settings(Index projections, bool hinted = true) {
  BisectionSettings s;
  s.range_projections = projections;
  s.slip_newton = hinted;
  return s;
}

}  // namespace

TEST_CASE("range projection: a 6-course brick wall converges on every step and stands", "[stepper][bisection]") {
  // 15 bricks, 1.5 s, with the projection (also with slip searches started afresh, slip_newton
  // off); and without it, where the default slip search, started from the contact's impulse,
  // lets the sweeps converge.
  const RangeProjectionWall run = range_projection_wall(wall_settings(BisectionSettings{}.range_projections), 6, 3, 1500);
  CHECK(run.not_converged == 0);
  CHECK(run.moved < 1e-6);
  CHECK(BisectionSettings{}.range_projections > 0);
  const RangeProjectionWall afresh = range_projection_wall(wall_settings(BisectionSettings{}.range_projections, false), 6, 3, 1500);
  const RangeProjectionWall none = range_projection_wall(wall_settings(0), 6, 3, 1500);
  CHECK(afresh.not_converged == 0);
  CHECK(none.not_converged == 0);
}

TEST_CASE("range projection: an island above range_projection_rows is not projected", "[stepper][bisection]") {
  // The wall's island (15 bricks) with slip searches started afresh and no active-set stage,
  // where the projection is what converges it: with a bound below its rows the run is that
  // without projections, bit for bit; with the default bound it converges.
  const Index projections = BisectionSettings{}.range_projections;
  BisectionSettings base = wall_settings(projections, false);
  base.active_set_start = 0;  // (no active-set stage: the projection alone converges these steps)
  BisectionSettings no_projection = base, above_bound = base;
  no_projection.range_projections = 0;
  above_bound.range_projection_rows = 12;
  const RangeProjectionWall none = range_projection_wall(no_projection, 6, 3, 600);
  const RangeProjectionWall above = range_projection_wall(above_bound, 6, 3, 600);
  const RangeProjectionWall within = range_projection_wall(base, 6, 3, 600);
  INFO("not converged: " << none.not_converged << " without projections, " << above.not_converged
                         << " above the bound, " << within.not_converged << " within it");
  CHECK(none.not_converged > 0);
  CHECK(above.not_converged == none.not_converged);
  REQUIRE(above.q.size() == none.q.size());
  bool differs = false;  // (the projection changed the run: the bound is what kept it out above)
  for (std::size_t i = 0; i < none.q.size(); ++i) {
    CHECK(above.q[i] == none.q[i]);
    differs = differs || within.q[i] != none.q[i];
  }
  CHECK(differs);
  CHECK(within.not_converged == 0);
}

namespace {

struct HeavyOnLight {
  Scalar sweeps = 0;  // a step, mean
  Index by_stage = 0, not_converged = 0;
};

// boxes of 1, 10, 100 and 1 000 kg upwards, 10 s at 1 ms
HeavyOnLight heavy_on_light(const BisectionSettings& s) {
  World w;
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  Scalar mass = 1;
  for (int k = 0; k < 4; ++k, mass *= 10) {
    ArticulatedSystem& b = w.add_box("box", Vec3(0.2, 0.2, 0.1), mass);
    VecX q = b.q();
    q.head<3>() = Vec3(0, 0, 0.05 + 0.1 * k);
    b.set_q(q);
  }
  w.set_contact_solver(std::make_unique<BisectionSolver>(s));
  HeavyOnLight run;
  const int steps = 10000;
  Index sweeps = 0;
  for (int k = 0; k < steps; ++k) {
    REQUIRE(w.integrate() == StepStatus::Ok);
    sweeps += w.stats().solver.iterations;
    run.by_stage += w.stats().islands_active_set;
    run.not_converged += w.stats().islands_not_converged;
  }
  run.sweeps = static_cast<Scalar>(sweeps) / steps;
  return run;
}

}  // namespace

TEST_CASE("range projection: a heavy-on-light stack is finished by the active-set stage", "[stepper][bisection]") {
  // Its contacts slip by round-off from sweep to sweep. Each slip search started afresh
  // (slip_newton off: from lambda^{v=0}, Algorithm 1) ends anywhere within its tolerance of the
  // zero, and the sweeps' error, which includes |lambda* - lambda|, levels off just above the
  // solver's tolerance on the heavy boxes: after a plateau the sweeps on the projected problem
  // crawl (the light boxes between heavy ones), and the active-set stage run on the projected
  // problem right after the first projection finishes most such solves (without it: 49 of
  // 10 000 steps finished by the stage, 9.1 sweeps a step).
  BisectionSettings afresh;
  afresh.slip_newton = false;
  // (the stage's early try on a crawl, active_set_early, finishes these solves before any
  // plateau: 1.004 sweeps a step, 4 solves by the stage in 10 000 steps; kept out here)
  afresh.active_set_early = 0;
  const HeavyOnLight a = heavy_on_light(afresh);
  CHECK(a.not_converged == 0);
  CHECK(a.by_stage > 300);
  CHECK(a.sweeps < 5);
  // The default slip search starts from the contact's present impulse (bisection.cpp,
  // hinted_slip): where it is already the answer the Newton step is nil, |lambda* - lambda|
  // falls with the sweeps, and the sweeps finish the solves themselves
  const HeavyOnLight b = heavy_on_light(BisectionSettings{});
  WARN("heavy-on-light stack, 10 000 steps: " << a.sweeps << " sweeps a step, " << a.by_stage
                                              << " finished by the stage (searches afresh); " << b.sweeps << ", "
                                              << b.by_stage << " (hinted)");
  CHECK(b.not_converged == 0);
  CHECK(b.sweeps < 1.5);
}

TEST_CASE("least squares: the wall converges on every step in the active-set stage and stands",
          "[stepper][bisection]") {
  // The wall of the cases above with slip searches started afresh, where the sweeps stop on
  // plateaus, with the active-set stage in least squares (active_set.least_squares) taking them
  // instead of the range projection: it moves the right side by the gaps' disagreement and
  // solves the island as given.
  BisectionSettings least_squares = wall_settings(BisectionSettings{}.range_projections, false);
  least_squares.active_set.least_squares = true;
  const RangeProjectionWall run =
      range_projection_wall(least_squares, 6, 3, 1500);
  INFO(run.by_stage << " solves finished by the stage, bricks moved up to " << run.moved << " m");
  CHECK(run.not_converged == 0);
  CHECK(run.by_stage > 0);
  CHECK(run.moved < 1e-6);
}
