// World::transition_derivatives and TransitionDifferentiator: step Jacobians by finite differences
// on clones of the World, in parallel on a thread pool. See world/transition_derivatives.hpp.
#include "impulse/world/transition_differentiator.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <thread>

#include "impulse/core/thread_pool.hpp"
#include "impulse/core/check.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

namespace {

void check_options(const TransitionOptions& options) {
  IMPULSE_CHECK(std::isfinite(options.eps) && options.eps > 0,
                "transition_derivatives: eps must be finite and > 0, got ", options.eps);
  IMPULSE_CHECK(options.method == TransitionMethod::FiniteDifference || options.method == TransitionMethod::Analytic,
                "transition_derivatives: unknown method ", static_cast<int>(options.method));
  IMPULSE_CHECK(options.num_threads >= 0, "transition_derivatives: num_threads must be >= 0, got ",
                options.num_threads);
}

int thread_count(const TransitionOptions& options) {
  if (options.method == TransitionMethod::Analytic) return 1;  // (one nominal step)
  if (options.num_threads == 0) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return options.num_threads;
}

// The finite-difference columns (transition_derivatives.hpp) at the current state of `world`,
// on `worlds` (clones of it, one per thread of `pool`, or one without a pool), each stepping with
// its thread's workspace when `workspaces` is given (integrate(ws): the same bits as integrate()).
TransitionJacobians finite_differences(const World& world, const TransitionOptions& options,
                                       const std::vector<World*>& worlds, ThreadPool* pool,
                                       const std::vector<StepWorkspace*>* workspaces) {
  const WorldState base = world.save_state();
  const Index ns = world.num_systems();
  // per system: first dof in the stacked NV, first coordinate in the stacked NQ
  std::vector<Index> v0(static_cast<std::size_t>(ns) + 1, 0), q0(static_cast<std::size_t>(ns) + 1, 0);
  for (Index s = 0; s < ns; ++s) {
    const SystemState& st = base.systems[static_cast<std::size_t>(s)];
    v0[static_cast<std::size_t>(s) + 1] = v0[static_cast<std::size_t>(s)] + st.nv;
    q0[static_cast<std::size_t>(s) + 1] = q0[static_cast<std::size_t>(s)] + st.nq;
  }
  const Index NV = v0.back(), NQ = q0.back();
  const auto system_of = [&](Index g) {  // the system of stacked dof g
    Index s = 0;
    while (v0[static_cast<std::size_t>(s) + 1] <= g) ++s;
    return s;
  };

  // items: columns 0 .. 3 NV - 1 (dq, u, tau), each at +eps (and -eps when centred), then the
  // nominal step for forward differences
  const Index ncols = 3 * NV;
  const Index per_col = options.centered ? 2 : 1;
  const Index nitems = ncols * per_col + (options.centered ? 0 : 1);
  MatX Qp(NQ, nitems), Up(NV, nitems);
  std::vector<StepReport> reports(static_cast<std::size_t>(nitems));

  // A perturbed state keeps the base state's free-flight history (SystemState::flight_dt,
  // flight_accel, flight_force): a hidden input of the step, held for every column like the
  // other inputs (the setters of q and u drop it, and the perturbed step would take Heun's update
  // instead of the two-step one). So a perturbed q or u is restored as a whole state, per thread a
  // copy of the base state with the perturbation in it.
  std::vector<WorldState> perturbed(worlds.size(), base);
  const auto restore_perturbed = [&](World& w, std::size_t t, Index s, const VecX& q, const VecX& u) {
    SystemState& x = perturbed[t].systems[static_cast<std::size_t>(s)];
    x.q = q;
    x.u = u;
    w.restore_state(perturbed[t]);
    x.q = base.systems[static_cast<std::size_t>(s)].q;
    x.u = base.systems[static_cast<std::size_t>(s)].u;
  };
  const auto run_item = [&](Index item) {
    const std::size_t t = pool ? static_cast<std::size_t>(ThreadPool::thread_index()) : 0;
    World& w = *worlds[t];
    const Index c = item / per_col;
    if (item >= ncols * per_col || c >= 2 * NV) w.restore_state(base);  // (the nominal step, a tau column)
    if (item < ncols * per_col) {
      const Scalar h = (item % per_col == 0) ? options.eps : -options.eps;
      const Index g = c % NV, s = system_of(g), j = g - v0[static_cast<std::size_t>(s)];
      const SystemState& st = base.systems[static_cast<std::size_t>(s)];
      if (c < NV) {
        VecX q(st.nq);
        w.system(s).model().integrate(st.q, VecX::Unit(st.nv, j), h, q);
        restore_perturbed(w, t, s, q, st.u);
      } else if (c < 2 * NV) {
        VecX u = st.u;
        u[j] += h;
        restore_perturbed(w, t, s, st.q, u);
      } else {
        VecX tau = st.tau;
        tau[j] += h;
        w.system(s).set_generalized_force(tau);
      }
    }
    reports[static_cast<std::size_t>(item)] = workspaces ? w.integrate(*(*workspaces)[t]) : w.integrate();
    for (Index s = 0; s < ns; ++s) {
      const ArticulatedSystem& sys = w.system(s);
      Qp.col(item).segment(q0[static_cast<std::size_t>(s)], sys.model().nq) = sys.q();
      Up.col(item).segment(v0[static_cast<std::size_t>(s)], sys.model().nv) = sys.u();
    }
  };
  if (pool) {
    pool->parallel_for(nitems, run_item);
  } else {
    for (Index item = 0; item < nitems; ++item) run_item(item);
  }
  for (Index item = 0; item < nitems; ++item) {
    const StepReport& r = reports[static_cast<std::size_t>(item)];
    if (!r.stepped) {
      throw Error("transition_derivatives: a perturbed step was rejected (" + world.describe(r) +
                  "): the state has no step Jacobian there");
    }
  }

  // columns: (x+(+eps) (-) x+(-eps)) / 2 eps, or (x+(+eps) (-) x+) / eps
  TransitionJacobians out;
  out.A.resize(2 * NV, 2 * NV);
  out.B.resize(2 * NV, NV);
  const Index ref_of = nitems - 1;  // the nominal step (forward differences)
  const Scalar scale = 1 / (options.centered ? 2 * options.eps : options.eps);
  VecX col(2 * NV);
  for (Index c = 0; c < ncols; ++c) {
    const Index plus = c * per_col, minus = options.centered ? plus + 1 : ref_of;
    for (Index s = 0; s < ns; ++s) {
      const Model& m = world.systems()[static_cast<std::size_t>(s)]->model();
      const Index qs = q0[static_cast<std::size_t>(s)], vs = v0[static_cast<std::size_t>(s)];
      m.difference(Qp.col(minus).segment(qs, m.nq), Qp.col(plus).segment(qs, m.nq), col.segment(vs, m.nv));
    }
    col.tail(NV) = Up.col(plus) - Up.col(minus);
    col *= scale;
    if (c < 2 * NV) {
      out.A.col(c) = col;
    } else {
      out.B.col(c - 2 * NV) = col;
    }
  }
  return out;
}

}  // namespace

