// Active-set Newton stage (include/impulse/solvers/active_set.hpp has the method and its
// equations).
//
// The classification update is the primal-dual active-set rule written with the trial impulse
// lambda~ = lambda - r v (r = 1 / G_rr per row, 2 / (G_xx + G_yy) for the tangent plane):
//     contact active      iff lambda~_z > 0                           (else open)
//     sticking            iff |lambda~_T| <= mu lambda_z               (else slipping, t = lambda~_T / |lambda~_T|)
//     unilateral active   iff lambda~ > 0
//     box row at +b / -b  iff lambda~ > b / lambda~ < -b               (else sticking)
// (at a solution the trial impulse of an active row is the impulse itself, v = 0, and that of an
// open row is -r v, outside the cone; Hintermueller, Ito, Kunisch 2002, eq. 2.2 with c = 1 / r.
// For friction this is the projection form of the Alart-Curnier augmented Lagrangian,
// lambda_T = proj_{|.| <= mu lambda_z}(lambda_T - r v_T).) A slipping contact's friction
// mu lambda_z t is a fixed impulse of (1) taken at the last solve's lambda_z, so the factorization
// changes only with the classification; the fixed point on lambda_z and t takes the extra solves.
//
// Departures and safeguards (not in the papers): the iteration keeps the iterate of least
// residual and returns it (a start that meets the tolerance as it is, without a factorization:
// the sweeps' iterate on a right side just made consistent often does); it stops when a solve
// leaves the classification as it was and no slipping contact's friction is still settling
// (converged or not), after max_factorizations classifications or max_solves solves. A
// classification that comes back after others (a cycle) is not detected: stopping there, or
// after solves without progress, changed which steps of the Kapla layout end unconverged and
// left more of them (22-32 against 4 over 600 s).
#include "impulse/solvers/active_set.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "impulse/solvers/cone.hpp"

