// Per-contact bisection solver: Hwangbo, Lee, Hutter, "Per-Contact Iteration Method for Solving
// Contact Dynamics", IEEE RA-L 3(2), 2018. Section III-A (single contact, eq. 8-16, Algorithm 1)
// and III-B (multi-contact nonlinear block SOR, Algorithm 2). See src/solvers/bisection.cpp for
// the symbol table and the departures from the paper.
#pragma once

#include "impulse/solvers/active_set.hpp"
#include "impulse/solvers/anderson.hpp"
#include "impulse/solvers/bound_qp.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/semismooth_newton.hpp"

namespace impulse {

// What the slip case of Algorithm 1 solves on the conic section C (v_z = 0, |lambda_T| = mu lambda_z).
enum class SlipModel {
  // Coulomb's law with maximal dissipation (eq. 6, what PGS and LM solve): the friction is
  // opposite to the slip velocity, v_T = -kappa lambda_T with kappa >= 0. The default.
  Coulomb,
  // The paper's eq. 8 taken literally: the point of C of least energy lambda^T G lambda / 2 +
  // c^T lambda. Equal to Coulomb's when G_ii does not couple the normal and tangential rows;
  // otherwise its friction does not oppose the slip (ANYmal's feet: 44 degrees off, normal
  // impulse 1.76x Coulomb's; see bisection.cpp).
  MinimumEnergy,
};

struct BisectionSettings {
  SlipModel slip_model = SlipModel::Coulomb;

  // Algorithm 2 (sec. III-B, parameters from sec. V-C).
  Index max_iterations = 1000;  // sweeps over all contacts (not given in the paper)
  Scalar tolerance = 1e-6;      // exact constraint violation of the worst contact, N s and m/s (sec. V-C: 1 uNs, um/s)
  Index stall_window = 20;      // sweeps without progress on a plateau near the tolerance before
                                // stopping (SweepMonitor, solver_result.hpp); 0: never
  Scalar alpha = 1.0;           // initial relaxation factor alpha
  Scalar gamma = 0.99;          // decay of alpha towards alpha_min (Alg. 2 line 12)
  Scalar alpha_min = 0.7;       // minimum relaxation factor

  // Anderson acceleration of the sweeps (solvers/anderson.hpp; not in the paper): after
  // anderson_start plain sweeps without convergence, each sweep's result is mixed with the last
  // anderson_memory ones (at most 8; 5, the default, is what docs/benchmarks.md measures). 0
  // gives the paper's Algorithm 2 alone. Problems solved within anderson_start sweeps (an ANYmal
  // step, nearly always) are unchanged bit for bit; stacks of bodies and the hanging robot of
  // Hwangbo 2018 converge in 5-7x fewer sweeps (docs/solvers.md).
  Index anderson_memory = 5;
  Index anderson_start = 10;
  // Plain sweeps after a plateau of the mixed ones (not in the paper): when the sweeps with
  // Anderson mixing stop on a plateau and no stage below got them off it, the solve goes on with
  // up to this many sweeps without mixing (and within max_iterations), to the tolerance or the
  // budget, with no plateau stop. On the plateaus of large resting islands and settling piles the
  // mixing's history restarts whenever a contact changes case (every few sweeps) and the mixed
  // sweeps level off just above the tolerance, where on large resting islands of boxes the plain
  // ones still converge, slowly. 0 (the default): the solve ends on the plateau. 1 000 (up to
  // the sweep cap): SimBenchmark's Kapla layout 19 -> 1 unconverged solves in 600 s, Box2D's
  // large pyramid 1 438 -> 183 in 2 s, but the solves they do not finish end at the cap, and the
  // largest islands take up to twice their mean step (docs/benchmarks.md, "Plain sweeps after a
  // plateau").
  Index plain_after_plateau = 0;

  // Frictionless problems (every contact mu = 0, no box rows: a convex QP with bounds; not in the
  // paper): after qp_start sweeps without convergence, the problem is solved exactly by an
  // active-set method up to 256 variables (normal and limit rows), by MPRGP (conjugate gradients
  // with bound projections) above that or if the active set fails (src/solvers/bound_qp.hpp).
  // Their work counts as sweeps (a change of the free set or a product with G each); the sweeps
  // then go on from the solution. Stacks and piles of frictionless bodies converge where the
  // sweeps crawl; problems solved within qp_start sweeps are untouched.
  // 0: never.
  Index qp_start = 50;

