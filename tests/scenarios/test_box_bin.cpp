// The split position correction on bench scenes' bin50 (scenarios::build_box_bin): one island of
// boxes resting on boxes and walls, larger than the correction's exact QP takes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "impulse/world/world.hpp"
#include "scenarios/bins.hpp"

using namespace impulse;

TEST_CASE("push-out: a bin of 50 boxes is corrected within the sweeps' budget on every step", "[stepper]") {
  // On their faces and the walls the boxes rest a fraction of a nanometre beyond the slop; the
  // split correction's island has up to ~470 normal rows, above its exact QP's bound, so its
  // Gauss-Seidel sweeps are the whole correction. They stop when no row's push-out velocity
  // moves by more than 1e-8 m/s (the floor of islands above the exact QP's size); stopped only
  // at 1e-10 of such impulses (their rounding) they reach their cap of 100 sweeps in this window.
  World w;
  scenarios::build_box_bin(w);
  REQUIRE(w.settings().contact.position_correction == PositionCorrection::Split);
  Index corrected = 0, most = 0, capped = 0;
  for (int step = 0; step < 220; ++step) {
    w.integrate();
    if (step < 150) continue;  // (landing)
    corrected += w.stats().position_rows > 0 ? 1 : 0;
    most = std::max(most, w.stats().position_sweeps);
    capped += w.stats().position_not_converged;
  }
  INFO("most sweeps of a correction: " << most);
  CHECK(corrected == 70);  // (the correction ran on every step counted)
  CHECK(capped == 0);      // (none ended at the 100-sweep budget unconverged)
  for (Index s = 0; s < w.num_systems(); ++s) {
    const VecX& q = w.system(s).q();
    CHECK(q[2] > 0);  // (none fell through the floor or left the bin)
    CHECK(std::max(std::abs(q[0]), std::abs(q[1])) < 0.25);
  }
}
