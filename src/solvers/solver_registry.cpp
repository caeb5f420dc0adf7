// Solver registry (solver_registry.hpp): names, factories and settings checks in one table.
#include "impulse/solvers/solver_registry.hpp"

#include <cmath>

#include "impulse/core/check.hpp"

namespace impulse {

namespace {

template <class S, class Settings, Settings SolverSettings::*member>
std::unique_ptr<ContactSolver> make(const SolverSettings& s) {
  return std::make_unique<S>(s.*member);
}

template <class S, class Settings, Settings SolverSettings::*member>
bool read(const ContactSolver& solver, SolverSettings& out) {
  const S* s = dynamic_cast<const S*>(&solver);
  if (!s) return false;
  out.name = solver.name();
  out.*member = s->settings();
  return true;
}

void positive(const char* solver, const char* what, Scalar x) {
  IMPULSE_CHECK(std::isfinite(x) && x > 0, "solver '", solver, "': ", what, " must be finite and > 0, got ", x);
}
void nonnegative(const char* solver, const char* what, Scalar x) {
  IMPULSE_CHECK(std::isfinite(x) && x >= 0, "solver '", solver, "': ", what, " must be finite and >= 0, got ", x);
}
void count(const char* solver, const char* what, Index n) {
  IMPULSE_CHECK(n > 0 && n <= 100000000, "solver '", solver, "': ", what, " must be in [1, 1e8], got ", n);
}
void anderson(const char* solver, Index memory, Index start) {
  IMPULSE_CHECK(memory >= 0 && memory <= AndersonAcceleration::kMaxMemory, "solver '", solver,
                "': anderson_memory must be in [0, ", AndersonAcceleration::kMaxMemory, "], got ", memory);
  IMPULSE_CHECK(start >= 0 && start <= 100000000, "solver '", solver, "': anderson_start must be in [0, 1e8], got ", start);
}

}  // namespace

const std::vector<SolverEntry>& solver_registry() {
  static const std::vector<SolverEntry> entries = {
      {"bisection", "per-contact bisection on the Coulomb cone (Hwangbo 2018), block Gauss-Seidel",
       &make<BisectionSolver, BisectionSettings, &SolverSettings::bisection>,
       &read<BisectionSolver, BisectionSettings, &SolverSettings::bisection>},
      {"pgs", "projected Gauss-Seidel on the box-friction cone",
       &make<PgsSolver, PgsSettings, &SolverSettings::pgs>, &read<PgsSolver, PgsSettings, &SolverSettings::pgs>},
      {"lm", "Levenberg-Marquardt on the nonsmooth cone-complementarity residual (Todorov 2014)",
       &make<LmSolver, LmSettings, &SolverSettings::lm>, &read<LmSolver, LmSettings, &SolverSettings::lm>},
      {"noslip", "principal pivoting on the no-slip LCP (no tangential sliding)",
       &make<NoSlipSolver, NoSlipSettings, &SolverSettings::noslip>,
       &read<NoSlipSolver, NoSlipSettings, &SolverSettings::noslip>},
  };
  return entries;
}

const std::vector<std::string>& contact_solver_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const SolverEntry& e : solver_registry()) n.emplace_back(e.name);
    return n;
  }();
  return names;
}

std::string join_solver_names() {
  std::string valid;
  for (const SolverEntry& e : solver_registry()) valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  return valid;
}

void validate_solver_settings(const SolverSettings& s) {
  const SolverEntry* entry = nullptr;
  for (const SolverEntry& e : solver_registry()) {
    if (s.name == e.name) entry = &e;
  }
  IMPULSE_CHECK(entry != nullptr, "unknown contact solver '", s.name, "'; valid names are: ", join_solver_names());
  const char* n = entry->name;
  if (s.name == "bisection") {
    const BisectionSettings& b = s.bisection;
    count(n, "max_iterations", b.max_iterations);
    count(n, "max_bisection_steps", b.max_bisection_steps);
    for (auto [what, x] : {std::pair<const char*, Scalar>{"tolerance", b.tolerance}, {"alpha", b.alpha},
                           {"gamma", b.gamma}, {"alpha_min", b.alpha_min}, {"beta1", b.beta1}, {"beta2", b.beta2},
                           {"beta3", b.beta3}, {"bisection_tolerance", b.bisection_tolerance}}) {
      positive(n, what, x);
    }
    nonnegative(n, "regularization", b.regularization);
    anderson(n, b.anderson_memory, b.anderson_start);
    IMPULSE_CHECK(b.qp_start >= 0 && b.qp_start <= 100000000, "solver 'bisection': qp_start must be in [0, 1e8], got ", b.qp_start);
    IMPULSE_CHECK(b.alpha <= 2 && b.gamma <= 1 && b.alpha_min <= b.alpha, "solver 'bisection': need 0 < alpha_min <= alpha <= 2 and 0 < gamma <= 1, got alpha_min ",
                  b.alpha_min, ", alpha ", b.alpha, ", gamma ", b.gamma);
  } else if (s.name == "pgs") {
    count(n, "max_iterations", s.pgs.max_iterations);
    positive(n, "tolerance", s.pgs.tolerance);
    positive(n, "alpha", s.pgs.alpha);
    IMPULSE_CHECK(s.pgs.alpha <= 2, "solver 'pgs': alpha must be in (0, 2], got ", s.pgs.alpha);
    anderson(n, s.pgs.anderson_memory, s.pgs.anderson_start);
  } else if (s.name == "lm") {
    count(n, "max_iterations", s.lm.max_iterations);
    positive(n, "tolerance", s.lm.tolerance);
    positive(n, "damping", s.lm.damping);
    IMPULSE_CHECK(std::isfinite(s.lm.proximal) && s.lm.proximal >= 0 && s.lm.proximal < 1,
                  "solver 'lm': proximal must be in [0, 1), got ", s.lm.proximal);
  } else if (s.name == "noslip") {
    positive(n, "tolerance", s.noslip.tolerance);
    positive(n, "rank_tolerance", s.noslip.rank_tolerance);
    count(n, "max_pivots", s.noslip.max_pivots);
  }
}

std::unique_ptr<ContactSolver> make_contact_solver(const SolverSettings& s) {
  validate_solver_settings(s);
  for (const SolverEntry& e : solver_registry()) {
    if (s.name == e.name) return e.make(s);
  }
  throw InvalidArgument("unknown contact solver '" + s.name + "'");  // unreachable: validated
}

std::unique_ptr<ContactSolver> make_contact_solver(const std::string& name) {
  SolverSettings s;
  s.name = name;
  return make_contact_solver(s);
}

bool is_registered_solver(const ContactSolver& solver) {
  SolverSettings s;
  for (const SolverEntry& e : solver_registry()) {
    if (e.read(solver, s)) return true;
  }
  return false;
}

SolverSettings solver_settings_of(const ContactSolver& solver) {
  SolverSettings s;
  for (const SolverEntry& e : solver_registry()) {
    if (e.read(solver, s)) return s;
  }
  throw InvalidArgument(std::string("contact solver '") + solver.name() +
                        "' is a custom type, not one of the registry's (" + join_solver_names() + ")");
}

}  // namespace impulse
