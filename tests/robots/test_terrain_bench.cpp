// Benchmarks of terrain and sensors (docs/benchmarks.md; hidden: run with `impulse_tests "[.bench]"`, Release only): ANYmal
// trotting on flat ground and on random rough terrain (5 cm amplitude) at 1 ms, and a 200-ray
// height scan. Thread CPU time. Prints medians of several repetitions; the flat run in the same process is the
// reference for the ratio (the machine may be loaded).
#include <catch2/catch.hpp>

#include <iostream>
#include <memory>
#include <vector>

#include "bench/timing.hpp"
#include "impulse/sensors/sensors.hpp"
#include "scenarios/scenario.hpp"

using namespace impulse;

namespace {

// Thread CPU time, not wall time: on a loaded machine the wall clock also counts the time the
// thread waits for a core.
using CpuStopwatch = bench::Stopwatch<bench::ThreadCpuClock>;
using bench::median;

// Microseconds per step of `steps` trot steps after `warmup` steps; terrain: rough heightfield
// instead of the flat ground (the ground plane is filtered out of every collision).
double trot_us(bool rough, long warmup, long steps, int* fallen) {
  auto s = scenarios::make_scenario("trot", {"bisection", 1});
  if (rough) {
    s->world().collision().set_object_filter(0, CollisionFilter{0, 0});  // object 0: the ground plane
    s->world().add_heightfield("rough", std::make_shared<Heightfield>(Heightfield::random_rough(20, 20, 0.05, 0.05, 7)));
  }
  for (long k = 0; k < warmup; ++k) s->step();
  const CpuStopwatch watch;
  for (long k = 0; k < steps; ++k) s->step();
  const double us = watch.us() / steps;
  *fallen += s->robot().q()[2] < 0.25;
  return us;
}

}  // namespace

TEST_CASE("bench: ANYmal trot on flat ground and on 5 cm rough terrain; 200-ray height scan", "[.bench]") {
  std::vector<double> flat, rough;
  int fallen_flat = 0, fallen_rough = 0;
  for (int rep = 0; rep < 5; ++rep) {
    flat.push_back(trot_us(false, 500, 2000, &fallen_flat));
    rough.push_back(trot_us(true, 500, 2000, &fallen_rough));
  }
  std::cout << "trot flat:  " << median(flat) << " us/step (median of 5), fallen " << fallen_flat << "/5\n"
            << "trot rough: " << median(rough) << " us/step (median of 5), fallen " << fallen_rough << "/5\n"
            << "ratio rough / flat: " << median(rough) / median(flat) << "\n";

  World world;
  world.add_heightfield("rough", std::make_shared<Heightfield>(Heightfield::random_rough(20, 20, 0.05, 0.05, 7)));
  ArticulatedSystem& ball = world.add_sphere("probe", 0.1, 1.0);
  VecX q = ball.q();
  q[2] = 0.5;
  ball.set_q(q);
  HeightScan scan(world, ball, "probe", HeightScan::grid(1.9, 0.9, 0.1));  // 20 x 10 = 200 rays
  REQUIRE(scan.size() == 200);
  std::vector<double> scan_us;
  for (int rep = 0; rep < 7; ++rep) {
    const int n = 2000;
    const CpuStopwatch watch;
    for (int k = 0; k < n; ++k) scan.update();
    scan_us.push_back(watch.us() / n);
  }
  std::cout << "height scan, 200 rays: " << median(scan_us) << " us (median of 7)\n";
  CHECK(scan.heights().allFinite());
}
