// `impulse bench fidelity [--json] [--model PATH] [--scene NAME] [--full]`: the physical-fidelity
// metrics, measured on small scenes with default settings (unless the metric says otherwise), next to the
// targets and the published figures (SimBenchmark / RaiSim, Hwangbo 2018). docs/fidelity.md
// describes every scene and keeps the measured numbers.
//
// Energy error (SimBenchmark's metric): the mean over all steps of (E(t) - E(0))^2, J^2, with E
// the total mechanical energy (kinetic + potential) of the scene.
#include <algorithm>
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/world/world.hpp"

namespace impulse::cli {

namespace {

struct Metric {
  std::string key, label, unit;
  double value = 0;
  double target = NAN;     // target (NaN: none; docs/fidelity.md)
  double published = NAN;  // SimBenchmark / RaiSim figure (NaN: none)
};

Scalar world_energy(World& w) {
  Scalar e = 0;
  for (ArticulatedSystem* s : w.systems()) e += s->kinetic_energy() + s->potential_energy();
  return e;
}

// Ball drop (docs/fidelity.md item 1): r 0.1 m, 10 kg, mu 0, e 1, threshold 0, from 5 m; energy change
// per bounce, J, over the first `bounces` bounces.
double ball_gain_per_bounce(RestitutionLaw law, int bounces, PositionUpdate update) {
  World w;
  w.add_ground();
  w.set_default_material(0, 1);
  DelassusSettings c = w.settings().contact;
  c.restitution_threshold = 0;
  c.restitution_law = law;
  c.position_update = update;
  w.set_contact_settings(c);
  ArticulatedSystem& b = w.add_sphere("ball", 0.1, 10);
  VecX q = b.q();
  q[2] = 5;
  b.set_state(q, VecX::Zero(6));
  // E = T + V at the first step past each apex (|v| <= g dt there, so semi-implicit Euler's
  // O(m g dt |v|) offset between E and its conserved discrete energy is negligible too)
  const Scalar e0 = world_energy(w);
  Scalar last = e0;
  bool rising = false;
  int n = 0;
  for (long k = 0; k < 2200L * (bounces + 1) && n < bounces; ++k) {
    w.integrate();
    if (b.u()[2] > 0) rising = true;
    if (rising && b.u()[2] < 0) last = world_energy(w), rising = false, ++n;
  }
  return n > 0 ? (last - e0) / n : NAN;
}

// 49 balls (7 x 7, 0.5 m apart, the ball above) from 5 m, 20 s: SimBenchmark energy error.
double balls49_energy_error(RestitutionLaw law, Scalar seconds, PositionUpdate update) {
  World w;
  w.add_ground();
  w.set_default_material(0, 1);
  DelassusSettings c = w.settings().contact;
  c.restitution_threshold = 0;
  c.restitution_law = law;
  c.position_update = update;
  w.set_contact_settings(c);
  for (int i = 0; i < 49; ++i) {
    ArticulatedSystem& b = w.add_sphere("ball" + std::to_string(i), 0.1, 10);
    VecX q = b.q();
    q[0] = 0.5 * (i % 7);
    q[1] = 0.5 * (i / 7);
    q[2] = 5;
    b.set_state(q, VecX::Zero(6));
  }
  const Scalar e0 = world_energy(w);
  double acc = 0;
  const long steps = static_cast<long>(seconds / w.time_step());
  for (long k = 0; k < steps; ++k) {
    w.integrate();
    const double d = world_energy(w) - e0;
    acc += d * d;
  }
  return acc / steps;
}

// SimBenchmark rolling test: a 10 kg box (20 x 20 x 1 m) starting 2e-5 m into the ground, 25 balls
// (r 0.5 m, 1 kg, 5 x 5) on it, 150 N on the box along x, mu 0.4 everywhere, 4 s. Analytic: the
// balls roll without slip on the accelerating box, a_ball = 2/7 a_box, and
// a_box = (F - mu (M + 25 m) g) / (M + 25 (2/7) m). Mean over steps and bodies (box + balls) of
// the squared x-velocity error, (m/s)^2.
double rolling_error(const std::string& solver, const DelassusSettings* settings) {
  World w;
  w.set_contact_solver(solver);
  w.add_ground();
  w.set_default_material(0.4, 0);
  if (settings) w.set_contact_settings(*settings);
  ArticulatedSystem& box = w.add_box("box", Vec3(20, 20, 1), 10);
  VecX q = box.q();
  q[2] = 0.5 - 2e-5;
  box.set_state(q, VecX::Zero(6));
  std::vector<ArticulatedSystem*> balls;
  for (int i = 0; i < 25; ++i) {
    ArticulatedSystem& b = w.add_sphere("ball" + std::to_string(i), 0.5, 1);
    VecX qb = b.q();
    qb[0] = -4 + 2.0 * (i % 5);
    qb[1] = -4 + 2.0 * (i / 5);
    qb[2] = 1 - 2e-5 + 0.5;
    b.set_state(qb, VecX::Zero(6));
    balls.push_back(&b);
  }
  const Scalar M = 10, m = 1, g = 9.81, F = 150, mu = 0.4;
  const Scalar a_box = (F - mu * (M + 25 * m) * g) / (M + 25 * (2.0 / 7.0) * m);
  const Scalar a_ball = 2.0 / 7.0 * a_box;
  double acc = 0;
  long n = 0;
  const long steps = static_cast<long>(4.0 / w.time_step());
  for (long k = 0; k < steps; ++k) {
    box.set_external_force(0, Vec3(F, 0, 0), box.body_pose(0).p);
    w.integrate();
    const Scalar t = (k + 1) * w.time_step();
    const double eb = box.u()[0] - a_box * t;
    acc += eb * eb, ++n;
    for (ArticulatedSystem* b : balls) {
      const double e = b->u()[0] - a_ball * t;
      acc += e * e, ++n;
    }
  }
  return acc / n;
}

// 216 balls (6 x 6 x 6, r 0.1 m, 1 kg, e 1, mu 0.5 or `mu`) dropped into a 1.6 m square bin,
// `seconds`: energy error, the final energy relative to the initial one, and the largest overlap
// (m) in the last second.
void pile(Scalar seconds, Scalar mu, double& energy_error, double& final_ratio, double& overlap) {
  World w;
  w.set_max_contacts(4096);
  w.add_ground();
  w.set_default_material(mu, 1);
  DelassusSettings c = w.settings().contact;
  c.restitution_threshold = 0;
  w.set_contact_settings(c);
  for (int s = 0; s < 4; ++s) {
    const Vec3 n = s == 0 ? Vec3(1, 0, 0) : s == 1 ? Vec3(-1, 0, 0) : s == 2 ? Vec3(0, 1, 0) : Vec3(0, -1, 0);
    w.add_wall("wall" + std::to_string(s), n, -0.8);
  }
  for (int i = 0; i < 216; ++i) {
    ArticulatedSystem& b = w.add_sphere("ball" + std::to_string(i), 0.1, 1);
    VecX q = b.q();
    q[0] = -0.625 + 0.25 * (i % 6) + 0.01 * ((i / 36) % 2);
    q[1] = -0.625 + 0.25 * ((i / 6) % 6);
    q[2] = 0.5 + 0.25 * (i / 36);
    b.set_state(q, VecX::Zero(6));
  }
  const Scalar e0 = world_energy(w);
  double acc = 0;
  overlap = 0;
  const long steps = static_cast<long>(seconds / w.time_step());
  const bench::Stopwatch<> watch;
  for (long k = 0; k < steps; ++k) {
    w.integrate();
    const double d = world_energy(w) - e0;
    acc += d * d;
    if ((k + 1) * w.time_step() > seconds - 1) overlap = std::max<double>(overlap, w.stats().max_penetration);
    if ((k + 1) % 1000 == 0) {  // progress: the pile is the long scene
      std::cerr << "[fidelity] pile mu " << mu << ": t " << (k + 1) * w.time_step() << " s, wall "
                << watch.seconds() << " s, contacts "
                << w.stats().contacts << ", sweeps " << w.stats().solver.iterations << ", E/E0 "
                << world_energy(w) / e0 << "\n";
    }
  }
  energy_error = acc / steps;
  final_ratio = world_energy(w) / e0;
}

// SimBenchmark's elastic 6-6-6 scene (Lee, Hwangbo et al., leggedrobotics/SimBenchmark,
// Elastic666Benchmark and yaml/666-elastic.yaml, read for its figures): 216 balls (r 0.1 m,
// 10 kg) on a 6 x 6 x 6 grid 0.21 m apart (1 cm between neighbours), each coordinate perturbed by
// up to 1 mm (uniform), the lowest layer 1.101 m up; ground only, friction 0, restitution 1 for
// ball-ground and ball-ball, no restitution threshold; 10 s at 1 ms. The metric is theirs: the
// mean over the steps of (E - E0)^2, E = T + V, sampled before each step. (The perturbations
// here come from std::mt19937 seeded 42, not from RaiSim's generator: the same distribution,
// not the same numbers.) Also the final E / E0 and the deepest overlap.
void elastic666(RestitutionLaw law, double& energy_error, double& final_ratio, double& overlap) {
  World w;
  w.set_max_contacts(4096);
  w.add_ground();
  w.set_default_material(0, 1);
  DelassusSettings c = w.settings().contact;
  c.restitution_threshold = 0;
  c.restitution_law = law;
  w.set_contact_settings(c);
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> perturbation(0, 1e-3);
  for (int i = 0; i < 6; ++i) {
    for (int j = 0; j < 6; ++j) {
      for (int k = 0; k < 6; ++k) {
        ArticulatedSystem& b = w.add_sphere("ball" + std::to_string(36 * i + 6 * j + k), 0.1, 10);
        VecX q = b.q();
        q[0] = 0.21 * i + perturbation(rng);
        q[1] = 0.21 * j + perturbation(rng);
        q[2] = 0.21 * k + perturbation(rng) + 1.101;
        b.set_state(q, VecX::Zero(6));
      }
    }
  }
  const Scalar e0 = world_energy(w);
  double acc = 0;
  overlap = 0;
  const long steps = 10000;
  for (long k = 0; k < steps; ++k) {
    const double d = world_energy(w) - e0;
    acc += d * d;
    w.integrate();
    overlap = std::max<double>(overlap, w.stats().max_penetration);
  }
  energy_error = acc / steps;
  final_ratio = world_energy(w) / e0;
}

// ANYmal in free flight (no ground, no torques, dt 1 ms), 5 s, thrown with base velocity
// (1, 0.5, 3) m/s, (1, -2, 0.5) rad/s and joint speeds alternating +-2 rad/s: energy error.
// With `limits` the joints also hit their position limits, inelastic stops that dissipate by
// design; without, the figure is the integrator's drift alone (RaiSim's "free flight" figure).
double anymal_flight(const std::string& urdf, bool limits, PositionUpdate update, bool two_step = true) {
  World w;
  DelassusSettings c = w.settings().contact;
  c.joint_limits = limits;
  c.position_update = update;
  c.flight_two_step = two_step;
  w.set_contact_settings(c);
  ArticulatedSystem& r = w.add_articulated_system(urdf);
  VecX q = r.model().neutral_configuration(), u = VecX::Zero(r.nv());
  q[2] = 1;
  u.head<6>() << 1, 0.5, 3, 1, -2, 0.5;
  for (Index k = 6; k < r.nv(); ++k) u[k] = k % 2 ? 2 : -2;
  r.set_state(q, u);
  const Scalar e0 = world_energy(w);
  double acc = 0;
  const long steps = 5000;
  for (long k = 0; k < steps; ++k) {
    w.integrate();
    const double d = world_energy(w) - e0;
    acc += d * d;
  }
  return acc / steps;
}

// Ball (r 0.1 m, 1 kg, e 0, mu 0.8) hitting the ground at `speed`: deepest penetration (m) and
// the fastest rebound after the first contact (m/s).
void fast_ball(Scalar speed, double& depth, double& rebound) {
  World w;
  w.add_ground();
  w.set_default_material(0.8, 0);
  ArticulatedSystem& b = w.add_sphere("ball", 0.1, 1);
  VecX q = b.q(), u = VecX::Zero(6);
  q[2] = 1.00123;
  u[2] = -speed;
  b.set_state(q, u);
  depth = rebound = 0;
  bool landed = false;
  for (int k = 0; k < 600; ++k) {
    w.integrate();
    depth = std::max<double>(depth, 0.1 - b.q()[2]);
    if (w.stats().contacts > 0 && b.q()[2] < 0.1 + 1e-6) landed = true;
    if (landed) rebound = std::max<double>(rebound, b.u()[2]);
  }
}

// Sphere starting 0.5 m into the ground, dt: fastest separation speed (m/s) over 1 s of motion or
// 2000 steps.
double deep_sphere(Scalar dt) {
  World w;
  w.set_time_step(dt);
  w.add_ground();
  ArticulatedSystem& b = w.add_sphere("ball", 0.1, 1);
  VecX q = b.q();
  q[2] = -0.4;
  b.set_state(q, VecX::Zero(6));
  double fastest = 0;
  const long steps = std::min<long>(2000, static_cast<long>(1.0 / dt));
  for (long k = 0; k < steps; ++k) {
    const Scalar z0 = b.q()[2];
    w.integrate();
    fastest = std::max<double>(fastest, (b.q()[2] - z0) / dt);
  }
  return fastest;
}

// ANYmal landing (docs/fidelity.md, "Figures"): dropped from 1 m with 1 m/s forward (heading 0, 90, 180,
// 270 degrees), joints PD kp 100 kd 2 to the nominal pose (URDF effort limit 80 N m), mu 0.8,
// 2 s. Returns the number of upright landings (base tilt < 30 degrees and base above 0.3 m at the
// end) and the lowest final base height.
int landing(const std::string& urdf, const std::string& solver, double& lowest) {
  int upright = 0;
  lowest = 1e9;
  for (int h = 0; h < 4; ++h) {
    World w;
    w.set_contact_solver(solver);
    w.add_ground();
    w.set_default_material(0.8, 0);
    ArticulatedSystem& r = w.add_articulated_system(urdf);
    VecX q = r.model().neutral_configuration(), u = VecX::Zero(r.nv());
    VecX joints(12);
    joints << 0, 0.5, -1.0, 0, 0.5, -1.0, 0, -0.5, 1.0, 0, -0.5, 1.0;
    q[2] = 1;
    const Scalar psi = h * M_PI / 2;
    const Quat R(Eigen::AngleAxisd(psi, Vec3::UnitZ()));
    q[3] = R.w(), q[4] = R.x(), q[5] = R.y(), q[6] = R.z();
    q.tail(12) = joints;
    u[0] = std::cos(psi), u[1] = std::sin(psi);
    r.set_state(q, u);
    VecX kp = VecX::Zero(r.nv()), kd = VecX::Zero(r.nv());
    kp.tail(12).setConstant(100);
    kd.tail(12).setConstant(2);
    r.set_pd_gains(kp, kd);
    r.set_pd_targets(q, VecX::Zero(r.nv()));
    for (int k = 0; k < 2000; ++k) w.integrate();
    const Quat Rb(r.q()[3], r.q()[4], r.q()[5], r.q()[6]);
    const Scalar tilt = std::acos(std::clamp<Scalar>((Rb.normalized() * Vec3::UnitZ()).z(), -1, 1));
    const Scalar z = r.q()[2];
    lowest = std::min<double>(lowest, z);
    upright += tilt < M_PI / 6 && z > 0.3;
  }
  return upright;
}

// Joint Coulomb friction (docs/fidelity.md item 6): the 1 kg link at 1 m held horizontal by URDF
// friction f and no PD. Largest |q| over 1 s (rad), and the angular acceleration of the first
// 0.1 s (rad/s^2; analytic (9.81 - f) / I when f < 9.81).
void friction_link(const std::string& solver, Scalar friction, double& drift, double& accel) {
  const std::string urdf = R"(<robot name="link"><link name="world"/>
  <link name="arm"><inertial><origin xyz="1 0 0"/><mass value="1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j" type="continuous"><parent link="world"/><child link="arm"/><axis xyz="0 1 0"/>
  <dynamics friction=")" + std::to_string(friction) + R"("/></joint></robot>)";
  World w;
  w.set_contact_solver(solver);
  ArticulatedSystem& arm = w.add_articulated_system(load_urdf_string(urdf));
  drift = accel = 0;
  for (int k = 1; k <= 1000; ++k) {
    w.integrate();
    drift = std::max<double>(drift, std::abs(arm.q()[0]));
    if (k == 100) accel = arm.u()[0] / (k * w.time_step());
  }
}

}  // namespace