namespace impulse {

namespace {
enum : unsigned char { kOpen = 0, kStick = 1, kSlip = 2, kLower = 3, kUpper = 4 };
// classifications changed all at once before the changes go one at a time
constexpr Index kAllAtOnce = 8;
// On an island of more than settings.retry_rows rows the stage stops after kFarClassifications
// classifications if every iterate's residual was above kFar times its start's. From a start near
// the tolerance on a large resting island, a classification whose free block of G is singular and
// whose right side that block cannot meet gives impulses of order |r| / eps; the next
// classification moves hundreds of contacts and the iterates do not come back (logged in bench
// scenes, 2 000-3 000 steps of each: every failed stage of kapla_simbench (65 of 65, 2 616 rows),
// of bin50 (467 of 467) and of jenga54 (218 of 221, 2 304 rows) had its first three iterates above
// 1 000 times the start, and no converged stage of those scenes did). Smaller islands, cheap to
// factor, keep the full give-up: there the stage does come back from such iterates (boxes1000's
// columns of 120 rows after an impact, 9 of 3 091 converged stages; stacks of 3 to 24 boxes
// whose corners' targets disagree, after up to 28 factorizations: tests/solvers/
// test_active_set.cpp keeps a 16-box one).
constexpr Index kFarClassifications = 3;
constexpr Scalar kFar = 1e3;
}  // namespace

Scalar ActiveSetStage::residual(const ContactProblem& problem, const VecXcref& lambda, const VecXcref& v) {
  const Index nc = problem.nc, n = problem.size();
  Scalar e = 0;
  for (Index i = 0; i < nc; ++i) {
    const Vec3 l = lambda.segment<3>(3 * i), w = v.segment<3>(3 * i);
    const Scalar mu = problem.mu[i];
    e = std::max(e, std::max<Scalar>(0, -w.z()) + std::max<Scalar>(0, -l.z()) +
                        std::min(std::max<Scalar>(l.z(), 0), std::max<Scalar>(w.z(), 0)) + cone_violation(l, mu) +
                        coulomb_violation(l, w, mu));
  }
  for (Index r = 3 * nc; r < problem.first_box_row(); ++r) {
    e = std::max(e, std::max<Scalar>(0, -v[r]) + std::max<Scalar>(0, -lambda[r]) +
                        std::min(std::max<Scalar>(lambda[r], 0), std::max<Scalar>(v[r], 0)));
  }
  for (Index r = problem.first_box_row(); r < n; ++r) {
    const Scalar b = problem.box_bound(r), l = lambda[r];
    const Scalar slip = l >= b ? std::max<Scalar>(0, v[r]) : l <= -b ? std::max<Scalar>(0, -v[r]) : std::abs(v[r]);
    e = std::max(e, std::max<Scalar>(0, std::abs(l) - b) + slip);
  }
  return e;
}

std::size_t ActiveSetStage::memory_bytes() const {
  std::size_t b = static_cast<std::size_t>(A_.nonZeros()) * (sizeof(Scalar) + sizeof(int)) +
                  static_cast<std::size_t>(A_.outerSize() + 1) * sizeof(int);
  // the factor L has the pattern of A plus its fill; its diagonal and the etree
  const auto& L = ldlt_.matrixL().nestedExpression();
  b += static_cast<std::size_t>(L.nonZeros()) * (sizeof(Scalar) + sizeof(int)) +
       static_cast<std::size_t>(L.outerSize()) * (sizeof(Scalar) + 3 * sizeof(int));
  for (const std::vector<int>* x :
       {&gp_, &gi_, &ys_, &yr_, &mark_, &touched_, &src_, &col_, &perm_, &outer_, &inner_, &group_at_, &lp_, &li_})
    b += x->capacity() * sizeof(int);
  for (const std::vector<Scalar>* x : {&gx_, &gd_, &yv_, &acc_, &dir_, &lx_}) b += x->capacity() * sizeof(Scalar);
  b += cls_.capacity() + state_.capacity();
  for (const VecX* x : {&v_, &rhs_, &fixed_, &x_, &best_, &Gx_, &py_, &pz_, &c_ls_, &c_best_, &pr_})
    b += static_cast<std::size_t>(x->size()) * sizeof(Scalar);
  return b;
}

// G in compressed columns with every diagonal entry stored. The pattern depends on the island's
// contacts only, never on values (an entry that is zero on one step and not on the next would
// redo the ordering and the symbolic analysis, which allocate). Dense islands (a few dozen rows):
// every entry. Factored islands: G = Y^T D^-1 Y over the pieces' path entries
// (contact_problem.hpp), column j the sum over the slots s of column j of D^-1 Y of
// (D^-1 Y)(s, j) Y(s, :) (Gustavson's row-by-row product with a dense accumulator, ACM Trans.
// Math. Softw. 4(3), 1978) on the rows i >= j, every structural entry kept, the upper triangle
// its mirror. The vectors keep their capacity.
void ActiveSetStage::build_G(const ContactProblem& problem) {
  const Index n = problem.size(), nc = problem.nc;
  const std::size_t un = static_cast<std::size_t>(n);
  gp_.resize(un + 1);
  gd_.resize(un);
  gi_.clear();
  gx_.clear();
  gp_[0] = 0;
  if (!problem.is_factored()) {
    for (Index j = 0; j < n; ++j) {
      for (Index i = 0; i < n; ++i) gi_.push_back(static_cast<int>(i)), gx_.push_back(problem.G(i, j));
      gd_[static_cast<std::size_t>(j)] = problem.G(j, j);
      gp_[static_cast<std::size_t>(j) + 1] = static_cast<int>(gi_.size());
    }
    return;
  }
  const FactoredG& F = *problem.factored;
  const Index ngroups = nc + problem.nl + problem.nb;
  // Y by slot (a counting sort of its entries)
  ys_.assign(static_cast<std::size_t>(F.nz) + 1, 0);
  for (Index g = 0; g < ngroups; ++g)
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
      const FactoredPiece& p = F.piece[k];
      for (Index t = 0; t < p.len; ++t) ys_[static_cast<std::size_t>(p.z + F.dofs[p.y + t]) + 1] += static_cast<int>(p.nrows);
    }
  for (std::size_t s = 0; s + 1 < ys_.size(); ++s) ys_[s + 1] += ys_[s];
  const std::size_t total = static_cast<std::size_t>(ys_.back());
  yr_.resize(total);
  yv_.resize(total);
  touched_.assign(ys_.begin(), ys_.end() - 1);  // (the fill position of each slot)
  for (Index g = 0; g < ngroups; ++g) {
    const Index row0 = g < nc ? 3 * g : g + 2 * nc;
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
      const FactoredPiece& p = F.piece[k];
      for (Index t = 0; t < p.len; ++t) {
        int& at = touched_[static_cast<std::size_t>(p.z + F.dofs[p.y + t])];
        for (Index r = 0; r < p.nrows; ++r, ++at) {
          yr_[static_cast<std::size_t>(at)] = static_cast<int>(row0 + r);
          yv_[static_cast<std::size_t>(at)] = F.Y[3 * (p.y + t) + r];
        }
      }
    }
  }
  // G's lower triangle (rows i >= j) by column, the rows of a group together: the slots of a
  // group's pieces are those of each of its rows, so one pass over their entries accumulates
  // its (up to three) columns, and a slot's entries, sorted by row, start at the first row of
  // the group. G(i, j) and G(j, i) are sums of the same products in another order: computing
  // one and mirroring it halves the products and keeps the stored matrix exactly symmetric.
  mark_.assign(un, -1);
  acc_.resize(3 * un);
  lp_.resize(un + 1);
  li_.clear();
  lx_.clear();
  for (Index g = 0; g < ngroups; ++g) {
    const Index row0 = g < nc ? 3 * g : g + 2 * nc, nrows = g < nc ? 3 : 1;
    touched_.clear();
    for (Index r = 0; r < nrows; ++r) {  // (the diagonal is stored whatever the pieces)
      const std::size_t i = static_cast<std::size_t>(row0 + r);
      mark_[i] = static_cast<int>(g);
      touched_.push_back(static_cast<int>(i));
      acc_[3 * i] = acc_[3 * i + 1] = acc_[3 * i + 2] = 0;
    }
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
      const FactoredPiece& p = F.piece[k];
      for (Index t = 0; t < p.len; ++t) {
        const Scalar* d = F.DY + 3 * (p.y + t);
        const std::size_t slot = static_cast<std::size_t>(p.z + F.dofs[p.y + t]);
        const auto first = yr_.begin() + ys_[slot], last = yr_.begin() + ys_[slot + 1];
        for (auto e = std::lower_bound(first, last, static_cast<int>(row0)); e != last; ++e) {
          const std::size_t i = static_cast<std::size_t>(*e);
          const Scalar y = yv_[static_cast<std::size_t>(e - yr_.begin())];
          Scalar* a = &acc_[3 * i];
          if (mark_[i] != g) mark_[i] = static_cast<int>(g), touched_.push_back(static_cast<int>(i)), a[0] = a[1] = a[2] = 0;
          for (Index r = 0; r < nrows; ++r) a[r] += d[r] * y;
        }
      }
    }
    std::sort(touched_.begin(), touched_.end());
    for (Index r = 0; r < nrows; ++r) {
      const Index j = row0 + r;
      lp_[static_cast<std::size_t>(j)] = static_cast<int>(li_.size());
      for (const int i : touched_)
        if (i >= j) li_.push_back(i), lx_.push_back(acc_[3 * static_cast<std::size_t>(i) + static_cast<std::size_t>(r)]);
      gd_[static_cast<std::size_t>(j)] = acc_[3 * static_cast<std::size_t>(j) + static_cast<std::size_t>(r)];
    }
  }
  lp_[un] = static_cast<int>(li_.size());
  // both triangles: column j holds the mirrored entries G(j, c), c < j, in ascending c, then its
  // lower entries (the diagonal first)
  gp_.assign(un + 1, 0);
  for (std::size_t c = 0; c < un; ++c)
    for (int e = lp_[c]; e < lp_[c + 1]; ++e) {
      const std::size_t i = static_cast<std::size_t>(li_[static_cast<std::size_t>(e)]);
      ++gp_[c + 1];
      if (i > c) ++gp_[i + 1];
    }
  for (std::size_t j = 0; j < un; ++j) gp_[j + 1] += gp_[j];
  const std::size_t nnz = static_cast<std::size_t>(gp_[un]);
  gi_.resize(nnz);
  gx_.resize(nnz);
  touched_.assign(gp_.begin(), gp_.end() - 1);  // (the fill position of each column)
  for (std::size_t c = 0; c < un; ++c)
    for (int e = lp_[c]; e < lp_[c + 1]; ++e) {
      const std::size_t i = static_cast<std::size_t>(li_[static_cast<std::size_t>(e)]);
      if (i == c) continue;
      const std::size_t at = static_cast<std::size_t>(touched_[i]++);
      gi_[at] = static_cast<int>(c);
      gx_[at] = lx_[static_cast<std::size_t>(e)];
    }
  for (std::size_t j = 0; j < un; ++j)
    for (int e = lp_[j]; e < lp_[j + 1]; ++e) {
      const std::size_t at = static_cast<std::size_t>(touched_[j]++);
      gi_[at] = li_[static_cast<std::size_t>(e)];
      gx_[at] = lx_[static_cast<std::size_t>(e)];
    }
}

