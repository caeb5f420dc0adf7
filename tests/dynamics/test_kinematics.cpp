// Joint poses: a revolute joint about a coordinate axis (Data::rev_axis, the columns of X_PJ.R
// turned in place) and about any other axis (the Rodrigues constants) against Eigen's AngleAxis.
#include <catch2/catch.hpp>

#include "impulse/dynamics/kinematics.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/matchers.hpp"
#include "support/random_model.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("kinematics: revolute joints about coordinate axes and general axes", "[dynamics]") {
  std::mt19937 rng(41);
  std::normal_distribution<Scalar> n01(0, 1);
  const std::vector<Vec3> axes = {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ(), -Vec3::UnitX(), -Vec3::UnitY(),
                                  -Vec3::UnitZ(), Vec3(1, 2, -2) / 3};
  for (int with_general = 0; with_general < 2; ++with_general) {
    // a chain of revolute joints about the axes above (the last, general one only in the second
    // model), each at a random placement
    ModelBuilder mb("chain");
    Index parent = -1;
    const Index n = with_general ? 7 : 6;
    std::vector<SE3> X(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) {
      X[static_cast<std::size_t>(i)] = random_placement(rng);
      parent = mb.add_body(parent, "j" + std::to_string(i), JointType::Revolute, X[static_cast<std::size_t>(i)],
                           axes[static_cast<std::size_t>(i)], JointLimits(), "b" + std::to_string(i),
                           random_inertia(rng));
    }
    const Model model = mb.finalize();
    Data data(model);
    for (Index i = 0; i < 6; ++i) CHECK(data.rev_axis[i] == (i < 3 ? i + 1 : -(i - 2)));
    if (with_general) {
      CHECK(data.rev_axis[6] == 0);
      CHECK(data.rev_A.size() == static_cast<std::size_t>(model.nb));
    } else {
      CHECK(data.rev_A.empty());  // no Rodrigues constants when no joint needs them
    }
    for (int trial = 0; trial < 5; ++trial) {
      VecX q = random_vector(model.nq, rng) * 4;
      forward_kinematics(model, data, q);
      for (Index i = 0; i < n; ++i) {
        INFO("model " << with_general << ", joint " << i << ", q " << q[i]);
        const Mat3 expected =
            X[static_cast<std::size_t>(i)].R * Eigen::AngleAxisd(q[i], axes[static_cast<std::size_t>(i)]).toRotationMatrix();
        CHECK_ALL_CLOSE(data.liMi[i].R, expected, 1e-15, 1e-14);
        CHECK_ALL_CLOSE(data.liMi[i].p, X[static_cast<std::size_t>(i)].p, 0.0, 0.0);
      }
    }
  }
}