int run_bench_fidelity(const BenchOptions& o) {
  std::vector<Metric> rows;
  auto add = [&rows](const std::string& key, const std::string& label, const std::string& unit, double v,
                     double target = NAN, double published = NAN) {
    rows.push_back({key, label, unit, v, target, published});
    std::cerr << "[fidelity] " << key << " = " << v << " " << unit << "\n";  // as measured
    if (!std::isfinite(v)) std::cerr << "note: " << key << " is not finite\n";
  };
  // Scene groups, selectable with --scene NAME; progress and wall time of each on stderr. The
  // default run is short (a few minutes on a loaded 2-core machine); --full runs the long
  // lengths where they differ (216 balls: 10 s instead of 2 s; 49 balls: 20 s instead of 5 s).
  const bool full = o.full;
  const Scalar balls49_s = full ? 20 : 5, pile_s = full ? 10 : 2;
  const std::string b49 = std::to_string(static_cast<int>(balls49_s)), p216 = std::to_string(static_cast<int>(pile_s));
  struct Group {
    const char* name;
    std::function<void()> run;
  };
  const std::vector<Group> groups = {
      {"ball",
       [&] {
         const PositionUpdate D = DelassusSettings().position_update, E = PositionUpdate::Euler;
         add("ball_gain_poisson", "ball e=1 from 5 m, energy change per bounce (Poisson)", "J",
             ball_gain_per_bounce(RestitutionLaw::Poisson, 4, D), 0);
         add("ball_gain_newton", "ball e=1 from 5 m, energy change per bounce (Newton)", "J",
             ball_gain_per_bounce(RestitutionLaw::Newton, 4, D), 0);
         add("ball_gain_poisson_euler", "the same, semi-implicit Euler position update (Poisson)", "J",
             ball_gain_per_bounce(RestitutionLaw::Poisson, 4, E), 0);
       }},
      {"balls49",
       [&] {
         const PositionUpdate D = DelassusSettings().position_update, E = PositionUpdate::Euler;
         add("balls49_energy_poisson", "49 elastic balls, " + b49 + " s, energy error (Poisson)", "J^2",
             balls49_energy_error(RestitutionLaw::Poisson, balls49_s, D), 0.02, 0.019);
         add("balls49_energy_newton", "49 elastic balls, " + b49 + " s, energy error (Newton)", "J^2",
             balls49_energy_error(RestitutionLaw::Newton, balls49_s, D), 0.02, 0.019);
         add("balls49_energy_poisson_euler", "the same, semi-implicit Euler position update (Poisson)", "J^2",
             balls49_energy_error(RestitutionLaw::Poisson, balls49_s, E), 0.02, 0.019);
         add("balls49_energy_newton_euler", "the same, semi-implicit Euler position update (Newton)", "J^2",
             balls49_energy_error(RestitutionLaw::Newton, balls49_s, E), 0.02, 0.019);
       }},
      {"rolling",
       [&] {
         add("rolling_bisection", "rolling box + 25 balls, 4 s, velocity error (bisection)", "(m/s)^2",
             rolling_error("bisection", nullptr), 4.1e-7);
         add("rolling_pgs", "rolling box + 25 balls, 4 s, velocity error (PGS)", "(m/s)^2",
             rolling_error("pgs", nullptr), 5.7e-9, 5.7e-9);
         DelassusSettings c;
         c.erp = 0;
         add("rolling_pgs_erp0", "rolling box + 25 balls, 4 s, velocity error (PGS, erp 0)", "(m/s)^2",
             rolling_error("pgs", &c));
         c.erp = 0.2;
         c.position_correction = PositionCorrection::Split;
         add("rolling_bisection_split", "rolling box + 25 balls, 4 s, velocity error (bisection, split)", "(m/s)^2",
             rolling_error("bisection", &c));
       }},
      {"flight",
       [&] {
         // (the default, PositionUpdate::Bodies: an articulated robot without PD moves by the midpoint
         // rule in flight, with the two-step velocity update)
         const PositionUpdate D = DelassusSettings().position_update, M = PositionUpdate::Midpoint;
         add("anymal_flight_energy", "ANYmal free flight, 5 s, energy error", "J^2", anymal_flight(o.model, false, D),
             0.012, 0.012);
         add("anymal_flight_energy_heun", "the same, Heun's velocity update every step (two dynamics evaluations)",
             "J^2", anymal_flight(o.model, false, D, false), 0.012, 0.012);
         add("anymal_flight_energy_midpoint", "the same, midpoint position update", "J^2",
             anymal_flight(o.model, false, M), 0.012, 0.012);
         add("anymal_flight_limits_energy", "ANYmal free flight hitting its joint limits, 5 s, energy error", "J^2",
             anymal_flight(o.model, true, D));
       }},
      {"fast",
       [&] {
         for (const Scalar v : {20.0, 50.0}) {
           double depth, rebound;
           fast_ball(v, depth, rebound);
           const std::string s = std::to_string(static_cast<int>(v));
           add("fast_ball_" + s + "_depth", "ball at " + s + " m/s, e=0: penetration", "m", depth, 1e-3);
           add("fast_ball_" + s + "_rebound", "ball at " + s + " m/s, e=0: rebound speed", "m/s", rebound, 0.01);
         }
       }},
      {"deep",
       [&] {
         add("deep_sphere_1ms", "sphere 0.5 m deep, dt 1 ms: separation speed", "m/s", deep_sphere(1e-3), 1.0);
         add("deep_sphere_1us", "sphere 0.5 m deep, dt 1 us: separation speed", "m/s", deep_sphere(1e-6), 1.0);
       }},
      {"friction",
       [&] {
         for (const std::string solver : {"bisection", "pgs", "lm", "noslip"}) {
           double drift, accel;
           friction_link(solver, 20, drift, accel);
           add("friction20_drift_" + solver, "link, joint friction 20 N m, 1 s: largest |q| (" + solver + ")", "rad",
               drift, 1e-3);
           friction_link(solver, 5, drift, accel);
           add("friction5_accel_" + solver, "link, joint friction 5 N m: angular acceleration (" + solver + ")",
               "rad/s^2", accel, (9.81 - 5) / (1 + 1e-4));
         }
       }},
      {"landing",
       [&] {
         for (const std::string solver : {"bisection", "pgs", "lm"}) {
           double lowest;
           const int up = landing(o.model, solver, lowest);
           add("landing_upright_" + solver, "ANYmal landing, upright of 4 (" + solver + ")", "", up, 4);
           add("landing_lowest_" + solver, "ANYmal landing, lowest final base height (" + solver + ")", "m", lowest);
         }
       }},
      {"elastic666",
       [&] {
         double e, ratio, overlap;
         elastic666(RestitutionLaw::Poisson, e, ratio, overlap);
         add("elastic666_energy", "SimBenchmark elastic 6-6-6 (216 balls), 10 s, energy error (Poisson)", "J^2", e,
             8.4, 8.4);
         add("elastic666_final_energy", "the same, final / initial energy (Poisson)", "", ratio);
         add("elastic666_overlap", "the same, deepest overlap (Poisson)", "m", overlap, 1e-3);
         elastic666(RestitutionLaw::Newton, e, ratio, overlap);
         add("elastic666_energy_newton", "the same, energy error (Newton)", "J^2", e, 8.4, 8.4);
         add("elastic666_final_energy_newton", "the same, final / initial energy (Newton)", "", ratio);
         add("elastic666_overlap_newton", "the same, deepest overlap (Newton)", "m", overlap, 1e-3);
       }},
      {"pile",
       [&] {
         // a harder variant of the scene above: offset layers dropped into a 1.6 m bin, 1 kg
         // balls, with friction (oblique impacts dissipate, which the e = 1 metric counts)
         double e, ratio, overlap;
         pile(pile_s, 0.5, e, ratio, overlap);
         add("pile216_energy", "216 elastic balls in a bin, mu 0.5, " + p216 + " s, energy error", "J^2", e);
         add("pile216_final_energy", "216 elastic balls in a bin, mu 0.5, final / initial energy", "", ratio);
         add("pile216_overlap", "216 elastic balls in a bin, mu 0.5, largest overlap in the last second", "m", overlap,
             1e-3);
         // frictionless: what is left is restitution and integration (friction dissipates in
         // oblique ball-ball impacts, which an e = 1 energy metric counts as error)
         pile(pile_s, 0, e, ratio, overlap);
         add("pile216_energy_mu0", "216 elastic balls in a bin, mu 0, " + p216 + " s, energy error", "J^2", e);
         add("pile216_final_energy_mu0", "216 elastic balls in a bin, mu 0, final / initial energy", "", ratio);
         add("pile216_overlap_mu0", "216 elastic balls in a bin, mu 0, largest overlap in the last second", "m",
             overlap, 1e-3);
       }},
  };
  bool known = o.scene.empty();
  for (const Group& g : groups) known = known || o.scene == g.name;
  if (!known) {
    std::string names;
    for (const Group& g : groups) names += std::string(names.empty() ? "" : ", ") + g.name;
    std::cerr << "error: bench fidelity: unknown scene '" << o.scene << "' (scenes: " << names << ")\n";
    return 2;
  }
  for (const Group& g : groups) {
    if (!o.scene.empty() && o.scene != g.name) continue;
    const bench::Stopwatch<> watch;
    g.run();
    std::cerr << "[fidelity] " << g.name << ": " << watch.seconds() << " s\n";
  }

  if (o.json) {
    json j;
    for (const Metric& m : rows) {
      j[m.key] = {{"value", number(m.value)}, {"unit", m.unit}, {"target", number(m.target)},
                  {"published", number(m.published)}};
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "fidelity benchmark (docs/fidelity.md)\n";
    for (const Metric& m : rows) {
      std::cout << "  " << std::left << std::setw(72) << m.label << std::right << std::setw(12)
                << std::setprecision(4) << m.value << " " << m.unit;
      if (std::isfinite(m.target)) std::cout << "   (target " << m.target << ")";
      if (std::isfinite(m.published)) std::cout << "   (published " << m.published << ")";
      std::cout << "\n";
    }
  }
  return 0;
}

}  // namespace impulse::cli