// The lower triangle of (2) in compressed columns (header). Slot column s: its diagonal 1, then
// Yh(s, r) = D_s^-1/2 Y(s, r) for the rows r of the groups whose pieces pass through s (the two
// sides of a contact on one system add up in a slot, as in G = Y^T D^-1 Y); D^-1/2 Y is
// sign(Y) sqrt(Y D^-1 Y) from the stored Y and D^-1 Y. Row columns: their diagonal only (its
// value is set by factor_values). The pattern depends on the contacts only.
void ActiveSetStage::build_kkt(const ContactProblem& problem) {
  const FactoredG& F = *problem.factored;
  const Index n = problem.size(), nc = problem.nc, nz = F.nz, ngroups = nc + problem.nl + problem.nb;
  const std::size_t un = static_cast<std::size_t>(n), uz = static_cast<std::size_t>(nz);
  nz_ = nz;
  gd_.resize(un);
  for (Index r = 0; r < n; ++r) gd_[static_cast<std::size_t>(r)] = problem.diagonal(r);
  // entries per slot column: the rows of each group once, however many of its pieces pass
  mark_.assign(uz, -1);
  gp_.assign(uz + un + 1, 0);
  for (Index g = 0; g < ngroups; ++g) {
    const int rows = g < nc ? 3 : 1;
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
      const FactoredPiece& p = F.piece[k];
      for (Index t = 0; t < p.len; ++t) {
        const std::size_t slot = static_cast<std::size_t>(p.z + F.dofs[p.y + t]);
        if (mark_[slot] == g) continue;
        mark_[slot] = static_cast<int>(g);
        gp_[slot + 1] += rows;
      }
    }
  }
  for (std::size_t s = 0; s < uz; ++s) gp_[s + 1] += gp_[s] + 1;  // (+1: the diagonal)
  for (std::size_t r = 0; r < un; ++r) gp_[uz + r + 1] = gp_[uz + r] + 1;
  const std::size_t nnz = static_cast<std::size_t>(gp_[uz + un]);
  gi_.resize(nnz);
  gx_.assign(nnz, 0);
  touched_.resize(uz);
  group_at_.resize(uz);
  for (std::size_t s = 0; s < uz; ++s) {
    const std::size_t d = static_cast<std::size_t>(gp_[s]);
    gi_[d] = static_cast<int>(s);
    gx_[d] = 1;
    touched_[s] = static_cast<int>(d) + 1;  // (the fill position)
  }
  for (std::size_t r = 0; r < un; ++r) gi_[static_cast<std::size_t>(gp_[uz + r])] = static_cast<int>(uz + r);
  mark_.assign(uz, -1);
  for (Index g = 0; g < ngroups; ++g) {
    const Index row0 = g < nc ? 3 * g : g + 2 * nc;
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k) {
      const FactoredPiece& p = F.piece[k];
      for (Index t = 0; t < p.len; ++t) {
        const std::size_t slot = static_cast<std::size_t>(p.z + F.dofs[p.y + t]);
        if (mark_[slot] != g) {
          mark_[slot] = static_cast<int>(g);
          group_at_[slot] = touched_[slot];
          for (Index r = 0; r < p.nrows; ++r)
            gi_[static_cast<std::size_t>(touched_[slot]++)] = static_cast<int>(nz + row0 + r);
        }
        for (Index r = 0; r < p.nrows; ++r) {
          const Scalar y = F.Y[3 * (p.y + t) + r], dy = F.DY[3 * (p.y + t) + r];
          gx_[static_cast<std::size_t>(group_at_[slot] + r)] += std::copysign(std::sqrt(std::max<Scalar>(y * dy, 0)), y);
        }
      }
    }
  }
}

