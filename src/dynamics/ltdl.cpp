// Tree-sparse L^T D L factorization and solves, RBDA sec. 6.5, Tables 6.3 and 6.4. See ltdl.hpp.
#include "impulse/dynamics/ltdl.hpp"

#include "impulse/core/check.hpp"

namespace impulse {

void ltdl_factor(const Model& model, Data& data) {
  MatX& H = data.M;
  const Index* lambda = model.dof_parent.data();
  const Index n = model.nv;
  // restore the lower triangle of M from the upper one on the branch entries (they are the only
  // ones the factorization reads; the rest of the lower triangle is zero in M and L)
  for (Index k = 1; k < n; ++k) {
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) H(k, i) = H(i, k);
  }
  // Table 6.3: for k = n..1, eliminate row k into its ancestors
  for (Index k = n - 1; k >= 0; --k) {
    const Scalar Hkk = H(k, k);
    IMPULSE_ASSERT(Hkk > 0);
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) {
      const Scalar a = H(k, i) / Hkk;  // L_ki
      for (Index j = i; j >= 0; j = lambda[j]) H(i, j) -= a * H(k, j);  // H_ij -= a H_kj
      H(k, i) = a;
    }
  }
  data.D = H.diagonal();
  data.Dinv = data.D.cwiseInverse();
}

namespace {

// Single-vector kernels (contiguous x).
void solve_LT_vec(const Model& model, const MatX& L, Scalar* x) {
  const Index* lambda = model.dof_parent.data();
  for (Index k = model.nv - 1; k >= 0; --k) {
    const Scalar xk = x[k];
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) x[i] -= L(k, i) * xk;
  }
}

void solve_L_vec(const Model& model, const MatX& L, Scalar* x) {
  const Index* lambda = model.dof_parent.data();
  for (Index k = 0; k < model.nv; ++k) {
    Scalar xk = x[k];
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) xk -= L(k, i) * x[i];
    x[k] = xk;
  }
}

}  // namespace

// Table 6.4 (first half): L^T z = x, k = n..1: x_lambda(k) -= L_k,lambda(k) x_k along the chain
void ltdl_solve_LT(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  const MatX& L = data.M;
  if (X.cols() == 1) return solve_LT_vec(model, L, X.data());
  const Index* lambda = model.dof_parent.data();
  for (Index k = model.nv - 1; k >= 0; --k) {
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) X.row(i) -= L(k, i) * X.row(k);
  }
}

// Table 6.4 (second half): L y = x, k = 1..n: x_k -= sum over the chain of L_ki x_i
void ltdl_solve_L(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  const MatX& L = data.M;
  if (X.cols() == 1) return solve_L_vec(model, L, X.data());
  const Index* lambda = model.dof_parent.data();
  for (Index k = 0; k < model.nv; ++k) {
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) X.row(k) -= L(k, i) * X.row(i);
  }
}

void ltdl_solve(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  if (X.cols() == 1) {
    solve_LT_vec(model, data.M, X.data());
    for (Index k = 0; k < model.nv; ++k) X(k, 0) *= data.Dinv[k];
    solve_L_vec(model, data.M, X.data());
    return;
  }
  ltdl_solve_LT(model, data, X);
  X.array().colwise() *= data.Dinv.array();
  ltdl_solve_L(model, data, X);
}

Index branch_last_dof(const Model& model, Index body) {
  for (Index b = body; b >= 0; b = model.parent[b]) {
    if (model.nv_joint[b] > 0) return model.idx_v[b] + model.nv_joint[b] - 1;
  }
  return -1;
}

void ltdl_solve_LT_branch(const Model& model, const Data& data, VecXref x, Index body) {
  const MatX& L = data.M;
  const Index* lambda = model.dof_parent.data();
  for (Index k = branch_last_dof(model, body); k >= 0; k = lambda[k]) {
    const Scalar xk = x[k];
    for (Index i = lambda[k]; i >= 0; i = lambda[i]) x[i] -= L(k, i) * xk;
  }
}

}  // namespace impulse
