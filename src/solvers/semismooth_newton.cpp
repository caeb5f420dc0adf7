// Semismooth Newton stage (include/impulse/solvers/semismooth_newton.hpp has the method, its
// papers and equations (AC1), (AC2) and (PP)).
//
// Symbols (paper -> code): Alart & Curnier's penalty r -> w_ (per row, the same for a contact's
// three rows: 1 / the largest diagonal entry of its block of G, so that F is in N s and r v has
// the size of the impulse that cancels v); their lambda -> x_, the proximal centre lambda_k of
// the step; rho of (PP) -> rho_; v_rho at the centre (= v) -> v_.
//
// The Newton step. With the kept rows K (closed contacts, closed limits, box rows inside their
// bounds) and the eliminated rows E (dF = I there: their step is -F), the step solves
//     (A_KK + B_KK (G_KK + rho I)) dx_K = -F_K - B_KK G_KE dx_E,      dx_E = -F_E
// where dF = A + B (G + rho I) row by row: B = r I for a sticking contact and for a closed
// normal, limit or box row, and for a slipping contact's tangent rows B_TT = s r P, B_TN = mu r t,
// A_TT = I - s P, A_TN = -mu t (s = R / |y_T|, P = I - t t^T; header). A_KE is zero: a slipping
// contact keeps all three rows, and the other kept rows have A = 0.
//
// Departures (not in the papers): each proximal subproblem takes one Newton step (the next one
// is centred at its end), rho adapts to the line search (header), the stage returns its iterate
// of least residual, and a line search that fails with rho at max_r G_rr ends the stage (the
// sweeps go on from their own impulses).
#include "impulse/solvers/semismooth_newton.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace impulse {

namespace semismooth_newton_detail {
enum : unsigned char { kEliminated = 0, kKept = 1, kSlipping = 2 };
constexpr Index kPanel = 32;       // LU panel width (Golub & Van Loan sec. 3.4.7)
constexpr Index kBlock = 256;      // largest side of a trailing-update block product: its packed
                                   // operands (256 x 32 doubles, 64 KiB each) stay on the stack
constexpr Index kMerits = 5;       // merits the nonmonotone full step is compared with
constexpr Scalar kArmijo = 1e-4;   // sufficient decrease of |F|^2
constexpr Scalar kWeightStep = 10; // the proximal weight's growth after a short step, shrink after a long one
constexpr Scalar kShortStep = 0.25;  // a step the line search shortened below this is short

template <class V>
void grow(V& v, Index n) {
  if (v.size() < n) v.resize(n);
}
template <class T>
void grow_vector(std::vector<T>& v, Index n) {
  if (static_cast<Index>(v.size()) < n) v.resize(static_cast<std::size_t>(n));
}
}  // namespace semismooth_newton_detail

namespace snd = semismooth_newton_detail;

