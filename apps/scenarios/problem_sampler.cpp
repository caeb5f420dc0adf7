#include "scenarios/problem_sampler.hpp"

#include <memory>
#include <utility>

#include "impulse/solvers/contact_solver.hpp"
#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

namespace {

// Delegates to the simulation's solver and copies every `every`-th problem with contacts.
class RecordingSolver final : public ContactSolver {
 public:
  RecordingSolver(std::unique_ptr<ContactSolver> inner, const SampleOptions& o, std::string scenario,
                  std::vector<SampledProblem>& out)
      : inner_(std::move(inner)), o_(o), scenario_(std::move(scenario)), out_(out) {}
  const char* name() const override { return inner_->name(); }

 protected:
  void reserve_impl(Index max_rows) override { inner_->reserve(max_rows); }
  SolverResult solve_impl(const ContactProblem& p, VecXref lambda) override {
    ++step_;
    const bool keep = p.nc >= o_.min_contacts && static_cast<long>(out_.size()) < o_.max_samples &&
                      ++seen_ % o_.every == 0;
    if (keep) {
      SampledProblem s;
      s.scenario = scenario_;
      s.step = step_;
      s.G = p.G;
      s.c = p.c;
      s.mu = p.mu.head(p.nc);
      s.nc = p.nc;
      s.nl = p.nl;
      s.nb = p.nb;
      s.box = p.box.head(p.nb);
      s.warm_start = lambda;
      out_.push_back(std::move(s));
    }
    const SolverResult r = inner_->solve(p, lambda);
    if (keep) out_.back().solution = lambda;
    return r;
  }

 private:
  std::unique_ptr<ContactSolver> inner_;
  SampleOptions o_;
  std::string scenario_;
  std::vector<SampledProblem>& out_;
  long step_ = 0, seen_ = 0;
};

}  // namespace

std::vector<SampledProblem> sample_contact_problems(const std::string& scenario, const SampleOptions& o) {
  std::vector<SampledProblem> out;
  auto s = make_scenario(scenario, {o.solver, o.seed});
  // solve() is only called for steps with constraint rows; count steps separately
  s->world().set_contact_solver(
      std::make_unique<RecordingSolver>(make_contact_solver(o.solver), o, scenario, out));
  for (long k = 0; k < o.steps && static_cast<long>(out.size()) < o.max_samples; ++k) s->step();
  return out;
}

}  // namespace impulse::scenarios
