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
// when the block is not numerically positive definite. Left-looking by columns, so that every
// inner loop runs down a contiguous column (MatX is column major).
inline bool cholesky_in_place(MatX& A, Index n, Scalar relative_tol) {
  for (Index j = 0; j < n; ++j) {
    const Scalar a_jj = A(j, j);
    auto col = A.col(j).segment(j, n - j);  // column j of L from row j on
    for (Index k = 0; k < j; ++k) col -= A(j, k) * A.col(k).segment(j, n - j);
    const Scalar d = col[0];
    if (!(d > relative_tol * std::abs(a_jj)) || !(d > 0)) return false;
    const Scalar l_jj = std::sqrt(d);
    col[0] = l_jj;
    col.tail(n - j - 1) /= l_jj;
  }
  return true;
}

// Solves L L^T x = b in place on the first n entries of b, with L from cholesky_in_place.
inline void cholesky_solve_in_place(const MatX& L, Index n, VecX& b) {
  for (Index i = 0; i < n; ++i) {  // forward: L y = b, by columns of L
    b[i] /= L(i, i);
    b.segment(i + 1, n - i - 1) -= b[i] * L.col(i).segment(i + 1, n - i - 1);
  }
  for (Index i = n - 1; i >= 0; --i) {  // backward: L^T x = y, a column of L per row of L^T
    b[i] = (b[i] - L.col(i).segment(i + 1, n - i - 1).dot(b.segment(i + 1, n - i - 1))) / L(i, i);
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
