// Getting started: load ANYmal, hold a standing pose with joint PD, and step it at 1 ms.
#include <impulse/impulse.hpp>
#include <iostream>

int main(int argc, char** argv) {
  const std::string urdf = argc > 1 ? argv[1] : impulse::find_model("anymal/anymal.urdf");
  impulse::World world;                                   // dt = 1 ms, gravity -9.81 z
  world.add_ground();
  world.set_contact_solver("bisection");                  // or "pgs", "lm", "noslip"
  impulse::ArticulatedSystem& robot = world.add_articulated_system(urdf);

  impulse::VecX q = robot.model().neutral_configuration();  // [x y z qw qx qy qz, 12 joints]
  q[2] = 0.6;
  const double hfe[4] = {0.4, 0.4, -0.4, -0.4}, kfe[4] = {-0.8, -0.8, 0.8, 0.8};
  for (int leg = 0; leg < 4; ++leg) q[8 + 3 * leg] = hfe[leg], q[9 + 3 * leg] = kfe[leg];
  robot.set_q(q);

  impulse::VecX kp = impulse::VecX::Zero(robot.nv()), kd = kp;
  kp.tail(12).setConstant(200.0);                          // implicit PD on the 12 joints
  kd.tail(12).setConstant(4.0);
  robot.set_pd_gains(kp, kd);
  robot.set_pd_targets(q, impulse::VecX::Zero(robot.nv()));

  for (int k = 0; k < 2000; ++k) world.integrate();       // 2 s
  std::cout << "t = " << world.time() << " s, base height " << robot.q()[2] << " m, "
            << world.stats().contacts << " contacts\n";
}
