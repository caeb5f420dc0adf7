#include "cli/summary.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iomanip>
#include <numeric>
#include <sstream>
#include <tuple>

#include "bench/timing.hpp"

namespace impulse::cli {

namespace {
double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}
using bench::median;
}  // namespace

RunRecorder::RunRecorder(long capacity) { reserve(capacity); }

void RunRecorder::reserve(long capacity) {
  const auto n = static_cast<std::size_t>(std::max(0L, capacity));
  for (auto* v : {&total_, &dynamics_, &collision_, &delassus_, &solve_, &integrate_, &iterations_, &penetration_}) {
    v->reserve(n);
  }
  contacts_.reserve(n);
}

void RunRecorder::clear() {
  for (auto* v : {&total_, &dynamics_, &collision_, &delassus_, &solve_, &integrate_, &iterations_, &penetration_}) {
    v->clear();
  }
  contacts_.clear();
  not_converged_ = failed_ = 0;
}

void RunRecorder::record(const StepStats& s) {
  total_.push_back(s.times.total());
  dynamics_.push_back(s.times.dynamics);
  collision_.push_back(s.times.collision);
  delassus_.push_back(s.times.delassus);
  solve_.push_back(s.times.solve);
  integrate_.push_back(s.times.integrate);
  iterations_.push_back(static_cast<double>(s.solver.iterations));
  penetration_.push_back(std::max(0.0, static_cast<double>(s.max_penetration)));
  contacts_.push_back(static_cast<long>(s.contacts));
  if (s.status == StepStatus::SolverNotConverged) ++not_converged_;
  if (s.status == StepStatus::SolverFailed || s.status == StepStatus::NonFinite) ++failed_;
}

double RunRecorder::us_per_step_median() const { return median(total_); }

StageTimes RunRecorder::per_stage(double (*statistic)(std::vector<double>)) const {
  StageTimes s;
  s.dynamics = statistic(dynamics_);
  s.collision = statistic(collision_);
  s.delassus = statistic(delassus_);
  s.solve = statistic(solve_);
  s.integrate = statistic(integrate_);
  return s;
}

StageTimes RunRecorder::stage_medians() const { return per_stage(&median); }

double RunRecorder::us_per_step_mean() const { return mean(total_); }

StageTimes RunRecorder::stage_means() const {
  return per_stage([](std::vector<double> v) { return mean(v); });
}

double RunRecorder::iterations_mean() const { return mean(iterations_); }

double RunRecorder::contacts_mean() const {
  if (contacts_.empty()) return 0;
  return static_cast<double>(std::accumulate(contacts_.begin(), contacts_.end(), 0L)) /
         static_cast<double>(contacts_.size());
}

long RunRecorder::contacts_max() const {
  return contacts_.empty() ? 0 : *std::max_element(contacts_.begin(), contacts_.end());
}

double RunRecorder::penetration_max() const {
  return penetration_.empty() ? 0 : *std::max_element(penetration_.begin(), penetration_.end());
}

double RunRecorder::penetration_mean() const { return mean(penetration_); }

nlohmann::json RunRecorder::json() const {
  const StageTimes st = stage_means(), sm = stage_medians();
  return nlohmann::json{
      {"steps", steps()},
      {"us_per_step_median", us_per_step_median()},
      {"us_per_step_mean", us_per_step_mean()},
      {"stages_us",
       {{"dynamics", st.dynamics},
        {"collision", st.collision},
        {"delassus", st.delassus},
        {"solve", st.solve},
        {"integrate", st.integrate}}},
      {"stages_us_median",
       {{"dynamics", sm.dynamics},
        {"collision", sm.collision},
        {"delassus", sm.delassus},
        {"solve", sm.solve},
        {"integrate", sm.integrate}}},
      {"iterations_mean", iterations_mean()},
      {"contacts_mean", contacts_mean()},
      {"contacts_max", contacts_max()},
      {"penetration_max_m", penetration_max()},
      {"penetration_mean_m", penetration_mean()},
      {"not_converged_steps", not_converged_},
      {"failed_steps", failed_},
  };
}

void RunRecorder::print_table(std::ostream& out, const std::string& title) const {
  const StageTimes st = stage_means(), sm = stage_medians();
  const double total = us_per_step_mean();
  auto pct = [&](double x) { return total > 0 ? 100.0 * x / total : 0.0; };
  std::ostringstream o;
  o << std::fixed;
  if (!title.empty()) o << title << "\n";
  o << "  steps                 " << steps() << "\n";
  o << std::setprecision(2);
  o << "  us/step median        " << std::setw(10) << us_per_step_median() << "\n";
  o << "  us/step mean          " << std::setw(10) << total << "\n";
  o << "  by stage                  mean   share     median\n";
  const std::tuple<const char*, double, double> stages[] = {{"dynamics", st.dynamics, sm.dynamics},
                                                            {"collision", st.collision, sm.collision},
                                                            {"delassus", st.delassus, sm.delassus},
                                                            {"solve", st.solve, sm.solve},
                                                            {"integrate", st.integrate, sm.integrate}};
  for (const auto& s : stages) {
    o << "    " << std::left << std::setw(18) << std::get<0>(s) << std::right << std::setw(10) << std::get<1>(s)
      << " us " << std::setw(5) << std::setprecision(1) << pct(std::get<1>(s)) << " % " << std::setprecision(2)
      << std::setw(8) << std::get<2>(s) << " us\n";
  }
  o << "  solver iterations     " << std::setw(10) << iterations_mean() << "  (mean)\n";
  o << "  contacts per step     " << std::setw(10) << contacts_mean() << "  (mean, max " << contacts_max() << ")\n";
  o << std::scientific << std::setprecision(3);
  o << "  penetration max       " << std::setw(10) << penetration_max() << " m\n";
  o << "  penetration mean      " << std::setw(10) << penetration_mean() << " m\n";
  if (not_converged_ || failed_) {
    o << "  solver not converged  " << not_converged_ << " steps; failed " << failed_ << " steps\n";
  }
  out << o.str();
}

ProgressBar::ProgressBar(long total, long min_steps)
    : total_(total), enabled_(total >= min_steps && ::isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (enabled_) std::fprintf(stderr, "\n");
}

void ProgressBar::draw(long done) {
  constexpr int width = 40;
  const double f = total_ > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total_)) : 1.0;
  const int fill = static_cast<int>(f * width);
  std::fprintf(stderr, "\r[%.*s%*s] %3d%% %ld/%ld", fill, "########################################", width - fill,
               "", static_cast<int>(100 * f), done, total_);
  std::fflush(stderr);
  next_ = done + std::max(1L, total_ / 100);
}

void ProgressBar::finish() {
  if (!enabled_) return;
  draw(total_);
  std::fprintf(stderr, "\n");
  enabled_ = false;
}

}  // namespace impulse::cli
