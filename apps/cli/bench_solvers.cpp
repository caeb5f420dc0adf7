// `impulse bench solvers [--json]`: contact solver timings (medians).
//
//   single contact   solve_single_contact (Hwangbo 2018 Alg. 1 and the sticking / opening cases)
//                    on 3x3 Delassus blocks of random ANYmal configurations (AnymalProblemBuilder),
//                    with c = -G lambda* for lambda* inside the cone (sticking) or 1.5-5x outside
//                    it (slipping); median over batches of the time per call. Table I of Hwangbo
//                    2018 reports 0.58 us for bisection.
//   multi contact    problems copied from the ANYmal scenarios (trot, hang, drop, random; simulated
//                    with bisection for 5000 steps, every 25th solve; problem_sampler.hpp); each
//                    solver (published defaults) solves each problem from zero (cold) and from the
//                    stepper's warm start (last step's impulses); per problem the median of
//                    repeated solves, then the median over problems; mean iterations.
//   no-slip scaling  ANYmal (18 DOF) with 4, 8, 16, 32, 64 ground contacts (feet, torso, shanks)
//                    built through DelassusAssembler: median no-slip time per solve, and the
//                    median time of ContactSolver::solve's O(n^2) check of G and c for non-finite
//                    entries, which is part of every solve but not of the no-slip algorithm.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/noslip.hpp"
#include "scenarios/anymal_problems.hpp"
#include "scenarios/problem_sampler.hpp"
#include "scenarios/scenario.hpp"

namespace impulse::cli {

namespace {

template <typename T>
void keep(const T& x) {
  asm volatile("" : : "g"(&x) : "memory");
}

using bench::median;

struct SingleCase {
  Mat3 G;
  Vec3 c;
  Scalar mu;
};

// Median over batches of the microseconds per solve_single_contact call.
double time_single(const std::vector<SingleCase>& cases, long calls) {
  std::size_t k = 0;
  return bench::median_us_per_call(calls, 100, 0, [&] {
    const SingleCase& s = cases[k];
    k = k + 1 == cases.size() ? 0 : k + 1;
    const SingleContactSolution r = solve_single_contact(s.G, s.c, s.mu);
    keep(r);
  });
}

struct SolverStats {
  std::vector<double> cold_us, warm_us;
  double cold_iterations = 0, warm_iterations = 0;
  long cold_converged = 0, warm_converged = 0, problems = 0;
};

// Median of `repeats` timed solves of p from lambda0 (lambda0 is copied in before each solve).
double time_solve(ContactSolver& s, const ContactProblem& p, const VecX& lambda0, VecX& lambda, int repeats,
                  SolverResult& result) {
  std::vector<double> t;
  for (int r = 0; r < repeats; ++r) {
    lambda = lambda0;
    const bench::Stopwatch<> watch;
    result = s.solve(p, lambda);
    t.push_back(watch.us());
  }
  return median(t);
}

std::string fmt(double x, int precision = 2) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << x;
  return s.str();
}

}  // namespace

