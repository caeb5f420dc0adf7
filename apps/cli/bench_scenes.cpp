// `impulse bench scenes [--scene NAME] [--steps N] [--json]`: whole-World scenes at scale
// (docs/benchmarks.md): a 216-sphere pile in a box (frictionless, and elastic e = 1), a 102-block
// Kapla-style tower at a 10 ms step (6 floors of 8 blocks on edge carrying 9 flat blocks, after
// SimBenchmark's Kapla scene), 100 ANYmals standing 2 m apart (and the single-robot world it is
// compared with), 1000 boxes dropped onto the ground, Solo12 standing (mesh collision as convex
// hulls; example-robot-data through the package path, skipped by `--scene all` when absent), and
// resting contact: SimBenchmark's own Kapla layout, a 10-box stack, a 15-box pyramid, a brick wall,
// a Jenga tower, a stack of growing masses (1 to 1000 kg) and 50 boxes dropped into a bin. Each prints the mean and median us per step by stage, contacts (also per
// touching pair of bodies, e.g. a foot and the ground), islands, largest island, sweeps, islands
// not converged (and in how many steps), penetration, energy drift and whether anything fell (the
// resting scenes also the drift of their top body); the 100-robot scene also its per-robot time
// over the one-robot World's, measured interleaved in one process. Registered in bench.cpp
// (declared in commands.hpp).
#include <algorithm>
#include <functional>
#include <iomanip>
#include <array>
#include <iostream>
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/world.hpp"
#include "scenarios/bins.hpp"
#include "scenarios/solo12_stand.hpp"

namespace impulse::cli {

namespace {

using scenarios::build_clutter;

struct Scene {
  std::string name, description;
  Scalar dt = 1e-3;
  long default_steps = 1000;
  std::function<void(World&)> build;
  // true when something "fell" (left where it should stay), read at the end
  std::function<bool(World&)> fell;
  Index robots = 0;  // robots in the scene (per-robot time), 0: not a robot scene
  // a scene of several robots: the one-robot scene its per-robot time is compared with, in the
  // same process (per_robot_ratio)
  std::string reference;
  bool resting = false;  // built at rest: report the drift of the bodies (rest_drift)
  // the scene needs files from outside the repository (found through the package path): when
  // they are missing, `--scene all` skips it with the reason instead of failing
  bool external = false;
};

void place(ArticulatedSystem& s, const Vec3& p, Scalar yaw = 0) {
  scenarios::place_free_body(s, p, Quat(std::cos(yaw / 2), 0, 0, std::sin(yaw / 2)));
}

// 6 x 6 x 6 spheres (r = 0.1 m, 1 kg) in a lattice 1 cm apart above a 1.3 m square box.
void build_pile(World& w, Scalar restitution) {
  w.set_default_material(0.0, restitution);
  scenarios::add_square_box(w, 0.65);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 6; ++j)
      for (int k = 0; k < 6; ++k) {
        ArticulatedSystem& s = w.add_sphere("ball", 0.1, 1.0);
        place(s, Vec3(-0.525 + 0.21 * i + 0.002 * k, -0.525 + 0.21 * j, 0.3 + 0.21 * k));
      }
}

bool pile_escaped(World& w) {
  for (Index i = 0; i < w.num_systems(); ++i) {
    const VecX& q = w.system(i).q();
    if (q[2] < 0.05 || std::abs(q[0]) > 0.7 || std::abs(q[1]) > 0.7) return true;
  }
  return false;
}

// Kapla-style tower: blocks 0.6 x 0.12 x 0.03 m (density 500). Each floor: 8 blocks on edge along
// x (4 rows, 2 per row) carrying 9 flat blocks along y, 102 blocks in 6 floors.
std::vector<Vec3> g_kapla_start;
void build_kapla(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  const Scalar L = 0.6, W = 0.12, T = 0.03, mass = L * W * T * 500;
  Scalar z0 = 0;
  g_kapla_start.clear();
  for (int f = 0; f < 6; ++f) {
    for (int row = 0; row < 4; ++row)
      for (int side = 0; side < 2; ++side) {
        ArticulatedSystem& b = w.add_box("kapla", Vec3(L, T, W), mass);
        place(b, Vec3(side == 0 ? -0.31 : 0.31, -0.27 + 0.18 * row, z0 + W / 2 - 1e-4));
        g_kapla_start.push_back(b.q().head<3>());
      }
    z0 += W;
    for (int k = 0; k < 9; ++k) {
      ArticulatedSystem& b = w.add_box("kapla", Vec3(W, L, T), mass);
      place(b, Vec3(-0.54 + 0.135 * k, 0, z0 + T / 2 - 1e-4));
      g_kapla_start.push_back(b.q().head<3>());
    }
    z0 += T;
  }
}

bool kapla_fell(World& w) {
  for (Index i = 0; i < w.num_systems(); ++i) {
    if ((w.system(i).q().head<3>() - g_kapla_start[static_cast<std::size_t>(i)]).norm() > 0.05) return true;
  }
  return false;
}

// ANYmals standing (models/worlds/anymal_stand.xml: kp 300, kd 8, base at 0.549 m), n x n grid 2 m apart.
void build_anymals(World& w, int n) {
  w.set_default_material(0.8, 0.0);
  DelassusSettings cs = w.settings().contact;
  cs.erp = 0;
  w.set_contact_settings(cs);
  w.add_ground();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      ArticulatedSystem& r = w.add_articulated_system(default_model_path());
      VecX q = r.model().neutral_configuration();
      q[0] = 2.0 * i;
      q[1] = 2.0 * j;
      q[2] = 0.549;
      const Scalar hfe[4] = {0.4, 0.4, -0.4, -0.4}, kfe[4] = {-0.8, -0.8, 0.8, 0.8};
      for (int leg = 0; leg < 4; ++leg) {
        q[7 + 3 * leg + 1] = hfe[leg];
        q[7 + 3 * leg + 2] = kfe[leg];
      }
      r.set_q(q);
      VecX kp = VecX::Zero(r.nv()), kd = VecX::Zero(r.nv());
      kp.tail(12).setConstant(300);
      kd.tail(12).setConstant(8);
      r.set_pd_gains(kp, kd);
      r.set_pd_targets(q, VecX::Zero(r.nv()));
    }
}

