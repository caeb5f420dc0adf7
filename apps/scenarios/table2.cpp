#include "scenarios/table2.hpp"

#include <cmath>
#include <limits>

#include <Eigen/Eigenvalues>

#include "bench/timing.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/pgs.hpp"

namespace impulse::scenarios {

const std::map<std::string, std::map<std::string, double>>& paper_table2() {
  static const std::map<std::string, std::map<std::string, double>> t = {
      {"bisection", {{"trot", 1.98}, {"hang", 2.57}, {"drop", 2.62}, {"random", 1.90}}},
      {"pgs", {{"trot", 1.81}, {"hang", 5.92}, {"drop", 4.35}, {"random", 2.88}}}};
  return t;
}

namespace {

// Fig. 6 sampler: re-solves copies of the assembled problems with bisection and a tight PGS.
class Fig6 {
 public:
  explicit Fig6(const Table2Options& o) : every_(o.fig6_every) {
    PgsSettings ps;
    ps.tolerance = 1e-20;
    ps.max_iterations = o.pgs_max_iterations;
    pgs_ = PgsSolver(ps);
    for (double e = 1e-6; e < 2; e *= 10) edges_.push_back(e);
    edges_.push_back(std::numeric_limits<double>::infinity());
    counts_.assign(edges_.size(), 0);
  }

  void set_scenario(const std::string& name) { scenario_ = name; }

  void sample(const World& world) {
    const ContactProblem live = world.assembler().problem();
    if (live.nc == 0 || ++seen_ % every_ != 0) return;
    // copy: the sampled solves must not disturb the simulation's own problem
    G_ = live.G;
    c_ = live.c;
    mu_ = live.mu;
    box_ = live.box.head(live.nb);
    const ContactProblem p(G_, c_, mu_, live.nc, live.nl, live.nb, box_);
    lb_.setZero(p.size());
    lp_.setZero(p.size());
    bis_.solve(p, lb_);
    pgs_.solve(p, lp_);
    vp_.noalias() = p.G * lp_;
    vp_ += p.c;
    // Is the problem well posed? With G singular (more contact rows than the bodies' motions they
    // touch: a robot's base and feet on the ground at once, limits with contacts) the impulses
    // are not unique: two exact solutions differ by an impulse in null(J^T), which moves nothing.
    // The velocity change the impulses cause, M^-1 J^T lambda, is the same for both; its size in
    // the kinetic-energy metric is sqrt(lambda^T G lambda), as G = J M^-1 J^T.
    eig_.compute(G_, Eigen::EigenvaluesOnly);
    const VecX& ev = eig_.eigenvalues();
    const bool singular = !(ev.minCoeff() > 1e-12 * ev.maxCoeff());
    singular_problems_ += singular;
    ++problems_;
    {
      const VecX d = lb_ - lp_;
      const Scalar num = std::sqrt(std::max<Scalar>(0, d.dot(G_ * d)));
      const Scalar den = std::sqrt(std::max<Scalar>(0, lp_.dot(G_ * lp_)));
      const double rel = den > 0 ? num / den : (num > 0 ? std::numeric_limits<double>::infinity() : 0.0);
      motion_within_ += rel < 1e-2;
    }
    bool slip = false;
    for (Index i = 0; i < p.nc; ++i) {
      const bool s = lp_[3 * i + 2] > 0 && std::hypot(vp_[3 * i], vp_[3 * i + 1]) > 1e-6;
      slipping_ += s;
      slip = slip || s;
    }
    for (Index i = 0; i < p.nc; ++i) {
      const Vec3 b = lb_.segment<3>(3 * i), q = lp_.segment<3>(3 * i);
      double rel;
      if (q.norm() > 0) {
        rel = (b - q).norm() / q.norm();
      } else {
        rel = b.norm() > 0 ? std::numeric_limits<double>::infinity() : 0.0;
      }
      std::size_t k = 0;
      while (k + 1 < edges_.size() && !(rel < edges_[k])) ++k;
      ++counts_[k];
      ++samples_;
      const bool ok = rel < 1e-2;
      within_ += ok;
      if (!slip) ++samples_no_slip_, within_no_slip_ += ok;
      if (!singular) ++samples_well_posed_, within_well_posed_ += ok;
      auto& sc = by_scenario_[scenario_];
      ++sc.first;
      sc.second += ok;
    }
  }