// Dense G of a factored island: G = sum_s Y_s^T D_s^-1 Y_s (contact_problem.hpp), the pieces of
// each system paired: entry (row of p + a, row of q + b) += Y_p(t, a) (D^-1 Y_q)(slot, b) over
// p's path (q's values scattered by slot: zero off its path).
void SemismoothNewtonStage::assemble(const ContactProblem& problem) {
  const FactoredG& F = *problem.factored;
  const Index nc = problem.nc, ng = nc + problem.nl + problem.nb, n = n_;
  if (gd_.rows() < n) gd_.resize(n, n);
  gd_.topLeftCorner(n, n).setZero();
  Index np = 0;
  for (Index g = 0; g < ng; ++g) np += F.begin[g + 1] - F.begin[g];
  snd::grow_vector(pieces_, np);
  np = 0;
  for (Index g = 0; g < ng; ++g)
    for (Index k = F.begin[g]; k < F.begin[g + 1]; ++k)
      pieces_[static_cast<std::size_t>(np++)] = Piece{F.piece[k].z, k, g < nc ? 3 * g : 2 * nc + g};
  std::sort(pieces_.begin(), pieces_.begin() + np,
            [](const Piece& a, const Piece& b) { return a.z != b.z ? a.z < b.z : a.piece < b.piece; });
  snd::grow(scratch_, 3 * F.nz);
  scratch_.head(3 * F.nz).setZero();
  Scalar* gd = gd_.data();
  const Index ld = gd_.rows();
  for (Index a = 0; a < np;) {
    Index b = a;
    while (b < np && pieces_[static_cast<std::size_t>(b)].z == pieces_[static_cast<std::size_t>(a)].z) ++b;
    for (Index qi = a; qi < b; ++qi) {
      const Piece& qq = pieces_[static_cast<std::size_t>(qi)];
      const FactoredPiece& Q = F.piece[qq.piece];
      const Index* dq = F.dofs + Q.y;
      const Scalar* DY = F.DY + 3 * Q.y;
      for (Index t = 0; t < Q.len; ++t)
        for (Index c = 0; c < Q.nrows; ++c) scratch_[3 * (Q.z + dq[t]) + c] = DY[3 * t + c];
      for (Index pi = a; pi < b; ++pi) {
        const Piece& pp = pieces_[static_cast<std::size_t>(pi)];
        const FactoredPiece& P = F.piece[pp.piece];
        const Index* dp = F.dofs + P.y;
        const Scalar* Y = F.Y + 3 * P.y;
        for (Index t = 0; t < P.len; ++t) {
          const Scalar* s3 = scratch_.data() + 3 * (P.z + dp[t]);
          for (Index ra = 0; ra < P.nrows; ++ra) {
            const Scalar y = Y[3 * t + ra];
            for (Index c = 0; c < Q.nrows; ++c) gd[(pp.row + ra) + (qq.row + c) * ld] += y * s3[c];
          }
        }
      }
      for (Index t = 0; t < Q.len; ++t)
        for (Index c = 0; c < Q.nrows; ++c) scratch_[3 * (Q.z + dq[t]) + c] = 0;
    }
    a = b;
  }
  g_ = gd;
  ld_ = ld;
}

// r of (AC1)-(AC2): 1 / the largest diagonal entry of the contact's block (of the row for a
// one-row constraint); 1 / max_r G_rr where that is not positive.
void SemismoothNewtonStage::set_weights(const ContactProblem& problem) {
  const Index nc = problem.nc, n = n_;
  Scalar gmax = 0;
  for (Index r = 0; r < n; ++r) gmax = std::max(gmax, g_[r + r * ld_]);
  rho_ = gmax;  // (scaled by the caller)
  const Scalar fallback = gmax > 0 ? 1 / gmax : Scalar(1);
  for (Index i = 0; i < nc; ++i) {
    Scalar d = 0;
    for (Index k = 3 * i; k < 3 * i + 3; ++k) d = std::max(d, g_[k + k * ld_]);
    w_[3 * i] = w_[3 * i + 1] = w_[3 * i + 2] = d > 0 ? 1 / d : fallback;
  }
  for (Index r = 3 * nc; r < n; ++r) {
    const Scalar d = g_[r + r * ld_];
    w_[r] = d > 0 ? 1 / d : fallback;
  }
}

