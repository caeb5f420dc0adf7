// The bisection solver's range projection (BisectionSettings::range_projections) in a small
// brick wall in running bond: each brick of an odd course rests on two below, every face pair
// on four coplanar corners, loops of contacts through the ground. The bricks' drift of fractions
// of a micrometre leaves gaps nanometres apart that no motion of the wall closes at once; at
// 1 ms their targets -gap / dt differ by the solver's tolerance, and without the projection the
// sweeps and the active-set stage stop on a plateau on some steps.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "impulse/solvers/bisection.hpp"
#include "impulse/world/world.hpp"

using namespace impulse;

namespace {

struct RangeProjectionWall {
  Index not_converged = 0;
  Scalar moved = 0;  // m, largest displacement of a brick from its start
};

RangeProjectionWall range_projection_wall(Index projections, int courses, int bricks, int steps) {
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
  BisectionSettings s;
  s.range_projections = projections;
  w.set_contact_solver(std::make_unique<BisectionSolver>(s));
  RangeProjectionWall run;
  for (int k = 0; k < steps; ++k) {
    const StepStatus st = w.integrate();  // (an unconverged island: SolverNotConverged, counted)
    REQUIRE((st == StepStatus::Ok || st == StepStatus::SolverNotConverged));
    run.not_converged += w.stats().islands_not_converged;
  }
  for (std::size_t i = 0; i < bs.size(); ++i) run.moved = std::max(run.moved, (bs[i]->q().head<3>() - start[i]).norm());
  return run;
}

}  // namespace

TEST_CASE("range projection: a 6-course brick wall converges on every step and stands", "[stepper][bisection]") {
  // 15 bricks, 1.5 s; with range_projections = 0 this wall ends 11 island solves unconverged
  const RangeProjectionWall run = range_projection_wall(BisectionSettings{}.range_projections, 6, 3, 1500);
  CHECK(run.not_converged == 0);
  CHECK(run.moved < 1e-6);
  CHECK(BisectionSettings{}.range_projections > 0);
}

TEST_CASE("range projection: a heavy-on-light stack is finished by the active-set stage", "[stepper][bisection]") {
  // boxes of 1, 10, 100 and 1 000 kg upwards: after a plateau the sweeps on the projected
  // problem crawl (the light boxes between heavy ones); the active-set stage run on the projected
  // problem right after the first projection finishes most such solves (without it: 49 of
  // 10 000 steps finished by the stage, 9.1 sweeps a step)
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
  Index sweeps = 0, by_stage = 0, not_converged = 0;
  const int steps = 10000;
  for (int k = 0; k < steps; ++k) {
    REQUIRE(w.integrate() == StepStatus::Ok);
    sweeps += w.stats().solver.iterations;
    by_stage += w.stats().islands_active_set;
    not_converged += w.stats().islands_not_converged;
  }
  CHECK(not_converged == 0);
  CHECK(by_stage > 300);
  CHECK(static_cast<Scalar>(sweeps) / steps < 5);
}
