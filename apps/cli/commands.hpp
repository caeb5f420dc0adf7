// The subcommands of the `impulse` CLI. Each returns the process exit code; impulse::Error
// escaping them is printed as one line `error: ...` (exit 1, or 2 for cli::UsageError).
#pragma once

#include <string>

namespace impulse::cli {

struct InspectOptions {
  std::string model;
  bool json = false;
  bool fixed_base = false;
};
int run_inspect(const InspectOptions& o);

struct DynamicsOptions {
  std::string model;
  bool fixed_base = false;
};
int run_dynamics(const DynamicsOptions& o);

struct BenchOptions {
  std::string what;   // "dynamics", ...
  std::string model;  // URDF (default: models/anymal/anymal.urdf)
  bool json = false;
  long calls = 100000;
  unsigned seed = 1;
};
int run_bench_dynamics(const BenchOptions& o);

std::string default_model_path();

}  // namespace impulse::cli
