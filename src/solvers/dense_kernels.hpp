// Small dense kernels for the contact solvers, written against preallocated workspace so that
// solving a problem smaller than the reserved capacity never resizes (and so never allocates).
// Private to src/solvers/. Column-major MatX storage; only the leading n x n block is used.
#pragma once

#include <cmath>

#include "impulse/core/types.hpp"

namespace impulse {
namespace detail {

// In-place Cholesky A = L L^T of the leading n x n block (lower triangle read and written).
// Returns false as soon as a pivot d_j = A_jj - |L_(j,0:j)|^2 is <= relative_tol * |A_jj|, i.e.
// when the block is not numerically positive definite.
inline bool cholesky_in_place(MatX& A, Index n, Scalar relative_tol) {
  for (Index j = 0; j < n; ++j) {
    const Scalar a_jj = A(j, j);
    Scalar d = a_jj;
    for (Index k = 0; k < j; ++k) d -= A(j, k) * A(j, k);
    if (!(d > relative_tol * std::abs(a_jj)) || !(d > 0)) return false;
    const Scalar l_jj = std::sqrt(d);
    A(j, j) = l_jj;
    for (Index i = j + 1; i < n; ++i) {
      Scalar s = A(i, j);
      for (Index k = 0; k < j; ++k) s -= A(i, k) * A(j, k);
      A(i, j) = s / l_jj;
    }
  }
  return true;
}

// Solves L L^T x = b in place on the first n entries of b, with L from cholesky_in_place.
inline void cholesky_solve_in_place(const MatX& L, Index n, VecX& b) {
  for (Index i = 0; i < n; ++i) {  // forward: L y = b
    Scalar s = b[i];
    for (Index k = 0; k < i; ++k) s -= L(i, k) * b[k];
    b[i] = s / L(i, i);
  }
  for (Index i = n - 1; i >= 0; --i) {  // backward: L^T x = y
    Scalar s = b[i];
    for (Index k = i + 1; k < n; ++k) s -= L(k, i) * b[k];
    b[i] = s / L(i, i);
  }
}

// Least squares min |A x - b| for the leading m x n block of A (m >= n) by Householder QR,
// destroying A and b. The solution is written to the first n entries of x. Returns false if
// R has a zero diagonal entry. `v` is workspace of size >= m.
inline bool householder_least_squares(MatX& A, Index m, Index n, VecX& b, VecX& v, VecX& x) {
  for (Index k = 0; k < n; ++k) {
    const Index len = m - k;
    const Scalar norm = A.col(k).segment(k, len).norm();
    if (!(norm > 0)) return false;
    const Scalar alpha = A(k, k) > 0 ? -norm : norm;
    v.head(len) = A.col(k).segment(k, len);
    v[0] -= alpha;
    const Scalar v_norm2 = v.head(len).squaredNorm();
    A(k, k) = alpha;
    if (v_norm2 > 0) {
      for (Index j = k + 1; j < n; ++j) {
        const Scalar s = 2 * v.head(len).dot(A.col(j).segment(k, len)) / v_norm2;
        A.col(j).segment(k, len) -= s * v.head(len);
      }
      const Scalar s = 2 * v.head(len).dot(b.segment(k, len)) / v_norm2;
      b.segment(k, len) -= s * v.head(len);
    }
  }
  for (Index i = n - 1; i >= 0; --i) {  // R x = Q^T b
    Scalar s = b[i];
    for (Index j = i + 1; j < n; ++j) s -= A(i, j) * x[j];
    x[i] = s / A(i, i);
  }
  return true;
}

}  // namespace detail
}  // namespace impulse
