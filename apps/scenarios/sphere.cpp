// sphere (Mylapilli & Jain 2017 sec. 6.1): a uniform sphere (m = 1, r = 1) on a plane, mu = 0.2,
// launched with v0 = (2, 0, 0) and no spin. Analytically it slides, with friction -mu m g
// slowing it and spinning it up, until t = 2 v0 / (7 mu g) = 0.2912 s; then it rolls with
// vx = 5/7 v0 = 1.4286 m/s, wy = vx / r; vy = wx = wz = 0 throughout. The paper simulates 0.6 s
// at 1 ms (default steps 600). Under the no-slip solver the sphere rolls from the first contact
// step on (infinite friction) with the same rolling velocity (angular momentum about the contact
// point is conserved by the contact impulse).
#include <algorithm>
#include <cmath>

#include "scenarios/validation_scenarios.hpp"

namespace impulse::scenarios {

namespace {

using P = SphereOnPlane;

class Sphere final : public Scenario {
 public:
  explicit Sphere(const ScenarioConfig& c) : Scenario("sphere", c, EmptyWorld{}) {
    world_.add_ground();
    world_.set_default_material(P::mu, 0.0);
    world_.set_gravity(Vec3(0, 0, -P::g));
    robot_ = &world_.add_sphere("ball", P::radius, P::mass);
    VecX q = robot_->q(), u = VecX::Zero(6);
    q[2] = P::radius;
    u[0] = P::v0;
    robot_->set_state(q, u);
    slip_prev_ = P::v0;
  }

  long default_steps() const override { return 600; }

  // Slip velocity of the contact point along x: vx - wy r (u = [v; w] in the world frame).
  Scalar slip() const { return robot_->u()[0] - robot_->u()[4] * P::radius; }

  std::vector<Figure> figures() const override {
    const VecX& u = robot_->u();
    return {{"slide_to_roll_s", slide_to_roll_},
            {"slide_to_roll_analytic_s", P::slide_to_roll_s()},
            {"slide_to_roll_step_s", roll_step_time_},
            {"vx_final", u[0]},
            {"vx_analytic", P::v_roll()},
            {"wy_final", u[4]},
            {"wy_analytic", P::v_roll() / P::radius},
            {"vy_max_abs", vy_max_},
            {"wx_max_abs", wx_max_},
            {"wz_max_abs", wz_max_}};
  }

 protected:
  void control() override {}
  void observe() override {
    const VecX& u = robot_->u();
    vy_max_ = std::max(vy_max_, std::abs(u[1]));
    wx_max_ = std::max(wx_max_, std::abs(u[3]));
    wz_max_ = std::max(wz_max_, std::abs(u[5]));
    const Scalar s = slip();
    if (roll_step_time_ < 0 && std::abs(s) < 1e-6) {
      roll_step_time_ = world_.time();
      // The slip falls linearly while sliding: extrapolate the last full sliding step's rate to
      // the zero crossing inside this step (the step that reaches rolling stops short of it).
      const Scalar dt = world_.time_step();
      const Scalar t_prev = world_.time() - dt;
      slide_to_roll_ = rate_ > 0 ? t_prev + slip_prev_ / rate_ : t_prev;
    }
    if (roll_step_time_ < 0) rate_ = (slip_prev_ - s) / world_.time_step();
    slip_prev_ = s;
  }

 private:
  Scalar slide_to_roll_ = -1, roll_step_time_ = -1;  // -1: still sliding
  Scalar slip_prev_ = 0, rate_ = 0;
  Scalar vy_max_ = 0, wx_max_ = 0, wz_max_ = 0;
};

}  // namespace

std::unique_ptr<Scenario> make_sphere(const ScenarioConfig& config) { return std::make_unique<Sphere>(config); }

}  // namespace impulse::scenarios