Scalar SemismoothNewtonStage::evaluate(const ContactProblem& problem, const VecXcref& x, const VecXcref& v, VecXref F,
                                       Scalar* merit) {
  const Index nc = problem.nc, n = n_, nbox = problem.first_box_row();
  Scalar worst = 0, sum = 0;
  for (Index i = 0; i < nc; ++i) {
    const Index p = 3 * i;
    const Scalar r = w_[p];
    const Scalar yn = x[p + 2] - r * v[p + 2];
    unsigned char* cls = cls_.data() + p;
    if (!(yn > 0)) {  // open: (AC1) F_N = lambda_N, (AC2) on the disc of radius 0: F_T = lambda_T
      F[p] = x[p], F[p + 1] = x[p + 1], F[p + 2] = x[p + 2];
      cls[0] = cls[1] = cls[2] = snd::kEliminated;
    } else {
      F[p + 2] = r * v[p + 2];
      cls[2] = snd::kKept;
      const Scalar R = problem.mu[i] * yn;
      if (!(R > 0)) {  // frictionless: the disc is a point
        F[p] = x[p], F[p + 1] = x[p + 1];
        cls[0] = cls[1] = snd::kEliminated;
      } else {
        const Scalar yx = x[p] - r * v[p], yy = x[p + 1] - r * v[p + 1];
        const Scalar ny = std::sqrt(yx * yx + yy * yy);
        if (ny <= R) {  // sticking: F_T = r v_T
          F[p] = r * v[p], F[p + 1] = r * v[p + 1];
          cls[0] = cls[1] = snd::kKept;
        } else {  // slipping: F_T = lambda_T - R t
          const Scalar tx = yx / ny, ty = yy / ny;
          F[p] = x[p] - R * tx, F[p + 1] = x[p + 1] - R * ty;
          cls[0] = cls[1] = snd::kSlipping;
          slip_[p] = tx, slip_[p + 1] = ty, slip_[p + 2] = R / ny;
        }
      }
    }
    const Scalar f2 = F[p] * F[p] + F[p + 1] * F[p + 1] + F[p + 2] * F[p + 2];
    sum += f2;
    worst = std::max(worst, std::sqrt(f2));
  }
  for (Index k = 3 * nc; k < n; ++k) {
    const Scalar r = w_[k];
    const Scalar y = x[k] - r * v[k];
    bool kept;
    Scalar f;
    if (k < nbox) {  // limit: lambda - proj_{>= 0}(y)
      kept = y > 0;
      f = kept ? r * v[k] : x[k];
    } else {  // box row: lambda - proj_{[-b, b]}(y)
      const Scalar b = problem.box_bound(k);
      if (y >= b) {
        kept = false, f = x[k] - b;
      } else if (y <= -b) {
        kept = false, f = x[k] + b;
      } else {
        kept = true, f = r * v[k];
      }
    }
    F[k] = f;
    cls_[static_cast<std::size_t>(k)] = kept ? snd::kKept : snd::kEliminated;
    sum += f * f;
    worst = std::max(worst, std::abs(f));
  }
  if (merit) *merit = sum;
  return std::isfinite(sum) ? worst : std::numeric_limits<Scalar>::infinity();
}

// In-place LU with partial pivoting of lu_(0:m, 0:m), right-looking and blocked (Golub & Van
// Loan, sec. 3.4.7): each 32-column panel is factored by rank-1 updates with its row interchanges
// applied to whole rows, U12 = L11^-1 A12 by forward substitution, and the trailing matrix
// updated A22 -= L21 U12 in block products of at most 256 x 256 (Eigen's product kernel packs its
// operands on the stack at that size; larger products would allocate their packing buffers).
bool SemismoothNewtonStage::factor(Index m) {
  Scalar* A = lu_.data();
  const Index ld = lu_.rows();
  auto at = [A, ld](Index i, Index j) -> Scalar& { return A[i + j * ld]; };
  for (Index k0 = 0; k0 < m; k0 += snd::kPanel) {
    const Index kb = std::min(snd::kPanel, m - k0), k1 = k0 + kb;
    for (Index j = k0; j < k1; ++j) {
      Index p = j;
      Scalar big = std::abs(at(j, j));
      for (Index i = j + 1; i < m; ++i)
        if (std::abs(at(i, j)) > big) big = std::abs(at(i, j)), p = i;
      if (!(big > 0) || !std::isfinite(big)) return false;
      piv_[static_cast<std::size_t>(j)] = static_cast<int>(p);
      if (p != j)
        for (Index c = 0; c < m; ++c) std::swap(at(j, c), at(p, c));
      const Scalar inv = 1 / at(j, j);
      Scalar* lj = &at(0, j);
      for (Index i = j + 1; i < m; ++i) lj[i] *= inv;
      for (Index c = j + 1; c < k1; ++c) {
        Scalar* col = &at(0, c);
        const Scalar f = col[j];
        if (f != 0)
          for (Index i = j + 1; i < m; ++i) col[i] -= lj[i] * f;
      }
    }
    if (k1 >= m) break;
    for (Index c = k1; c < m; ++c) {  // U12 = L11^-1 A12 (unit lower)
      Scalar* col = &at(0, c);
      for (Index j = k0; j < k1; ++j) {
        const Scalar f = col[j];
        if (f == 0) continue;
        const Scalar* lj = &at(0, j);
        for (Index i = j + 1; i < k1; ++i) col[i] -= lj[i] * f;
      }
    }
    for (Index cb = k1; cb < m; cb += snd::kBlock) {
      const Index nc = std::min(snd::kBlock, m - cb);
      for (Index rb = k1; rb < m; rb += snd::kBlock) {
        const Index nr = std::min(snd::kBlock, m - rb);
        lu_.block(rb, cb, nr, nc).noalias() -= lu_.block(rb, k0, nr, kb) * lu_.block(k0, cb, kb, nc);
      }
    }
  }
  return true;
}

