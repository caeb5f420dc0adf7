// `impulse bench dynamics`: median time per call of each dynamics algorithm on random states.
//
// Method: S random states (q uniform in the joint limits, u and tau standard normal) are made
// up front; each algorithm is called in batches of B calls cycling through them, each batch is
// timed with steady_clock, and the median over batches of (batch time / B) is reported. With
// the default 100000 calls that is 1000 batches of 100, so clock overhead (~20 ns) is amortised.
// Then the finite-difference step Jacobian of ANYmal standing, in ns and in step times (below).
#include <algorithm>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/core/version.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/lanes.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/transition_differentiator.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::cli {

namespace {

constexpr int kDynamicsBatch = 100;
constexpr int kStates = 256;

// Keeps the optimiser from discarding a result.
template <typename T>
void dynamics_keep(const T& x) {
  asm volatile("" : : "g"(&x) : "memory");
}

// fn(s) cycles through the states: once over all of them to warm caches and branch predictors,
// then on from state 0 in the timed batches.
double median_ns(long calls, const std::function<void(int)>& fn) {
  int s = 0;
  return 1e3 * bench::median_us_per_call(calls, kDynamicsBatch, kStates, [&] {
    fn(s);
    s = (s + 1) % kStates;
  });
}

// The contact points of a legged robot: bodies whose name ends in FOOT, or else the leaf bodies.
std::vector<std::pair<Index, Vec3>> foot_points(const Model& m) {
  std::vector<std::pair<Index, Vec3>> feet;
  for (const Frame& f : m.frames) {
    const auto n = f.name.size();
    if (f.body >= 0 && n >= 4 && f.name.compare(n - 4, 4, "FOOT") == 0 && f.type != FrameType::FixedJoint) {
      feet.emplace_back(f.body, f.X_BF.p);
    }
  }
  if (feet.empty()) {
    for (Index i = 0; i < m.nb; ++i) {
      if (m.children[i].empty()) feet.emplace_back(i, Vec3::Zero());
    }
  }
  return feet;
}

// The centred finite-difference step Jacobian of ANYmal standing (models/worlds/anymal_stand.xml,
// settled for 0.2 s) on 1 and 2 threads by a TransitionDifferentiator kept between calls (as a
// controller would), forward differences and the analytic Jacobian on 1 thread, the one-shot World::transition_derivatives (which clones the World) on 2
// threads, and that World's step, each from the same saved state.
struct StepJacobianTimes {
  double step_ns = 0, fd1_ns = 0, fd2_ns = 0, once2_ns = 0, forward1_ns = 0, analytic_ns = 0;
};
StepJacobianTimes time_step_jacobian() {
  StepJacobianTimes t;
  const std::unique_ptr<World> world = load_world(find_model("worlds/anymal_stand.xml"));
  for (int k = 0; k < 200; ++k) world->integrate();
  const WorldState s = world->save_state();
  const std::unique_ptr<World> stepped = world->clone();
  t.step_ns = 1e3 * bench::median_us_per_call(4000, 20, 100, [&] {
    stepped->restore_state(s);
    stepped->integrate();
  });
  TransitionOptions o;
  const auto median_ns = [](const auto& f) {
    std::vector<double> ns;
    for (int r = 0; r < 9; ++r) {
      const bench::Stopwatch<> watch;
      f();
      ns.push_back(1e3 * watch.us());
    }
    return bench::median(ns);
  };
  const auto kept = [&](int threads) {
    o.num_threads = threads;
    TransitionDifferentiator d(*world, o);
    dynamics_keep(d.compute(*world));  // the clones' first step (their scratch) out of the timing
    return median_ns([&] { dynamics_keep(d.compute(*world)); });
  };
  t.fd1_ns = kept(1);
  t.fd2_ns = kept(2);
  o.centered = false;
  t.forward1_ns = kept(1);
  o.centered = true;
  o.method = TransitionMethod::Analytic;
  t.analytic_ns = kept(1);
  o.method = TransitionMethod::FiniteDifference;
  o.num_threads = 2;
  t.once2_ns = median_ns([&] { dynamics_keep(world->transition_derivatives(o)); });
  return t;
}

}  // namespace

