// impulse: command-line front end (inspect a model, evaluate its dynamics, run benchmarks).
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"

int main(int argc, char** argv) {
  using namespace impulse::cli;
  CLI::App app{"Impulse: rigid-body dynamics and hard contact for robotics"};
  app.require_subcommand(1);
  Runner run;
  add_inspect_command(app, run);
  add_dynamics_command(app, run);
  add_bench_command(app, run);
  add_run_command(app, run);
  add_contacts_command(app, run);
  add_demo_command(app, run);
  add_view_command(app, run);
  add_plot_command(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!run) return 2;
  try {
    return run();
  } catch (const UsageError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