int run_bench_solvers(const BenchOptions& o) {
  const bench::Stopwatch<> total;
  std::mt19937 rng(o.seed);
  scenarios::AnymalProblemBuilder builder;

  // --- single contact -------------------------------------------------------------------------
  std::vector<SingleCase> sticking, slipping;
  std::uniform_real_distribution<Scalar> U(0, 1);
  while (sticking.size() < 256 || slipping.size() < 256) {
    const scenarios::AnymalProblem p = builder.make(rng, scenarios::AnymalProblemBuilder::kFeetAndTorso);
    for (Index i = 0; i < p.nc; ++i) {
      const Mat3 G = p.G.block<3, 3>(3 * i, 3 * i);
      const Scalar mu = p.mu[i], z = 0.5 + 1.5 * U(rng), a = 6.283 * U(rng);
      const bool slip = sticking.size() >= 256 || (slipping.size() < 256 && U(rng) < 0.5);
      const Scalar r = (slip ? 1.5 + 3.5 * U(rng) : 0.9 * U(rng)) * mu * z;
      const Vec3 c = -G * Vec3(r * std::cos(a), r * std::sin(a), z);
      const ContactCase cc = solve_single_contact(G, c, mu).contact_case;
      if (cc == ContactCase::Slipping && slipping.size() < 256) slipping.push_back({G, c, mu});
      if (cc == ContactCase::Sticking && sticking.size() < 256) sticking.push_back({G, c, mu});
    }
  }
  std::vector<SingleCase> mixed;
  for (std::size_t i = 0; i < 256; ++i) mixed.push_back(i % 2 ? slipping[i] : sticking[i]);
  const long single_calls = std::min(o.calls, 100000L);
  const double slip_us = time_single(slipping, single_calls);
  const double stick_us = time_single(sticking, single_calls);
  const double mixed_us = time_single(mixed, single_calls);
  double slip_steps = 0;
  for (const SingleCase& s : slipping) slip_steps += static_cast<double>(solve_single_contact(s.G, s.c, s.mu).steps);
  slip_steps /= static_cast<double>(slipping.size());

  // --- multi contact, from the scenarios ------------------------------------------------------
  std::vector<scenarios::SampledProblem> problems;
  std::map<std::string, long> per_scenario;
  for (const std::string& name : scenarios::scenario_names()) {
    scenarios::SampleOptions so;
    so.seed = o.seed;
    so.steps = 5000;
    so.every = 25;
    auto ps = scenarios::sample_contact_problems(name, so);
    per_scenario[name] = static_cast<long>(ps.size());
    for (auto& p : ps) problems.push_back(std::move(p));
  }
  Index max_rows = 0, max_nc = 0;
  for (const auto& p : problems) max_rows = std::max(max_rows, p.view().size()), max_nc = std::max(max_nc, p.nc);
  const std::vector<std::string>& names = contact_solver_names();
  std::map<std::string, SolverStats> stats;
  VecX lambda, zero;
  for (const std::string& name : names) {
    auto solver = make_contact_solver(name);
    solver->reserve(max_rows);
    SolverStats& st = stats[name];
    for (const auto& sp : problems) {
      const ContactProblem p = sp.view();
      zero.setZero(p.size());
      SolverResult r;
      st.cold_us.push_back(time_solve(*solver, p, zero, lambda, 5, r));
      st.cold_iterations += static_cast<double>(r.iterations);
      st.cold_converged += r.converged();
      st.warm_us.push_back(time_solve(*solver, p, sp.warm_start, lambda, 5, r));
      st.warm_iterations += static_cast<double>(r.iterations);
      st.warm_converged += r.converged();
      ++st.problems;
    }
    if (st.problems > 0) {
      st.cold_iterations /= static_cast<double>(st.problems);
      st.warm_iterations /= static_cast<double>(st.problems);
    }
  }

  // --- no-slip scaling: fixed 18 DOF, growing contact count -----------------------------------
  struct ScalingRow {
    Index contacts;
    double us;
    double check_us;  // the input check of ContactSolver::solve alone
    double pivots;
    long converged;
  };
  std::vector<ScalingRow> scaling;
  {
    NoSlipSolver noslip;
    noslip.reserve(3 * 64);
    for (Index n : {4, 8, 16, 32, 64}) {
      std::vector<double> t, tc;
      double pivots = 0;
      long converged = 0;
      const int count = 20;
      for (int k = 0; k < count; ++k) {
        const scenarios::AnymalProblem p = builder.make(rng, n);
        zero.setZero(p.view().size());
        SolverResult r;
        t.push_back(time_solve(noslip, p.view(), zero, lambda, 5, r));
        pivots += static_cast<double>(r.iterations);
        converged += r.converged();
        std::vector<double> tk;
        for (int rep = 0; rep < 5; ++rep) {
          const bench::Stopwatch<> watch;
          const bool finite = problem_is_finite(p.view());
          tk.push_back(watch.us());
          keep(finite);
        }
        tc.push_back(median(tk));
      }
      scaling.push_back({n, median(t), median(tc), pivots / count, converged});
    }
  }
  const double seconds = total.seconds();

  if (o.json) {
    json j;
    j["single_contact_us"] = {{"bisection", mixed_us}, {"bisection_slipping", slip_us}, {"bisection_sticking", stick_us}};
    j["single_contact_slip_steps_mean"] = slip_steps;
    json mc, mw, it, itw, conv;
    for (const std::string& name : names) {
      const SolverStats& st = stats[name];
      mc[name] = median(st.cold_us);
      mw[name] = median(st.warm_us);
      it[name] = st.cold_iterations;
      itw[name] = st.warm_iterations;
      conv[name] = {{"cold", st.cold_converged}, {"warm", st.warm_converged}};
    }
    j["multi_contact_us"] = mc;
    j["multi_contact_warm_us"] = mw;
    j["iterations"] = it;
    j["iterations_warm"] = itw;
    j["converged"] = conv;
    j["problems"] = static_cast<long>(problems.size());
    j["problems_per_scenario"] = per_scenario;
    j["max_contacts"] = max_nc;
    json sc = json::array();
    for (const ScalingRow& r : scaling)
      sc.push_back({{"contacts", r.contacts}, {"noslip_us", r.us}, {"input_check_us", r.check_us},
                    {"pivots", r.pivots}, {"converged", r.converged}});
    j["noslip_scaling"] = sc;
    j["seconds"] = seconds;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << "contact solver benchmark (medians; published default settings)\n\n"
            << "single contact (solve_single_contact on ANYmal 3x3 Delassus blocks, " << single_calls
            << " calls each):\n"
            << "  bisection, slipping   " << fmt(slip_us, 3) << " us  (mean " << fmt(slip_steps, 1)
            << " Alg. 1 steps)\n"
            << "  bisection, sticking   " << fmt(stick_us, 3) << " us\n"
            << "  bisection, 50/50 mix  " << fmt(mixed_us, 3) << " us   (Hwangbo 2018 Table I: 0.58 us)\n\n";
  std::cout << "multi contact: " << problems.size() << " problems from the ANYmal scenarios (";
  bool first = true;
  for (const auto& s : per_scenario) std::cout << (first ? "" : ", ") << s.first << " " << s.second, first = false;
  std::cout << "; up to " << max_nc << " contacts)\n"
            << "  solver      cold us   warm us   iterations cold / warm   converged cold / warm\n";
  for (const std::string& name : names) {
    const SolverStats& st = stats[name];
    std::cout << "  " << std::left << std::setw(10) << name << std::right << std::setw(9) << fmt(median(st.cold_us))
              << std::setw(10) << fmt(median(st.warm_us)) << std::setw(14) << fmt(st.cold_iterations, 1) << " / "
              << std::left << std::setw(10) << fmt(st.warm_iterations, 1) << std::right << std::setw(6)
              << st.cold_converged << " / " << st.warm_converged << " of " << st.problems << "\n";
  }
  std::cout << "  (iterations: sweeps for bisection and pgs, linear solves for lm, pivots for noslip)\n\n"
            << "no-slip scaling, ANYmal (18 DOF), contacts on feet, torso and shanks, 20 problems each:\n"
            << "  contacts   noslip us   of which input check   pivots   converged   us per contact (excl. check)\n";
  for (const ScalingRow& r : scaling) {
    const double nc = static_cast<double>(r.contacts);
    std::cout << std::setw(10) << r.contacts << std::setw(12) << fmt(r.us) << std::setw(23) << fmt(r.check_us)
              << std::setw(9) << fmt(r.pivots, 1) << std::setw(9) << r.converged << "/20" << std::setw(11)
              << fmt(r.us / nc, 3) << " (" << fmt((r.us - r.check_us) / nc, 3) << ")\n";
  }
  std::cout << "  (input check: ContactSolver::solve's O(n^2) scan of G for non-finite entries)\n";
  std::cout << "\n(" << fmt(seconds, 1) << " s)\n";
  return 0;
}

}  // namespace impulse::cli