void SemismoothNewtonStage::lu_solve(Index m, VecXref b) const {
  const Scalar* A = lu_.data();
  const Index ld = lu_.rows();
  for (Index j = 0; j < m; ++j) {
    const Index p = piv_[static_cast<std::size_t>(j)];
    if (p != j) std::swap(b[j], b[p]);
  }
  for (Index j = 0; j < m; ++j) {  // L (unit lower), by columns
    const Scalar f = b[j];
    if (f == 0) continue;
    const Scalar* lj = A + j * ld;
    for (Index i = j + 1; i < m; ++i) b[i] -= lj[i] * f;
  }
  for (Index j = m - 1; j >= 0; --j) {  // U, by columns
    const Scalar* uj = A + j * ld;
    b[j] /= uj[j];
    const Scalar f = b[j];
    if (f == 0) continue;
    for (Index i = 0; i < j; ++i) b[i] -= uj[i] * f;
  }
}

// The Newton step dx_ at x_ (F_, cls_, slip_ from evaluate): the eliminated rows' step is -F, the
// kept rows' from the LU of their Jacobian (the file's header). False when the LU fails.
bool SemismoothNewtonStage::newton_step(const ContactProblem& problem) {
  const Index n = n_, nc = problem.nc;
  Index m = 0;
  for (Index p = 0; p < n; ++p) {
    if (cls_[static_cast<std::size_t>(p)] == snd::kEliminated) {
      pos_[static_cast<std::size_t>(p)] = -1;
      dx_[p] = -F_[p];
    } else {
      pos_[static_cast<std::size_t>(p)] = static_cast<int>(m);
      kept_[static_cast<std::size_t>(m++)] = static_cast<int>(p);
    }
  }
  if (m == 0) return true;
  // the slipping contacts' first kept row (their three rows are kept in order)
  Index ns = 0;
  for (Index i = 0; i < nc; ++i)
    if (cls_[static_cast<std::size_t>(3 * i)] == snd::kSlipping) slips_[static_cast<std::size_t>(ns++)] = static_cast<int>(i);
  // B applied to a column of kept rows holding rows of G (raw), in place
  auto apply_B = [&](Scalar* col) {
    for (Index k = 0; k < ns; ++k) {
      const Index i = slips_[static_cast<std::size_t>(k)], p = 3 * i, a = pos_[static_cast<std::size_t>(p)];
      const Scalar r = w_[p], tx = slip_[p], ty = slip_[p + 1], s = slip_[p + 2], mu = problem.mu[i];
      const Scalar gx = col[a], gy = col[a + 1], gn = col[a + 2];
      const Scalar tg = tx * gx + ty * gy;  // P g = g - t (t . g)
      col[a] = s * r * (gx - tx * tg) + mu * r * tx * gn;
      col[a + 1] = s * r * (gy - ty * tg) + mu * r * ty * gn;
    }
    for (Index a = 0; a < m; ++a) {
      const Index p = kept_[static_cast<std::size_t>(a)];
      if (cls_[static_cast<std::size_t>(p)] == snd::kKept) col[a] *= w_[p];
    }
  };
  Scalar* L = lu_.data();
  const Index ldl = lu_.rows();
  for (Index b = 0; b < m; ++b) {  // B (G_KK + rho I), column by column
    const Scalar* gq = g_ + static_cast<Index>(kept_[static_cast<std::size_t>(b)]) * ld_;
    Scalar* col = L + b * ldl;
    for (Index a = 0; a < m; ++a) col[a] = gq[kept_[static_cast<std::size_t>(a)]];
    col[b] += rho_;
    apply_B(col);
  }
  for (Index k = 0; k < ns; ++k) {  // + A of the slipping contacts
    const Index i = slips_[static_cast<std::size_t>(k)], p = 3 * i, a = pos_[static_cast<std::size_t>(p)];
    const Scalar tx = slip_[p], ty = slip_[p + 1], s = slip_[p + 2], mu = problem.mu[i];
    auto M = [&](Index row, Index col) -> Scalar& { return L[row + col * ldl]; };
    M(a, a) += 1 - s * (1 - tx * tx);
    M(a, a + 1) += s * tx * ty;
    M(a + 1, a) += s * tx * ty;
    M(a + 1, a + 1) += 1 - s * (1 - ty * ty);
    M(a, a + 2) -= mu * tx;
    M(a + 1, a + 2) -= mu * ty;
  }
  // right side: -F_K - B G_KE dx_E
  Scalar* rhs = rhs_.data();
  for (Index a = 0; a < m; ++a) rhs[a] = 0;
  for (Index q = 0; q < n; ++q) {
    if (pos_[static_cast<std::size_t>(q)] >= 0 || dx_[q] == 0) continue;
    const Scalar* gq = g_ + q * ld_;
    const Scalar d = dx_[q];
    for (Index a = 0; a < m; ++a) rhs[a] += gq[kept_[static_cast<std::size_t>(a)]] * d;
  }
  apply_B(rhs);
  for (Index a = 0; a < m; ++a) rhs[a] = -F_[kept_[static_cast<std::size_t>(a)]] - rhs[a];
  if (!factor(m)) return false;
  lu_solve(m, rhs_.head(m));
  for (Index a = 0; a < m; ++a) dx_[kept_[static_cast<std::size_t>(a)]] = rhs[a];
  return dx_.head(n).allFinite();
}

