// `impulse plot RECORDING_or_CSV --out DIR`: PNG figures of a run (base trajectory, velocities,
// contact forces, energy, penetration, solver work). The plotting is done by
// python/impulse_viz/plot.py (matplotlib); this command finds the interpreter and the module and
// hands over, so the C++ build needs no Python.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <vector>

#include "cli/commands.hpp"
#include "impulse/core/version.hpp"
#include "impulse/core/error.hpp"
#include "impulse/core/file.hpp"

namespace impulse::cli {

namespace {

struct PlotOptions {
  std::string input;
  std::string out = "plots";
  std::string python = "/usr/bin/python3";
};

// The folder holding impulse_viz: $IMPULSE_PYTHON_DIR, else the python/ folder beside the models
// (the source tree's python/, or share/impulse/python when installed).
std::string python_dir() {
  if (const char* env = std::getenv("IMPULSE_PYTHON_DIR")) return env;
  return models_dir() + "/../python";
}

int run_plot(const PlotOptions& o) {
  // a regular file, checked before the module reads it (a FIFO or /dev/zero is not read at all)
  std::uint64_t size = 0;
  ::close(open_regular_file<Error>(o.input, "plot input", size));
  const std::string dir = python_dir();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir + "/impulse_viz/plot.py", ec)) {
    throw Error("cannot find impulse_viz/plot.py under '" + dir + "' (set IMPULSE_PYTHON_DIR)");
  }
  if (access(o.python.c_str(), X_OK) != 0) {
    throw Error("python interpreter '" + o.python + "' not found (install python3-matplotlib and python3-numpy, "
                "or pass --python)");
  }
  std::vector<std::string> args = {o.python, "-m", "impulse_viz.plot", o.input, "--out", o.out};
  const pid_t pid = fork();
  if (pid == 0) {
    const char* old = std::getenv("PYTHONPATH");
    const std::string path = dir + (old && *old ? ":" + std::string(old) : "");
    setenv("PYTHONPATH", path.c_str(), 1);
    setenv("MPLBACKEND", "Agg", 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid < 0) throw Error("cannot start " + o.python);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) throw Error("impulse_viz.plot was killed");
  return WEXITSTATUS(status) == 0 ? 0 : 1;  // the module printed its own one-line error
}

}  // namespace

void add_plot_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<PlotOptions>();
  auto* c = app.add_subcommand("plot", "Write PNG figures of a recording or a CSV log (python/impulse_viz/plot.py)");
  c->add_option("input", o->input, "Recording (--record FILE) or CSV log (--csv FILE)")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_option("--out", o->out, "Output directory (default plots/)");
  c->add_option("--python", o->python, "Python interpreter with numpy and matplotlib (default /usr/bin/python3)");
  c->callback([o, &run]() { run = [o]() { return run_plot(*o); }; });
}

}  // namespace impulse::cli
