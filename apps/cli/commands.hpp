// The subcommands of the `impulse` CLI. Each add_*_command registers one subcommand on the app;
// when that subcommand is parsed, its callback stores in `run` the function that does the work
// and returns the exit code. impulse::Error escaping it is printed as one line `error: ...`
// (exit 1, or 2 for cli::UsageError). To add a command: one file in cli/, one line here, one
// line in impulse.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace impulse::cli {

using Runner = std::function<int()>;

void add_inspect_command(CLI::App& app, Runner& run);   // inspect.cpp
void add_dynamics_command(CLI::App& app, Runner& run);  // dynamics.cpp
void add_bench_command(CLI::App& app, Runner& run);     // bench.cpp
void add_run_command(CLI::App& app, Runner& run);       // run.cpp
void add_contacts_command(CLI::App& app, Runner& run);  // contacts.cpp
void add_demo_command(CLI::App& app, Runner& run);      // demo.cpp (apps/scenarios/)
void add_view_command(CLI::App& app, Runner& run);      // view.cpp (viewer/, docs/viewer.md)
void add_plot_command(CLI::App& app, Runner& run);      // plot.cpp (python/impulse_viz/plot.py)
void add_settings_command(CLI::App& app, Runner& run);  // settings.cpp (generated stubs and docs tables)

// The benchmarks of `impulse bench WHAT` (bench.cpp dispatches on WHAT).
struct BenchOptions {
  std::string what;   // "dynamics", ...
  std::string model;  // URDF (default: models/anymal/anymal.urdf)
  bool json = false;
  long calls = 100000;
  unsigned seed = 1;
  std::string scene;  // bench scenes: one scene name, or all (default)
  long steps = 0;     // bench scenes: steps per scene (0: the scene's default)
  bool full = false;  // bench fidelity: the long scene lengths
  int anderson = -1;  // bench scenes: Anderson memory of the bisection solver (-1: its default)
  long active_set_start = -1;  // bench scenes: bisection's active_set_start (-1: its default)
  long active_set_early = -1;  // bench scenes: bisection's active_set_early (-1: its default)
  long active_set_early_rows = -1;  // bench scenes: bisection's active_set_early_rows (-1: its default)
  long active_set_rows = -1;   // bench scenes: bisection's active_set.max_rows (-1: its default)
  long active_set_retry_rows = -1;  // bench scenes: bisection's active_set.retry_rows (-1: its default)
  long active_set_give_up = -1;     // bench scenes: bisection's active_set.give_up_factorizations (-1: its default)
  long stall_window = -1;      // bench scenes: bisection's stall_window (-1: its default)
  long plain_after_plateau = -1;  // bench scenes: bisection's plain_after_plateau (-1: its default)
  long range_projections = -1; // bench scenes: bisection's range_projections (-1: its default)
  long newton_start = -1;      // bench scenes: bisection's newton_start (-1: its default)
  long newton_rows = -1;       // bench scenes: bisection's newton.max_rows (-1: its default)
  double gap_slop = -1;        // bench scenes: the contact settings' gap_slop in m (-1: its default)
  double alpha_min = -1;       // bench scenes: bisection's alpha_min (-1: its default)
  long range_projection_rows = -1;  // bench scenes: bisection's range_projection_rows (-1: its default)
  int active_set_ls = -1;      // bench scenes: bisection's active_set.least_squares (0/1; -1: its default)
  std::string solver;  // bench scenes: contact solver (registry name; empty: the World's default)
};
int run_bench_dynamics(const BenchOptions& o);   // bench_dynamics.cpp
int run_bench_collision(const BenchOptions& o);  // bench_collision.cpp
int run_bench_solvers(const BenchOptions& o);    // bench_solvers.cpp
int run_bench_batch(const BenchOptions& o);      // bench_batch.cpp
int run_bench_scenes(const BenchOptions& o);     // bench_scenes.cpp
int run_bench_fidelity(const BenchOptions& o);   // bench_fidelity.cpp (docs/fidelity.md)
int run_bench_isa(const BenchOptions& o);        // bench_isa.cpp (core/isa.hpp)

// The project's ANYmal (models/anymal/anymal.urdf in the source tree).
std::string default_model_path();

}  // namespace impulse::cli
