// Step Jacobians of a World by finite differences (MuJoCo's mjd_transitionFD), or analytically
// (TransitionMethod::Analytic, below): for the state
// x = (dq, u) of all systems and their generalized forces tau,
//   A = d x+ / d x   (2 NV x 2 NV),   B = d x+ / d tau   (2 NV x NV),
// where x+ is the state after one integrate() and NV the sum of the systems' nv. The layout is
// x = [dq_1, ..., dq_n, u_1, ..., u_n] (systems in World order), dq the tangent of q: a column
// for dq_j perturbs q by q (+) eps e_j (Model::integrate) and a row reads q+ (-) q+_ref
// (Model::difference), so a floating base contributes 6 rows and columns, not 7.
//
// Every hidden input of the step is held fixed: each perturbed step starts from the World's
// saved state (WorldState: q, u, tau, PD gains and targets, pending wrenches and the solver's
// warm-start memory), so the Jacobian is that of the step map, not of the solver's path. The
// columns run on a thread pool, each thread with its own clone of the World (World::clone); the
// World itself is not stepped or changed. Each column is computed from the same saved state by
// the same operations, so the result is bit for bit the same whatever the number of threads.
//
// Centred differences (default) have an O(eps^2) truncation error and cost two steps a column;
// forward ones O(eps) and one step a column plus the nominal step. Through contact the step map
// is only piecewise smooth: where a contact opens, closes or switches between sticking and sliding
// inside the stencil [x - eps, x + eps], a column mixes the two modes (forward and centred then
// differ by more than the stencil error).
#pragma once

#include "impulse/core/types.hpp"

namespace impulse {

// How the Jacobians are computed: by finite differences of the step (above), or analytically by
// the implicit function theorem on the contact problem's active set of one nominal step
// (src/world/transition_analytic.cpp, docs/dynamics.md, "Step Jacobians"). The analytic Jacobian
// is that of the step's mode (which contacts are open, sticking or sliding, which limits are
// active): it does not see a mode change that a finite-difference stencil straddles.
enum class TransitionMethod { FiniteDifference, Analytic };

struct TransitionOptions {
  Scalar eps = 1e-6;     // finite-difference step (> 0, finite), in the units of q's tangent, u and tau
  bool centered = true;  // centred (two steps a column) or forward (one) differences
  int num_threads = 1;   // threads in total (>= 1; 0: one per hardware thread)
  TransitionMethod method = TransitionMethod::FiniteDifference;  // (Analytic: eps, centered unused)
};

struct TransitionJacobians {
  MatX A;  // d x+ / d x, 2 NV x 2 NV
  MatX B;  // d x+ / d tau, 2 NV x NV
};

}  // namespace impulse