  // Problems with friction (not in the paper): after active_set_start sweeps without
  // convergence, or earlier if the sweeps stop on a plateau, the active-set Newton stage
  // (solvers/active_set.hpp) solves the island exactly: each contact open, sticking or slipping,
  // a sparse LDL^T of the free rows of G + eps I, eps = active_set.regularization * max G_rr (the
  // least-norm impulse where redundant contacts make G singular). Its factorizations count as
  // sweeps; the sweeps then go on from its answer and measure it. Boxes resting on boxes, where
  // the sweeps stall for their whole budget, converge; problems solved within active_set_start
  // sweeps (a robot's steps) are untouched. 0: never. The stage keeps its pattern, ordering,
  // symbolic analysis and scratch from one solve to the next (an island of the shape seen before
  // allocates nothing); islands above active_set.max_rows rows stay with the sweeps. With
  // active_set.least_squares the stage takes the plateaus the range projection would (it moves c
  // the same way, in its own factorization) and solves the island as given; when its answer
  // converged with c moved by at most 100 * tolerance, the sweeps go on from it on the moved
  // problem, as after a projection. Off by default: docs/benchmarks.md, "Box2D's large pyramid",
  // measures where it pays (large resting islands, with active_set.max_rows and
  // range_projection_rows raised) and where it does not.
  Index active_set_start = 50;
  // The stage early on a crawl (not in the paper): at sweep active_set_early, an island of at
  // most active_set_early_rows rows whose error has not fallen below active_set_early_progress
  // times its first sweep's gets a short try of the stage (at most active_set_early_factorizations
  // classifications, no second try); if that fails, the sweeps go on from the stage's best
  // iterate and the stage keeps its turn at active_set_start or on the plateau stop. Where the
  // sweeps converge they cut the error by orders of magnitude in their first sweeps (a robot's
  // feet: 1e3 to 1e6 in four; the robots' steps are bit for bit what they were without it); on
  // redundant resting contact they crawl: a column of ten turned boxes starts a step 2e-6 off,
  // gains 0.5 % a sweep and reached the stage by the plateau stop after 35 sweeps, every other
  // step. With it 1 000 boxes dropped on the ground take 1.04 sweeps a step instead of 24, and
  // the piles of capsules and of mixed shapes end fewer solves unconverged; a settling pile of
  // cylinders takes 1.7-1.8x as long (docs/benchmarks.md, "The stage early on a crawl"). The try is
  // short because the long one cost that pile 3x. 0 (any of active_set_early, _rows,
  // _factorizations): never.
  Index active_set_early = 5;
  Scalar active_set_early_progress = 0.01;
  Index active_set_early_rows = 400;
  Index active_set_early_factorizations = 3;
  // Whether the stage takes an island of `rows` rows early at sweep `it` with error `error`, its
  // first sweep's `first_error` (the stage's other conditions apart: friction, active_set.max_rows).
  bool active_set_crawl(Index rows, Index it, Scalar error, Scalar first_error) const {
    return active_set_start > 0 && active_set_early > 0 && active_set_early_factorizations > 0 &&
           it == active_set_early && it < active_set_start && rows <= active_set_early_rows &&
           error > active_set_early_progress * first_error;
  }
  ActiveSetSettings active_set;

  // Plateaus on which the right side of the island's touching rows is made consistent (not in
  // the paper): the rows bodies rest on (normal rows with an impulse, and the tangent rows of
  // the sticking ones from the second plateau on) have their c projected onto the range of
  // their block of G, the velocities that impulses on them can produce, and the sweeps go on
  // from their impulses (bisection.cpp, "Range projection"). Targets -gap / dt from gaps measured
  // contact by contact differ, in closed loops of contacts (a box on two boxes, four corners on
  // a face, a box wedged in a bin), by nanometres that no motion closes at once: the part of c
  // no impulse meets, of the size of the tolerance at 1 ms. After the first projection the
  // active-set stage (if it has not run and the island has at most active_set.max_rows rows)
  // solves the projected problem at once. 0: never.
  Index range_projections = 3;
  // Islands above this many rows are not projected (a projection factors the island's system
  // once, in body space above active_set.body_space_rows). The default is the stage's bound:
  // with both at 8 000, Box2D's large pyramid (210 cubes, 7 080 rows) ends 142 of 2 000 solves
  // unconverged instead of 1 438 at 4 000, and a 5 376-row Kapla tower (bench scenes kapla102)
  // 20 of 60 000, all in its first 20 steps, instead of 741, at a lower mean step over the
  // 600 s (docs/benchmarks.md, "Box2D's large pyramid").
  Index range_projection_rows = 8000;

