// Solver registry (solver_registry.hpp): names and factories in one table; the settings checks
// come from the field tables (solver_fields.hpp).
#include "impulse/solvers/solver_registry.hpp"

#include <cmath>

#include "impulse/core/check.hpp"
#include "impulse/solvers/solver_fields.hpp"

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
  // each field's range (solver_fields.hpp), then what relates two fields
  if (s.name == "bisection") {
    const BisectionSettings& b = s.bisection;
    validate_fields(bisection_fields(), b);
    IMPULSE_CHECK(b.alpha_min <= b.alpha, "solver 'bisection': need 0 < alpha_min <= alpha <= 2 and 0 < gamma <= 1, got alpha_min ",
                  b.alpha_min, ", alpha ", b.alpha, ", gamma ", b.gamma);
  } else if (s.name == "pgs") {
    validate_fields(pgs_fields(), s.pgs);
  } else if (s.name == "lm") {
    validate_fields(lm_fields(), s.lm);
  } else if (s.name == "noslip") {
    validate_fields(noslip_fields(), s.noslip);
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
