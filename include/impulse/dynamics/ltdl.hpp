// Tree-sparse L^T D L factorization of the joint-space inertia matrix and solves with it
// (Featherstone, RBDA 2008, sec. 6.5, Table 6.3 factorization, Table 6.4 back-substitutions).
//
// M = L^T D L, L unit lower triangular, D diagonal. With the dofs numbered so that every dof
// comes after its ancestors (depth-first order), L has the same branch-induced sparsity as M:
// L_ki != 0 only if dof i is an ancestor of dof k, i.e. i is on the chain k, lambda(k),
// lambda(lambda(k)), ... with lambda = model.dof_parent. No fill-in occurs, and the factor costs
// O(sum_k depth(k)^2) instead of O(nv^3).
//
// In place: ltdl_factor factors whatever data.M holds (crba output, possibly modified by the
// caller, e.g. M + dt Kd + dt^2 Kp on the diagonal). Afterwards the strictly lower triangle of
// data.M holds L (unit diagonal implied), its diagonal holds D (also in data.D, 1/D in
// data.Dinv), and its strictly upper triangle still holds M. Only the upper triangle and the
// diagonal of data.M are read (the lower triangle is overwritten), so a caller may modify just
// the upper triangle and diagonal.
//
// Half solves: M^-1 = L^-1 D^-1 L^-T, so for a Jacobian J (m x nv) the Delassus matrix is
// G = J M^-1 J^T = Y^T D^-1 Y with Y = L^-T J^T (ltdl_solve_LT). A Jacobian row of a point on
// body b is nonzero only on the ancestors of b, and L^-T keeps that support, so
// ltdl_solve_LT_branch only visits that branch.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Factors data.M in place (RBDA Table 6.3). Returns false when data.M is not positive definite
// (some pivot D_j <= 0 or not finite; the factor is then meaningless), in every build type.
bool ltdl_factor(const Model& model, Data& data);

// X <- M^-1 X in place, for a vector (VecX binds here) or a matrix with nv rows (each column).
void ltdl_solve(const Model& model, const Data& data, MatXref X);

// X <- L^-T X (first half of the solve: L^T Z = X).
void ltdl_solve_LT(const Model& model, const Data& data, MatXref X);
// X <- L^-1 X (last half of the solve: L Y = X). M^-1 X = L^-1 (Dinv .* (L^-T X)).
void ltdl_solve_L(const Model& model, const Data& data, MatXref X);
// ltdl_solve_L for a factor that is one chain of 6 dofs (Data::dof_chain, nv = 6: a free body),
// on 6 contiguous values: the general solve's operations in its order (the same bits), with the
// chain's ancestor lists known (anc_begin[k] = k (k - 1) / 2, ancestors k-1, ..., 0). Inline, so
// that a caller's instruction-set copy (core/isa_dispatch.hpp) includes it.
inline void ltdl_solve_L_chain6(const Data& data, Scalar* x) {
  const Scalar* La = data.L_anc.data();
  for (int k = 1; k < 6; ++k) {
    Scalar xk = x[k];
    const Scalar* row = La + k * (k - 1) / 2;
    for (int a = 0; a < k; ++a) xk -= row[a] * x[k - 1 - a];
    x[k] = xk;
  }
}

// x <- L^-T x for x supported on the branch of `body` (the dofs of body and its ancestors; all
// other entries must be zero and stay zero). Visits only that branch.
void ltdl_solve_LT_branch(const Model& model, const Data& data, VecXref x, Index body);

// Last dof on the path from `body` to the root (the dof of body itself, or of its nearest
// moving ancestor); -1 if there is none.
Index branch_last_dof(const Model& model, Index body);

}  // namespace impulse
