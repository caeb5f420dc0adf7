// BisectionLanes (see the header).
#include "impulse/batch/bisection_lanes.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>

#include "../dynamics/lanes_abi.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/stepper/stepper.hpp"
#include "impulse/world/world.hpp"

namespace impulse::batch {

namespace {

void lanes_solve_grow(std::vector<Scalar>& v, std::size_t n) {
  if (v.size() < n) v.resize(std::max(n, 2 * v.size()));
}

}  // namespace

unsigned BisectionLanes::solve(World* const* worlds, unsigned begun, int count, int width) {
  // each World's island and settings, and whether the lanes may take it
  const BisectionSettings* settings[8] = {};
  Index nc[8] = {};
  unsigned take = 0;
  for (int w = 0; w < count; ++w) {
    if (!(begun & (1u << w))) continue;
    const auto* solver = dynamic_cast<const BisectionSolver*>(&worlds[w]->contact_solver());
    if (solver == nullptr) continue;
    const DelassusAssembler& rows = worlds[w]->step_stepper().pending_rows();
    if (rows.num_islands() != 1) continue;
    const ContactProblem& p = rows.island(0).problem;
    if (p.is_factored() || p.nc < 1 || p.nl != 0 || p.nb != 0) continue;
    bool friction = true;
    for (Index i = 0; i < p.nc; ++i) friction = friction && p.mu[i] > 0;
    if (!friction) continue;
    settings[w] = &solver->settings();
    nc[w] = p.nc;
    take |= 1u << w;
  }
  // the group's settings (its first World's) and contact count: the largest. The Worlds with fewer
  // contacts are left to their own solvers, and the lanes run when at least kMinLanes Worlds (all,
  // in a group narrower than that) have it: the lanes sweep until their slowest World stops, and
  // a sweep of a few lanes, or of lanes padded with contacts that do not touch, costs more than
  // the Worlds' own sweeps (instructions at W = 4, docs/benchmarks.md, "Which of the lanes'
  // stages pay")
  const BisectionSettings* s = nullptr;
  Index n_contacts = 0;
  for (int w = 0; w < count; ++w) {
    if (!(take & (1u << w))) continue;
    if (s == nullptr) s = settings[w];
    if (settings[w]->alpha != s->alpha || settings[w]->gamma != s->gamma || settings[w]->alpha_min != s->alpha_min)
      take &= ~(1u << w);
    else
      n_contacts = std::max(n_contacts, nc[w]);
  }
  for (int w = 0; w < count; ++w)
    if (nc[w] != n_contacts) take &= ~(1u << w);
  // (again after the staging below, which leaves out the Worlds whose problems it refuses)
  const std::size_t min_lanes = static_cast<std::size_t>(std::min(kMinLanes, width));
  const auto enough = [min_lanes](unsigned t) { return std::bitset<8>(t).count() >= min_lanes; };
  if (!enough(take)) return 0;
  // The lanes' arrays (n rows, lane l of entry e at e W + l) from each World's island by
  // lanes_abi::gather: G, c and mu read where they are; M_ii and the warm start staged per World;
  // the checks of ContactSolver::solve.
  const Index n = 3 * n_contacts;
  const std::size_t W = static_cast<std::size_t>(width), N = static_cast<std::size_t>(n),
                    NC = static_cast<std::size_t>(n_contacts);
  const std::size_t staged = 9 * NC + N;  // M_ii, lambda
  lanes_solve_grow(G_, N * N * W);
  lanes_solve_grow(C_, N * W);
  lanes_solve_grow(MU_, NC * W);
  lanes_solve_grow(MI_, 9 * NC * W);
  lanes_solve_grow(LAM_, N * W);
  lanes_solve_grow(ll_, staged * W);
  lanes_solve_grow(slip_, 3 * W);
  const double *g[8], *c[8], *mu[8], *mi[8], *lam[8];
  for (int w = 0; w < count; ++w) {
    if (!(take & (1u << w))) continue;
    Stepper& stepper = worlds[w]->step_stepper();
    const IslandView isl = stepper.pending_rows().island(0);
    const ContactProblem& p = isl.problem;
    const VecX& lambda = stepper.solved_lambda();
    Scalar* const stage = ll_.data() + staged * static_cast<std::size_t>(w);
    Scalar* const ll = stage + 9 * NC;
    for (Index a = 0; a < n; ++a) ll[a] = lambda[isl.global_row[a]];
    const Eigen::Map<const VecX> ll_map(ll, n);
    check_problem(p, ll_map);  // (throws as the World's own solve would)
    bool ok = ll_map.allFinite() && p.G.outerStride() == n && problem_is_finite(p);
    for (Index i = 0; ok && i < n_contacts; ++i) {
      Mat3 Mi;
      ok = bisection_block_inverse(p.contact_block(i), settings[w]->regularization, Mi);
      if (ok) Eigen::Map<Mat3>(stage + 9 * i) = Mi;
    }
    if (!ok) {
      take &= ~(1u << w);
      continue;
    }
    g[w] = p.G.data(), c[w] = p.c.data(), mu[w] = p.mu.data(), mi[w] = stage, lam[w] = ll;
  }
  if (!enough(take)) return 0;
  // lanes no World takes compute a copy of one that does (finite, not read)
  int some = 0;
  for (int w = 0; w < count; ++w)
    if (take & (1u << w)) some = w;
  for (int l = 0; l < width; ++l)
    if (!(take & (1u << l))) g[l] = g[some], c[l] = c[some], mu[l] = mu[some], mi[l] = mi[some], lam[l] = lam[some];
  const auto gather = width == 2 ? &lanes_abi::gather_w2 : width == 4 ? &lanes_abi::gather_w4 : &lanes_abi::gather_w8;
  gather(g, n * n, G_.data());
  gather(c, n, C_.data());
  gather(mu, n_contacts, MU_.data());
  gather(mi, 9 * n_contacts, MI_.data());
  gather(lam, n, LAM_.data());
  // the sweeps, while a World is in the lanes; each World's monitor and stopping rule as in
  // BisectionSolver::solve_with_active: the lanes end before the sweep at which Anderson mixing
  // (anderson_start), the active-set stage (active_set_start) or the Newton stage (newton_start) would act
  SweepMonitor monitors[8] = {SweepMonitor(0, 0), SweepMonitor(0, 0), SweepMonitor(0, 0), SweepMonitor(0, 0),
                              SweepMonitor(0, 0), SweepMonitor(0, 0), SweepMonitor(0, 0), SweepMonitor(0, 0)};
  SolverResult results[8];
  Index end[8];
  for (int w = 0; w < count; ++w) {
    if (!(take & (1u << w))) continue;
    const BisectionSettings& sw = *settings[w];
    end[w] = sw.max_iterations;
    if (sw.anderson_memory > 0) end[w] = std::min(end[w], sw.anderson_start);
    if (sw.active_set_start > 0) end[w] = std::min(end[w], sw.active_set_start);
    if (sw.newton_start > 0) end[w] = std::min(end[w], sw.newton_start);
    monitors[w] = SweepMonitor(sw.tolerance, sw.stall_window);
    results[w] = SolverResult();
  }
  unsigned active = take, solved = 0;
  for (int w = 0; w < count; ++w)
    if ((take & (1u << w)) && end[w] <= 1) active &= ~(1u << w);
  const auto sweep = width == 2   ? &lanes_abi::bisection_sweep_w2
                     : width == 4 ? &lanes_abi::bisection_sweep_w4
                                  : &lanes_abi::bisection_sweep_w8;
  Scalar alpha = s->alpha;
  Scalar err[8];
  Scalar first_err[8] = {};
  for (Index it = 1; active != 0; ++it) {
    // the sweep, stopped at each contact at which a World in the lanes slips: its single-contact
    // problem (G_ii and mu_i from the lanes' arrays, c~_i from the kernel) solved as the solver's
    // sweep solves it (solve_single_contact_inverted with the staged M_ii, the solver's block
    // inverse: Algorithm 1 with its bits), then the sweep resumed from that contact with it
    int from = 0;
    unsigned given = 0;
    for (;;) {
      unsigned slip = 0;
      from = sweep(static_cast<int>(n_contacts), from, G_.data(), C_.data(), MU_.data(), MI_.data(), alpha,
                   LAM_.data(), err, active, given, slip_.data(), &slip);
      if (from == static_cast<int>(n_contacts)) break;
      given = 0;
      for (int w = 0; w < count; ++w) {
        const unsigned bit = 1u << w;
        if (!(slip & bit)) continue;
        const std::size_t l = static_cast<std::size_t>(w);
        const Vec3 ci(slip_[l], slip_[W + l], slip_[2 * W + l]);
        if (!ci.allFinite()) {
          active &= ~bit;
          continue;
        }
        const std::size_t r0 = 3 * static_cast<std::size_t>(from);
        Mat3 Gi;
        for (std::size_t k = 0; k < 3; ++k)
          for (std::size_t r = 0; r < 3; ++r) Gi(static_cast<Index>(r), static_cast<Index>(k)) = G_[((r0 + k) * N + r0 + r) * W + l];
        const Eigen::Map<const Mat3> M(ll_.data() + staged * l + 9 * static_cast<std::size_t>(from));
        // (the slip search's hint: the lane's present lambda_T of the contact, as the solver's sweep)
        const Scalar hint[2] = {LAM_[r0 * W + l], LAM_[(r0 + 1) * W + l]};
        const SingleContactSolution sol =
            solve_single_contact_inverted(Gi, M, ci, MU_[static_cast<std::size_t>(from) * W + l], *settings[w], hint);
        for (int k = 0; k < 3; ++k) slip_[static_cast<std::size_t>(k) * W + l] = sol.lambda[k];
        given |= bit;
      }
    }
    alpha = s->alpha_min + s->gamma * (alpha - s->alpha_min);  // (Algorithm 2, line 12)
    for (int w = 0; w < count; ++w) {
      const unsigned bit = 1u << w;
      if (!(active & bit)) continue;
      if (it == 1) first_err[w] = err[w];
      if (!monitors[w].stop(results[w], it, err[w])) {
        // (the next sweep would be past the plain sweeps, or the solver's stage takes the crawl)
        if (it + 1 >= end[w] || settings[w]->active_set_crawl(3 * nc[w], it, err[w], first_err[w]))
          active &= ~bit;
        continue;
      }
      active &= ~bit;
      if (results[w].status != SolverStatus::Converged || results[w].stalled) continue;
      const Index rows = 3 * nc[w];
      Scalar* const ll = ll_.data() + staged * static_cast<std::size_t>(w);
      bool finite = true;
      for (Index a = 0; a < rows; ++a) {
        ll[a] = LAM_[static_cast<std::size_t>(a) * W + static_cast<std::size_t>(w)];
        finite = finite && std::isfinite(ll[a]);
      }
      if (!finite) continue;  // (ContactSolver::solve's NumericalIssue: the World's own solver says it)
      results[w].method = SolverMethod::Iteration;
      worlds[w]->step_stepper().set_presolved(ll, rows, results[w]);
      solved |= bit;
    }
  }
  return solved;
}

}  // namespace impulse::batch
