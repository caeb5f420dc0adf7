// Tree-sparse L^T D L factorization and solves, RBDA sec. 6.5, Tables 6.3 and 6.4. See ltdl.hpp.
#include "impulse/dynamics/ltdl.hpp"

#include <cmath>

#include "impulse/core/check.hpp"
#include "../core/isa_dispatch.hpp"

namespace impulse {

namespace {

// f(a, i) for every ancestor i of dof k, entry a of k's packed row (Data::anc, Data::L_anc), in
// the row's order. With ROOT6 (Data::root_chain6, as a constant) and k >= 6 the last six
// ancestors are the root dofs 5, ..., 0: visited with known indices, unrolled, instead of loading
// them from Data::anc (the same entries in the same order: the same bits).
template <bool ROOT6, class F>
inline void for_each_ancestor(const Data& data, Index k, F&& f) {
  const Index* begin = data.anc_begin.data();
  const bool root = ROOT6 && k >= 6;
  const Index a_root = root ? begin[k + 1] - 6 : begin[k + 1];
  for (Index a = begin[k]; a < a_root; ++a) f(a, data.anc[static_cast<std::size_t>(a)]);
  if (root) {
#pragma GCC unroll 6
    for (Index r = 0; r < 6; ++r) f(a_root + r, 5 - r);
  }
}

// ltdl_factor below for dofs that form one chain of N (Data::dof_chain): desc(j) = j+1 .. N-1 and
// anc(j) = j-1, ..., 0 (so anc_begin[j] = j (j - 1) / 2). The same operations in the same order
// (the same bits) with compile-time trip counts: for a free body (N = 6) the loops of the general
// version cost more than their arithmetic (1.1k instructions per factor, 4.6 % of a settled
// 216-sphere pile's step).
template <int N>
bool ltdl_factor_chain(Data& data) {
  Scalar* H = data.M.data();
  Scalar* L_anc = data.L_anc.data();
  Scalar* D = data.D.data();
  Scalar DL[N];
  bool positive_definite = true;
#pragma GCC unroll 7
  for (int j = N - 1; j >= 0; --j) {
    const int b = j + 1, nd = N - b;
    const Scalar* Lj = H + b + j * N;
    Scalar Dj = H[j + j * N];
#pragma GCC unroll 7
    for (int t = 0; t < nd; ++t) {
      DL[t] = D[b + t] * Lj[t];
      Dj -= Lj[t] * DL[t];
    }
    positive_definite = positive_definite && Dj > 0 && std::isfinite(Dj);
    const Scalar Djinv = 1 / Dj;
    D[j] = Dj;
    data.Dinv[j] = Djinv;
    H[j + j * N] = Dj;
    Scalar* Lrow = L_anc + j * (j - 1) / 2;
#pragma GCC unroll 7
    for (int i = j - 1; i >= 0; --i) {
      const Scalar* Li = H + b + i * N;
      Scalar s = H[i + j * N];
#pragma GCC unroll 7
      for (int t = 0; t < nd; ++t) s -= Li[t] * DL[t];
      H[j + i * N] = Lrow[j - 1 - i] = s * Djinv;
    }
  }
  return positive_definite;
}

// The root block of ltdl_factor for a floating base (Data::root_chain6), once every other dof
// k >= 6 is factored. Each such dof descends from all six root dofs, so for i <= j < 6
//   D_j  = M_jj - S_jj - sum_{t = j+1}^{5} L_tj^2 D_t,
//   L_ji = (M_ij - S_ij - sum_{t = j+1}^{5} L_ti D_t L_tj) / D_j,
//   S    = sum_{k >= 6} D_k l_k l_k^T,  l_k = L(k, 0:6)^T,
// the same sums as the general loop's, grouped: the root block of M minus the Schur complement
// of the branches, then a 6-dof chain. S is a sum of rank-one updates on vectors that are
// contiguous in the packed rows (the last six entries of row k are L(k, 5) .. L(k, 0)), so it
// runs in independent SIMD columns. The general loop instead summed each entry over the 12-17
// descendants in one dependent chain of scalar subtractions (ANYmal: 1.1k of ltdl_factor's
// 4.7k instructions). Grouping the sums changes the last bits of the root block.
bool factor_root_chain6(const Model& model, Data& data) {
  const Index n = model.nv;
  Scalar* H = data.M.data();
  const Index* anc_begin = data.anc_begin.data();
  Scalar* L_anc = data.L_anc.data();
  Scalar* D = data.D.data();
  // S in reversed order, S(5 - i, 5 - j); only its lower triangle is read, so each column b is
  // updated from row b down, rounded to whole 16-byte packets (rows 0, 2, 4 on): 12 packet
  // products per dof instead of the full outer product's 18
  Mat6 S = Mat6::Zero();
  for (Index k = 6; k < n; ++k) {
    const Eigen::Map<const Vec6> l(L_anc + anc_begin[k + 1] - 6);
    const Vec6 dl = D[k] * l;
    S.col(0) += dl[0] * l;
    S.col(1) += dl[1] * l;
    S.col(2).tail<4>() += dl[2] * l.tail<4>();
    S.col(3).tail<4>() += dl[3] * l.tail<4>();
    S.col(4).tail<2>() += dl[4] * l.tail<2>();
    S.col(5).tail<2>() += dl[5] * l.tail<2>();
  }
  Scalar L[6][6];  // L[t][j] = L_tj, j < t < 6
  bool positive_definite = true;
#pragma GCC unroll 6
  for (int j = 5; j >= 0; --j) {
    Scalar DL[6];
    Scalar Dj = H[j + j * n] - S(5 - j, 5 - j);
#pragma GCC unroll 6
    for (int t = j + 1; t < 6; ++t) {
      DL[t] = D[t] * L[t][j];
      Dj -= L[t][j] * DL[t];
    }
    positive_definite = positive_definite && Dj > 0 && std::isfinite(Dj);
    const Scalar Djinv = 1 / Dj;
    D[j] = Dj;
    data.Dinv[j] = Djinv;
    H[j + j * n] = Dj;
    Scalar* Lrow = L_anc + anc_begin[j];  // ancestors j - 1, ..., 0
#pragma GCC unroll 6
    for (int i = j - 1; i >= 0; --i) {
      Scalar s = H[i + j * n] - S(5 - i, 5 - j);
#pragma GCC unroll 6
      for (int t = j + 1; t < 6; ++t) s -= L[t][i] * DL[t];
      L[j][i] = H[j + i * n] = Lrow[j - 1 - i] = s * Djinv;
    }
  }
  return positive_definite;
}

}  // namespace

bool ltdl_factor(const Model& model, Data& data) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  if (data.dof_chain) {
    switch (model.nv) {
      case 6: return ltdl_factor_chain<6>(data);
      case 7: return ltdl_factor_chain<7>(data);
      default: break;
    }
  }
  // Table 6.3 reorganised by columns of L (row-oriented, "up-looking", as Pinocchio's
  // cholesky::decompose): the descendants of dof j are the contiguous dofs j+1 .. e_j - 1
  // (depth-first numbering), and with M = L^T D L
  //   D_j  = M_jj - sum_{k in desc(j)} L_kj^2 D_k
  //   L_ji = (M_ij - sum_{k in desc(j)} L_ki D_k L_kj) / D_j   for every ancestor i of j,
  // where the sums run over contiguous segments of the columns of the lower triangle. For
  // j = n..1 every L_k. with k > j is already known. Only M_ij (i <= j: upper triangle and
  // diagonal) is read, so a previous factor left in the lower triangle needs no clearing.
  const Index n = model.nv;
  Scalar* H = data.M.data();  // H(r, c) = H[r + c n] (column major)
  Scalar* L_anc = data.L_anc.data();
  Scalar* DL = data.ltdl_tmp.data();
  bool positive_definite = true;
  const bool root6 = data.root_chain6;
  const Index first = root6 ? 6 : 0;  // the root block of a floating base: below
  for (Index j = n - 1; j >= first; --j) {
    const Index b = j + 1, nd = data.dof_subtree_end[j] - b;  // descendants b .. b + nd - 1
    const Scalar* Lj = H + b + j * n;                         // L_kj, k in desc(j)
    Scalar Dj = H[j + j * n];
    for (Index t = 0; t < nd; ++t) {
      DL[t] = data.D[b + t] * Lj[t];
      Dj -= Lj[t] * DL[t];
    }
    // A pivot <= 0 or NaN: M is not positive definite (bad inertias, or NaN in q). Not an
    // assertion: the factor runs to the end and reports it, the caller decides (World skips the
    // step and names the system and dof).
    positive_definite = positive_definite && Dj > 0 && std::isfinite(Dj);
    const Scalar Djinv = 1 / Dj;
    data.D[j] = Dj;
    data.Dinv[j] = Djinv;
    H[j + j * n] = Dj;
    // the ancestors i of j (entry a of its packed row) from the packed list, not by walking
    // lambda: a chain of dependent loads. (A leg's dofs have 0-2 descendants and up to 8
    // ancestors: the inner loop unrolled for those.)
    const auto ancestors = [&](auto&& entry) {
      root6 ? for_each_ancestor<true>(data, j, entry) : for_each_ancestor<false>(data, j, entry);
    };
    switch (nd) {
      case 0:
        ancestors([&](Index a, Index i) { H[j + i * n] = L_anc[a] = H[i + j * n] * Djinv; });
        break;
      case 1:
        ancestors([&](Index a, Index i) {
          const Scalar* Li = H + b + i * n;
          H[j + i * n] = L_anc[a] = (H[i + j * n] - Li[0] * DL[0]) * Djinv;
        });
        break;
      case 2:
        ancestors([&](Index a, Index i) {
          const Scalar* Li = H + b + i * n;
          H[j + i * n] = L_anc[a] = ((H[i + j * n] - Li[0] * DL[0]) - Li[1] * DL[1]) * Djinv;
        });
        break;
      default:
        ancestors([&](Index a, Index i) {
          const Scalar* Li = H + b + i * n;  // L_ki, k in desc(j)
          Scalar s = H[i + j * n];           // M_ij
          for (Index t = 0; t < nd; ++t) s -= Li[t] * DL[t];
          H[j + i * n] = L_anc[a] = s * Djinv;  // L_ji, also in the packed row of j
        });
    }
  }
  if (root6) positive_definite = factor_root_chain6(model, data) && positive_definite;
  return positive_definite;
  };
  return detail::run_kernel(kernel_body);
}

