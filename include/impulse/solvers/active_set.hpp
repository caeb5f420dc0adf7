// Active-set Newton stage for an island's contact problem (src/solvers/active_set.cpp): the exact
// answer where the per-contact sweeps stall on redundant resting contact (boxes on boxes: four
// coplanar corners per face make G singular).
//
//   ActiveSetStage stage;
//   ActiveSetReport r = stage.solve(problem, lambda, tolerance, settings);  // lambda: start in, answer out
//
// Each contact is open (lambda_i = 0), sticking (v_i = 0) or slipping (v_z = 0, lambda_T =
// mu lambda_z t with t the friction direction, opposite to the slip); each one-row unilateral row
// open or active, each box row sticking or at a bound. For a given classification the impulses
// solve the linear system of the free rows
//     (G_FF + eps I) lambda_F = -c_F - G_FX lambda_X                      (1)
// with lambda_X the fixed impulses (0, the box bounds, the slipping contacts' friction mu lambda_z t).
// eps = regularization * max_r G_rr (Tikhonov): where G_FF is singular (redundant contacts) the
// answer is the one of least norm up to O(eps) (the limit of (G + eps I)^-1 as eps -> 0 on the
// range of G), unique and continuous in c, so that a resting box's four corners share its weight
// the same way from one step to the next. The classification is updated from the answer like
// the primal-dual active-set strategy, a semismooth Newton method on the min-function of the
// complementarity conditions (Hintermueller, Ito, Kunisch, SIAM J. Optim. 13(3), 2002, sec. 2):
//     open   -> sticking   when v_z < 0        (the contact would penetrate)
//     sticking, slipping -> open  when lambda_z < 0
//     sticking -> slipping when |lambda_T| > mu lambda_z, t = lambda_T / |lambda_T|
//     slipping -> sticking when v_T . t > 0    (the friction would drive the slip)
// and the friction direction of a slipping contact follows its slip, t <- -v_T / |v_T| (a
// fixed point on the direction, with the factorization of (1) kept: only the right side changes).
// G_FF + eps I is factored by a sparse LDL^T (the up-looking algorithm of Eigen's SimplicialLDLT,
// after an approximate minimum degree ordering of the pattern of G) over the pattern of G with
// the fixed rows and columns zeroed, so the pattern, its ordering and its symbolic analysis stay
// the same while the classification changes, and from one step to the next while the island's
// contacts do (island memory). G is assembled into the stored pattern and the factor updated in
// place: a solve of an island of the shape seen before allocates nothing.
//
// Body space (large factored islands). With Yh = D^-1/2 Y (G = Yh^T Yh, one column per row of
// the island, one row per velocity slot of its systems), (1) is the Schur complement of the
// slot block of the symmetric quasi-definite system
//     [ I      Yh_F   ] [ w        ]   [  0 ]
//     [ Yh_F^T -eps I ] [ lambda_F ] = [ -b ]                             (2)
// (w = -Yh_F lambda_F, the scaled velocity change of the slots; b the right side of (1)). A
// symmetric quasi-definite matrix has an LDL^T factorization for every symmetric ordering
// (Vanderbei, SIAM J. Optim. 5(1), 1995, Theorem 2.1), so the approximate minimum degree order
// is used as is: it eliminates the constraint rows first (degree: the slots of their bodies)
// and leaves the body-adjacency pattern of Yh_F Yh_F^T in the slot block. Its fill follows the
// contact graph between bodies, not the contacts on each body. The pattern of (2) is that of
// Y, every structural entry kept with the fixed rows' entries zeroed, so it is analyzed once
// for the island's contacts as in contact space. Products with G are Yh^T (Yh x).
#pragma once

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <vector>

#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"