  void result(Table2Result& r) const {
    r.fig6_samples = samples_;
    r.fig6_within_1pct = samples_ > 0 ? static_cast<double>(within_) / samples_ : 0.0;
    r.fig6_samples_no_slip = samples_no_slip_;
    r.fig6_within_1pct_no_slip =
        samples_no_slip_ > 0 ? static_cast<double>(within_no_slip_) / samples_no_slip_ : 0.0;
    r.fig6_slipping_fraction = samples_ > 0 ? static_cast<double>(slipping_) / samples_ : 0.0;
    r.fig6_samples_well_posed = samples_well_posed_;
    r.fig6_within_1pct_well_posed =
        samples_well_posed_ > 0 ? static_cast<double>(within_well_posed_) / samples_well_posed_ : 0.0;
    r.fig6_problems = problems_;
    r.fig6_singular_problems = singular_problems_;
    r.fig6_problems_motion_within_1pct = problems_ > 0 ? static_cast<double>(motion_within_) / problems_ : 0.0;
    for (const auto& s : by_scenario_)
      r.fig6_within_1pct_by_scenario[s.first] = static_cast<double>(s.second.second) / s.second.first;
    r.fig6_edges = edges_;
    r.fig6_fraction.clear();
    for (long c : counts_) r.fig6_fraction.push_back(samples_ > 0 ? static_cast<double>(c) / samples_ : 0.0);
  }

 private:
  long every_ = 100, seen_ = 0, samples_ = 0, within_ = 0, samples_no_slip_ = 0, within_no_slip_ = 0,
       slipping_ = 0, samples_well_posed_ = 0, within_well_posed_ = 0, problems_ = 0, singular_problems_ = 0,
       motion_within_ = 0;
  std::string scenario_;
  std::map<std::string, std::pair<long, long>> by_scenario_;  // contacts, within 1 %
  BisectionSolver bis_;
  PgsSolver pgs_;
  MatX G_;
  VecX c_, mu_, box_, lb_, lp_, vp_;
  Eigen::SelfAdjointEigenSolver<MatX> eig_;
  std::vector<double> edges_;
  std::vector<long> counts_;
};

}  // namespace

Table2Result run_table2(const Table2Options& o) {
  Table2Result r;
  Fig6 fig6(o);
  for (const std::string solver : {"bisection", "pgs"}) {
    for (const std::string& name : scenario_names()) {
      auto s = make_scenario(name, {solver, o.seed});
      fig6.set_scenario(name);
      if (solver == "bisection") s->set_before_solve([&fig6](const World& w) { fig6.sample(w); });
      double engine_us = 0, iterations = 0;
      const bench::Stopwatch<> watch;
      for (long k = 0; k < o.steps; ++k) {
        const StepStatus st = s->step();
        if (st == StepStatus::SolverFailed || st == StepStatus::NonFinite) ++r.failed_steps;
        engine_us += s->world().stats().times.total();
        iterations += static_cast<double>(s->world().stats().solver.iterations);
        if (o.progress && (k + 1) % 1000 == 0) o.progress(name + "/" + solver, k + 1, o.steps);
      }
      const double wall = watch.seconds();
      const double scale = 100000.0 / static_cast<double>(o.steps);
      r.seconds_per_100k[solver][name] = engine_us * 1e-6 * scale;
      r.wall_seconds_per_100k[solver][name] = wall * scale;
      r.iterations_mean[solver][name] = iterations / static_cast<double>(o.steps);
    }
  }
  fig6.result(r);
  return r;
}

}  // namespace impulse::scenarios
