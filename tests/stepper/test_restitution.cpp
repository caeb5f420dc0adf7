// Impacts with restitution (stepper.hpp): Poisson's law with the energy bound against Newton's
// target law, on a bouncing ball (analytic) and on a slender rod struck at its end with friction
// (the configuration of Kane & Levinson's paradox, where Newton's law with sticking friction adds
// energy).
#include <catch2/catch.hpp>

#include <cmath>

#include "impulse/world/world.hpp"

using namespace impulse;

namespace {

Scalar energy(const ArticulatedSystem& s) { return s.kinetic_energy() + s.potential_energy(); }

}  // namespace

TEST_CASE("restitution: a ball bounces with v+ = -e v- under either law, with or without friction", "[stepper]") {
  for (const RestitutionLaw law : {RestitutionLaw::Poisson, RestitutionLaw::Newton}) {
    for (const Scalar mu : {0.0, 0.8}) {
      INFO((law == RestitutionLaw::Poisson ? "Poisson" : "Newton") << ", mu " << mu);
      World w;
      w.add_ground();
      w.set_default_material(mu, 0.5);
      DelassusSettings contact;
      contact.erp = 0;
      contact.restitution_law = law;
      w.set_contact_settings(contact);
      ArticulatedSystem& ball = w.add_sphere("ball", 0.1, 2.0);
      VecX q = ball.q(), u = VecX::Zero(6);
      q[2] = 0.3;
      u[2] = -1.0;
      ball.set_state(q, u);
      const Scalar g = 9.81, dt = w.time_step();
      Scalar v_before = 0;
      bool bounced = false;
      for (int k = 0; k < 400 && !bounced; ++k) {
        v_before = ball.u()[2];
        REQUIRE(w.integrate() == StepStatus::Ok);
        bounced = ball.u()[2] > 0;
      }
      REQUIRE(bounced);
      // Poisson: the impulse acts on the free velocity v- - g dt (the impact happens within the
      // step); Newton's target is e times the velocity before the step
      const Scalar expected = law == RestitutionLaw::Poisson ? -0.5 * (v_before - g * dt) : -0.5 * v_before;
      CHECK(ball.u()[2] == Approx(expected).epsilon(1e-9));
      CHECK(std::abs(ball.u()[0]) < 1e-12);
      CHECK(w.stats().restitution == (law == RestitutionLaw::Poisson));
      if (law == RestitutionLaw::Poisson) CHECK(w.stats().restitution_scale == Approx(1.0));
    }
  }
}

TEST_CASE("restitution: a slender rod struck at its end with friction never gains energy under Poisson's law",
          "[stepper]") {
  // A 1 m capsule rod falling at 3 m/s, tilted in the x-z plane and spinning about y, strikes the
  // ground with its lower end (one contact point in the plane of motion, mu = 1, e = 0.9). Over a
  // scan of tilts and spins: the largest one-step change of the mechanical energy in steps with a
  // contact (free flight under semi-implicit Euler loses m g^2 dt^2 / 2 = 4.8e-5 J per step).
  auto worst_gain = [](RestitutionLaw law, Scalar tilt, Scalar spin, int* bounces = nullptr) {
    World w;
    w.add_ground();
    w.set_default_material(1.0, 0.9);
    DelassusSettings contact;
    contact.erp = 0;
    contact.restitution_law = law;
    w.set_contact_settings(contact);
    ArticulatedSystem& rod = w.add_capsule("rod", 0.02, 1.0, 1.0);
    VecX q = rod.q(), u = VecX::Zero(6);
    const Quat R(Eigen::AngleAxisd(tilt, Vec3::UnitY()));
    q.head<3>() = Vec3(0, 0, 0.5 * std::cos(tilt) + 0.03);
    q.segment<4>(3) << R.w(), R.x(), R.y(), R.z();  // (qw, qx, qy, qz)
    u[2] = -3.0;
    u[4] = spin;
    rod.set_state(q, u);
    Scalar worst = -1e300;
    for (int k = 0; k < 100; ++k) {
      const Scalar e0 = energy(rod);
      REQUIRE(w.integrate() == StepStatus::Ok);
      if (bounces) *bounces += w.stats().restitution;
      if (w.stats().contacts > 0) worst = std::max(worst, energy(rod) - e0);
    }
    return worst;
  };
  int bounces = 0;
  for (const Scalar tilt : {0.3, 0.6, 0.9, 1.2}) {
    for (const Scalar spin : {-12.0, -6.0, 0.0, 6.0, 12.0}) {
      INFO("tilt " << tilt << " rad, spin " << spin << " rad/s");
      CHECK(worst_gain(RestitutionLaw::Poisson, tilt, spin, &bounces) <= 0);
    }
  }
  CHECK(bounces >= 20);
  // Newton's law on the same kind of impact (tilt 0.9 rad, spinning at -12 rad/s): +2.8 J
  CHECK(worst_gain(RestitutionLaw::Newton, 0.9, -12.0) > 1.0);
}
