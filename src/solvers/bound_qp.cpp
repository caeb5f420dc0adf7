// MPRGP, and the exact active-set method, on the frictionless rows of a contact problem: see
// bound_qp.hpp for the papers, the symbols and why.
#include "impulse/solvers/bound_qp.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace impulse {

BoundQpResult solve_bound_qp(const ContactProblem& problem, const unsigned char* var, VecXref x, Scalar tol,
                             Index max_products, DelassusProduct& product, BoundQpWorkspace& ws) {
  const Index n = problem.size();
  ws.reserve(n);
  auto g = ws.g.head(n), p = ws.p.head(n), Ap = ws.Ap.head(n), phi = ws.phi.head(n), w = ws.w.head(n);
  auto best = ws.best.head(n);
  Scalar best_gp = std::numeric_limits<Scalar>::infinity();
  BoundQpResult result;
  auto multiply = [&](const VecXcref& in, VecXref out) {
    product.multiply(problem, in, out);
    for (Index r = 0; r < n; ++r)
      if (!var[r]) out[r] = 0;
    ++result.products;
  };
  // alpha_bar: |G| on the rows in var by power iteration from the all-ones vector (G is PSD)
  for (Index r = 0; r < n; ++r) p[r] = var[r] ? 1 : 0;
  Scalar norm_G = 0;
  for (int k = 0; k < 8; ++k) {
    const Scalar len = p.norm();
    if (!(len > 0)) break;
    p /= len;
    multiply(p, w);
    norm_G = std::max(norm_G, p.dot(w));  // Rayleigh quotient: a lower bound of |G|
    p = w;
  }
  if (!(norm_G > 0)) return result;  // nothing can move (x unchanged)
  const Scalar alpha_bar = 1 / norm_G;

  for (Index r = 0; r < n; ++r) x[r] = var[r] ? std::max<Scalar>(0, x[r]) : x[r];
  // g = G x + c on the rows in var
  multiply(x, g);
  for (Index r = 0; r < n; ++r) g[r] = var[r] ? g[r] + problem.c[r] : 0;
  auto free_gradient = [&]() {
    for (Index r = 0; r < n; ++r) phi[r] = var[r] && x[r] > 0 ? g[r] : 0;
  };
  free_gradient();
  p = phi;
  for (;;) {
    // projected gradient, chopped gradient and the proportioning test
    Scalar gp = 0, beta2 = 0, phit_phi = 0;
    for (Index r = 0; r < n; ++r) {
      if (!var[r]) continue;
      if (x[r] > 0) {
        gp = std::max(gp, std::abs(g[r]));
        phit_phi += std::min(x[r] / alpha_bar, g[r]) * g[r];
      } else if (g[r] < 0) {
        gp = std::max(gp, -g[r]);
        beta2 += g[r] * g[r];
      }
    }
    if (!std::isfinite(gp)) break;
    if (result.start_projected_gradient == 0) result.start_projected_gradient = gp;
    if (gp < best_gp) best_gp = gp, best = x;
    if (gp < tol || result.products >= max_products) break;
    if (beta2 <= phit_phi) {
      // conjugate gradient step along p, or its feasible part and an expansion step
      multiply(p, Ap);
      const Scalar pAp = p.dot(Ap);
      const Scalar a_cg = pAp > 0 ? g.dot(p) / pAp : std::numeric_limits<Scalar>::infinity();
      Scalar a_f = std::numeric_limits<Scalar>::infinity();
      for (Index r = 0; r < n; ++r)
        if (var[r] && p[r] > 0) a_f = std::min(a_f, x[r] / p[r]);
      if (a_cg <= a_f) {
        x -= a_cg * p;
        g -= a_cg * Ap;
        for (Index r = 0; r < n; ++r)
          if (var[r]) x[r] = std::max<Scalar>(0, x[r]);  // (rounding when a_cg ~ a_f)
        free_gradient();
        p = phi - (phi.dot(Ap) / pAp) * p;
      } else {
        if (std::isfinite(a_f)) {  // to the first bound: that row becomes exactly 0
          x -= a_f * p;
          g -= a_f * Ap;
          for (Index r = 0; r < n; ++r)
            if (var[r] && (x[r] < 0 || (p[r] > 0 && x[r] <= 1e-15 * a_f * p[r]))) x[r] = 0;
        }
        free_gradient();
        for (Index r = 0; r < n; ++r)
          if (var[r]) x[r] = std::max<Scalar>(0, x[r] - alpha_bar * phi[r]);
        multiply(x, g);
        for (Index r = 0; r < n; ++r) g[r] = var[r] ? g[r] + problem.c[r] : 0;
        free_gradient();
        p = phi;
      }
    } else {
      // proportioning step: exact line search along the chopped gradient
      for (Index r = 0; r < n; ++r) w[r] = var[r] && !(x[r] > 0) ? std::min<Scalar>(g[r], 0) : 0;
      multiply(w, Ap);
      const Scalar dAd = w.dot(Ap);
      if (!(dAd > 0)) break;  // (a descent direction with no curvature: f unbounded below)
      const Scalar a = g.dot(w) / dAd;
      x -= a * w;
      g -= a * Ap;
      free_gradient();
      p = phi;
    }
  }
  if (std::isfinite(best_gp)) x = best;
  result.projected_gradient = best_gp;
  result.converged = best_gp < tol;
  return result;
}