bool anymal_fell(World& w) {
  for (Index i = 0; i < w.num_systems(); ++i) {
    if (w.system(i).q()[2] < 0.4) return true;
  }
  return false;
}

// 1000 boxes (0.1 m, 1 kg) in a 10 x 10 x 10 lattice, dropped from 0.2 m onto the ground.
void build_boxes(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 10; ++j)
      for (int k = 0; k < 10; ++k) {
        ArticulatedSystem& b = w.add_box("box", Vec3(0.1, 0.1, 0.1), 1.0);
        place(b, Vec3(0.15 * i, 0.15 * j, 0.2 + 0.15 * k), 0.1 * (i + j + k));
      }
}

bool boxes_fell(World& w) {
  for (Index i = 0; i < w.num_systems(); ++i) {
    if (w.system(i).q()[2] < 0.0) return true;  // through the ground
  }
  return false;
}

// Resting-contact scenes: boxes on boxes, faces exactly touching (no overlap, no gap), whose
// contacts are redundant (four coplanar corners per face: G is singular). The start of each body
// is kept to measure drift; the top body is the one highest at the start.
std::vector<Vec3> g_rest_start;
ArticulatedSystem& add_resting_box(World& w, const Vec3& size, Scalar mass, const Vec3& p) {
  ArticulatedSystem& b = w.add_box("box", size, mass);
  place(b, p);
  g_rest_start.push_back(p);
  return b;
}

// Round bodies resting on faces: 8 cans (cylinders r = 0.05 m, 0.1 m tall, 0.4 kg) stacked face
// on face, each 5 mm off the one below, and a plank (0.6 x 0.15 x 0.02 m, 1 kg) on three cans
// (r = 0.04 m, 0.3 kg) 0.2 m apart: each disc on a disc or a face touches on 4 points.
void build_cans(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const auto resting = [&](ArticulatedSystem& b, const Vec3& p) {
    place(b, p);
    g_rest_start.push_back(p);
  };
  for (int k = 0; k < 8; ++k) resting(w.add_cylinder("can", 0.05, 0.1, 0.4), Vec3(0.005 * k, 0, 0.05 + 0.1 * k));
  for (int k = 0; k < 3; ++k) resting(w.add_cylinder("post", 0.04, 0.1, 0.3), Vec3(1 + 0.2 * k, 0, 0.05));
  resting(w.add_box("plank", Vec3(0.6, 0.15, 0.02), 1.0), Vec3(1.2, 0, 0.11));
}