// y = G x: the stored G, or in body space Yh^T (Yh x), slot by slot
void ActiveSetStage::multiply(const VecXcref& x, VecXref y) const {
  if (!kkt_) {
    const Index n = x.size();
    const Eigen::Map<const SpMat> G(static_cast<int>(n), static_cast<int>(n), static_cast<int>(gi_.size()), gp_.data(),
                                    gi_.data(), gx_.data());
    y.noalias() = G * x;
    return;
  }
  y.setZero();
  for (Index s = 0; s < nz_; ++s) {
    const int e0 = gp_[static_cast<std::size_t>(s)] + 1, e1 = gp_[static_cast<std::size_t>(s) + 1];
    Scalar w = 0;
    for (int e = e0; e < e1; ++e) w += gx_[static_cast<std::size_t>(e)] * x[gi_[static_cast<std::size_t>(e)] - nz_];
    for (int e = e0; e < e1; ++e) y[gi_[static_cast<std::size_t>(e)] - nz_] += gx_[static_cast<std::size_t>(e)] * w;
  }
}

bool ActiveSetStage::same_pattern() const { return analyzed_ && outer_ == gp_ && inner_ == gi_; }

// A new pattern: its ordering (approximate minimum degree, Amestoy, Davis, Duff 1996, as Eigen's
// AMDOrdering), the upper triangle of the ordered pattern and the symbolic analysis (allocates).
void ActiveSetStage::analyze() {
  const int n = static_cast<int>(gp_.size()) - 1;
  const Eigen::Map<const SpMat> G(n, n, static_cast<int>(gi_.size()), gp_.data(), gi_.data(), gx_.data());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> order;
  Eigen::AMDOrdering<int>()(SpMat(G), order);  // order(k): the row placed k-th
  perm_.resize(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) perm_[static_cast<std::size_t>(order.indices()[k])] = k;
  // the ordered upper triangle from G's lower triangle: column counts, then the entries sorted
  // by row
  std::vector<int> count(static_cast<std::size_t>(n) + 1, 0);
  for (int j = 0; j < n; ++j)
    for (int e = gp_[static_cast<std::size_t>(j)]; e < gp_[static_cast<std::size_t>(j) + 1]; ++e) {
      const int i = gi_[static_cast<std::size_t>(e)];
      if (i < j) continue;
      const int a = perm_[static_cast<std::size_t>(i)], b = perm_[static_cast<std::size_t>(j)];
      ++count[static_cast<std::size_t>(std::max(a, b)) + 1];
    }
  for (int j = 0; j < n; ++j) count[static_cast<std::size_t>(j) + 1] += count[static_cast<std::size_t>(j)];
  const int nnz = count[static_cast<std::size_t>(n)];
  A_.resize(n, n);
  A_.resizeNonZeros(nnz);
  std::copy(count.begin(), count.end(), A_.outerIndexPtr());
  src_.resize(static_cast<std::size_t>(nnz));
  col_.resize(static_cast<std::size_t>(nnz));
  for (int j = 0; j < n; ++j)
    for (int e = gp_[static_cast<std::size_t>(j)]; e < gp_[static_cast<std::size_t>(j) + 1]; ++e) {
      const int i = gi_[static_cast<std::size_t>(e)];
      if (i < j) continue;
      const int a = perm_[static_cast<std::size_t>(i)], b = perm_[static_cast<std::size_t>(j)];
      const std::size_t at = static_cast<std::size_t>(count[static_cast<std::size_t>(std::max(a, b))]++);
      A_.innerIndexPtr()[at] = std::min(a, b);
      src_[at] = e;
      col_[at] = j;
    }
  for (int b = 0; b < n; ++b) {  // rows ascending within each column
    const int e0 = A_.outerIndexPtr()[b], e1 = A_.outerIndexPtr()[b + 1];
    std::vector<std::pair<int, int>> entries;
    for (int e = e0; e < e1; ++e) entries.emplace_back(A_.innerIndexPtr()[e], e);
    std::sort(entries.begin(), entries.end());
    std::vector<int> s(entries.size()), c(entries.size());
    for (std::size_t k = 0; k < entries.size(); ++k) {
      s[k] = src_[static_cast<std::size_t>(entries[k].second)];
      c[k] = col_[static_cast<std::size_t>(entries[k].second)];
    }
    for (std::size_t k = 0; k < entries.size(); ++k) {
      const std::size_t at = static_cast<std::size_t>(e0) + k;
      A_.innerIndexPtr()[at] = entries[k].first;
      src_[at] = s[k];
      col_[at] = c[k];
    }
  }
  std::fill(A_.valuePtr(), A_.valuePtr() + nnz, Scalar(0));
  ldlt_.analyze_ordered(A_);
  outer_ = gp_;
  inner_ = gi_;
  analyzed_ = true;
}