namespace {

// Single-vector kernels (contiguous x), on the packed rows of L (Data::anc, Data::L_anc); ROOT6:
// Data::root_chain6 as a constant (for_each_ancestor).
template <bool ROOT6>
void solve_LT_vec(const Model& model, const Data& data, Scalar* x) {
  const Scalar* La = data.L_anc.data();
  for (Index k = model.nv - 1; k >= 0; --k) {
    const Scalar xk = x[k];
    for_each_ancestor<ROOT6>(data, k, [&](Index a, Index i) { x[i] -= La[a] * xk; });
  }
}

template <bool ROOT6>
void solve_L_vec(const Model& model, const Data& data, Scalar* x) {
  const Scalar* La = data.L_anc.data();
  for (Index k = 0; k < model.nv; ++k) {
    Scalar xk = x[k];
    for_each_ancestor<ROOT6>(data, k, [&](Index a, Index i) { xk -= La[a] * x[i]; });
    x[k] = xk;
  }
}

void solve_LT_vec(const Model& model, const Data& data, Scalar* x) {
  data.root_chain6 ? solve_LT_vec<true>(model, data, x) : solve_LT_vec<false>(model, data, x);
}

void solve_L_vec(const Model& model, const Data& data, Scalar* x) {
  data.root_chain6 ? solve_L_vec<true>(model, data, x) : solve_L_vec<false>(model, data, x);
}

// The two vector kernels and the D^-1 scaling for a chain of N dofs (Data::dof_chain), in the
// order of the general ones (same bits).
template <int N>
void solve_chain_vec(const Data& data, Scalar* x) {
  const Scalar* La = data.L_anc.data();
#pragma GCC unroll 7
  for (int k = N - 1; k >= 0; --k) {
    const Scalar xk = x[k];
    const Scalar* row = La + k * (k - 1) / 2;
#pragma GCC unroll 7
    for (int a = 0; a < k; ++a) x[k - 1 - a] -= row[a] * xk;
  }
  for (int k = 0; k < N; ++k) x[k] *= data.Dinv[k];
#pragma GCC unroll 7
  for (int k = 0; k < N; ++k) {
    Scalar xk = x[k];
    const Scalar* row = La + k * (k - 1) / 2;
#pragma GCC unroll 7
    for (int a = 0; a < k; ++a) xk -= row[a] * x[k - 1 - a];
    x[k] = xk;
  }
}

}  // namespace

