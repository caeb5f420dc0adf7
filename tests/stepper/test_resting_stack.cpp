// Resting contact in the stepper: a stack of boxes with faces exactly touching (four coplanar
// corners per face, singular G) is solved to the tolerance at every step (the bisection solver's
// active-set stage finishes what its sweeps do not) and stands without drift; a gap below
// DelassusSettings::gap_slop counts as touching, and a brick wall whose contacts close loops converges.
#include <catch2/catch.hpp>

#include <cmath>

#include "impulse/solvers/bisection.hpp"
#include "impulse/world/world.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;

namespace {

void build_stack(World& w, int n) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  for (int k = 0; k < n; ++k) {
    ArticulatedSystem& b = w.add_box("box", Vec3(0.1, 0.1, 0.1), 1.0);
    VecX q = b.q();
    q.head<3>() = Vec3(0, 0, 0.05 + 0.1 * k);
    b.set_q(q);
  }
}

}  // namespace

TEST_CASE("a stack of 10 boxes at rest: the steps converge and the top box stays", "[stepper][active_set]") {
  World w;
  build_stack(w, 10);
  BisectionSettings bs;
  bs.active_set_start = 50;  // the stage after 50 sweeps, or on a plateau
  w.set_contact_solver(std::make_unique<BisectionSolver>(bs));
  const Vec3 top0 = w.system(9).q().head<3>();
  Index not_converged = 0, active_set = 0;
  for (int step = 0; step < 1000; ++step) {
    w.integrate();
    not_converged += w.stats().islands_not_converged;
    active_set += w.stats().islands_active_set;
  }
  INFO("islands finished by the active-set stage: " << active_set);
  // the sweeps alone end most of these steps unconverged (bench scenes stack10: 1 253 of 2 000)
  CHECK(not_converged <= 5);
  CHECK(active_set > 0);
  CHECK((w.system(9).q().head<3>() - top0).norm() < 1e-3);
}

TEST_CASE("a box stack finished by the active-set stage allocates nothing in steady state", "[stepper][active_set][alloc]") {
  if (!test::alloc_counter_available()) return;
  // 3 boxes: one dense island (36 rows); 10 boxes: one factored island (132 rows)
  for (int boxes : {3, 10}) {
    INFO(boxes << " boxes");
    World w;
    build_stack(w, boxes);
    BisectionSettings bs;
    bs.active_set_start = 1;
    w.set_contact_solver(std::make_unique<BisectionSolver>(bs));
    for (int i = 0; i < 100; ++i) w.integrate();  // settled, sizes seen
    test::alloc_counter_start();
    Index active_set = 0;
    for (int i = 0; i < 20; ++i) {
      w.integrate();
      active_set += w.stats().islands_active_set;
    }
    const long allocations = test::alloc_counter_stop();
    CHECK(active_set > 0);  // the stage ran in the steps counted
    CHECK(allocations == 0);
  }
}

TEST_CASE("the active-set stage in body space finishes a box stack as in contact space", "[stepper][active_set]") {
  // the stack's one factored island (132 rows) solved through the quasi-definite body-space
  // system (ActiveSetSettings::body_space_rows = 0) and through G, the stage at every step
  for (Index body_space_rows : {Index(0), Index(600)}) {
    INFO("body_space_rows " << body_space_rows);
    World w;
    build_stack(w, 10);
    BisectionSettings bs;
    bs.active_set_start = 1;
    bs.active_set.body_space_rows = body_space_rows;
    w.set_contact_solver(std::make_unique<BisectionSolver>(bs));
    const Vec3 top0 = w.system(9).q().head<3>();
    Index not_converged = 0, active_set = 0;
    for (int step = 0; step < 200; ++step) {
      w.integrate();
      not_converged += w.stats().islands_not_converged;
      active_set += w.stats().islands_active_set;
    }
    CHECK(not_converged == 0);
    CHECK(active_set > 0);
    CHECK((w.system(9).q().head<3>() - top0).norm() < 1e-5);
  }
}

namespace {

// A brick wall in running bond (courses of 4 and 3 bricks 0.2 x 0.1 x 0.05 m, 1 kg, the odd
// courses shifted by half a brick, faces touching): each brick of an odd course rests on two,
// so the contacts close loops.
void build_bond(World& w, int courses) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  for (int row = 0; row < courses; ++row) {
    const bool odd = row % 2 == 1;
    for (int j = 0; j < (odd ? 3 : 4); ++j) {
      ArticulatedSystem& b = w.add_box("brick", Vec3(0.2, 0.1, 0.05), 1.0);
      VecX q = b.q();
      q.head<3>() = Vec3((j + (odd ? 0.5 : 0.0)) * 0.2, 0, 0.05 * (row + 0.5));
      b.set_q(q);
    }
  }
}

}  // namespace

TEST_CASE("gap_slop: a box nanometres above the ground rests there; without it the gap closes in one step",
          "[stepper]") {
  for (const Scalar slop : {0.0, 1e-8}) {
    INFO("gap_slop " << slop);
    World w;
    w.add_ground();
    DelassusSettings cs;
    cs.gap_slop = slop;
    w.set_contact_settings(cs);
    ArticulatedSystem& b = w.add_box("box", Vec3(0.1, 0.1, 0.1), 1.0);
    VecX q = b.q();
    q[2] = 0.05 + 5e-9;  // a 5 nm gap
    b.set_q(q);
    for (int k = 0; k < 10; ++k) REQUIRE(w.integrate() == StepStatus::Ok);
    const Scalar gap = b.q()[2] - 0.05;
    if (slop > 0) {
      CHECK(gap > 4e-9);  // held at the gap (the solver's tolerance moves it by 1e-9 at most)
      CHECK(gap < 6e-9);
    } else {
      CHECK(std::abs(gap) < 1e-9);  // closed
    }
  }
  // a gap above gap_slop is closed as without it: the same first step, bit for bit
  VecX after[2];
  for (int i = 0; i < 2; ++i) {
    World w;
    w.add_ground();
    DelassusSettings cs;
    cs.gap_slop = i == 0 ? 0.0 : 1e-8;
    w.set_contact_settings(cs);
    ArticulatedSystem& b = w.add_box("box", Vec3(0.1, 0.1, 0.1), 1.0);
    VecX q = b.q();
    q[2] = 0.05 + 2e-8;
    b.set_q(q);
    REQUIRE(w.integrate() == StepStatus::Ok);
    after[i] = b.q();
  }
  CHECK(after[0] == after[1]);
}

TEST_CASE("gap_slop: a brick wall in running bond converges at every step", "[stepper][active_set]") {
  World w;
  build_bond(w, 6);
  DelassusSettings cs;
  cs.gap_slop = 1e-8;
  w.set_contact_settings(cs);
  const Vec3 top0 = w.system(w.num_systems() - 1).q().head<3>();
  Index not_converged = 0;
  for (int step = 0; step < 2000; ++step) {
    REQUIRE(w.integrate() == StepStatus::Ok);
    not_converged += w.stats().islands_not_converged;
  }
  CHECK(not_converged == 0);
  CHECK((w.system(w.num_systems() - 1).q().head<3>() - top0).norm() < 1e-6);
}