TransitionDifferentiator::TransitionDifferentiator(const World& world, const TransitionOptions& options)
    : options_(options) {
  check_options(options);
  const int threads = thread_count(options);
  for (int t = 0; t < threads; ++t) worlds_.push_back(world.clone());
  if (threads > 1) pool_ = std::make_unique<ThreadPool>(threads);
}

TransitionDifferentiator::~TransitionDifferentiator() = default;

TransitionJacobians TransitionDifferentiator::compute(const World& world) {
  if (options_.method == TransitionMethod::Analytic) {
    World& w = *worlds_[0];
    w.restore_state(world.save_state());
    return w.analytic_transition_derivatives();
  }
  std::vector<World*> worlds;
  for (const auto& w : worlds_) worlds.push_back(w.get());
  return finite_differences(world, options_, worlds, pool_.get(), nullptr);
}

namespace {

// The scratch of the one-shot World::transition_derivatives, kept between calls by the calling
// thread. A differentiator kept for a World would have to follow every change of it (settings,
// objects, materials, filters, solver settings: all that clone() copies), so each call makes its
// clones anew, the cheap part; what costs is a clone's first step (its stepper and Data sized and
// allocated) and starting the threads, and those are kept: the clones step with these workspaces
// (integrate(ws), the same bits; a workspace keys its stepper and Data by the Models and the
// layout it steps, so any World's clones may use it) on this pool. Made anew when the thread count
// or the layout changes (not to hold the steppers and Models of every layout seen); freed when
// the thread ends.
struct OneShotScratch {
  int threads = 0;
  std::unique_ptr<ThreadPool> pool;  // null for one thread
  std::vector<std::unique_ptr<StepWorkspace>> workspaces;
  std::vector<std::shared_ptr<const Model>> layout;  // the layout they were made for
  std::vector<Index> object_system;
};

}  // namespace

TransitionJacobians World::transition_derivatives(const TransitionOptions& options) const {
  const auto in_use = use("transition_derivatives");
  check_options(options);
  if (options.method == TransitionMethod::Analytic) {
    TransitionDifferentiator d(*this, options);
    return d.compute(*this);
  }
  const int threads = thread_count(options);
  std::vector<std::unique_ptr<World>> clones;
  for (int t = 0; t < threads; ++t) clones.push_back(clone());
  thread_local OneShotScratch s;
  if (s.threads != threads || s.layout != model_->layout || s.object_system != model_->object_system) {
    s = OneShotScratch();  // (first: the old pool's threads end before new ones start)
    if (threads > 1) s.pool = std::make_unique<ThreadPool>(threads);
    for (int t = 0; t < threads; ++t) s.workspaces.push_back(std::make_unique<StepWorkspace>());
    s.threads = threads;
    s.layout = model_->layout;
    s.object_system = model_->object_system;
  }
  std::vector<World*> worlds;
  std::vector<StepWorkspace*> workspaces;
  for (int t = 0; t < threads; ++t) {
    worlds.push_back(clones[static_cast<std::size_t>(t)].get());
    workspaces.push_back(s.workspaces[static_cast<std::size_t>(t)].get());
  }
  return finite_differences(*this, options, worlds, s.pool.get(), &workspaces);
}

}  // namespace impulse