void SemismoothNewtonStage::reserve(Index n) {
  for (VecX* v : {&w_, &x_, &v_, &F_, &dx_, &u_, &xt_, &vt_, &Ft_, &best_, &rhs_, &slip_}) snd::grow(*v, n);
  snd::grow_vector(cls_, n);
  snd::grow_vector(kept_, n);
  snd::grow_vector(pos_, n);
  snd::grow_vector(piv_, n);
  snd::grow_vector(slips_, n / 3);
  if (lu_.rows() < n) lu_.resize(n, n);
}

SemismoothNewtonReport SemismoothNewtonStage::solve(const ContactProblem& problem, VecXref lambda, Scalar tolerance,
                                                    const SemismoothNewtonSettings& settings) {
  SemismoothNewtonReport report;
  const Index n = problem.size();
  n_ = n;
  if (n == 0) {
    report.converged = true;
    return report;
  }
  reserve(n);
  snd::grow_vector(slips_, problem.nc);
  if (problem.factored) {
    assemble(problem);
  } else {
    g_ = problem.G.data();
    ld_ = problem.G.outerStride();
  }
  set_weights(problem);
  const Scalar gmax = rho_;
  const Scalar rho_min = settings.proximal_min * gmax;
  rho_ = std::max(settings.proximal * gmax, rho_min);
  auto x = x_.head(n), v = v_.head(n), F = F_.head(n), dx = dx_.head(n), u = u_.head(n), xt = xt_.head(n),
       vt = vt_.head(n), Ft = Ft_.head(n);
  // v = G x + c (column by column), and u = (G + rho I) dx below
  auto multiply = [&](const VecXcref& in, VecXref out) {
    out.setZero();
    for (Index q = 0; q < n; ++q) {
      const Scalar s = in[q];
      if (s == 0) continue;
      const Scalar* gq = g_ + q * ld_;
      for (Index r = 0; r < n; ++r) out[r] += gq[r] * s;
    }
  };
  x = lambda;
  multiply(x, v);
  v += problem.c;
  Scalar merit = 0;
  Scalar res = evaluate(problem, x, v, F, &merit);
  Scalar best = res;
  best_.head(n) = x;
  report.residual = res;
  if (!std::isfinite(res)) return report;
  if (res < tolerance) {
    report.converged = true;
    return report;
  }
  Scalar merits[snd::kMerits];  // the last merits |F|^2 at the centres, oldest first
  Index nmerits = 1;
  merits[0] = merit;
  while (report.factorizations < settings.max_solves) {
    // one Newton step on (PP) centred at x, where F_rho = F and v_rho = v
    ++report.factorizations;
    if (!newton_step(problem)) break;
    multiply(dx, u);
    u += rho_ * dx;
    const Scalar reference = *std::max_element(merits, merits + nmerits);
    Scalar step = 1, trial_merit = 0, trial = 0;
    bool accepted = false;
    for (Index k = 0; k <= settings.max_line_search; ++k, step *= 0.5) {
      xt = x + step * dx;
      vt = v + step * u;
      trial = evaluate(problem, xt, vt, Ft, &trial_merit);
      const Scalar bound = k == 0 ? reference : merit;
      if (std::isfinite(trial) && trial_merit <= (1 - 2 * snd::kArmijo * step) * bound) {
        accepted = true;
        break;
      }
    }
    if (!accepted) {  // a poor model: the same centre with a larger weight
      if (rho_ >= gmax) break;
      rho_ = std::min(snd::kWeightStep * rho_, gmax);
      evaluate(problem, x, v, F, &merit);  // (the cases at x again)
      continue;
    }
    // the new centre, and F there the original one (v without the proximal term)
    x = xt;
    v = vt - (step * rho_) * dx;
    res = evaluate(problem, x, v, F, &merit);
    if (res < best) best = res, best_.head(n) = x;
    if (res < tolerance) break;
    rho_ = step < snd::kShortStep ? std::min(snd::kWeightStep * rho_, gmax) : std::max(rho_ / snd::kWeightStep, rho_min);
    if (nmerits < snd::kMerits) {
      merits[nmerits++] = merit;
    } else {
      std::rotate(merits, merits + 1, merits + snd::kMerits);
      merits[snd::kMerits - 1] = merit;
    }
  }
  report.residual = best;
  report.converged = best < tolerance;
  lambda = best_.head(n);
  return report;
}