// Table 6.4 (first half): L^T z = x, k = n..1: x_lambda(k) -= L_k,lambda(k) x_k along the chain
void ltdl_solve_LT(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  if (X.cols() == 1) return solve_LT_vec(model, data, X.data());
  const Index* anc = data.anc.data();
  const Index* begin = data.anc_begin.data();
  for (Index k = model.nv - 1; k >= 0; --k) {
    for (Index a = begin[k]; a < begin[k + 1]; ++a) X.row(anc[a]) -= data.L_anc[a] * X.row(k);
  }
  };
  return detail::run_kernel(kernel_body);
}

// Table 6.4 (second half): L y = x, k = 1..n: x_k -= sum over the chain of L_ki x_i
void ltdl_solve_L(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  if (X.cols() == 1) return solve_L_vec(model, data, X.data());
  const Index* anc = data.anc.data();
  const Index* begin = data.anc_begin.data();
  for (Index k = 0; k < model.nv; ++k) {
    for (Index a = begin[k]; a < begin[k + 1]; ++a) X.row(k) -= data.L_anc[a] * X.row(anc[a]);
  }
  };
  return detail::run_kernel(kernel_body);
}

void ltdl_solve(const Model& model, const Data& data, MatXref X) {
  IMPULSE_ASSERT(X.rows() == model.nv);
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  if (X.cols() == 1) {
    if (data.dof_chain && model.nv == 6) return solve_chain_vec<6>(data, X.data());
    if (data.dof_chain && model.nv == 7) return solve_chain_vec<7>(data, X.data());
    solve_LT_vec(model, data, X.data());
    for (Index k = 0; k < model.nv; ++k) X(k, 0) *= data.Dinv[k];
    solve_L_vec(model, data, X.data());
    return;
  }
  ltdl_solve_LT(model, data, X);
  X.array().colwise() *= data.Dinv.array();
  ltdl_solve_L(model, data, X);
  };
  return detail::run_kernel(kernel_body);
}

Index branch_last_dof(const Model& model, Index body) {
  for (Index b = body; b >= 0; b = model.parent[b]) {
    if (model.nv_joint[b] > 0) return model.idx_v[b] + model.nv_joint[b] - 1;
  }
  return -1;
}

void ltdl_solve_LT_branch(const Model& model, const Data& data, VecXref x, Index body) {
  const Index* lambda = model.dof_parent.data();
  const Index* anc = data.anc.data();
  const Index* begin = data.anc_begin.data();
  for (Index k = branch_last_dof(model, body); k >= 0; k = lambda[k]) {
    const Scalar xk = x[k];
    for (Index a = begin[k]; a < begin[k + 1]; ++a) x[anc[a]] -= data.L_anc[a] * xk;
  }
}

}  // namespace impulse