// SimBenchmark's KaplaBenchmark layout (6 floors, 8 base blocks, 10 kg each): base blocks
// 0.05 x 0.25 x 0.1 m at x = 0.2 j, z = 0.2 i + 0.05; wall blocks 0.2 x 0.05 x 0.1 m at
// x = 0.4 j + 0.1, y = -0.1 (4 per floor) and x = 0.4 j + 0.3, y = 0.1 (3 per floor) plus two at
// x = 0.1 and x = 1.3, y = 0.1, all at z = 0.2 i + 0.15. 102 blocks.
void build_kapla_simbench(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const Scalar mass = 10;
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 8; ++j) add_resting_box(w, Vec3(0.05, 0.25, 0.1), mass, Vec3(0.2 * j, 0, 0.2 * i + 0.05));
    const Scalar z = 0.2 * i + 0.15;
    for (int j = 0; j < 4; ++j) add_resting_box(w, Vec3(0.2, 0.05, 0.1), mass, Vec3(0.4 * j + 0.1, -0.1, z));
    for (int j = 0; j < 3; ++j) add_resting_box(w, Vec3(0.2, 0.05, 0.1), mass, Vec3(0.4 * j + 0.3, 0.1, z));
    add_resting_box(w, Vec3(0.2, 0.05, 0.1), mass, Vec3(0.1, 0.1, z));
    add_resting_box(w, Vec3(0.2, 0.05, 0.1), mass, Vec3(1.3, 0.1, z));
  }
}

// 10 boxes (0.1 m, 1 kg) in a vertical stack on the ground.
void build_stack(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  for (int k = 0; k < 10; ++k) add_resting_box(w, Vec3(0.1, 0.1, 0.1), 1.0, Vec3(0, 0, 0.05 + 0.1 * k));
}

// A 15-box pyramid (rows of 5, 4, 3, 2, 1 boxes of 0.1 m, 1 kg, 1 cm apart in a row; each box
// rests on two of the row below, half on each).
void build_pyramid(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const Scalar pitch = 0.11;
  for (int row = 0; row < 5; ++row)
    for (int i = 0; i < 5 - row; ++i)
      add_resting_box(w, Vec3(0.1, 0.1, 0.1), 1.0, Vec3((i - 0.5 * (4 - row)) * pitch, 0, 0.05 + 0.1 * row));
}

