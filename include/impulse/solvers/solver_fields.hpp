// The field tables of the contact solvers' settings (core/settings_field.hpp): validation
// (validate_solver_settings), the world file's <solver> attributes, the Python properties, the
// .pyi stubs and the docs tables all come from these lines. Adding a setting: one line here.
#pragma once

#include "impulse/core/settings_field.hpp"
#include "impulse/solvers/anderson.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/solvers/lm.hpp"
#include "impulse/solvers/noslip.hpp"
#include "impulse/solvers/pgs.hpp"

namespace impulse {

template <>
struct EnumKeywords<SlipModel> {
  static constexpr const char* name = "SlipModel";
  static constexpr const char* noun = "slip model";
  static constexpr FieldKeyword keywords[] = {{"coulomb", static_cast<int>(SlipModel::Coulomb), "Coulomb"},
                                              {"minimum_energy", static_cast<int>(SlipModel::MinimumEnergy), "MinimumEnergy"}};
};

template <>
struct EnumKeywords<LmVariant> {
  static constexpr const char* name = "LmVariant";
  static constexpr const char* noun = "variant";
  static constexpr FieldKeyword keywords[] = {{"regular", static_cast<int>(LmVariant::Regular), "Regular"},
                                              {"projected", static_cast<int>(LmVariant::Projected), "Projected"}};
};

inline const FieldTable<BisectionSettings>& bisection_fields() {
  using B = BisectionSettings;
  static const FieldTable<B> t{
      "BisectionSettings",
      "solver 'bisection': ",
      {
          IMPULSE_FIELD(B, slip_model, any_value(), "", "slip case of Alg. 1: `coulomb` (friction opposes the slip) or `minimum_energy` (the paper's eq. 8 literally)"),
          IMPULSE_FIELD(B, max_iterations, count_from(1), "", "sweeps over all contacts"),
          IMPULSE_FIELD(B, tolerance, above(0), "", "stop when the worst contact's exact constraint violation (N s and m/s) is below this"),
          IMPULSE_FIELD(B, stall_window, count_from(0), "", "sweeps without progress on a plateau near the tolerance before stopping; 0: never"),
          IMPULSE_FIELD(B, alpha, open_closed(0, 2), "", "initial relaxation factor (Alg. 2)"),
          IMPULSE_FIELD(B, gamma, open_closed(0, 1), "", "decay of alpha towards alpha_min per sweep (Alg. 2 line 12)"),
          IMPULSE_FIELD(B, alpha_min, open_closed(0, 2), "", "smallest relaxation factor (<= alpha)"),
          IMPULSE_FIELD(B, anderson_memory, closed(0, AndersonAcceleration::kMaxMemory), "", "sweeps mixed by Anderson acceleration; 0: off (the paper's Alg. 2)"),
          IMPULSE_FIELD(B, anderson_start, count_from(0), "", "plain sweeps before Anderson mixing starts"),
          IMPULSE_FIELD(B, plain_after_plateau, count_from(0), "", "plain sweeps (no mixing) after the mixed ones stop on a plateau, within max_iterations; 0: stop on the plateau"),
          IMPULSE_FIELD(B, qp_start, count_from(0), "", "frictionless problems: sweeps before the exact bound-constrained QP takes over; 0: never"),
          IMPULSE_FIELD(B, active_set_start, count_from(0), "", "problems with friction: sweeps before the active-set Newton stage takes over; 0: never"),
          IMPULSE_FIELD(B, active_set_early, count_from(0), "", "problems with friction: the sweep at which the active-set stage takes an island of at most active_set_early_rows rows whose error has not fallen below active_set_early_progress times its first sweep's; 0: never"),
          IMPULSE_FIELD(B, active_set_early_progress, at_least(0), "", "the fall of the error by sweep active_set_early below which the sweeps count as crawling"),
          IMPULSE_FIELD(B, active_set_early_rows, count_from(0), "", "the largest island (rows) the active-set stage takes early on a crawl; 0: none"),
          IMPULSE_FIELD(B, active_set_early_factorizations, count_from(0), "", "classifications of the active-set stage's early try on a crawl (no second try; failed, the stage keeps its later turn); 0: no early try"),
          IMPULSE_FIELD(B, range_projections, count_from(0), "", "plateaus on which the touching rows' right side is projected onto the range of their G block; 0: never"),
          IMPULSE_FIELD(B, newton_start, count_from(0), "", "sweeps before the semismooth Newton stage takes an unconverged solve (earlier on a plateau or at the cap); 0: never"),
          IMPULSE_FIELD(B, beta1, above(0), "rad", "first angular step of Alg. 1"),
          IMPULSE_FIELD(B, beta2, above(0), "", "step shrink after a failed step of Alg. 1"),
          IMPULSE_FIELD(B, beta3, above(0), "", "step growth while no zero crossing is bracketed (Alg. 1)"),
          IMPULSE_FIELD(B, bisection_tolerance, above(0), "", "Alg. 1 stops when the impulse moves less than this times its norm"),
          IMPULSE_FIELD(B, max_bisection_steps, count_from(1), "", "cap on the stepping and bisection steps of Alg. 1"),
          IMPULSE_FIELD(B, illinois, any_value(), "", "refine the bracket by Illinois regula falsi steps; false: plain bisection"),
          IMPULSE_FIELD(B, slip_newton, any_value(), "", "Coulomb slip model: Newton steps from the contact's present impulse (elliptic sections), else refine the bracket by Newton steps kept in it; false: as illinois says"),
          IMPULSE_FIELD(B, regularization, at_least(0), "", "G_ii with eigenvalues below this times the largest is regularised"),
      }};
  return t;
}

inline const FieldTable<PgsSettings>& pgs_fields() {
  using P = PgsSettings;
  static const FieldTable<P> t{
      "PgsSettings",
      "solver 'pgs': ",
      {
          IMPULSE_FIELD(P, max_iterations, count_from(1), "", "sweeps"),
          IMPULSE_FIELD(P, tolerance, above(0), "", "stop when the impulse change plus the penetration velocities of a sweep (N s and m/s) are below this"),
          IMPULSE_FIELD(P, alpha, open_closed(0, 2), "", "step factor of eq. 18"),
          IMPULSE_FIELD(P, stall_window, count_from(0), "", "sweeps without progress on a plateau near the tolerance before stopping; 0: never"),
          IMPULSE_FIELD(P, anderson_memory, closed(0, AndersonAcceleration::kMaxMemory), "", "sweeps mixed by Anderson acceleration; 0: off"),
          IMPULSE_FIELD(P, anderson_start, count_from(0), "", "plain sweeps before Anderson mixing starts"),
      }};
  return t;
}

inline const FieldTable<LmSettings>& lm_fields() {
  using L = LmSettings;
  static const FieldTable<L> t{
      "LmSettings",
      "solver 'lm': ",
      {
          IMPULSE_FIELD(L, variant, any_value(), "", "`regular` (RLM, sec. 5.1) or `projected` (PLM, sec. 5.2)"),
          IMPULSE_FIELD(L, scale, any_value(), "", "solve for the scaled impulse K lambda (same units as the velocities)"),
          IMPULSE_FIELD(L, proximal, closed_open(0, 1), "", "proximal weight of the step after a stall; 0: the paper's step"),
          IMPULSE_FIELD(L, max_iterations, count_from(1), "", "linear solves (accepted or rejected)"),
          IMPULSE_FIELD(L, tolerance, above(0), "", "stop when psi = |r|^2 / 2 is below this"),
          IMPULSE_FIELD(L, roundoff, at_least(0), "", "also stop when |r|_inf is below this times the size of the terms"),
          IMPULSE_FIELD(L, damping, above(0), "", "initial Levenberg-Marquardt damping (RLM)"),
          IMPULSE_FIELD(L, damping_step, above(1), "", "damping growth after a rejected step, shrink after a good one (RLM)"),
          IMPULSE_FIELD(L, damping_min, at_least(0), "", "damping floor (RLM)"),
          IMPULSE_FIELD(L, damping_max, above(0), "", "give up (stalled) beyond this damping"),
          IMPULSE_FIELD(L, r_min, closed(0, 1), "", "reduction ratio below which the damping grows (RLM)"),
          IMPULSE_FIELD(L, r_max, closed(0, 1), "", "reduction ratio above which the damping shrinks (RLM)"),
          IMPULSE_FIELD(L, sticking_start, any_value(), "", "cold start from the sticking impulse when it is better than x = c"),
          IMPULSE_FIELD(L, sticking_regularization, at_least(0), "", "regularisation of G for the sticking start, relative to max G_ii"),
          IMPULSE_FIELD(L, kink_search, any_value(), "", "search rejected RLM steps at the kinks of f (Armijo)"),
          IMPULSE_FIELD(L, watchdog, count_from(0), "", "solves without psi halving before a restart; 0: off"),
          IMPULSE_FIELD(L, restart_sweeps, count_from(0), "", "projected Gauss-Seidel sweeps of a restart"),
          IMPULSE_FIELD(L, max_restarts, count_from(0), "", "restarts at most"),
          IMPULSE_FIELD(L, plm_damping, at_least(0), "", "fixed damping of PLM"),
          IMPULSE_FIELD(L, armijo, open(0, 1), "", "sufficient-decrease constant of the line searches"),
          IMPULSE_FIELD(L, backtrack, open(0, 1), "", "step shrink of the PLM line search"),
          IMPULSE_FIELD(L, max_line_search, count_from(0), "", "line-search steps at most"),
      }};
  return t;
}

inline const FieldTable<NoSlipSettings>& noslip_fields() {
  using N = NoSlipSettings;
  static const FieldTable<N> t{
      "NoSlipSettings",
      "solver 'noslip': ",
      {
          IMPULSE_FIELD(N, rank_tolerance, above(0), "", "a row is dependent when its Schur pivot is below this times max G_kk"),
          IMPULSE_FIELD(N, tolerance, above(0), "", "sign tolerance of the pivoting (m/s and N s), relative to max(1, |e|_inf)"),
          IMPULSE_FIELD(N, max_pivots, count_from(1), "", "cap on the pivoting steps"),
          IMPULSE_FIELD(N, verify_tolerance, above(0), "m/s", "final check of the promised velocities, relative to 1 + |c|_inf"),
      }};
  return t;
}

}  // namespace impulse