int run_bench_dynamics(const BenchOptions& o) {
  const Model m = load_urdf(o.model);
  Data d(m);
  std::mt19937 rng(o.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<VecX> qs, us, taus;
  for (int s = 0; s < kStates; ++s) {
    qs.push_back(m.random_configuration(rng));
    us.push_back(VecX::NullaryExpr(m.nv, [&]() { return normal(rng); }));
    taus.push_back(VecX::NullaryExpr(m.nv, [&]() { return normal(rng); }));
  }
  const auto feet = foot_points(m);
  MatX Jfoot = MatX::Zero(3, m.nv);

  struct Row {
    const char* key;
    const char* label;
    double ns;
  };
  std::vector<Row> rows;
  const long n = o.calls;
  rows.push_back({"fk_ns", "forward kinematics (q, u)", median_ns(n, [&](int s) {
                    dynamics_keep(forward_kinematics(m, d, qs[s], us[s]));
                  })});
  rows.push_back({"rnea_ns", "RNEA (inverse dynamics)", median_ns(n, [&](int s) {
                    dynamics_keep(rnea(m, d, qs[s], us[s], taus[s]));
                  })});
  rows.push_back({"nle_ns", "nonlinear effects h(q, u)", median_ns(n, [&](int s) {
                    dynamics_keep(nonlinear_effects(m, d, qs[s], us[s]));
                  })});
  rows.push_back({"crba_ns", "CRBA (M)", median_ns(n, [&](int s) { dynamics_keep(crba(m, d, qs[s])); })});
  rows.push_back({"crba_ltdl_ns", "CRBA + sparse LTDL factor", median_ns(n, [&](int s) {
                    crba(m, d, qs[s]);
                    ltdl_factor(m, d);
                    dynamics_keep(d.D);
                  })});
  crba(m, d, qs[0]);
  ltdl_factor(m, d);
  VecX x = taus[0];
  rows.push_back({"ltdl_solve_ns", "LTDL solve M^-1 x", median_ns(n, [&](int s) {
                    x = taus[s];
                    ltdl_solve(m, d, VecXref(x));
                    dynamics_keep(x);
                  })});
  rows.push_back({"aba_ns", "ABA (forward dynamics)", median_ns(n, [&](int s) {
                    dynamics_keep(aba(m, d, qs[s], us[s], taus[s]));
                  })});
  MatX dq(m.nv, m.nv), du(m.nv, m.nv), dtau(m.nv, m.nv);
  rows.push_back({"rnea_derivatives_ns", "RNEA derivatives (d tau / dq, du)", median_ns(n, [&](int s) {
                    rnea_derivatives(m, d, qs[s], us[s], taus[s], dq, du);
                    dynamics_keep(dq);
                  })});
  rows.push_back({"aba_derivatives_ns", "ABA derivatives (d udot / dq, du, dtau)", median_ns(n, [&](int s) {
                    aba_derivatives(m, d, qs[s], us[s], taus[s], dq, du, dtau);
                    dynamics_keep(dq);
                  })});
  rows.push_back({"jacobians_ns", "joint Jacobians + foot point Jacobians", median_ns(n, [&](int s) {
                    compute_joint_jacobians(m, d, qs[s]);
                    for (const auto& f : feet) point_jacobian(m, d, f.first, f.second, Jfoot);
                    dynamics_keep(Jfoot);
                  })});

  // The fused step dynamics + LTDL factor of one world, scalar, against W worlds in SIMD lanes
  // (dynamics/lanes.hpp), both per world (the lanes' factor() includes laying the results out
  // world by world); the lanes' gather (q, u of W worlds into the block), scatter (every result
  // into W Datas, StepLanes::get), solve of a right-hand side and the stepper's copy (what its
  // later stages read, StepLanes::get_step) separately, also per world.
  rows.push_back({"step_factor_scalar_ns", "step dynamics + factor, scalar per world", median_ns(n, [&](int s) {
                    compute_step_dynamics(m, d, qs[s], us[s]);
                    ltdl_factor(m, d);
                    dynamics_keep(d.D);
                  })});
  static const char* const kLaneKeys[] = {"", "", "step_factor_lanes2_ns", "", "step_factor_lanes4_ns", "", "", "",
                                          "step_factor_lanes8_ns"};
  static const char* const kLaneLabels[] = {"", "", "lanes W=2 (SSE2) per world", "", "lanes W=4 (AVX2) per world",
                                            "", "", "", "lanes W=8 (AVX-512) per world"};
  std::vector<Data> scattered(8, Data(m));
  const int max_width = lanes_default_width();  // (IMPULSE_LANES caps the widths shown)
  for (int width = 2; width <= max_width && lanes_supported(m); width *= 2) {
    StepLanes lanes(m, width);
    for (int w = 0; w < width; ++w) lanes.set_state(w, qs[w], us[w]);
    const long calls = std::max(1L, n / width);
    rows.push_back({kLaneKeys[width], kLaneLabels[width],
                    median_ns(calls, [&](int) { dynamics_keep(lanes.run()); }) / width});
    if (width != max_width) continue;
    rows.push_back({"lanes_gather_ns", "  lanes gather q, u, per world", median_ns(calls, [&](int s) {
                      for (int w = 0; w < width; ++w) lanes.set_state(w, qs[(s + w) % kStates], us[(s + w) % kStates]);
                    }) / width});
    lanes.run();
    rows.push_back({"lanes_scatter_ns", "  lanes scatter to Data, per world", median_ns(calls, [&](int) {
                      for (int w = 0; w < width; ++w) lanes.get(w, scattered[w]);
                      dynamics_keep(scattered[0].M);
                    }) / width});
    rows.push_back({"lanes_solve_ns", "  lanes ltdl_solve, per world", median_ns(calls, [&](int) {
                      lanes.solve();
                      dynamics_keep(lanes.solution(0)[0]);
                    }) / width});
    rows.push_back({"lanes_step_copy_ns", "  lanes copy to the step's Data, per world", median_ns(calls, [&](int) {
                      for (int w = 0; w < width; ++w) lanes.get_step(w, scattered[w]);
                      dynamics_keep(scattered[0].L_anc);
                    }) / width});
  }

  const StepJacobianTimes sj = time_step_jacobian();

  if (o.json) {
    json j;
    j["model"] = o.model;
    j["nq"] = m.nq;
    j["nu"] = m.nv;
    j["calls"] = n;
    j["foot_jacobians"] = feet.size();
    for (const Row& r : rows) j[r.key] = r.ns;
    j["anymal_stand_step_ns"] = sj.step_ns;
    j["anymal_stand_fd_step_jacobian_1_thread_ns"] = sj.fd1_ns;
    j["anymal_stand_fd_step_jacobian_2_threads_ns"] = sj.fd2_ns;
    j["anymal_stand_fd_step_jacobian_one_shot_2_threads_ns"] = sj.once2_ns;
    j["anymal_stand_forward_fd_step_jacobian_1_thread_ns"] = sj.forward1_ns;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "dynamics benchmark: " << m.name << " (nq " << m.nq << ", nu " << m.nv << "), median over "
              << n << " calls on " << kStates << " random states\n";
    for (const Row& r : rows) {
      std::cout << "  " << std::left << std::setw(42) << r.label << std::right << std::setw(9) << std::fixed
                << std::setprecision(1) << r.ns << " ns\n";
    }
    std::cout << "  (" << feet.size() << " foot Jacobians)\n";
    std::cout << "step Jacobian by finite differences, centred unless noted (A 36 x 36, B 36 x 18), ANYmal standing "
                 "(models/worlds/anymal_stand.xml), one step "
              << std::setprecision(0) << sj.step_ns << " ns:\n";
    const auto line = [&](const char* label, double ns) {
      std::cout << "  " << std::left << std::setw(42) << label << std::right << std::setw(9) << std::setprecision(0)
                << ns << " ns = " << std::setprecision(1) << ns / sj.step_ns << " steps\n";
    };
    line("kept TransitionDifferentiator, 1 thread", sj.fd1_ns);
    line("kept TransitionDifferentiator, 2 threads", sj.fd2_ns);
    line("World::transition_derivatives, 2 threads", sj.once2_ns);
    line("kept, forward differences, 1 thread", sj.forward1_ns);
    line("kept, analytic (TransitionMethod::Analytic)", sj.analytic_ns);
  }
  return 0;
}

}  // namespace impulse::cli
