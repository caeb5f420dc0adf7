// Random use of the World API between steps: wild and invalid inputs, settings and solver
// changes, save/restore, reset, clone, objects added while stepping, integrate1/integrate2 apart.
// Every call must either succeed or throw impulse::Error (no crash, no sanitizer report: CI runs
// this file under ASan + UBSan), a step must never throw, a step that reports `stepped` must leave
// a finite state, and contacts no solve has answered yet carry no impulse. Such a run found
// contact_reports() reading past the impulse buffer after a skipped step (test_step_report.cpp).
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/world/world.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

bool finite_state(const World& w) {
  for (const ArticulatedSystem* a : w.systems()) {
    if (!a->q().allFinite() || !a->u().allFinite()) return false;
  }
  return std::isfinite(w.time());
}

class Random {
 public:
  explicit Random(unsigned seed) : rng_(seed) {}
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }
  int integer(int a, int b) { return std::uniform_int_distribution<int>(a, b)(rng_); }
  double log_uniform(double a, double b) { return std::pow(10.0, uniform(a, b)); }
  // a value of any size or sign, NaN and infinities included
  double wild() {
    switch (integer(0, 9)) {
      case 0: return std::numeric_limits<double>::quiet_NaN();
      case 1: return std::numeric_limits<double>::infinity();
      case 2: return -1e300;
      case 3: return 1e30;
      case 4: return 0;
      default: return uniform(-1, 1) * log_uniform(-3, 4);
    }
  }
  VecX vector(Index n, bool wild_values) {
    VecX v(n);
    for (Index k = 0; k < n; ++k) v[k] = wild_values ? wild() : uniform(-1, 1) * log_uniform(-3, 1);
    return v;
  }
  const std::string& solver() {
    static const std::vector<std::string> names = {"bisection", "pgs", "lm", "noslip"};
    return names[static_cast<std::size_t>(integer(0, 3))];
  }

 private:
  std::mt19937_64 rng_;
};

void stress_build(World& w, Random& r) {
  w.add_ground();
  if (r.integer(0, 1)) w.add_wall("wall", Vec3(1, 0, 0), -2.0);
  if (r.integer(0, 1)) w.add_static_box("step", SE3(Mat3::Identity(), Vec3(1, 0, 0.05)), Vec3(0.5, 2, 0.1));
  const int robots = r.integer(0, 2);
  for (int k = 0; k < robots; ++k) {
    ArticulatedSystem& a = w.add_articulated_system(impulse_test::source_path("models/anymal/anymal.urdf"));
    VecX q = a.model().neutral_configuration();
    q[0] = r.uniform(-1, 1);
    q[1] = r.uniform(-1, 1);
    q[2] = r.uniform(0.2, 1.0);
    a.set_state(q, VecX::Zero(a.nv()));
  }
  const int bodies = r.integer(0, 8);
  for (int b = 0; b < bodies; ++b) {
    const std::string n = "b" + std::to_string(b);
    const double m = r.log_uniform(-3, 3), s = r.log_uniform(-2.5, 0.5);
    ArticulatedSystem* a = nullptr;
    switch (r.integer(0, 3)) {
      case 0: a = &w.add_sphere(n, s, m); break;
      case 1: a = &w.add_box(n, Vec3(s, s * r.uniform(0.1, 3), s * r.uniform(0.1, 3)), m); break;
      case 2: a = &w.add_capsule(n, s, s * r.uniform(0.1, 4), m); break;
      default: a = &w.add_cylinder(n, s, s * r.uniform(0.1, 4), m); break;
    }
    VecX q = a->q();
    q[0] = r.uniform(-1, 1);
    q[1] = r.uniform(-1, 1);
    q[2] = r.uniform(-0.2, 2);  // some start deep in the ground
    a->set_state(q, VecX::Zero(6));
  }
  const std::vector<double> steps = {1e-5, 1e-4, 1e-3, 2e-3, 1e-2, 5e-2};
  w.set_time_step(steps[static_cast<std::size_t>(r.integer(0, 5))]);
  w.set_contact_solver(r.solver());
  w.set_default_material(r.uniform(0, 1.5), r.uniform(0, 1));
  if (r.integer(0, 2) == 0) w.set_max_contacts(r.integer(1, 40));
}