// Box2D v3's large pyramid (shared/benchmarks.c, CreateLargePyramid) at its debug size, base 20,
// in 3D: cubes of 1 m (1 kg), row i (from 0) of 20 - i cubes at height (2 i + 1) a, a = 0.5 m,
// each row shifted by a; neighbours in a row and rows on rows exactly touching: 210 cubes in one
// island, each cube on two below, mu = 0.6 (Box2D's default).
void build_large_pyramid(World& w) {
  w.set_default_material(0.6, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const int base = 20;
  const Scalar a = 0.5;
  for (int i = 0; i < base; ++i)
    for (int j = i; j < base; ++j)
      add_resting_box(w, Vec3(2 * a, 2 * a, 2 * a), 1.0,
                      Vec3((i + 1) * a + 2 * (j - i) * a - a * base, 0, (2 * i + 1) * a));
}

// A brick wall in running bond: 10 courses of bricks (0.2 x 0.1 x 0.05 m, 1 kg) laid along x, 6
// bricks in the even courses and 5 in the odd ones, shifted by half a brick, so that each brick of
// an odd course rests on two below: 55 bricks in one island, every face pair four coplanar corners.
void build_wall(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const Scalar L = 0.2, T = 0.1, H = 0.05;
  for (int row = 0; row < 10; ++row) {
    const bool odd = row % 2 == 1;
    for (int j = 0; j < (odd ? 5 : 6); ++j)
      add_resting_box(w, Vec3(L, T, H), 1.0, Vec3((j + (odd ? 0.5 : 0.0)) * L, 0, H * (row + 0.5)));
  }
}

// A Jenga tower: 18 layers of 3 blocks (7.5 x 2.5 x 1.5 cm, 20 g) side by side, faces touching,
// each layer turned by 90 degrees: 54 blocks in one island, each block on three below.
void build_jenga(World& w) {
  w.set_default_material(0.6, 0.0);
  w.add_ground();
  g_rest_start.clear();
  const Scalar L = 0.075, W = 0.025, H = 0.015;
  for (int layer = 0; layer < 18; ++layer)
    for (int j = 0; j < 3; ++j) {
      const Scalar off = (j - 1) * W, z = H * (layer + 0.5);
      const bool along_x = layer % 2 == 0;
      ArticulatedSystem& b = w.add_box("block", Vec3(L, W, H), 0.02);
      const Vec3 p = along_x ? Vec3(0, off, z) : Vec3(off, 0, z);
      place(b, p, along_x ? 0.0 : M_PI / 2);
      g_rest_start.push_back(p);
    }
}

// Four boxes (0.2 x 0.2 x 0.1 m) in a vertical stack whose masses grow upwards 1, 10, 100 and
// 1000 kg: the heavy-on-light stack, a mass ratio of 1000 across one contact.
void build_mass_ratio_stack(World& w) {
  w.set_default_material(0.8, 0.0);
  w.add_ground();
  g_rest_start.clear();
  Scalar mass = 1;
  for (int k = 0; k < 4; ++k, mass *= 10) add_resting_box(w, Vec3(0.2, 0.2, 0.1), mass, Vec3(0, 0, 0.05 + 0.1 * k));
}

// Largest distance of any body, and of the top body, from where it started.
Scalar rest_drift(World& w, bool top_only) {
  Scalar d = 0;
  std::size_t top = 0;
  for (std::size_t i = 0; i < g_rest_start.size(); ++i)
    if (g_rest_start[i].z() > g_rest_start[top].z()) top = i;
  for (std::size_t i = 0; i < g_rest_start.size(); ++i) {
    if (top_only && i != top) continue;
    d = std::max(d, (w.system(static_cast<Index>(i)).q().head<3>() - g_rest_start[i]).norm());
  }
  return d;
}
bool rest_fell(World& w) { return rest_drift(w, false) > 0.05; }

// 50 boxes (0.08 m, 0.5 kg) dropped into the bin from a 5 x 5 x 2 lattice with yaws of 0.3 rad
// steps.
bool bin_escaped(World& w) {
  for (Index i = 0; i < w.num_systems(); ++i) {
    const VecX& q = w.system(i).q();
    if (q[2] < 0.0 || std::abs(q[0]) > 0.3 || std::abs(q[1]) > 0.3) return true;
  }
  return false;
}

// Solo12 (example-robot-data, meshes as convex hulls) standing under joint PD: the mesh robot.
bool solo12_fell(World& w) { return w.system(0).q()[2] < 0.1; }

const std::vector<Scene>& scenes() {
  static const std::vector<Scene> list = {
      {"pile216", "216 frictionless spheres dropped into a box (6x6x6 lattice), 1 ms", 1e-3, 2000,
       [](World& w) { build_pile(w, 0.0); }, pile_escaped, 0, ""},
      {"pile216_elastic", "the same pile with restitution e = 1", 1e-3, 2000, [](World& w) { build_pile(w, 1.0); },
       pile_escaped, 0, ""},
      {"kapla102", "102-block Kapla-style tower (6 floors: 8 on edge + 9 flat), 10 ms", 1e-2, 600, build_kapla,
       kapla_fell, 0, ""},
      {"anymal1", "one ANYmal standing (reference for anymal100)", 1e-3, 2000, [](World& w) { build_anymals(w, 1); },
       anymal_fell, 1, ""},
      {"anymal100", "100 ANYmals standing 2 m apart (10 x 10)", 1e-3, 500, [](World& w) { build_anymals(w, 10); },
       anymal_fell, 100, "anymal1"},
      {"boxes1000", "1000 boxes (10x10x10 lattice) dropped onto the ground, 1 ms", 1e-3, 500, build_boxes,
       boxes_fell, 0, ""},
      {"kapla_simbench", "SimBenchmark's Kapla layout: 102 blocks of 10 kg, faces touching, 10 ms", 1e-2, 60000,
       build_kapla_simbench, rest_fell, 0, "", true},
      {"stack10", "10 boxes (0.1 m, 1 kg) in a vertical stack, 1 ms", 1e-3, 60000, build_stack, rest_fell, 0, "",
       true},
      {"pyramid15", "15-box pyramid (rows of 5 to 1), 1 ms", 1e-3, 60000, build_pyramid, rest_fell, 0, "", true},
      {"pyramid210", "Box2D's large pyramid at base 20: 210 cubes of 1 m, faces touching, 1 ms", 1e-3, 2000,
       build_large_pyramid, rest_fell, 0, "", true},
      {"wall55", "55-brick wall in running bond (10 courses), 1 ms", 1e-3, 10000, build_wall, rest_fell, 0, "", true},
      {"jenga54", "Jenga tower: 18 layers of 3 blocks, 1 ms", 1e-3, 10000, build_jenga, rest_fell, 0, "", true},
      {"ratio4", "4-box stack with masses 1, 10, 100, 1000 kg upwards, 1 ms", 1e-3, 10000, build_mass_ratio_stack,
       rest_fell, 0, "", true},
      {"cans", "8 cans stacked face on face and a plank on three cans, 1 ms", 1e-3, 10000, build_cans, rest_fell, 0,
       "", true},
      {"bin50", "50 boxes (0.08 m) dropped into a 0.5 m bin, 1 ms", 1e-3, 3000, scenarios::build_box_bin, bin_escaped, 0, ""},
      {"clutter48", "48 boxes, cylinders, capsules and spheres dropped into a 0.5 m bin, 1 ms", 1e-3, 3000,
       [](World& w) { build_clutter(w); }, bin_escaped, 0, ""},
      {"cyl_bin", "48 cylinders dropped into a 0.5 m bin (clutter48's layout), 1 ms", 1e-3, 3000,
       [](World& w) { build_clutter(w, 1); }, bin_escaped, 0, ""},
      {"capsule_bin", "48 capsules dropped into a 0.5 m bin (clutter48's layout), 1 ms", 1e-3, 3000,
       [](World& w) { build_clutter(w, 2); }, bin_escaped, 0, ""},
      {"solo12", "Solo12 (example-robot-data, mesh collision as convex hulls) standing under joint PD, 1 ms", 1e-3,
       2000, [](World& w) { scenarios::add_solo12_standing(w); }, solo12_fell, 1, "", false, true},
  };
  return list;
}

Scalar energy(World& w) {
  Scalar e = 0;
  for (Index i = 0; i < w.num_systems(); ++i) e += w.system(i).kinetic_energy() + w.system(i).potential_energy();
  return e;
}

using bench::median;
double scenes_mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// The scene's World with the solver settings the options override (the defaults otherwise).
void set_up(World& w, const Scene& sc, const BenchOptions& o) {
  w.set_time_step(sc.dt);
  // the solver's settings with the options given (each -1 or empty when not given); the World's
  // own solver when none is
  SolverSettings s;
  s.name = o.solver.empty() ? "bisection" : o.solver;
  bool given = !o.solver.empty();
  const auto take = [&given](bool option_given, auto& field, auto value) {
    if (!option_given) return;
    field = static_cast<std::decay_t<decltype(field)>>(value);
    given = true;
  };
  BisectionSettings& b = s.bisection;
  take(o.anderson >= 0, b.anderson_memory, o.anderson);
  take(o.anderson >= 0, s.pgs.anderson_memory, o.anderson);
  take(o.active_set_start >= 0, b.active_set_start, o.active_set_start);
  take(o.active_set_early >= 0, b.active_set_early, o.active_set_early);
  take(o.active_set_early_rows >= 0, b.active_set_early_rows, o.active_set_early_rows);
  take(o.active_set_rows >= 0, b.active_set.max_rows, o.active_set_rows);
  take(o.active_set_retry_rows >= 0, b.active_set.retry_rows, o.active_set_retry_rows);
  take(o.active_set_give_up >= 0, b.active_set.give_up_factorizations, o.active_set_give_up);
  take(o.active_set_ls >= 0, b.active_set.least_squares, o.active_set_ls != 0);
  take(o.stall_window >= 0, b.stall_window, o.stall_window);
  take(o.plain_after_plateau >= 0, b.plain_after_plateau, o.plain_after_plateau);
  take(o.range_projections >= 0, b.range_projections, o.range_projections);
  take(o.newton_start >= 0, b.newton_start, o.newton_start);
  take(o.newton_rows >= 0, b.newton.max_rows, o.newton_rows);
  take(o.alpha_min > 0, b.alpha_min, o.alpha_min);
  take(o.range_projection_rows >= 0, b.range_projection_rows, o.range_projection_rows);
  if (given) w.set_contact_solver(make_contact_solver(s));
  if (o.gap_slop >= 0) {
    DelassusSettings cs = w.settings().contact;
    cs.gap_slop = o.gap_slop;
    w.set_contact_settings(cs);
  }
  sc.build(w);
}

double seconds_per_step(World& w, int steps) {
  const bench::Stopwatch<> watch;
  for (int k = 0; k < steps; ++k) w.integrate();
  return watch.seconds() / steps;
}

// Per-robot time of the multi-robot World `w` over the step time of a one-robot World (scene
// `ref`, the same solver), measured in the same process: 200 rounds of 100 steps of the one-robot
// World, then 5 steps of `w`, one ratio per round. On a shared machine whose speed drifts by up
// to 2x within minutes, only such interleaved ratios compare the two (docs/benchmarks.md).
json per_robot_ratio(World& w, const Scene& sc, const Scene& ref, const BenchOptions& o) {
  World one;
  set_up(one, ref, o);
  one.set_stage_timing(w.settings().stage_timing);  // the same clock reads per step as `w`
  for (int k = 0; k < 300; ++k) one.integrate();
  constexpr int kRounds = 200;
  std::vector<double> r;
  for (int a = 0; a < kRounds; ++a) {
    const double t1 = seconds_per_step(one, 100);
    const double tn = seconds_per_step(w, 5) / static_cast<double>(sc.robots);
    r.push_back(tn / t1);
  }
  std::sort(r.begin(), r.end());
  return {{"reference", ref.name}, {"rounds", kRounds}, {"median", r[kRounds / 2]}, {"q1", r[kRounds / 4]},
          {"q3", r[3 * kRounds / 4]}};
}

json run_scene(const Scene& sc, long steps, const BenchOptions& o) {
  World w;
  set_up(w, sc, o);
  w.set_stage_timing(true);  // the per-stage times of the report
  // the Anderson memory the scene ran with (the solvers' defaults unless --anderson)
  const SolverSettings used = solver_settings_of(w.contact_solver());
  const Index anderson_memory = used.name == "bisection" ? used.bisection.anderson_memory
                                : used.name == "pgs"     ? used.pgs.anderson_memory
                                                         : 0;
  const Scalar E0 = energy(w);
  std::vector<double> total, dyn, col, del, sol, integ, sweeps, contacts, islands, pen;
  double max_sweeps = 0, max_contacts = 0, largest = 0, largest_rows = 0, max_pen = 0;
  long not_ok = 0, dropped = 0, not_converged = 0, active_set = 0, newton = 0, not_converged_late = 0, steps_at_cap = 0;
  // contacts per touching pair of a body and a body or static object (e.g. a foot and the ground)
  double pair_max = 0, pair_sum = 0, pair_count = 0;
  std::map<std::array<Index, 4>, int> pairs;
  // over the island solves (StepStats::island_results): at the iteration cap, stopped on a
  // plateau, converged by each method (SolverMethod), the most iterations of a converged one and
  // the largest residual of an unconverged one
  long islands_at_cap = 0, islands_stalled = 0, finished_by[4] = {0, 0, 0, 0};
  // the split position correction: its sweeps (most of an island's, per step), the islands whose
  // push-out ended at its budget, and the islands the exact QP finished
  std::vector<double> position_sweeps;
  long position_not_converged = 0, position_exact = 0;
  double island_iterations_max = 0, worst_unconverged_residual = 0;
  const bench::Stopwatch<> watch;
  for (long s = 0; s < steps; ++s) {
    if (w.integrate() != StepStatus::Ok) ++not_ok;
    const StepStats& st = w.stats();
    total.push_back(st.times.total());
    dyn.push_back(st.times.dynamics);
    col.push_back(st.times.collision);
    del.push_back(st.times.delassus);
    sol.push_back(st.times.solve);
    integ.push_back(st.times.integrate);
    sweeps.push_back(static_cast<double>(st.solver.iterations));
    position_sweeps.push_back(static_cast<double>(st.position_sweeps));
    position_not_converged += st.position_not_converged;
    position_exact += st.position_exact;
    contacts.push_back(static_cast<double>(st.contacts));
    islands.push_back(static_cast<double>(st.islands));
    // mean penetration over the contacts of this step (SimBenchmark's error metric)
    double depth = 0;
    for (const Contact& c : w.contacts()) depth += std::max<Scalar>(0, c.depth);
    pen.push_back(st.contacts > 0 ? depth / static_cast<double>(st.contacts) : 0.0);
    pairs.clear();
    for (const Contact& c : w.contacts()) ++pairs[{c.object_a, c.body_a, c.object_b, c.body_b}];
    for (const auto& pc : pairs) {
      pair_max = std::max<double>(pair_max, pc.second);
      pair_sum += pc.second;
      ++pair_count;
    }
    max_pen = std::max<double>(max_pen, st.max_penetration);
    max_sweeps = std::max<double>(max_sweeps, static_cast<double>(st.solver.iterations));
    max_contacts = std::max<double>(max_contacts, static_cast<double>(st.contacts));
    largest = std::max<double>(largest, static_cast<double>(st.largest_island));
    largest_rows = std::max<double>(largest_rows, static_cast<double>(st.largest_island_rows));
    dropped += st.contacts_dropped;
    not_converged += st.islands_not_converged;
    active_set += st.islands_active_set;
    newton += st.islands_newton;
    if (s >= 100) not_converged_late += st.islands_not_converged;
    if (st.islands_not_converged > 0) ++steps_at_cap;
    for (const IslandResult& ir : st.island_results) {
      if (ir.at_cap()) ++islands_at_cap;
      if (!ir.solver.converged() && ir.solver.stalled) ++islands_stalled;
      if (ir.solver.converged()) ++finished_by[static_cast<int>(ir.solver.method)];
      if (ir.solver.converged()) island_iterations_max = std::max<double>(island_iterations_max, static_cast<double>(ir.solver.iterations));
      else worst_unconverged_residual = std::max<double>(worst_unconverged_residual, ir.solver.residual);
    }
  }
  const double wall = watch.seconds();
  const Scalar E1 = energy(w);
  json j;
  j["anderson_memory"] = anderson_memory;
  j["scene"] = sc.name;
  j["description"] = sc.description;
  j["dt"] = sc.dt;
  j["steps"] = steps;
  j["bodies"] = w.num_systems();
  j["us_per_step_mean"] = scenes_mean(total);
  j["us_per_step_median"] = median(total);
  j["us_per_step_max"] = total.empty() ? 0.0 : *std::max_element(total.begin(), total.end());
  if (sc.robots > 0) j["us_per_robot_mean"] = scenes_mean(total) / static_cast<double>(sc.robots);
  j["stages_us_mean"] = {{"dynamics", scenes_mean(dyn)}, {"collision", scenes_mean(col)}, {"delassus", scenes_mean(del)},
                         {"solve", scenes_mean(sol)}, {"integrate", scenes_mean(integ)}};
  j["stages_us_median"] = {{"dynamics", median(dyn)}, {"collision", median(col)}, {"delassus", median(del)},
                           {"solve", median(sol)}, {"integrate", median(integ)}};
  j["contacts_mean"] = scenes_mean(contacts);
  j["contacts_max"] = max_contacts;
  j["contacts_dropped"] = dropped;
  j["contacts_per_pair_mean"] = pair_count > 0 ? pair_sum / pair_count : 0.0;
  j["contacts_per_pair_max"] = pair_max;
  j["islands_mean"] = scenes_mean(islands);
  j["largest_island_systems"] = largest;
  j["largest_island_rows"] = largest_rows;
  j["sweeps_mean"] = scenes_mean(sweeps);
  j["sweeps_max"] = max_sweeps;
  j["islands_not_converged"] = not_converged;
  j["islands_not_converged_after_step_100"] = not_converged_late;
  j["steps_not_converged"] = steps_at_cap;
  j["islands_active_set"] = active_set;
  j["islands_newton"] = newton;
  j["islands_at_cap"] = islands_at_cap;
  j["islands_stalled"] = islands_stalled;
  j["islands_converged_by"] = {{"iteration", finished_by[static_cast<int>(SolverMethod::Iteration)]},
                               {"bound_qp", finished_by[static_cast<int>(SolverMethod::BoundQp)]},
                               {"active_set", finished_by[static_cast<int>(SolverMethod::ActiveSet)]},
                               {"semismooth_newton", finished_by[static_cast<int>(SolverMethod::SemismoothNewton)]}};
  j["island_iterations_max_converged"] = island_iterations_max;
  j["island_residual_max_not_converged"] = worst_unconverged_residual;
  j["position_sweeps_mean"] = scenes_mean(position_sweeps);
  j["position_not_converged"] = position_not_converged;
  j["position_exact"] = position_exact;
  j["steps_not_ok"] = not_ok;
  j["penetration_mean"] = scenes_mean(pen);
  j["penetration_max"] = max_pen;
  j["energy_initial"] = E0;
  j["energy_final"] = E1;
  j["energy_drift"] = E0 != 0 ? (E1 - E0) / std::abs(E0) : 0.0;
  j["fell"] = sc.fell(w);
  if (sc.resting) {
    j["top_drift_m"] = rest_drift(w, true);
    j["max_drift_m"] = rest_drift(w, false);
  }
  j["wall_s"] = wall;
  if (!sc.reference.empty()) {
    for (const Scene& ref : scenes()) {
      if (ref.name == sc.reference) j["per_robot_ratio"] = per_robot_ratio(w, sc, ref, o);
    }
  }
  return j;
}

}  // namespace