// A = G with the fixed rows and columns zeroed, eps on the free diagonal and the diagonal scale
// max(G_rr, eps) on the fixed one (their equation is s lambda_r = s lambda_fixed); factored.
void ActiveSetStage::factor_values() {
  Scalar* values = A_.valuePtr();
  const Index nnz = A_.nonZeros();
  if (kkt_) {
    // (2): slots 1 on the diagonal; a free row -eps, a fixed row -max(G_rr, eps) (its equation
    // -s lambda_r = -s lambda_fixed); Yh in the columns of the free rows only
    for (Index e = 0; e < nnz; ++e) {
      const std::size_t ue = static_cast<std::size_t>(e);
      const int k = src_[ue], j = col_[ue], i = gi_[static_cast<std::size_t>(k)];
      if (i < nz_) {
        values[e] = 1;
      } else if (i == j) {
        const std::size_t r = static_cast<std::size_t>(i - nz_);
        values[e] = cls_[r] ? -eps_ : -std::max(gd_[r], eps_);
      } else {
        values[e] = cls_[static_cast<std::size_t>(i - nz_)] ? gx_[static_cast<std::size_t>(k)] : Scalar(0);
      }
    }
    ldlt_.factor_ordered(A_);
    return;
  }
  for (Index e = 0; e < nnz; ++e) {
    const std::size_t ue = static_cast<std::size_t>(e);
    const int k = src_[ue], j = col_[ue], i = gi_[static_cast<std::size_t>(k)];
    const Scalar g = gx_[static_cast<std::size_t>(k)];
    const bool fi = cls_[static_cast<std::size_t>(i)] != 0, fj = cls_[static_cast<std::size_t>(j)] != 0;
    if (i == j) {
      values[e] = fj ? g + eps_ : std::max(g, eps_);
    } else {
      values[e] = fi && fj ? g : Scalar(0);
    }
  }
  ldlt_.factor_ordered(A_);
}

void ActiveSetStage::solve_ordered(const VecXcref& rhs, VecXref x) {
  const Index n = rhs.size(), off = kkt_ ? nz_ : 0, N = n + off;
  auto py = py_.head(N);
  auto pz = pz_.head(N);
  // body space: (2) with the slots' right side 0 and the rows' -rhs
  for (Index s = 0; s < off; ++s) py[perm_[static_cast<std::size_t>(s)]] = 0;
  const Scalar sign = kkt_ ? -1 : 1;
  for (Index r = 0; r < n; ++r) py[perm_[static_cast<std::size_t>(off + r)]] = sign * rhs[r];
  pz = ldlt_.solve(py);
  for (Index r = 0; r < n; ++r) x[r] = pz[perm_[static_cast<std::size_t>(off + r)]];
}

// The island's system for a problem of n > 0 rows: G (contact space) or the KKT matrix (body
// space above settings.body_space_rows), its pattern analysed when it changed, the
// regularization eps and the scratch sized.
void ActiveSetStage::set_up(const ContactProblem& problem, const ActiveSetSettings& settings) {
  const Index n = problem.size();
  const bool kkt = problem.is_factored() && n > settings.body_space_rows;
  if (kkt != kkt_) analyzed_ = false;
  kkt_ = kkt;
  if (kkt_) {
    build_kkt(problem);
  } else {
    nz_ = 0;
    build_G(problem);
  }
  if (!same_pattern()) analyze();
  Scalar max_diag = 0;
  for (Index r = 0; r < n; ++r) max_diag = std::max(max_diag, g_diag(r));
  eps_ = settings.regularization * (max_diag > 0 ? max_diag : Scalar(1));
  for (VecX* x : {&v_, &rhs_, &fixed_, &x_, &best_, &Gx_})
    if (x->size() < n) x->resize(n);
  if (settings.least_squares)
    for (VecX* x : {&c_ls_, &c_best_, &pr_})
      if (x->size() < n) x->resize(n);
  for (VecX* x : {&py_, &pz_})
    if (x->size() < n + nz_) x->resize(n + nz_);
}