  // Problems whose sweeps would end unconverged (not in the paper): the semismooth Newton stage
  // (solvers/semismooth_newton.hpp: Alart & Curnier's projection function with a proximal term
  // rho I on G, a dense LU of the closed contacts' rows) solves the island from the sweeps'
  // impulses at sweep newton_start, or earlier when the sweeps stop on a plateau that the range
  // projection and the active-set stage did not get them off, or at the sweep cap. Its answer is
  // taken only when the sweeps' own measure (the exact violation of every contact at
  // `tolerance`) says it converged; otherwise the sweeps go on from their own impulses. Settling
  // piles of round bodies, where the sweeps level off at 1e-5..1e-3 and the active-set stage's
  // classification cycles, end unconverged about half as often with it, at 2.3-2.9x their mean
  // step (docs/solvers.md). Solves that converge before that (a robot's steps, stacks of boxes)
  // are untouched. 0 (the default: the stage finishes about a third of the solves it takes, and
  // those it does not cost it 30 factorizations): never; 900 with the default max_iterations
  // takes it. Islands above newton.max_rows rows stay with the sweeps; the stage's buffers grow
  // to the largest island it solved.
  Index newton_start = 0;
  SemismoothNewtonSettings newton;

  // Algorithm 1 (sec. III-A). beta1..3 are not published; these are our choices.
  Scalar beta1 = 0.1;                  // first angular step, rad
  Scalar beta2 = 0.5;                  // step shrink after a line-of-sight or r < 0 failure
  Scalar beta3 = 2.0;                  // step growth while no zero crossing is bracketed
  // gamma of Alg. 1, RELATIVE here: stop when |lambda^p - lambda| < bisection_tolerance |lambda|.
  // The paper's absolute 1e-6 N s is too coarse at 1 ms: a 1 kg body's friction impulse is
  // ~2e-3 N s, so it leaves a 5e-4 rad error in the friction direction, a visible sideways drift.
  Scalar bisection_tolerance = 1e-10;
  Index max_bisection_steps = 200;     // safety cap on stepping and on bisection steps
  // Refine the bracket by Illinois regula falsi steps (superlinear) instead of midpoints (not in
  // the paper; same bracket and stopping rule, see bisection.cpp). false: plain bisection.
  bool illinois = true;
  // Coulomb slip model: Newton steps on the slip function from the direction of the contact's
  // present impulse on an elliptic section (the sweep's hint), else from Algorithm 1's bracket,
  // each kept in it (not in the paper; see bisection.cpp). false: Algorithm 1 with the bracket
  // refinement `illinois` chooses.
  bool slip_newton = true;