namespace impulse {

struct ActiveSetSettings {
  Scalar regularization = 1e-9;  // eps of (1), relative to the largest diagonal entry of G
  Index max_solves = 60;         // linear solves with (1) (each one or no factorization)
  Index max_factorizations = 30; // classifications tried
  // The stage stops after this many classifications if none of its iterates had a smaller
  // residual than its start: where it fails from the sweeps' impulses it mostly never beats them
  // (bench scenes bin50: 467 of 467 failed stages; cyl_bin: 221 of 230), while where it
  // converges its last improvement mostly comes within a few factorizations (boxes1000: 2 309 of
  // 2 325 within 10). On an island above retry_rows the stage also stops after 3 classifications
  // whose iterates all had over 1 000 times its start's residual (active_set.cpp, kFar), which
  // ends most failed stages of the large box islands first: with it, the Jenga tower's counts are
  // the same at 10, 15, 20 and 30 (docs/benchmarks.md, "The stage's give-up" and "The stage's
  // early stop on large islands").
  Index give_up_factorizations = 20;
  // A factored island (G = Y^T D^-1 Y, contact_problem.hpp) of more rows than this is solved in
  // body space, through the quasi-definite system (2), whose factor stays as sparse as the
  // contact graph; G itself has a dense block for every pair of contacts on a common body, and
  // the fill of its factor grows faster than the island (a 102-block tower, 2 763 rows: over a
  // second a step in contact space).
  Index body_space_rows = 600;
  // Larger islands are left to the sweeps. The bound is one of cost: a factorization of (2) for
  // SimBenchmark's Kapla layout (one island of 2 600-2 800 rows) takes about 7 ms, so a stage
  // that cycles through its max_factorizations costs ~0.2 s a step at this size; with a
  // contact set that persists from step to step (collision/manifold.cpp) it runs on a few steps
  // only and the warm start carries its answer (docs/solvers.md), and where it fails from a
  // start near the tolerance it mostly stops after 3 factorizations (kFar, active_set.cpp).
  Index max_rows = 8000;
  // An island of at most this many rows on which the stage fails from the sweeps' impulses gets
  // it once more from the solve's start (the warm start), keeping the sweeps' impulses if that
  // fails too (bisection.cpp, BisectionSolver::solve_active_set). An impact running down a
  // column of boxes leaves the sweeps, after 50 sweeps or on a plateau, with a classification the
  // stage cycles from, while from the previous step's answer it converges in 4-15
  // factorizations (docs/benchmarks.md, the boxes1000 row of the resting-scenes table). The
  // bound is one of cost: on the large box islands (bin50's, SimBenchmark's Kapla layout) the
  // second try fails as the first and took their mean step to 1.6-1.7x. 0: no second try.
  // Islands above it also stop after 3 classifications far from the start (active_set.cpp, kFar).
  Index retry_rows = 400;
  // Least squares (not in the papers). Where gaps measured contact by contact disagree in closed
  // loops of contacts (a box on two boxes, a pyramid of cubes), the free rows' right side b_F of
  // (1) has a part outside range(G_FF) that no impulse meets, and (G_FF + eps I)^-1 turns it into
  // internal impulses of order |b_F| / eps. With least_squares each solve is a step from the
  // present impulses: r_F = b_F - G_FF lambda_F is taken onto range(G_FF) (G_FF (G_FF + eps I)^-1
  // r_F, one refinement, as project_range), lambda_F += (G_FF + eps I)^-1 P r_F, and c_F moves
  // by r_F - P r_F, the disagreement. The step is the least-norm one, so along the null space of
  // G_FF (internal loads of redundant contacts) the answer keeps the start's distribution (the
  // sweeps', inside the cones) instead of the least-norm impulse. The answer is measured against
  // the moved right side (right_side()); where the contact conditions
  // have an exact answer with other contacts open (a box lifted onto a diagonal by nanometres),
  // the moved problem keeps them closed. false (the default): (1) as written.
  bool least_squares = false;
};

struct ActiveSetReport {
  bool converged = false;  // the classification settled and the residual is below the tolerance
  Index solves = 0;
  Index factorizations = 0;
  Scalar residual = 0;     // the stage's measure at exit (see ActiveSetStage::residual)
};

class ActiveSetStage {
 public:
  // Solves `problem` from the classification of the start `lambda`; lambda takes the answer of
  // least residual. tolerance: on the residual (N s and m/s, as the sweeps' error).
  ActiveSetReport solve(const ContactProblem& problem, VecXref lambda, Scalar tolerance,
                        const ActiveSetSettings& settings = ActiveSetSettings());

  // Largest per-contact (per-row) violation of lambda with v = G lambda + c:
  //   max(0, -v_z) + max(0, -lambda_z) + min(lambda_z+, v_z+) + cone + coulomb   (contacts)
  //   max(0, -v) + max(0, -lambda) + min(lambda+, v+)                            (unilateral rows)
  //   max(0, |lambda| - b) + stick/slip violation                                (box rows)
  // (the terms of ContactResiduals::coulomb_violation, solver_result.hpp, per contact).
  static Scalar residual(const ContactProblem& problem, const VecXcref& lambda, const VecXcref& v);