Scalar SemismoothNewtonStage::residual(const ContactProblem& problem, const VecXcref& lambda) {
  SemismoothNewtonStage s;
  const Index n = problem.size();
  s.n_ = n;
  for (VecX* v : {&s.w_, &s.v_, &s.F_, &s.slip_}) v->resize(n);
  s.cls_.resize(static_cast<std::size_t>(n));
  if (problem.factored) {
    s.assemble(problem);
  } else {
    s.g_ = problem.G.data();
    s.ld_ = problem.G.outerStride();
  }
  s.set_weights(problem);
  VecX v = problem.c;
  for (Index q = 0; q < n; ++q)
    for (Index r = 0; r < n; ++r) v[r] += s.g_[r + q * s.ld_] * lambda[q];
  return s.evaluate(problem, lambda, v, s.F_.head(n), nullptr);
}

std::size_t SemismoothNewtonStage::memory_bytes() const {
  std::size_t b = static_cast<std::size_t>(gd_.size() + lu_.size() + scratch_.size()) * sizeof(Scalar);
  for (const VecX* v : {&w_, &x_, &v_, &F_, &dx_, &u_, &xt_, &vt_, &Ft_, &best_, &rhs_, &slip_})
    b += static_cast<std::size_t>(v->size()) * sizeof(Scalar);
  b += piv_.capacity() * sizeof(int) + kept_.capacity() * sizeof(int) + pos_.capacity() * sizeof(int) +
       slips_.capacity() * sizeof(int) + cls_.capacity() + pieces_.capacity() * sizeof(Piece);
  return b;
}

}  // namespace impulse
