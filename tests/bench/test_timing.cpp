// The benchmarks' timing utility (apps/bench/timing.hpp): the median of odd, even and empty sets,
// the number of calls median_us_per_call makes, and the thread CPU clock.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "bench/timing.hpp"

using namespace impulse;

TEST_CASE("bench::median: the middle value, the mean of the two middle ones for an even count", "[timing]") {
  CHECK(bench::median({}) == 0);
  CHECK(bench::median({3}) == 3);
  CHECK(bench::median({5, 1, 4}) == 4);
  CHECK(bench::median({4, 1, 3, 2}) == 2.5);
  CHECK(bench::median({7, 7, 1, 9, 9, 9}) == 8);
  const std::vector<double> v = {9, 2, 5};
  CHECK(bench::median(v) == 5);
  CHECK(v == std::vector<double>{9, 2, 5});  // taken by value: the caller's order is kept
}

TEST_CASE("bench::median_us_per_call: warm-up, then calls / batch timed batches (at least one)", "[timing]") {
  long calls = 0;
  const double us = bench::median_us_per_call(1000, 100, 7, [&] { ++calls; });
  CHECK(calls == 7 + 1000);
  CHECK(std::isfinite(us));
  CHECK(us >= 0);
  calls = 0;
  bench::median_us_per_call(30, 100, 0, [&] { ++calls; });  // fewer calls than a batch: one batch
  CHECK(calls == 100);
}

TEST_CASE("bench::Stopwatch on the thread's CPU time advances while the thread computes", "[timing]") {
  const bench::Stopwatch<bench::ThreadCpuClock> cpu;
  const bench::Stopwatch<> wall;
  volatile double x = 0;
  while (cpu.seconds() < 0.002) x = x + std::sqrt(x + 1.0);
  CHECK(cpu.us() >= 2000);
  CHECK(wall.seconds() > 0);
}
