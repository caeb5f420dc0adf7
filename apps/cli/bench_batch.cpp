// `impulse bench batch [--steps N] [--json]`: batched stepping on one thread.
//
// VecWorld copies of models/worlds/anymal_stand.xml (ANYmal standing on PD), 8 and 256
// environments, one thread, every environment stepped in turn at each step (as an RL loop steps
// them): the median over 5 rounds of N steps (default 200) of the time per environment step, and the memory one more environment costs (heap growth between 8 and 264
// environments after 50 steps of each, divided by 256). Every environment shares the Models and
// the thread's step scratch (StepWorkspace: Data, stepper, solver), so 256 environments step at
// nearly the speed of 8 and cost only their own state (docs/architecture.md, "What a World
// holds"). Then 256 environments with their dynamics in SIMD lanes (VecWorld::set_lanes: the
// default width, dynamics/lanes.hpp) and one by one (width 1, the scalar path), the two
// alternated round by round in one VecWorld, so that both see the same machine state: physics
// steps per second of each (median of 5 rounds) and their ratio.
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/batch/limits.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/core/version.hpp"
#include "impulse/dynamics/lanes.hpp"

namespace impulse::cli {

namespace {

// Median time per environment step (ns) of `envs` environments on one thread.
double ns_per_environment_step(const WorldDescription& d, Index envs, long steps) {
  batch::VecWorld vec(d, envs, 1);
  vec.integrate(20);  // the buffers take their sizes
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const bench::Stopwatch<> watch;
    for (long k = 0; k < steps; ++k) vec.integrate(1);  // every environment in turn, step by step (as an RL loop)
    rounds.push_back(watch.seconds() * 1e9 / (static_cast<double>(steps) * static_cast<double>(envs)));
  }
  return bench::median(rounds);
}

// Environment steps per second of `envs` environments on one thread with the lanes of `width`
// and with width 1, alternated round by round in one VecWorld (medians of 5 rounds each).
struct LanesTiming {
  double lanes = 0, scalar = 0;
};
LanesTiming lanes_vs_scalar(const WorldDescription& d, Index envs, long steps, int width) {
  batch::VecWorld vec(d, envs, 1);
  for (int w : {width, 1}) {
    vec.set_lanes(w);
    vec.integrate(20);  // the buffers take their sizes
  }
  std::vector<double> lanes, scalar;
  for (int r = 0; r < 5; ++r) {
    for (int w : {width, 1}) {
      vec.set_lanes(w);
      const bench::Stopwatch<> watch;
      for (long k = 0; k < steps; ++k) vec.integrate(1);
      (w == 1 ? scalar : lanes).push_back(static_cast<double>(steps) * static_cast<double>(envs) / watch.seconds());
    }
  }
  return {bench::median(lanes), bench::median(scalar)};
}

// Heap bytes held by a VecWorld of `envs` environments after 50 steps.
double heap_bytes(const WorldDescription& d, Index envs) {
  const std::size_t before = batch::heap_bytes_in_use();
  auto vec = std::make_unique<batch::VecWorld>(d, envs, 1);
  vec->integrate(50);
  return static_cast<double>(batch::heap_bytes_in_use()) - static_cast<double>(before);
}

}  // namespace

int run_bench_batch(const BenchOptions& o) {
  const WorldDescription d = parse_world_file(find_model("worlds/anymal_stand.xml"));
  const long steps = o.steps > 0 ? o.steps : 200;
  const double small = ns_per_environment_step(d, 8, steps), large = ns_per_environment_step(d, 256, steps);
  const double per_environment = (heap_bytes(d, 264) - heap_bytes(d, 8)) / 256;
  const int width = lanes_default_width() > 1 ? lanes_default_width() : lanes_max_width();
  const LanesTiming lt = lanes_vs_scalar(d, 256, steps, width);
  if (o.json) {
    std::cout << json{{"ns_per_environment_step_8", number(small)},
                      {"ns_per_environment_step_256", number(large)},
                      {"bytes_per_environment", number(per_environment)},
                      {"lanes_width", width},
                      {"steps_per_second_256_lanes", number(lt.lanes)},
                      {"steps_per_second_256_scalar", number(lt.scalar)}}
                     .dump()
              << "\n";
    return 0;
  }
  std::printf("batched ANYmal standing (models/worlds/anymal_stand.xml), one thread, %ld steps a round\n", steps);
  std::printf("  8 environments     %8.0f ns an environment step (median of 5 rounds)\n", small);
  std::printf("  256 environments   %8.0f ns an environment step (%.2fx the time of 8)\n", large, large / small);
  std::printf("  one more environment costs %.1f KiB of heap\n", per_environment / 1024);
  std::printf("  256 environments, dynamics in %d SIMD lanes  %8.0f steps/s\n", width, lt.lanes);
  std::printf("  256 environments, one by one (width 1)       %8.0f steps/s  (lanes: %.2fx; alternated rounds)\n",
              lt.scalar, lt.lanes / lt.scalar);
  return 0;
}

}  // namespace impulse::cli
