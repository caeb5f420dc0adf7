// `impulse bench batch [--steps N] [--json]`: batched stepping on one thread.
//
// VecWorld copies of models/worlds/anymal_stand.xml (ANYmal standing on PD), 8 and 256
// environments, one thread, every environment stepped in turn at each step (as an RL loop steps
// them): the median over 5 rounds of N steps (default 200) of the time per environment step, and the memory one more environment costs (heap growth between 8 and 264
// environments after 50 steps of each, divided by 256). Every environment shares the Models and
// the thread's step scratch (StepWorkspace: Data, stepper, solver), so 256 environments step at
// nearly the speed of 8 and cost only their own state (docs/architecture.md, "What a World
// holds").
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
  if (o.json) {
    std::cout << json{{"ns_per_environment_step_8", number(small)},
                      {"ns_per_environment_step_256", number(large)},
                      {"bytes_per_environment", number(per_environment)}}
                     .dump()
              << "\n";
    return 0;
  }
  std::printf("batched ANYmal standing (models/worlds/anymal_stand.xml), one thread, %ld steps a round\n", steps);
  std::printf("  8 environments     %8.0f ns an environment step (median of 5 rounds)\n", small);
  std::printf("  256 environments   %8.0f ns an environment step (%.2fx the time of 8)\n", large, large / small);
  std::printf("  one more environment costs %.1f KiB of heap\n", per_environment / 1024);
  return 0;
}

}  // namespace impulse::cli