  // Per-contact G_ii with smallest eigenvalue below regularization * largest eigenvalue is
  // treated as rank-deficient and replaced by G_ii + regularization * max_eig * I (not in paper).
  Scalar regularization = 1e-10;
};

// Which of the three single-contact cases of sec. III-A applied.
enum class ContactCase {
  Opening,   // c_z >= 0: lambda = 0
  Sticking,  // lambda^{v=0} = -M c inside the cone: lambda = lambda^{v=0}
  Slipping,  // lambda on the conic section C (eq. 11-16, Algorithm 1)
  Locked,    // degenerate: the impulse cannot change the normal velocity (G_zz ~ 0): lambda = 0
};

const char* to_string(ContactCase c);

struct SingleContactSolution {
  Vec3 lambda = Vec3::Zero();
  ContactCase contact_case = ContactCase::Opening;
  Index steps = 0;  // stepping + bisection steps of Algorithm 1 (0 outside the slip case)
};

// Exact solution of the single-contact problem (eq. 8, or Coulomb's law: settings.slip_model) with Delassus block G (= M^-1 of the
// paper, 3x3 symmetric PSD) and free velocity c: opening, sticking, or Algorithm 1 for slip.
SingleContactSolution solve_single_contact(const Mat3& G, const Vec3& c, Scalar mu,
                                           const BisectionSettings& settings = BisectionSettings());

// solve_single_contact for a block G that bisection_block_inverse inverted into M (as the solver
// prepares it): the same bits, without inverting G again. `hint` (null or two values): a
// tangential impulse near the answer, where the Coulomb slip search starts its Newton steps (the
// sweep passes the contact's present lambda_T; the answer is the same within bisection_tolerance).
SingleContactSolution solve_single_contact_inverted(const Mat3& G, const Mat3& M, const Vec3& c, Scalar mu,
                                                    const BisectionSettings& settings = BisectionSettings(),
                                                    const Scalar* hint = nullptr);

// The inverse M = G^-1 the solver prepares for a contact block G that is well-conditioned
// (det G >= 1e-6 tr(G)^3, regularization < 1e-6: no regularization applies), the same bits; false
// for any other block (regularized or locked through its eigen decomposition instead).
// (inline: the solver's kernel body, compiled per instruction set, inlines it as it did its own)
inline bool bisection_block_inverse(const Mat3& G, Scalar regularization, Mat3& M) {
  const Scalar tr = G.trace();
  const Scalar det = G.determinant();
  if (!(tr > 0 && det >= 1e-6 * tr * tr * tr && regularization < 1e-6)) return false;
  M = G.inverse();
  return true;
}

class BisectionSolver final : public ContactSolverWithSettings<BisectionSettings> {
 public:
  explicit BisectionSolver(const BisectionSettings& settings = BisectionSettings())
      : ContactSolverWithSettings(settings) {}
  const char* name() const override { return "bisection"; }
  bool supports_factored() const override { return true; }
  bool one_row_frictionless() const override { return true; }

 protected:
  void reserve_impl(Index max_rows) override;
  SolverResult solve_with_active(const ContactProblem& problem, VecXref lambda) override;

 private:
  Index solve_frictionless_qp(const ContactProblem& problem, VecXref lambda, Index it);
  // The active-set stage from the sweeps' impulses; returns the sweep count after it and sets
  // `converged` when its answer met the tolerance.
  // max_factorizations > 0: a short try (at most that many classifications, no second try).
  Index solve_active_set(const ContactProblem& problem, VecXref lambda, Index it, bool& converged,
                         Index max_factorizations = 0);
  // The touching rows' right side projected onto the range of their G block into c_proj_
  // (bisection.cpp, "Range projection"); false when nothing changed or the island is too large.
  bool project_right_side(const ContactProblem& problem, const VecXcref& lambda, Index round);
  // The semismooth Newton stage from the sweeps' impulses at sweep `it`: true (lambda its answer,
  // `result` converged) when the sweeps' measure accepts its answer; otherwise lambda is the
  // sweeps' again. `it` takes the sweep count after it (its factorizations count as sweeps).
  bool solve_newton(const ContactProblem& problem, VecXref lambda, Index& it, SolverResult& result);
  // The sweeps' error (the largest per-contact exact violation, bisection.cpp) of lambda, every
  // contact measured at the same impulses
  Scalar sweep_error(const ContactProblem& problem, const VecXcref& lambda);
  SemismoothNewtonStage newton_;
  VecX newton_start_lambda_;  // the sweeps' impulses (restored when the stage's answer is refused)
  DelassusProduct measure_;   // G lambda of sweep_error
  std::vector<unsigned char> proj_mask_;  // the projected rows
  VecX c_proj_;                           // the right side with the projected rows
  // Per-contact workspace, sized in reserve(): regularized G_ii and its inverse M_ii.
  std::vector<Mat3, Eigen::aligned_allocator<Mat3>> G_ii_;
  std::vector<Mat3, Eigen::aligned_allocator<Mat3>> M_ii_;
  std::vector<unsigned char> locked_;
  std::vector<Scalar> G_zz_;  // G_ii(2, 2) before regularization (frictionless contacts)
  std::vector<unsigned char> qp_rows_;  // the QP's variables: normal and limit rows
  BoundQpWorkspace qp_;
  ActiveSetWorkspace exact_;
  VecX qp_start_lambda_;  // the impulses before the QP (restored if it made no progress)
  VecX start_lambda_;     // the solve's start (the active-set stage's second try starts there)
  VecX stage_keep_lambda_;  // the impulses after the stage's first try (kept if the second fails)
  AndersonAcceleration anderson_;
  ActiveSetStage active_set_;
  DelassusProduct product_;  // G lambda through the sweeps
};

}  // namespace impulse