  // The Euclidean projection of the right side's rows A (in_range[r] = 1) onto the range of
  // G_AA, the velocities of those rows that some impulse on them can produce: c_out = c with
  // c_A replaced by G_AA G_AA^+ c_A, through the factorization of the free rows with A free
  // (the same pattern, ordering and scratch as solve(): no allocation for an island of the shape
  // seen before). False if the factorization failed (c_out = c).
  bool project_range(const ContactProblem& problem, const unsigned char* in_range, const ActiveSetSettings& settings,
                     VecXref c_out);

  std::size_t memory_bytes() const;

  // After a solve with settings.least_squares: the right side the answer solves (the problem's c
  // with the free rows' part outside the range of G_FF taken off), problem.size() entries.
  VecXcref right_side() const { return c_ls_.head(n_ls_); }

 private:
  using SpMat = Eigen::SparseMatrix<Scalar, Eigen::ColMajor, int>;
  // SimplicialLDLT on a matrix already ordered: its factorize() builds the ordered copy in a new
  // matrix each call; the stage orders the matrix itself (perm_) and updates it in place.
  class Ldlt : public Eigen::SimplicialLDLT<SpMat, Eigen::Upper, Eigen::NaturalOrdering<int>> {
   public:
    void analyze_ordered(const SpMat& upper) { analyzePattern_preordered(upper, true); }
    void factor_ordered(const SpMat& upper) { factorize_preordered<true>(upper); }
  };
  void build_G(const ContactProblem& problem);
  void build_kkt(const ContactProblem& problem);
  void multiply(const VecXcref& x, VecXref y) const;  // y = G x (stored G, or Yh^T Yh in body space)
  void analyze();
  void set_up(const ContactProblem& problem, const ActiveSetSettings& settings);
  void factor_values();
  void solve_ordered(const VecXcref& rhs, VecXref x);  // x = A^-1 rhs
  bool same_pattern() const;
  bool project_free(const VecXcref& b, VecXref pb);  // pb = P b on the free rows (active_set.cpp)
  Scalar g_diag(Index r) const { return gd_[static_cast<std::size_t>(r)]; }

  // G, every diagonal entry stored, both triangles (compressed columns): gp_ column starts, gi_
  // rows (ascending), gx_ values, gd_ the diagonal
  std::vector<int> gp_, gi_;
  std::vector<Scalar> gx_, gd_;
  // factored islands: the entries of Y by slot (ys_ slot starts, yr_ rows, yv_ values) and the
  // column accumulator of the product G(:, j) = sum_slot D^-1 Y(slot, j) Y(slot, :)
  std::vector<int> ys_, yr_, mark_, touched_;
  std::vector<Scalar> yv_, acc_;
  std::vector<int> lp_, li_;  // factored islands: G's lower triangle by column (build_G)
  std::vector<Scalar> lx_;
  // A = P (masked G + eps) P^T, upper triangle; entry e holds G's entry src_[e] of column
  // col_[e]; perm_[r]: row r's place in the ordering
  SpMat A_;
  std::vector<int> src_, col_, perm_;
  Ldlt ldlt_;
  bool analyzed_ = false;
  std::vector<int> outer_, inner_;  // the pattern the symbolic analysis was made for
  std::vector<unsigned char> cls_;  // per row: 1 free, 0 fixed
  std::vector<Scalar> dir_;         // per contact: friction direction of a slipping contact (2)
  std::vector<unsigned char> state_;  // per contact / one-row constraint: its class
  VecX v_, rhs_, fixed_, x_, best_, Gx_, py_, pz_;
  VecX c_ls_, c_best_, pr_;  // least squares: the moved right side, the best iterate's, the projection
  Index n_ls_ = 0;
  Scalar eps_ = 0;
  // body space: the stored matrix is the lower triangle of (2), slots 0 .. nz_ - 1 first (a slot
  // column: its diagonal 1, then the entries of Yh in its row), then the island's rows
  bool kkt_ = false;
  Index nz_ = 0;
  std::vector<int> group_at_;  // per slot: where the entries of the last group written start
};

}  // namespace impulse
