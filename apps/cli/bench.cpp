// `impulse bench WHAT [--model PATH] [--json]`: benchmarks that print medians.
#include <map>
#include <memory>

#include "cli/commands.hpp"
#include "impulse/core/version.hpp"
#include "impulse/solvers/anderson.hpp"
#include "impulse/solvers/solver_registry.hpp"

namespace impulse::cli {

std::string default_model_path() { return find_model("anymal/anymal.urdf"); }

void add_bench_command(CLI::App& app, Runner& run) {
  // WHAT -> benchmark; each lives in its own bench_<what>.cpp
  static const std::map<std::string, int (*)(const BenchOptions&)> benches = {
      {"batch", &run_bench_batch},
      {"collision", &run_bench_collision},
      {"dynamics", &run_bench_dynamics},
      {"scenes", &run_bench_scenes},
      {"fidelity", &run_bench_fidelity},
      {"isa", &run_bench_isa},
      {"solvers", &run_bench_solvers},
  };
  std::vector<std::string> names;
  for (const auto& b : benches) names.push_back(b.first);
  auto o = std::make_shared<BenchOptions>();
  auto* c = app.add_subcommand("bench", "Benchmarks (medians over many calls)");
  c->add_option("what", o->what, "What to measure")->required()->check(CLI::IsMember(names));
  c->add_option("--model", o->model, "URDF file (default: the project's ANYmal)");
  c->add_flag("--json", o->json, "Print one JSON object");
  c->add_option("--calls", o->calls, "Calls per measured function (default 100000)")
      ->check(CLI::Range(1000L, 100000000L));
  c->add_option("--seed", o->seed, "Seed of the random states");
  c->add_option("--scene", o->scene, "bench scenes / fidelity: one scene (default: all)");
  c->add_flag("--full", o->full, "bench fidelity: the long scene lengths (216 balls 10 s, 49 balls 20 s)");
  c->add_option("--steps", o->steps, "bench scenes: steps per scene (default: the scene's); bench batch: steps a round (default 200; the locomotion part: N / 5 control steps); bench isa: steps a repetition (default 5000)")->check(CLI::Range(1L, 10000000L));
  c->add_option("--anderson", o->anderson,
                "bench scenes: Anderson acceleration memory of the bisection and PGS solvers (0: off; default: the solvers' own, 5 for bisection, 0 for PGS)")
      ->check(CLI::Range(0, static_cast<int>(AndersonAcceleration::kMaxMemory)));
  // an option of bench scenes that counts sweeps or rows (0 .. 1e8)
  const auto count_option = [c](const char* name, long& value, const char* help) {
    c->add_option(name, value, help)->check(CLI::Range(0L, 100000000L));
  };
  count_option("--active-set-start", o->active_set_start,
               "bench scenes: sweeps of the bisection solver before its active-set stage (0: never; default: the solver's, 50)");
  count_option("--active-set-early", o->active_set_early,
               "bench scenes: the sweep at which the bisection solver's active-set stage takes an island whose sweeps crawl (0: never; default: the solver's, 5)");
  count_option("--active-set-early-rows", o->active_set_early_rows,
               "bench scenes: the largest island (rows) the bisection solver's active-set stage takes early when its sweeps crawl (default: the solver's)");
  count_option("--active-set-rows", o->active_set_rows,
               "bench scenes: largest island (rows) the bisection solver's active-set stage takes (default: the solver's)");
  count_option("--active-set-retry-rows", o->active_set_retry_rows,
               "bench scenes: largest island (rows) on which the bisection solver's active-set stage, failed from the sweeps' impulses, runs once more from the solve's start (0: never; default: the solver's)");
  count_option("--active-set-give-up", o->active_set_give_up,
               "bench scenes: classifications after which the bisection solver's active-set stage stops when none of its iterates beat its start (default: the solver's)");
  c->add_option("--active-set-ls", o->active_set_ls,
                "bench scenes: 1: the bisection solver's active-set stage solves for least squares on an inconsistent right side, in a step from the sweeps' impulses; 0: not (default: the solver's)")
      ->check(CLI::Range(0, 1));
  count_option("--stall-window", o->stall_window,
               "bench scenes: sweeps without progress near the tolerance after which the bisection solver stops on a plateau (0: never; default: the solver's)");
  count_option("--plain-after-plateau", o->plain_after_plateau,
               "bench scenes: plain sweeps (no Anderson mixing) the bisection solver goes on with after its mixed sweeps stop on a plateau (0: none; default: the solver's)");
  c->add_option("--range-projections", o->range_projections,
                "bench scenes: plateaus on which the bisection solver projects the right side of the touching rows onto the range of G and goes on (0: never; default: the solver's)")
      ->check(CLI::Range(0L, 100L));
  count_option("--newton-start", o->newton_start,
               "bench scenes: sweeps of the bisection solver before its semismooth Newton stage takes an unconverged solve (0: never; default: the solver's, 0; 900 takes it before the sweep cap)");
  count_option("--newton-rows", o->newton_rows,
               "bench scenes: largest island (rows) the bisection solver's semismooth Newton stage takes (default: the solver's)");
  count_option("--range-projection-rows", o->range_projection_rows,
               "bench scenes: largest island (rows) whose right side the bisection solver projects on a plateau (default: the solver's)");
  c->add_option("--alpha-min", o->alpha_min,
                "bench scenes: the bisection solver's smallest relaxation factor (default: the solver's)")
      ->check(CLI::Range(0.01, 2.0));
  c->add_option("--gap-slop", o->gap_slop,
                "bench scenes: a row apart closes its gap down to this, in m (target v >= -max(gap - gap_slop, 0) / dt; default: the World's, 0)")
      ->check(CLI::Range(0.0, 1.0));
  std::vector<std::string> solvers;
  for (const SolverEntry& e : solver_registry()) solvers.push_back(e.name);
  c->add_option("--solver", o->solver, "bench scenes: contact solver (default: bisection)")
      ->check(CLI::IsMember(solvers));
  c->callback([o, &run]() {
    run = [o]() {
      if (o->model.empty()) o->model = default_model_path();
      return benches.at(o->what)(*o);
    };
  });
}

}  // namespace impulse::cli