void ActiveSetWorkspace::reserve(Index m) {
  if (A.rows() < m) {
    const Index k = std::max(m, 2 * static_cast<Index>(A.rows()));
    A.resize(k, k);
    L.resize(k, k);
    for (VecX* w : {&b, &x, &z, &v}) w->resize(k);
    rows.resize(static_cast<std::size_t>(k));
    P.reserve(static_cast<std::size_t>(k));
    in_P.resize(static_cast<std::size_t>(k));
  }
}

BoundQpResult solve_bound_qp_exact(const ContactProblem& problem, const unsigned char* var, VecXref x_out,
                                   Scalar tol, Index max_changes, ActiveSetWorkspace& ws) {
  return solve_bound_qp_exact(problem, problem.c, var, x_out, tol, max_changes, ws);
}

BoundQpResult solve_bound_qp_exact(const ContactProblem& problem, const VecXcref& lin, const unsigned char* var,
                                   VecXref x_out, Scalar tol, Index max_changes, ActiveSetWorkspace& ws) {
  BoundQpResult result;
  const Index n = problem.size();
  Index m = 0;
  for (Index r = 0; r < n; ++r) m += var[r] ? 1 : 0;
  if (m == 0) return result;
  ws.reserve(m);
  MatX& A = ws.A;
  MatX& U = ws.L;  // (stored as U = L^T)
  for (Index r = 0, a = 0; r < n; ++r)
    if (var[r]) ws.rows[static_cast<std::size_t>(a++)] = r;
  auto row = [&](Index a) { return ws.rows[static_cast<std::size_t>(a)]; };
  // A = G on the variables, both triangles: the products below read whole columns (contiguous)
  if (!problem.is_factored()) {
    for (Index j = 0; j < m; ++j)
      for (Index a = j; a < m; ++a) A(a, j) = A(j, a) = problem.G(row(a), row(j));
  } else {
    // from the factors, G(a, j) = sum over the pieces of a's group of Y_p(row a)^T D^-1 Y(row j):
    // column j scattered once into the velocity slots of its systems, then read by the rows that
    // share a system with it, found through per-system lists of the variables (the other entries
    // are 0): O(m x the rows a system's contacts touch) instead of a test of each of the m^2 / 2
    // pairs.
    const FactoredG& F = *problem.factored;
    const Index nc = problem.nc;
    if (ws.zs.size() < F.nz) ws.zs = VecX::Zero(std::max<Index>(F.nz, 2 * ws.zs.size()));
    Scalar* zs = ws.zs.data();
    auto group = [nc](Index r) { return r < 3 * nc ? r / 3 : r - 2 * nc; };
    auto within = [nc](Index r) { return r < 3 * nc ? r % 3 : Index(0); };
    // the variables of each system, keyed by its first velocity slot z: list z is
    // sys_var[sys_start[z] .. sys_start[z + 1])
    auto grow_to = [](std::vector<Index>& v, Index size) {
      const Index have = static_cast<Index>(v.size());
      if (have < size) v.resize(static_cast<std::size_t>(std::max(size, 2 * have)));
    };
    grow_to(ws.sys_start, F.nz + 2);
    Index* start = ws.sys_start.data();
    std::fill(start, start + F.nz + 2, Index(0));
    for (Index a = 0; a < m; ++a) {
      const Index ga = group(row(a));
      for (Index k = F.begin[ga]; k < F.begin[ga + 1]; ++k) ++start[F.piece[k].z + 2];
    }
    for (Index z = 2; z < F.nz + 2; ++z) start[z] += start[z - 1];
    grow_to(ws.sys_var, start[F.nz + 1]);
    for (Index a = 0; a < m; ++a) {  // (start[z + 1] runs from list z's first entry to its end)
      const Index ga = group(row(a));
      for (Index k = F.begin[ga]; k < F.begin[ga + 1]; ++k)
        ws.sys_var[static_cast<std::size_t>(start[F.piece[k].z + 1]++)] = a;
    }
    grow_to(ws.stamp, m);
    std::fill(ws.stamp.begin(), ws.stamp.begin() + m, Index(-1));
    A.topLeftCorner(m, m).setZero();
    for (Index j = 0; j < m; ++j) {
      const Index gj = group(row(j)), rj = within(row(j));
      for (Index k = F.begin[gj]; k < F.begin[gj + 1]; ++k) {
        const FactoredPiece& p = F.piece[k];
        for (Index t = 0; t < p.len; ++t) zs[p.z + F.dofs[p.y + t]] += F.DY[3 * (p.y + t) + rj];
      }
      for (Index kj = F.begin[gj]; kj < F.begin[gj + 1]; ++kj) {
        const Index z = F.piece[kj].z;
        for (Index e = start[z]; e < start[z + 1]; ++e) {
          const Index a = ws.sys_var[static_cast<std::size_t>(e)];
          if (a < j || ws.stamp[static_cast<std::size_t>(a)] == j) continue;  // (lower triangle; once)
          ws.stamp[static_cast<std::size_t>(a)] = j;
          const Index ga = group(row(a)), ra = within(row(a));
          Scalar g = 0;
          for (Index k = F.begin[ga]; k < F.begin[ga + 1]; ++k) {
            const FactoredPiece& p = F.piece[k];
            for (Index t = 0; t < p.len; ++t) g += F.Y[3 * (p.y + t) + ra] * zs[p.z + F.dofs[p.y + t]];
          }
          A(a, j) = A(j, a) = g;
        }
      }
      for (Index k = F.begin[gj]; k < F.begin[gj + 1]; ++k) {
        const FactoredPiece& p = F.piece[k];
        for (Index t = 0; t < p.len; ++t) zs[p.z + F.dofs[p.y + t]] = 0;
      }
    }
  }
  Scalar max_diag = 0;
  for (Index a = 0; a < m; ++a) max_diag = std::max(max_diag, A(a, a));
  if (!(max_diag > 0) || !std::isfinite(max_diag)) return result;
  const Scalar eps = 1e-10 * max_diag;

  auto b = ws.b.head(m), x = ws.x.head(m), z = ws.z.head(m), v = ws.v.head(m);
  std::vector<Index>& P = ws.P;
  P.clear();
  for (Index a = 0; a < m; ++a) {
    b[a] = lin[row(a)];
    x[a] = std::max<Scalar>(0, x_out[row(a)]);
    ws.in_P[static_cast<std::size_t>(a)] = 0;
  }
  // v = G x + c on the variables (x is nonzero on P only, after the start)
  auto velocities = [&](bool all) {
    v = b;
    for (Index j = 0; j < m; ++j) {
      if (!all && !ws.in_P[static_cast<std::size_t>(j)]) continue;
      const Scalar xj = x[j];
      if (xj == 0) continue;
      const Scalar* Aj = A.data() + j * A.outerStride();
      for (Index a = 0; a < m; ++a) v[a] += Aj[a] * xj;
    }
  };
  // largest violation of velocity Signorini (the projected gradient)
  auto violation = [&]() {
    Scalar gp = 0;
    for (Index a = 0; a < m; ++a) gp = std::max(gp, x[a] > 0 ? std::abs(v[a]) : std::max<Scalar>(0, -v[a]));
    return gp;
  };
  velocities(true);
  result.start_projected_gradient = violation();
  if (!std::isfinite(result.start_projected_gradient)) return result;

  // U^T U = G_PP + eps I (U = L^T of the Cholesky factor L L^T), one column per member of P in
  // P's order, stored column-major: the append's triangular solve and the forward solve read
  // whole columns of U (contiguous memory), where rows of L would be read with a stride of the
  // workspace's size. The sums run in the order of the row-wise factor (the same bits).
  auto append = [&](Index j) {
    const Index k = static_cast<Index>(P.size());
    Scalar* Uk = U.data() + k * U.outerStride();
    Scalar d = A(j, j) + eps;
    for (Index t = 0; t < k; ++t) {
      const Scalar* Ut = U.data() + t * U.outerStride();
      Scalar s = A(P[static_cast<std::size_t>(t)], j);
      for (Index u = 0; u < t; ++u) s -= Uk[u] * Ut[u];
      Uk[t] = s / Ut[t];
      d -= Uk[t] * Uk[t];
    }
    Uk[k] = std::sqrt(std::max(d, eps));  // (d >= eps in exact arithmetic)
    P.push_back(j);
    ws.in_P[static_cast<std::size_t>(j)] = 1;
  };
  // P loses its member at position t: drop column t of U and restore the triangle by Givens
  // rotations of neighbouring rows (Q U keeps U^T U), O((k - t)^2) instead of a new factor
  auto remove = [&](Index t) {
    const Index k = static_cast<Index>(P.size());
    for (Index i = t; i + 1 < k; ++i) U.col(i).head(i + 2) = U.col(i + 1).head(i + 2);
    for (Index i = t; i + 1 < k; ++i) {
      // column i has one entry below the diagonal, U(i + 1, i): rotate rows i and i + 1
      const Scalar p = U(i, i), q = U(i + 1, i), r = std::hypot(p, q);
      const Scalar cs = p / r, sn = q / r;
      for (Index w = i; w + 1 < k; ++w) {
        const Scalar a = U(i, w), c = U(i + 1, w);
        U(i, w) = cs * a + sn * c;
        U(i + 1, w) = cs * c - sn * a;
      }
      U(i + 1, i) = 0;
    }
    ws.in_P[static_cast<std::size_t>(P[static_cast<std::size_t>(t)])] = 0;
    P.erase(P.begin() + t);
  };
  // z_P = -(G_PP + eps I)^-1 w_P: with w = c the minimizer of f on P (x = 0 off P); with w = the
  // velocities of x, the correction of one step of iterative refinement. U^T y = -w_P along the
  // columns of U, then U z = y along its rows.
  auto solve_free = [&](const auto& w) {
    const Index k = static_cast<Index>(P.size());
    for (Index t = 0; t < k; ++t) {
      const Scalar* Ut = U.data() + t * U.outerStride();
      Scalar s = -w[P[static_cast<std::size_t>(t)]];
      for (Index u = 0; u < t; ++u) s -= Ut[u] * z[u];
      z[t] = s / Ut[t];
    }
    for (Index t = k - 1; t >= 0; --t) {
      Scalar s = z[t];
      for (Index u = t + 1; u < k; ++u) s -= U(t, u) * z[u];
      z[t] = s / U(t, t);
    }
  };

  for (Index a = 0; a < m; ++a)
    if (x[a] > 0) append(a);
  Index& changes = result.changes;
  bool inner = !P.empty();
  Index added = -1;
  for (;;) {
    if (!inner) {
      velocities(false);
      Index j = -1;
      Scalar most = -tol;
      for (Index a = 0; a < m; ++a)
        if (!ws.in_P[static_cast<std::size_t>(a)] && v[a] < most) most = v[a], j = a;
      if (j < 0) break;  // KKT: x >= 0, v >= -tol off P, v = -eps x on P
      if (++changes > max_changes) return result;
      append(j);
      added = j;
    }
    inner = false;
    for (;;) {
      solve_free(b);
      const Index k = static_cast<Index>(P.size());
      Scalar alpha = 1;
      Index block = -1;
      for (Index t = 0; t < k; ++t) {
        const Index a = P[static_cast<std::size_t>(t)];
        if (z[t] <= 0) {
          if (a == added) return result;  // (the row just added cannot decrease f: rounding, give up)
          const Scalar ratio = x[a] / (x[a] - z[t]);
          if (ratio < alpha) alpha = ratio, block = t;
        }
      }
      if (block < 0) {
        for (Index t = 0; t < k; ++t) x[P[static_cast<std::size_t>(t)]] = z[t];
        break;
      }
      // step to the first row that reaches 0; it (and any other at 0) leaves P
      for (Index t = 0; t < k; ++t) {
        const Index a = P[static_cast<std::size_t>(t)];
        x[a] += alpha * (z[t] - x[a]);
        if (t == block || !(x[a] > 0)) x[a] = 0;
      }
      for (Index t = k - 1; t >= 0; --t)
        if (x[P[static_cast<std::size_t>(t)]] == 0) remove(t);
      added = -1;
      if (++changes > max_changes) return result;
    }
  }
  // The free set is final; eps biased x_P by (G_PP + eps I)^-1 eps x_P, velocities -eps x_P on P.
  // Iterative refinement with the same factor removes that bias (by eps / lambda_i per step on
  // each eigen-direction of G_PP), as long as x_P stays positive.
  for (int refine = 0; refine < 3 && !P.empty(); ++refine) {
    velocities(false);
    solve_free(v);
    const Index k = static_cast<Index>(P.size());
    bool positive = true;
    for (Index t = 0; t < k && positive; ++t) positive = x[P[static_cast<std::size_t>(t)]] + z[t] > 0;
    if (!positive) break;
    for (Index t = 0; t < k; ++t) x[P[static_cast<std::size_t>(t)]] += z[t];
  }
  velocities(true);
  result.projected_gradient = violation();
  result.converged = result.projected_gradient < tol;
  if (result.converged)
    for (Index a = 0; a < m; ++a) x_out[row(a)] = x[a];
  return result;
}

}  // namespace impulse