int run_bench_scenes(const BenchOptions& o) {
  std::vector<std::string> valid;
  for (const Scene& s : scenes()) valid.push_back(s.name);
  json all = json::array();
  bool found = false;
  for (const Scene& sc : scenes()) {
    if (!o.scene.empty() && o.scene != "all" && o.scene != sc.name) continue;
    found = true;
    const long steps = o.steps > 0 ? o.steps : sc.default_steps;
    json j;
    try {
      j = run_scene(sc, steps, o);
    } catch (const ModelError& e) {
      if (!sc.external || o.scene == sc.name) throw;
      std::cerr << sc.name << ": skipped: " << e.what() << "\n";
      continue;
    }
    j["solver"] = o.solver.empty() ? "bisection" : o.solver;
    if (o.json) {
      all.push_back(j);
      continue;
    }
    std::cout << std::fixed << std::setprecision(1) << sc.name << " (" << sc.description << "), " << steps
              << " steps:\n  us/step mean " << j["us_per_step_mean"].get<double>() << " median "
              << j["us_per_step_median"].get<double>() << " max " << j["us_per_step_max"].get<double>()
              << "  [dynamics " << j["stages_us_mean"]["dynamics"].get<double>()
              << ", collision " << j["stages_us_mean"]["collision"].get<double>() << ", delassus "
              << j["stages_us_mean"]["delassus"].get<double>() << ", solve " << j["stages_us_mean"]["solve"].get<double>()
              << ", integrate " << j["stages_us_mean"]["integrate"].get<double>() << "]\n";
    if (sc.robots > 0) std::cout << "  us/robot " << j["us_per_robot_mean"].get<double>() << "\n";
    if (j.contains("per_robot_ratio")) {
      const json& r = j["per_robot_ratio"];
      std::cout << std::setprecision(3) << "  per robot / " << r["reference"].get<std::string>()
                << " in one process (" << r["rounds"].get<int>() << " interleaved rounds): median "
                << r["median"].get<double>() << " (quartiles " << r["q1"].get<double>() << " - "
                << r["q3"].get<double>() << ")\n";
    }
    std::cout << std::setprecision(3) << "  contacts mean " << j["contacts_mean"].get<double>() << " max "
              << j["contacts_max"].get<double>() << " dropped " << j["contacts_dropped"].get<long>()
              << ", per touching pair mean " << j["contacts_per_pair_mean"].get<double>() << " max "
              << j["contacts_per_pair_max"].get<double>() << ", islands mean "
              << j["islands_mean"].get<double>() << ", largest island " << j["largest_island_systems"].get<double>()
              << " systems / " << j["largest_island_rows"].get<double>() << " rows\n  sweeps mean "
              << j["sweeps_mean"].get<double>() << " max " << j["sweeps_max"].get<double>()
              << ", islands not converged " << j["islands_not_converged"].get<long>() << " (after step 100: "
              << j["islands_not_converged_after_step_100"].get<long>() << ", in "
              << j["steps_not_converged"].get<long>() << " steps; finished by the active set "
              << j["islands_active_set"].get<long>() << ", by the Newton stage " << j["islands_newton"].get<long>()
              << "; at the cap " << j["islands_at_cap"].get<long>()
              << ", stopped on a plateau " << j["islands_stalled"].get<long>() << ")\n  push-out sweeps mean "
              << j["position_sweeps_mean"].get<double>() << ", islands at its budget "
              << j["position_not_converged"].get<long>() << ", finished by the exact QP "
              << j["position_exact"].get<long>() << std::scientific
              << ", penetration mean " << j["penetration_mean"].get<double>() << " max "
              << j["penetration_max"].get<double>() << " m, energy drift " << j["energy_drift"].get<double>()
              << std::fixed << ", fell " << (j["fell"].get<bool>() ? "yes" : "no") << "\n";
    if (j.contains("top_drift_m"))
      std::cout << std::scientific << std::setprecision(2) << "  drift of the top body "
                << j["top_drift_m"].get<double>() << " m, largest " << j["max_drift_m"].get<double>() << " m\n"
                << std::fixed;
  }
  if (!found) {
    std::string names;
    for (const std::string& n : valid) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("unknown scene '" + o.scene + "'; valid: all, " + names);
  }
  if (o.json) std::cout << all.dump(2) << "\n";
  return 0;
}

}  // namespace impulse::cli
