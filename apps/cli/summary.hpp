// RunRecorder: per-step statistics of a simulation run (World::stats() after each step), kept in
// arrays preallocated for the planned number of steps, summarised as the table printed by
// `impulse run` and the scenario demos, or as one JSON object:
//
//   { "steps", "us_per_step_median", "us_per_step_mean",
//     "stages_us": {"dynamics", "collision", "delassus", "solve", "integrate"},   (means)
//     "stages_us_median": {...same keys...},   (medians, robust on a loaded machine)
//     "iterations_mean", "contacts_mean", "contacts_max", "penetration_max_m", "penetration_mean_m",
//     "not_converged_steps", "failed_steps" }
//
// Usage:
//   RunRecorder rec(steps);
//   for (...) { world.integrate(); rec.record(world.stats()); }
//   rec.print_table(std::cout, "anymal_stand.xml");   // or std::cout << rec.json().dump(2)
// record() does not allocate while fewer than `capacity` steps have been recorded (it grows like
// a std::vector beyond that). Times are the stepper's own stage timers (microseconds).
//
// Progress: a one-line bar on stderr when stderr is a terminal and the run is long.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "impulse/stepper/stepper.hpp"

namespace impulse::cli {

class RunRecorder {
 public:
  explicit RunRecorder(long capacity = 0);

  void reserve(long capacity);
  void clear();
  void record(const StepStats& stats);
  long steps() const { return static_cast<long>(total_.size()); }

  // Statistics over the recorded steps (0 when none).
  double us_per_step_median() const;
  double us_per_step_mean() const;
  StageTimes stage_means() const;
  StageTimes stage_medians() const;  // per stage (their sum is not the median step)
  double iterations_mean() const;
  double contacts_mean() const;
  long contacts_max() const;
  double penetration_max() const;
  double penetration_mean() const;
  long not_converged_steps() const { return not_converged_; }
  long failed_steps() const { return failed_; }  // SolverFailed or NonFinite

  nlohmann::json json() const;
  // The summary table; `title` (e.g. the world file and solver) is printed above it.
  void print_table(std::ostream& out, const std::string& title = "") const;

 private:
  StageTimes per_stage(double (*statistic)(std::vector<double>)) const;
  std::vector<double> total_, dynamics_, collision_, delassus_, solve_, integrate_;
  std::vector<double> iterations_, penetration_;
  std::vector<long> contacts_;
  long not_converged_ = 0, failed_ = 0;
};

// A progress bar on stderr, shown only when stderr is a terminal and total >= min_steps.
class ProgressBar {
 public:
  explicit ProgressBar(long total, long min_steps = 20000);
  ~ProgressBar();
  void update(long done) {
    if (enabled_ && done >= next_) draw(done);
  }
  void finish();

 private:
  void draw(long done);
  long total_ = 0, next_ = 0;
  bool enabled_ = false;
};

}  // namespace impulse::cli