// One random call on the World or one of its systems (may throw impulse::Error).
void random_call(World& w, Random& r, WorldState& saved, int k) {
  const int op = r.integer(0, 34);
  if (w.num_systems() > 0 && op < 8) {
    ArticulatedSystem& a = w.system(r.integer(0, static_cast<int>(w.num_systems()) - 1));
    const bool wild = r.integer(0, 3) == 0;
    switch (op) {
      case 0: a.set_u(r.vector(a.nv(), wild) * (wild ? 1.0 : r.log_uniform(0, 3))); break;
      case 1: a.set_q(a.q() + 0.1 * r.vector(a.nq(), wild)); break;
      case 2: a.set_generalized_force(r.vector(a.nv(), wild) * r.log_uniform(0, 4)); break;
      case 3:
        a.set_external_force(r.integer(0, static_cast<int>(a.model().nb) - 1), Vec3(r.wild(), r.wild(), r.wild()),
                             Vec3(r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(-1, 1)));
        break;
      case 4: {
        VecX kp = VecX::Zero(a.nv()), kd = VecX::Zero(a.nv());
        for (Index d = a.nv() > 6 ? 6 : a.nv(); d < a.nv(); ++d) {  // joints only, not a floating base
          kp[d] = r.log_uniform(-1, 6);
          kd[d] = r.log_uniform(-2, 3);
        }
        if (wild) kp[r.integer(0, static_cast<int>(a.nv()) - 1)] = r.wild();
        a.set_pd_gains(kp, kd);
        break;
      }
      case 5: a.set_pd_targets(a.q() + 0.5 * r.vector(a.nq(), wild), r.vector(a.nv(), wild)); break;
      case 6: a.set_u(VecX::Zero(a.nv() + r.integer(-1, 1))); break;  // the wrong size, sometimes
      default: a.clear_external_forces(); break;
    }
    return;
  }
  switch (op) {
    case 8: w.set_contact_solver(r.solver()); break;
    case 9: {
      DelassusSettings c = w.settings().contact;
      c.erp = r.integer(0, 1) ? r.uniform(0, 1) : r.wild();
      c.slop = r.integer(0, 1) ? r.log_uniform(-7, -2) : r.wild();
      c.restitution_threshold = r.integer(0, 1) ? r.log_uniform(-4, 0) : r.wild();
      c.max_push_velocity = r.integer(0, 1) ? r.log_uniform(-2, 2) : r.wild();
      c.restitution_law = r.integer(0, 1) ? RestitutionLaw::Newton : RestitutionLaw::Poisson;
      c.joint_limits = r.integer(0, 1);
      c.joint_friction = r.integer(0, 1);
      w.set_contact_settings(c);
      break;
    }
    case 10: w.set_time_step(r.integer(0, 3) ? r.log_uniform(-5, -1.3) : r.wild()); break;
    case 11: saved = w.save_state(); break;
    case 12: w.restore_state(saved); break;
    case 13: w.reset(); break;
    case 14: {
      std::unique_ptr<World> c = w.clone();
      const StepReport cr = c->integrate();
      CHECK((!cr.stepped || finite_state(*c)));
      break;
    }
    case 15:
      w.set_gravity(r.integer(0, 3) ? Vec3(r.uniform(-20, 20), r.uniform(-20, 20), r.uniform(-50, 0))
                                    : Vec3(r.wild(), 0, -9.81));
      break;
    case 16: w.set_contact_margin(r.integer(0, 1) ? r.log_uniform(-5, -1) : r.wild()); break;
    case 17:
      w.set_default_material(r.integer(0, 1) ? r.uniform(0, 2) : r.wild(),
                             r.integer(0, 1) ? r.uniform(0, 1) : r.wild());
      break;
    case 18:
      (void)w.contact_reports();
      for (Index i = 0; i < w.num_systems(); ++i) {
        ArticulatedSystem& a = w.system(i);
        (void)a.mass_matrix();
        (void)a.kinetic_energy();
        (void)a.point_jacobian(a.model().nb - 1, Vec3(0.1, 0, 0));
      }
      break;
    case 19: {  // an object added while stepping
      const std::string n = "late" + std::to_string(k);
      ArticulatedSystem& a = r.integer(0, 1) ? w.add_sphere(n, r.log_uniform(-2, 0), r.log_uniform(-2, 2))
                                             : w.add_box(n, Vec3(0.2, 0.1, 0.3), r.log_uniform(-2, 2));
      VecX q = a.q();
      q[2] = r.uniform(-0.1, 1);
      a.set_q(q);
      break;
    }
    case 20: w.set_max_contacts(r.integer(0, 3) ? r.integer(1, 200) : r.integer(-5, 0)); break;
    case 21: w.set_stage_timing(r.integer(0, 1)); break;
    case 22:  // the two halves apart: the new contacts carry no impulse before the solve
      w.integrate1();
      for (const ContactReport& c : w.contact_reports()) CHECK(c.impulse == Vec3::Zero());
      break;
    default: break;  // steps without a call in between
  }
}

}  // namespace

TEST_CASE("random use of the World API: an error or a result, never a crash or a non-finite state", "[world][stress]") {
  // Debug + sanitizers make this the slowest file of the suite there: a few worlds, 120 steps each
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    Random r(seed);
    World w;
    REQUIRE_NOTHROW(stress_build(w, r));
    WorldState saved = w.save_state();
    long errors = 0, stepped = 0;
    for (int k = 0; k < 120; ++k) {
      try {
        random_call(w, r, saved, k);
      } catch (const Error&) {
        ++errors;
      }
      StepReport s;
      REQUIRE_NOTHROW(s = w.integrate());
      stepped += s.stepped;
      INFO("seed " << seed << ", step " << k << ": " << w.describe(s));
      REQUIRE((!s.stepped || finite_state(w)));
    }
    INFO("seed " << seed);
    CHECK(errors > 0);   // the invalid inputs were refused
    CHECK(stepped > 0);  // and the World went on
  }
}
