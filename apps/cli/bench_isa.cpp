// `impulse bench isa [--steps N] [--json]`: the step's kernels for x86-64-v3 against the baseline.
//
// The library compiles its hot kernels twice (core/isa.hpp): for the x86-64 baseline (SSE2, the
// default) and for x86-64-v3 (AVX2, FMA). This runs the ANYmal scenarios of Hwangbo 2018 (stand:
// models/worlds/anymal_stand.xml; trot; drop, which lands from 1 m; random, thrown in the air
// under PD) twice in one process, one copy on each instruction set, advancing the two in
// alternating blocks of 100 steps (each first every other block) so that both see the same
// machine state (as impulse_peers
// does with MuJoCo), timed on the thread's CPU clock (time spent waiting for a core on a loaded
// machine does not count). Per scene: 5 repetitions of N steps (default 5000) from a fresh start, the
// median us per step of each copy and the median over repetitions of the ratio v3 / baseline.
// The two copies' trajectories differ in the last bits (FMA rounds once), not in their physics.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/core/isa.hpp"
#include "impulse/core/version.hpp"
#include "impulse/world/world_file.hpp"
#include "scenarios/scenario.hpp"

namespace impulse::cli {

namespace {

// One copy of a scene: something that steps.
struct IsaSceneCopy {
  virtual ~IsaSceneCopy() = default;
  virtual void step() = 0;
};

struct IsaScenarioCopy : IsaSceneCopy {
  std::unique_ptr<scenarios::Scenario> s;
  explicit IsaScenarioCopy(const std::string& name) : s(scenarios::make_scenario(name, {})) {}
  void step() override { s->step(); }
};

struct IsaStandCopy : IsaSceneCopy {
  std::unique_ptr<World> w;
  IsaStandCopy() : w(load_world(find_model("worlds/anymal_stand.xml"))) {}
  void step() override { w->integrate(); }
};

std::unique_ptr<IsaSceneCopy> make_isa_copy(const std::string& scene) {
  if (scene == "stand") return std::make_unique<IsaStandCopy>();
  return std::make_unique<IsaScenarioCopy>(scene);
}

struct IsaSceneTiming {
  std::string scene;
  double baseline_us = 0, v3_us = 0, ratio = 0;  // medians over repetitions
};

IsaSceneTiming time_isa_scene(const std::string& scene, long steps, int reps) {
  constexpr long kBlock = 100;
  std::vector<double> base_us, v3_us, ratio;
  for (int r = 0; r < reps; ++r) {
    auto base = make_isa_copy(scene), v3 = make_isa_copy(scene);
    double tb = 0, tv = 0;
    const auto block = [](KernelIsa isa, IsaSceneCopy& runner, long n) {
      set_kernel_isa(isa);
      const bench::Stopwatch<bench::ThreadCpuClock> watch;
      for (long k = 0; k < n; ++k) runner.step();
      return watch.seconds();
    };
    for (long done = 0, b = 0; done < steps; done += kBlock, ++b) {
      const long n = std::min(kBlock, steps - done);
      if (b % 2 == 0) {  // (each goes first every other block)
        tb += block(KernelIsa::Baseline, *base, n);
        tv += block(KernelIsa::X86_64_V3, *v3, n);
      } else {
        tv += block(KernelIsa::X86_64_V3, *v3, n);
        tb += block(KernelIsa::Baseline, *base, n);
      }
    }
    base_us.push_back(tb * 1e6 / static_cast<double>(steps));
    v3_us.push_back(tv * 1e6 / static_cast<double>(steps));
    ratio.push_back(tv / tb);
  }
  set_kernel_isa(KernelIsa::Baseline);
  return {scene, bench::median(base_us), bench::median(v3_us), bench::median(ratio)};
}

}  // namespace

int run_bench_isa(const BenchOptions& o) {
  if (!kernel_isa_supported(KernelIsa::X86_64_V3)) {
    std::cerr << "bench isa: this CPU does not run the x86-64-v3 kernels (AVX2 and FMA): nothing to compare\n";
    return 2;
  }
  const KernelIsa before = kernel_isa();
  const long steps = o.steps > 0 ? o.steps : 5000;
  constexpr int kReps = 5;
  std::vector<IsaSceneTiming> rows;
  for (const char* scene : {"stand", "trot", "drop", "random"}) rows.push_back(time_isa_scene(scene, steps, kReps));
  set_kernel_isa(before);
  if (o.json) {
    json j;
    j["steps"] = steps;
    j["repetitions"] = kReps;
    for (const IsaSceneTiming& t : rows) {
      j[t.scene] = {{"baseline_us", number(t.baseline_us)}, {"x86_64_v3_us", number(t.v3_us)},
                    {"ratio", number(t.ratio)}};
    }
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::printf("ANYmal step, kernels for x86-64-v3 against the baseline, alternated blocks of 100 steps in one\n"
              "process, %ld steps x %d repetitions (medians)\n",
              steps, kReps);
  std::printf("  scene    baseline (us)  x86-64-v3 (us)  v3 / baseline\n");
  for (const IsaSceneTiming& t : rows) {
    std::printf("  %-7s  %13.3f  %14.3f  %13.3f\n", t.scene.c_str(), t.baseline_us, t.v3_us, t.ratio);
  }
  return 0;
}

}  // namespace impulse::cli