ActiveSetReport ActiveSetStage::solve(const ContactProblem& problem, VecXref lambda, Scalar tolerance,
                                      const ActiveSetSettings& settings) {
  ActiveSetReport report;
  const Index n = problem.size(), nc = problem.nc, n1 = problem.nl + problem.nb;
  n_ls_ = 0;
  if (n == 0) {
    report.converged = true;
    return report;
  }
  set_up(problem, settings);
  cls_.assign(static_cast<std::size_t>(n), 1);
  state_.assign(static_cast<std::size_t>(nc + n1), kStick);
  dir_.assign(static_cast<std::size_t>(2 * nc), 0);
  auto v = v_.head(n);
  auto fixed = fixed_.head(n);
  auto x = x_.head(n);
  auto best = best_.head(n);

  // the right side the iterate is measured against: c, or c moved by the inconsistent part of
  // the free rows' right side (least_squares)
  const bool ls = settings.least_squares;
  n_ls_ = ls ? n : 0;
  if (ls) c_ls_.head(n) = problem.c;
  auto c_now = [&]() -> VecXcref { return ls ? VecXcref(c_ls_.head(n)) : VecXcref(problem.c); };
  // v = G lambda + c
  auto velocity = [&](const VecXcref& l) {
    multiply(l, v);
    v += c_now();
  };
  auto diag = [&](Index r) {
    const Scalar g = g_diag(r);
    return g > 0 ? g : eps_;
  };
  // Classification from the trial impulses at (lambda, v) (the table at the top of this file);
  // returns whether a class changed, and counts the slipping contacts.
  Index slipping = 0;
  // hysteresis of the class changes (N s or m/s): a row at the border of two classes within a
  // quarter of the tolerance keeps its class (redundant corners with loads near zero cycled)
  const Scalar delta = tolerance / 4;
  auto classify = [&](bool single) {
    Index slipping_now = 0, best_k = -1;
    Scalar best_score = 0;
    unsigned char best_s = 0;
    bool class_changed = false;
    // proposes class s for contact or row k (violation `score`); all at once, or the worst only
    auto propose = [&](Index k, unsigned char s, Scalar score) {
      unsigned char& old = state_[static_cast<std::size_t>(k)];
      if (s == old) return;
      if (!single) {
        old = s;
        class_changed = true;
      } else if (score > best_score || best_k < 0) {
        best_k = k, best_score = score, best_s = s;
      }
    };
    for (Index i = 0; i < nc; ++i) {
      const Vec3 l = lambda.segment<3>(3 * i), w = v.segment<3>(3 * i);
      const Scalar mu = problem.mu[i];
      const Index r = 3 * i;
      const unsigned char old = state_[static_cast<std::size_t>(i)];
      if (old == kOpen) {
        if (w.z() < -delta) propose(i, mu > 0 ? kStick : kSlip, -w.z());
        continue;
      }
      if (l.z() < -delta) {
        propose(i, kOpen, -l.z());
        continue;
      }
      if (!(mu > 0)) continue;  // frictionless: "slipping" with the tangent impulses fixed at 0
      const Scalar radius = mu * std::max<Scalar>(l.z(), 0);
      if (old == kStick) {
        const Scalar nt = std::sqrt(l.x() * l.x() + l.y() * l.y());
        if (nt > radius + delta) {
          dir_[static_cast<std::size_t>(2 * i)] = l.x() / nt;
          dir_[static_cast<std::size_t>(2 * i + 1)] = l.y() / nt;
          propose(i, kSlip, nt - radius);
        }
        continue;
      }
      // slipping: the trial friction lambda_T - r v_T inside the cone sticks, else gives the
      // direction
      const Scalar rt = 2 / (diag(r) + diag(r + 1));
      const Vec2s lt(l.x() - rt * w.x(), l.y() - rt * w.y());
      const Scalar nt = lt.norm();
      if (nt < radius - delta) {
        propose(i, kStick, radius - nt);
      } else if (nt > 0) {
        ++slipping_now;
        dir_[static_cast<std::size_t>(2 * i)] = lt.x() / nt;
        dir_[static_cast<std::size_t>(2 * i + 1)] = lt.y() / nt;
      }
    }
    for (Index j = 0; j < n1; ++j) {
      const Index r = 3 * nc + j, k = nc + j;
      const unsigned char old = state_[static_cast<std::size_t>(k)];
      if (r < problem.first_box_row()) {
        if (old == kOpen && v[r] < -delta) propose(k, kStick, -v[r]);
        if (old == kStick && lambda[r] < -delta) propose(k, kOpen, -lambda[r]);
        continue;
      }
      const Scalar b = problem.box_bound(r);
      if (old == kStick && lambda[r] > b + delta) propose(k, kUpper, lambda[r] - b);
      if (old == kStick && lambda[r] < -b - delta) propose(k, kLower, -b - lambda[r]);
      if (old == kUpper && v[r] > delta) propose(k, kStick, v[r]);
      if (old == kLower && v[r] < -delta) propose(k, kStick, -v[r]);
    }
    if (single && best_k >= 0) {
      state_[static_cast<std::size_t>(best_k)] = best_s;
      class_changed = true;
    }
    slipping = slipping_now;
    return class_changed;
  };
  // classes of the start: open without normal impulse and separating, slipping on the cone's
  // boundary with a slip velocity, else sticking (active)
  auto initial_classes = [&]() {
    slipping = 0;
    for (Index i = 0; i < nc; ++i) {
      const Vec3 l = lambda.segment<3>(3 * i), w = v.segment<3>(3 * i);
      const Scalar mu = problem.mu[i];
      unsigned char s = kStick;
      const Scalar nt = std::sqrt(l.x() * l.x() + l.y() * l.y()), vt = std::sqrt(w.x() * w.x() + w.y() * w.y());
      if (!(l.z() > 0) && w.z() >= 0) {
        s = kOpen;
      } else if (!(mu > 0)) {
        s = kSlip;
      } else if (nt >= mu * l.z() - delta && vt > delta && nt > 0) {
        s = kSlip;
        ++slipping;
        dir_[static_cast<std::size_t>(2 * i)] = l.x() / nt;
        dir_[static_cast<std::size_t>(2 * i + 1)] = l.y() / nt;
      }
      state_[static_cast<std::size_t>(i)] = s;
    }
    for (Index j = 0; j < n1; ++j) {
      const Index r = 3 * nc + j;
      unsigned char s = kStick;
      if (r < problem.first_box_row()) {
        if (!(lambda[r] > 0) && v[r] >= 0) s = kOpen;
      } else {
        const Scalar b = problem.box_bound(r);
        if (lambda[r] >= b && v[r] < 0) s = kUpper;
        if (lambda[r] <= -b && v[r] > 0) s = kLower;
      }
      state_[static_cast<std::size_t>(nc + j)] = s;
    }
  };
  // fixed impulses and free rows of the current classification
  auto set_fixed = [&]() {
    fixed.setZero();
    for (Index i = 0; i < nc; ++i) {
      const unsigned char s = state_[static_cast<std::size_t>(i)];
      const Index r = 3 * i;
      const std::size_t u = static_cast<std::size_t>(r);
      cls_[u] = cls_[u + 1] = cls_[u + 2] = s == kStick ? 1 : 0;
      if (s == kSlip) {
        cls_[u + 2] = 1;
        const Scalar radius = problem.mu[i] > 0 ? problem.mu[i] * std::max<Scalar>(lambda[r + 2], 0) : Scalar(0);
        fixed[r] = radius * dir_[u / 3 * 2];
        fixed[r + 1] = radius * dir_[u / 3 * 2 + 1];
      }
    }
    for (Index j = 0; j < n1; ++j) {
      const Index r = 3 * nc + j;
      const unsigned char s = state_[static_cast<std::size_t>(nc + j)];
      cls_[static_cast<std::size_t>(r)] = s == kStick ? 1 : 0;
      if (s == kUpper) fixed[r] = problem.box_bound(r);
      if (s == kLower) fixed[r] = -problem.box_bound(r);
    }
  };

  velocity(lambda);
  Scalar best_res = residual(problem, lambda, v);
  best = lambda;
  if (ls) c_best_.head(n) = problem.c;
  if (best_res < tolerance) {  // (the start meets the tolerance: nothing to factor)
    report.residual = best_res;
    report.converged = true;
    return report;
  }
  initial_classes();
  bool class_changed = true;  // (the first solve factors)
  Scalar last_res = best_res;
  const Scalar start_res = best_res;
  Index slow = 0;
  bool improved = false;  // an iterate beat the start
  bool near = false;      // an iterate within kFar times the start's residual
  while (report.solves < settings.max_solves) {
    set_fixed();
    if (class_changed) {
      if (report.factorizations >= settings.max_factorizations) break;
      factor_values();
      ++report.factorizations;
      if (ldlt_.info() != Eigen::Success) break;
    }
    // free rows: -c - G_FX lambda_X; fixed rows: s lambda_X
    auto Gx = Gx_.head(n);
    multiply(fixed, Gx);
    auto rhs = rhs_.head(n);
    for (Index r = 0; r < n; ++r)
      rhs[r] = cls_[static_cast<std::size_t>(r)] ? -problem.c[r] - Gx[r] : std::max(g_diag(r), eps_) * fixed[r];
    if (ls) {
      // The step from the present impulses (the sweeps' answer, the last solve's): with the free
      // rows' residual r_F = b_F - G_FF lambda_F taken onto range(G_FF) as project_range does
      // (G_FF (G_FF + eps I)^-1 r_F, one refinement), lambda_F += (G_FF + eps I)^-1 P r_F, the
      // step of least norm: where redundant contacts leave the impulses free along the null
      // space of G_FF, the answer stays nearest the start (the sweeps' distribution, inside the
      // cones) instead of the least-norm impulse, which is not. The rest r_F - P r_F moves c_F.
      auto pr = pr_.head(n);
      for (Index r = 0; r < n; ++r) x[r] = cls_[static_cast<std::size_t>(r)] ? lambda[r] : Scalar(0);
      multiply(x, Gx);
      for (Index r = 0; r < n; ++r)
        if (cls_[static_cast<std::size_t>(r)]) rhs[r] -= Gx[r];  // r_F
      if (!project_free(rhs, pr)) break;
      for (Index r = 0; r < n; ++r) {
        const bool free = cls_[static_cast<std::size_t>(r)] != 0;
        c_ls_[r] = free ? problem.c[r] + (rhs[r] - pr[r]) : problem.c[r];
        rhs[r] = free ? pr[r] : Scalar(0);
      }
      solve_ordered(rhs, x);
      ++report.solves;
      if (!x.allFinite()) break;
      for (Index r = 0; r < n; ++r) lambda[r] = cls_[static_cast<std::size_t>(r)] ? lambda[r] + x[r] : fixed[r];
    } else {
      solve_ordered(rhs, x);
      ++report.solves;
      if (!x.allFinite()) break;
      for (Index r = 0; r < n; ++r) lambda[r] = cls_[static_cast<std::size_t>(r)] ? x[r] : fixed[r];
    }
    velocity(lambda);
    // iterative refinement with the exact G removes the O(eps |lambda|) bias of eps on the free
    // rows; its corrections lie in the range of G (c is, on a physical problem), so the
    // least-norm choice along the null space stays
    for (int refine = 0; refine < 2; ++refine) {
      for (Index r = 0; r < n; ++r) rhs[r] = cls_[static_cast<std::size_t>(r)] ? -v[r] : Scalar(0);
      solve_ordered(rhs, x);
      if (!x.allFinite()) break;
      for (Index r = 0; r < n; ++r)
        if (cls_[static_cast<std::size_t>(r)]) lambda[r] += x[r];
      velocity(lambda);
    }
    const Scalar res = residual(problem, lambda, v);
    if (res < best_res) {
      best_res = res, best = lambda, improved = true;
      if (ls) c_best_.head(n) = c_ls_.head(n);
    }
    if (res < tolerance) break;  // (changes of class within the tolerance gain nothing)
    near = near || res <= kFar * start_res;
    if (!improved && report.factorizations >= settings.give_up_factorizations) break;
    if (!near && n > settings.retry_rows && report.factorizations >= kFarClassifications) break;
    // all changes at once (the active-set strategy), the worst one alone once that has cycled
    class_changed = classify(report.factorizations >= kAllAtOnce);
    if (class_changed) continue;
    // the same classification: the fixed point of the slipping contacts' friction under way
    // (while it makes progress), or nothing more to gain
    if (slipping == 0) break;
    slow = res > 0.7 * last_res ? slow + 1 : 0;
    if (slow >= 3) break;
    last_res = res;
  }
  lambda = best;
  report.residual = best_res;
  report.converged = best_res < tolerance;
  if (ls) c_ls_.head(n) = c_best_.head(n);
  return report;
}

