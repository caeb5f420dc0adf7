// impulse: command-line front end (inspect a model, evaluate its dynamics, run benchmarks).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"

int main(int argc, char** argv) {
  using namespace impulse::cli;
  CLI::App app{"Impulse: rigid-body dynamics and hard contact for robotics"};
  app.require_subcommand(1);

  InspectOptions inspect;
  auto* c_inspect = app.add_subcommand("inspect", "Summarise a URDF model (joints, bodies, frames, collision)");
  c_inspect->add_option("model", inspect.model, "URDF file")->required();
  c_inspect->add_flag("--json", inspect.json, "Print one JSON object");
  c_inspect->add_flag("--fixed-base", inspect.fixed_base, "Weld the root body to the world");

  DynamicsOptions dyn;
  auto* c_dyn = app.add_subcommand("dynamics",
                                   "Read {\"q\",\"u\",\"tau\"} JSON on stdin; print M, h, udot, energies, com, poses");
  c_dyn->add_option("model", dyn.model, "URDF file")->required();
  c_dyn->add_flag("--fixed-base", dyn.fixed_base, "Weld the root body to the world");

  BenchOptions bench;
  auto* c_bench = app.add_subcommand("bench", "Benchmarks (medians)");
  c_bench->add_option("what", bench.what, "What to measure")->required()->check(CLI::IsMember({"dynamics"}));
  c_bench->add_option("--model", bench.model, "URDF file (default: the project's ANYmal)");
  c_bench->add_flag("--json", bench.json, "Print one JSON object");
  c_bench->add_option("--calls", bench.calls, "Calls per measured function (default 100000)")
      ->check(CLI::Range(1000L, 100000000L));
  c_bench->add_option("--seed", bench.seed, "Seed of the random states");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (*c_inspect) return run_inspect(inspect);
    if (*c_dyn) return run_dynamics(dyn);
    if (*c_bench) {
      if (bench.model.empty()) bench.model = default_model_path();
      return run_bench_dynamics(bench);
    }
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const impulse::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 2;
}
