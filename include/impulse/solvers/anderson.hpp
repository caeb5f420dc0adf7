// Anderson acceleration of the sweeping contact solvers (bisection, PGS).
//
// Paper: H. F. Walker, P. Ni, "Anderson acceleration for fixed-point iterations", SIAM J. Numer.
// Anal. 49(4), 2011, sec. 1 (Algorithm AA, the "type II" form of eq. 1.1 / 3.1 with mixing
// parameter 1). A Gauss-Seidel sweep is a fixed-point map g of the impulses; with f = g(x) - x and
// the last m differences dF = [f_k - f_{k-1}, ...], dG = [g_k - g_{k-1}, ...],
//     gamma = argmin_gamma |f_k - dF gamma|_W,        x_{k+1} = g(x_k) - dG gamma,
// and x_{k+1} is projected back onto the constraint set (cones, lambda >= 0 of limit rows, box
// bounds). See src/solvers/anderson.cpp for why and where it pays.
#pragma once

#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

class AndersonAcceleration {
 public:
  static constexpr Index kMaxMemory = 8;  // cap of the memory m

  // Workspace for problems of up to max_rows rows (allocates; memory is clamped to kMaxMemory).
  void reserve(Index max_rows, Index memory);

  // Start of a solve of `problem`: forgets the history and the row states. No allocation once
  // reserve(problem.size(), memory) has been called. The row weights and states are set up by
  // prime(), not here: most solves converge before mixing would start and never need them.
  // normal_rows: every contact of `problem` is frictionless with zero tangent impulses that the
  // sweeps keep 0 (bisection's one-row problems): the mixing reads and writes the normal and
  // one-row rows only (a third of the rows; the tangent rows' differences are all 0).
  void begin(const ContactProblem& problem, Index memory, bool normal_rows = false);

  // Sets up the row weights and starts tracking the states (track() is a no-op before). Call it
  // before the last plain sweep, the one whose states the first mixed sweep is compared with;
  // before_sweep() calls it if that was not done.
  void prime();

  // The state of group g (contact g, or the one-row constraint nc + j) found by this sweep: the
  // contact's case (opening, sticking, slipping) or a row's active bound. A change restarts the
  // history at the end of the sweep: the sweep map is smooth only while no state changes.
  void track(Index g, unsigned char state) {
    if (!primed_) return;
    changed_ = changed_ || state_[static_cast<std::size_t>(g)] != state;
    state_[static_cast<std::size_t>(g)] = state;
  }

  // Before a sweep: remembers x_k = lambda.
  void before_sweep(const VecXcref& lambda);

  // After the sweep (lambda = g(x_k), `error` its worst violation): replaces lambda by the mixed
  // point. The history restarts when a state changed or the error grew tenfold (safeguard).
  // Returns whether lambda was changed.
  bool after_sweep(VecXref lambda, Scalar error);

 private:
  void restart();
  bool mix(VecXref y);  // after_sweep on the mixed rows y (the sweep's point in, the mixed out)
  Index row(Index a) const { return compact_ ? rows_[static_cast<std::size_t>(a)] : a; }

  const ContactProblem* problem_ = nullptr;
  Index n_ = 0, m_ = 0;
  Index k_ = 0;            // mixed rows: n_, or the normal and one-row rows (compact_)
  bool compact_ = false;
  std::vector<Index> rows_;  // compact_: the problem row of each mixed row
  VecX y_;                   // compact_: the sweep's point on the mixed rows
  Index count_ = 0, next_ = 0;  // stored difference columns; the next column to overwrite
  bool have_prev_ = false, changed_ = false, primed_ = false;
  Scalar prev_error_ = 0;
  MatX dF_, dG_;          // rows x m: weighted residual differences, iterate differences
  // dF^T dF of the stored columns: a new column's products with the others are added to it
  // (count_ dot products a mix instead of count_ (count_ + 1) / 2; the same products, the same bits)
  Eigen::Matrix<Scalar, kMaxMemory, kMaxMemory> gram_;
  VecX x_, f_, g_, w_;    // x_k (then f_k), f_{k-1}, g_{k-1}, weights sqrt(G_jj)
  std::vector<unsigned char> state_;
};

}  // namespace impulse
