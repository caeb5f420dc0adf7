// Solver registry: the one place that knows the contact solvers by name (docs/architecture.md,
// "Contact solvers").
// Each entry has a name, a one-line summary (for --help and messages), a factory from
// SolverSettings and a reader that recovers the settings of an instance (World::clone).
// make_contact_solver(name), the world file's <solver> element, the CLI's --solver and
// World::set_contact_solver(name) all go through it; validate_solver_settings() is the one place
// that checks solver settings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"

namespace impulse {

// A solver name and the settings of every registered solver (only those of `name` are used).
struct SolverSettings {
  std::string name = "bisection";
  BisectionSettings bisection;
  PgsSettings pgs;
  LmSettings lm;
  NoSlipSettings noslip;
};

struct SolverEntry {
  const char* name;
  const char* summary;
  std::unique_ptr<ContactSolver> (*make)(const SolverSettings&);
  // Copies the settings of `solver` into `out` and returns true when it is this entry's type.
  bool (*read)(const ContactSolver& solver, SolverSettings& out);
};

// The entries, in documentation order.
const std::vector<SolverEntry>& solver_registry();
// "bisection, pgs, lm, noslip"
std::string join_solver_names();

// Throws InvalidArgument naming the unknown name and listing the valid ones, or the first
// setting out of range (e.g. "solver 'pgs': alpha must be in (0, 2], got 3").
void validate_solver_settings(const SolverSettings& settings);
// Validates, then creates the solver.
std::unique_ptr<ContactSolver> make_contact_solver(const SolverSettings& settings);
// True when `solver` is one of the registered types (then solver_settings_of works).
bool is_registered_solver(const ContactSolver& solver);
// The registry settings of a registered solver (name and its current settings); throws
// InvalidArgument for a custom solver type.
SolverSettings solver_settings_of(const ContactSolver& solver);

}  // namespace impulse
