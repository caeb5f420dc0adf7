// impulse: command-line front end (inspect a model, evaluate its dynamics, run benchmarks).
#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/core/version.hpp"

namespace {
// Messages may span lines (CLI11 adds "Run with --help ..."); the CLI prints one line per error.
std::string one_line(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "; ";
    } else {
      out += c;
    }
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  using namespace impulse::cli;
  CLI::App app{"Impulse: rigid-body dynamics and hard contact for robotics"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("impulse ") + impulse::version_string());
  // --package-path DIR (repeatable): searched first for package:// URIs by every command. It is
  // handed to the loaders through IMPULSE_PACKAGE_PATH, which they read before ROS_PACKAGE_PATH.
  std::vector<std::string> package_paths;
  app.add_option("--package-path", package_paths, "Folder searched first for package:// URIs (repeatable)")
      ->type_size(1)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  Runner run;
  add_inspect_command(app, run);
  add_dynamics_command(app, run);
  add_bench_command(app, run);
  add_run_command(app, run);
  add_contacts_command(app, run);
  add_demo_command(app, run);
  add_view_command(app, run);
  add_plot_command(app, run);
  add_settings_command(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // CLI11's own text on one line with the documented prefix (exit code 2: usage)
    std::cerr << "error: " << one_line(e.what()) << " (see 'impulse --help')\n";
    return 2;
  }
  if (!run) return 2;
  if (!package_paths.empty()) {
    std::string joined;
    for (const std::string& p : package_paths) joined += (joined.empty() ? "" : ":") + p;
    if (const char* old = std::getenv("IMPULSE_PACKAGE_PATH")) joined += std::string(":") + old;
    ::setenv("IMPULSE_PACKAGE_PATH", joined.c_str(), 1);
  }
  try {
    return run();
  } catch (const UsageError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 1;
  }
}
