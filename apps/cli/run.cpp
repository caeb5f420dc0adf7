// `impulse run WORLD.xml --steps N [--solver NAME] [--set ELEMENT.ATTRIBUTE=VALUE ...] [--csv FILE] [--record FILE] [--every K] [--json]`: steps a
// world file (docs/world-format.md) and prints the summary table (cli/summary.hpp).
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/csv_log.hpp"
#include "cli/json_util.hpp"
#include "cli/summary.hpp"
#include "impulse/record/recording.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::cli {

namespace {

// `name` when it is a contact solver of the registry, else a UsageError listing the valid names.
std::string check_solver_name(const std::string& name) {
  const auto& valid = contact_solver_names();
  if (std::find(valid.begin(), valid.end(), name) != valid.end()) return name;
  throw UsageError("unknown solver '" + name + "'; valid names are: " + join_solver_names());
}

struct RunOptions {
  std::string world;
  long steps = 1000;
  std::string solver;  // empty: the world file's
  std::vector<std::string> set;  // ELEMENT.ATTRIBUTE=VALUE, applied after --solver
  std::string csv;
  long every = 1;
  std::string record;  // recording file (docs/recording.md), empty: none
  bool json = false;
};

int run_world(const RunOptions& o) {
  if (!o.solver.empty()) check_solver_name(o.solver);
  WorldDescription d = parse_world_file(o.world);
  if (!o.solver.empty() && o.solver != d.solver.name) {
    d.solver = WorldSolverDescription();  // the file's options belong to its own solver
    d.solver.name = o.solver;
  }
  for (const std::string& a : o.set) apply_world_setting(d, a);
  World world;
  build_world(d, world);
  world.set_stage_timing(true);  // the summary's per-stage times

  std::unique_ptr<CsvLog> csv;
  if (!o.csv.empty()) csv = std::make_unique<CsvLog>(o.csv, world);
  std::unique_ptr<Recorder> recording;
  if (!o.record.empty()) recording = std::make_unique<Recorder>(o.record, world, o.every);
  RunRecorder rec(o.steps);
  ProgressBar bar(o.steps);
  for (long k = 1; k <= o.steps; ++k) {
    const StepReport r = world.integrate();
    if (!r.ok() && r.status == StepStatus::NonFinite) {
      // the World rejected the step (state and time unchanged): continuing would repeat it
      bar.finish();
      std::cerr << "error: step " << k << " (t = " << world.time() << " s): " << world.describe(r) << "\n";
      return 3;
    }
    rec.record(world.stats());
    if (csv && k % o.every == 0) csv->log(world);
    if (recording) recording->record(world);
    bar.update(k);
  }
  bar.finish();
  if (csv) csv->flush();
  if (recording) recording->close();
  // every other condition of the run, one line each on stderr (stdout stays the summary)
  for (int k = 0; k < kNumWarningKinds; ++k) {
    const WarningCounter& w = world.warnings()[static_cast<std::size_t>(k)];
    if (w.count == 0) continue;
    std::cerr << "warning: " << to_string(static_cast<WarningKind>(k)) << " in " << w.count << " of " << o.steps
              << " steps (last at t = " << w.last_time << " s";
    if (static_cast<WarningKind>(k) == WarningKind::ContactOverflow) {
      std::cerr << "; max_contacts " << world.settings().max_contacts << ": contacts beyond it were dropped";
    }
    std::cerr << ")\n";
  }

  if (o.json) {
    json j = rec.json();
    j["world"] = o.world;
    j["solver"] = world.contact_solver().name();
    j["dt"] = world.time_step();
    j["time_s"] = world.time();
    std::cout << j.dump(2) << "\n";
  } else {
    std::ostringstream title;
    title << o.world << ": " << world.num_systems() << " systems, solver " << world.contact_solver().name()
          << ", dt " << world.time_step() << " s, " << world.time() << " s simulated";
    rec.print_table(std::cout, title.str());
    if (csv) std::cout << "  csv                   " << o.csv << " (" << csv->rows() << " rows)\n";
    if (recording) std::cout << "  recording             " << o.record << " (" << recording->frames() << " frames)\n";
  }
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<RunOptions>();
  auto* c = app.add_subcommand("run", "Step a world file and print the timing and contact summary");
  c->add_option("world", o->world, "World file (XML, docs/world-format.md)")->required()->check(CLI::ExistingFile);
  c->add_option("--steps", o->steps, "Number of steps (default 1000)")->check(CLI::Range(1L, 1000000000L));
  c->add_option("--solver", o->solver, "Contact solver, overriding the world file's (" + join_solver_names() + ")");
  c->add_option("--set", o->set,
                 "Change one setting of the world file, ELEMENT.ATTRIBUTE=VALUE with ELEMENT world, solver or contact "
                 "(e.g. solver.alpha=0.5, contact.erp=0.1; docs/world-format.md; repeatable)")
      ->type_size(1)
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  c->add_option("--csv", o->csv, "Write the state every K steps to this CSV file");
  c->add_option("--record", o->record, "Record the run to this file (docs/recording.md; `impulse view` replays it)");
  c->add_option("--every", o->every, "Log every K-th step to the CSV and the recording (default 1)")->check(CLI::Range(1L, 1000000000L));
  c->add_flag("--json", o->json, "Print the summary as one JSON object");
  c->callback([o, &run]() { run = [o]() { return run_world(*o); }; });
}

}  // namespace impulse::cli