// The rows `in_range` (1) of the island's G as the stage factors its free rows: x = (G_AA +
// eps I)^-1 c_A, then G_AA x = sum_k sigma_k / (sigma_k + eps) (q_k . c_A) q_k over the
// eigenpairs of G_AA, c_A's component along the range of G_AA up to eps / sigma_k, none of its
// component along the null space. One refinement on the rest c_A - G_AA x takes the range
// error to (eps / sigma_k)^2. Rows outside A keep their c.
bool ActiveSetStage::project_range(const ContactProblem& problem, const unsigned char* in_range,
                                   const ActiveSetSettings& settings, VecXref c_out) {
  const Index n = problem.size();
  c_out = problem.c;
  if (n == 0) return false;
  set_up(problem, settings);
  cls_.assign(in_range, in_range + n);
  factor_values();
  if (ldlt_.info() != Eigen::Success) return false;
  auto pc = v_.head(n);
  if (!project_free(problem.c, pc)) return false;
  for (Index r = 0; r < n; ++r)
    if (cls_[static_cast<std::size_t>(r)]) c_out[r] = pc[r];
  return true;
}

// G_FF (G_FF + eps I)^-1 b_F with one refinement on the rest (project_range above), the free rows
// of the classification cls_ in the factorization at hand; scratch x_ and Gx_ (b and pb apart
// from them). Fixed rows of pb are left 0.
bool ActiveSetStage::project_free(const VecXcref& b, VecXref pb) {
  const Index n = b.size();
  auto x = x_.head(n);
  auto Gx = Gx_.head(n);
  pb.setZero();
  for (int pass = 0; pass < 2; ++pass) {
    for (Index r = 0; r < n; ++r) Gx[r] = cls_[static_cast<std::size_t>(r)] ? b[r] - pb[r] : Scalar(0);
    solve_ordered(Gx, x);
    if (!x.allFinite()) return false;
    for (Index r = 0; r < n; ++r)
      if (!cls_[static_cast<std::size_t>(r)]) x[r] = 0;
    multiply(x, Gx);
    for (Index r = 0; r < n; ++r)
      if (cls_[static_cast<std::size_t>(r)]) pb[r] += Gx[r];
  }
  return true;
}

}  // namespace impulse
