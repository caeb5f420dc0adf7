// `impulse demo NAME [--solver S] [--steps N] [--seed S] [--csv FILE] [--record FILE] [--json]`: the ANYmal
// scenarios of Hwangbo 2018 sec. V (apps/scenarios/), `table2` (their Table II and Fig. 6), and
// the papers' validation scenarios sphere, pendulum (Mylapilli & Jain 2017 sec. 6.1, 6.2) and
// grasp (Drumwright 2015 sec. VII-A).
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "cli/summary.hpp"
#include "impulse/record/recording.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "scenarios/scenario.hpp"
#include "scenarios/scenario_csv.hpp"
#include "scenarios/table2.hpp"

namespace impulse::cli {

namespace {

struct DemoOptions {
  std::string name;
  std::string solver = "bisection";
  long steps = -1;  // default: the scenario's (20000; sphere 600, grasp 5000; table2: 100000 per run)
  unsigned seed = 1;
  std::string csv;
  std::string record;  // recording file (docs/recording.md), empty: none
  long record_every = 1;
  bool json = false;
};

int run_scenario_demo(const DemoOptions& o) {
  auto s = scenarios::make_scenario(o.name, {o.solver, o.seed});
  const long steps = o.steps > 0 ? o.steps : s->default_steps();
  std::unique_ptr<scenarios::ScenarioCsv> csv;
  if (!o.csv.empty()) csv = std::make_unique<scenarios::ScenarioCsv>(o.csv);
  std::unique_ptr<Recorder> recording;
  if (!o.record.empty()) recording = std::make_unique<Recorder>(o.record, s->world(), o.record_every);
  RunRecorder rec(steps);
  {
    ProgressBar bar(steps);
    for (long k = 0; k < steps; ++k) {
      s->step();
      rec.record(s->world().stats());
      if (csv) csv->log(*s);
      if (recording) recording->record(s->world());
      bar.update(k + 1);
    }
    bar.finish();
  }
  if (recording) recording->close();
  const auto figures = s->figures();
  if (o.json) {
    json j = rec.json();
    j["scenario"] = o.name;
    j["solver"] = o.solver;
    j["seed"] = o.seed;
    j["simulated_s"] = s->world().time();
    for (const auto& f : figures) j[f.first] = number(f.second);
    std::cout << j.dump(2) << "\n";
  } else {
    std::ostringstream title;
    title << "demo " << o.name << " (" << o.solver << ", " << steps << " steps = " << s->world().time()
          << " s simulated, seed " << o.seed << ")";
    rec.print_table(std::cout, title.str());
    for (const auto& f : figures) {
      std::cout << "  " << std::left << std::setw(26) << f.first << std::right << std::setw(12) << f.second << "\n";
    }
  }
  return rec.failed_steps() > 0 ? 1 : 0;
}

int run_table2_demo(const DemoOptions& o) {
  scenarios::Table2Options t;
  t.steps = o.steps > 0 ? o.steps : 100000;
  t.seed = o.seed;
  std::unique_ptr<ProgressBar> bar;
  long done_before = 0;
  std::string label;
  const long total = 8 * t.steps;
  bar = std::make_unique<ProgressBar>(total, 20000);
  t.progress = [&](const std::string& l, long done, long) {
    if (l != label) {
      if (!label.empty()) done_before += t.steps;
      label = l;
    }
    bar->update(done_before + done);
  };
  const scenarios::Table2Result r = scenarios::run_table2(t);
  bar->finish();
  bar.reset();
  const auto& paper = scenarios::paper_table2();
  if (o.json) {
    json j;
    j["steps_per_run"] = t.steps;
    j["seconds_per_100k"] = r.seconds_per_100k;
    j["wall_seconds_per_100k"] = r.wall_seconds_per_100k;
    j["iterations_mean"] = r.iterations_mean;
    j["paper_seconds_per_100k"] = paper;
    j["failed_steps"] = r.failed_steps;
    j["fig6_samples"] = r.fig6_samples;
    j["fig6_fraction_within_1pct"] = r.fig6_within_1pct;
    j["fig6_samples_no_slip"] = r.fig6_samples_no_slip;
    j["fig6_fraction_within_1pct_no_slip"] = r.fig6_within_1pct_no_slip;
    j["fig6_slipping_fraction"] = r.fig6_slipping_fraction;
    j["fig6_fraction_within_1pct_by_scenario"] = r.fig6_within_1pct_by_scenario;
    j["fig6_samples_well_posed"] = r.fig6_samples_well_posed;
    j["fig6_fraction_within_1pct_well_posed"] = r.fig6_within_1pct_well_posed;
    j["fig6_problems"] = r.fig6_problems;
    j["fig6_singular_problems"] = r.fig6_singular_problems;
    j["fig6_problems_motion_within_1pct"] = r.fig6_problems_motion_within_1pct;
    json h = json::array();
    for (std::size_t k = 0; k < r.fig6_edges.size(); ++k) {
      h.push_back({{"below", number(r.fig6_edges[k])}, {"fraction", r.fig6_fraction[k]}});
    }
    j["fig6_histogram"] = h;
    std::cout << j.dump(2) << "\n";
    return r.failed_steps > 0 ? 1 : 0;
  }
  std::cout << "Table II: seconds per 100k steps (" << t.steps << " steps per run; ours = engine stage time)\n";
  std::cout << std::fixed << std::setprecision(2);
  std::cout << "                   trot    hang    drop  random\n";
  for (const std::string solver : {"bisection", "pgs"}) {
    std::cout << "  paper " << std::left << std::setw(10) << solver << std::right;
    for (const auto& n : scenarios::scenario_names()) std::cout << std::setw(8) << paper.at(solver).at(n);
    std::cout << "\n  ours  " << std::left << std::setw(10) << solver << std::right;
    for (const auto& n : scenarios::scenario_names()) std::cout << std::setw(8) << r.seconds_per_100k.at(solver).at(n);
    std::cout << "\n  iters " << std::left << std::setw(10) << solver << std::right;
    for (const auto& n : scenarios::scenario_names()) std::cout << std::setw(8) << r.iterations_mean.at(solver).at(n);
    std::cout << "  (mean solver iterations per step)\n";
  }
  std::cout << "Fig. 6: |lambda_bisection - lambda_pgs| / |lambda_pgs| per contact (PGS to 1e-20), "
            << r.fig6_samples << " contact impulses\n";
  double lo = 0;
  for (std::size_t k = 0; k < r.fig6_edges.size(); ++k) {
    std::ostringstream bin;
    bin << std::scientific << std::setprecision(0) << "[" << lo << ", " << r.fig6_edges[k] << ")";
    std::cout << "  " << std::left << std::setw(20) << bin.str() << std::right << std::setw(8)
              << 100.0 * r.fig6_fraction[k] << " %\n";
    lo = r.fig6_edges[k];
  }
  std::cout << "  within 1 %: " << 100.0 * r.fig6_within_1pct << " % (paper: more than 99.6 %); by scenario:";
  for (const auto& s : r.fig6_within_1pct_by_scenario) std::cout << " " << s.first << " " << 100.0 * s.second << " %";
  std::cout << "\n  " << 100.0 * r.fig6_slipping_fraction
            << " % of the contacts slip, where eq. 8 (bisection) and Coulomb (PGS) differ; on the "
            << r.fig6_samples_no_slip << " contacts of problems without slip: " << 100.0 * r.fig6_within_1pct_no_slip
            << " % within 1 %\n";
  std::cout << "  " << r.fig6_singular_problems << " of " << r.fig6_problems
            << " problems have a singular G (impulses not unique); on the " << r.fig6_samples_well_posed
            << " contacts of the others: " << 100.0 * r.fig6_within_1pct_well_posed
            << " % within 1 %\n  velocity change M^-1 J^T lambda within 1 % of PGS's (kinetic-energy norm): "
            << 100.0 * r.fig6_problems_motion_within_1pct << " % of the problems\n";
  if (r.failed_steps > 0) std::cout << "  failed steps: " << r.failed_steps << "\n";
  return r.failed_steps > 0 ? 1 : 0;
}

}  // namespace

void add_demo_command(CLI::App& app, Runner& run) {
  std::vector<std::string> names = scenarios::scenario_names();
  names.push_back("table2");
  for (const auto& n : scenarios::validation_scenario_names()) names.push_back(n);
  auto o = std::make_shared<DemoOptions>();
  auto* c = app.add_subcommand("demo", "ANYmal scenarios of Hwangbo 2018 (trot, hang, drop, random), table2, and "
                                       "the validation scenarios sphere, pendulum, grasp");
  c->add_option("name", o->name, "Scenario")->required()->check(CLI::IsMember(names));
  c->add_option("--solver", o->solver, "Contact solver (bisection, pgs, lm, noslip)")
      ->check(CLI::IsMember(contact_solver_names()));
  c->add_option("--steps", o->steps,
                "Time steps of 1 ms (default 20000; sphere 600, grasp 5000; table2: 100000 per run)")
      ->check(CLI::Range(1L, 1000000000L));
  c->add_option("--seed", o->seed, "Seed of the scenario's random numbers");
  c->add_option("--csv", o->csv, "Per-step CSV log (time, base pose, contacts, iterations, residual, "
                                 "penetration, stage timings)");
  c->add_option("--record", o->record, "Record the run to this file (docs/recording.md; `impulse view` replays it)");
  c->add_option("--record-every", o->record_every, "Record every K-th step (default 1)")
      ->check(CLI::Range(1L, 1000000000L));
  c->add_flag("--json", o->json, "Print the summary as one JSON object");
  c->callback([o, &run]() {
    if (o->name == "table2" && !o->record.empty()) {
      throw CLI::ValidationError("--record", "table2 runs eight scenarios; record one of them instead (e.g. demo trot --record FILE)");
    }
    run = [o]() { return o->name == "table2" ? run_table2_demo(*o) : run_scenario_demo(*o); };
  });
}

}  // namespace impulse::cli
