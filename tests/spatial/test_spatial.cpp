#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "impulse/spatial/spatial.hpp"
#include "support/matchers.hpp"
#include "support/draw.hpp"

using namespace impulse;

namespace {
SE3 random_se3(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  Quat q = test::draw_quat(n, rng);
  q.normalize();
  const Vec3 p = test::draw3(n, rng);
  return SE3(q.toRotationMatrix(), p);
}
Vec6 random6(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  Vec6 v;
  for (int i = 0; i < 6; ++i) v[i] = n(rng);
  return v;
}
}  // namespace

TEST_CASE("SE3 actions agree with the Plucker matrix and power is frame-invariant", "[spatial]") {
  std::mt19937 rng(7);
  for (int t = 0; t < 100; ++t) {
    const SE3 X = random_se3(rng);
    const Vec6 m = random6(rng), f = random6(rng);
    // act_motion equals the 6x6 motion transform; inverse actions undo it.
    CHECK_ALL_CLOSE(X.act_motion(m), X.motion_matrix() * m, 1e-12, 1e-12);
    CHECK_ALL_CLOSE(X.inv_act_motion(X.act_motion(m)), m, 1e-12, 1e-12);
    CHECK_ALL_CLOSE(X.inv_act_force(X.act_force(f)), f, 1e-12, 1e-12);
    // force transform is the dual: X* = X^-T, so power f.m is the same in both frames.
    CHECK(X.act_force(f).dot(X.act_motion(m)) == Approx(f.dot(m)).margin(1e-12));
    CHECK(X.inverse().isApprox(SE3(X.R.transpose(), -X.R.transpose() * X.p)));
    CHECK((X * X.inverse()).isApprox(SE3::Identity(), 1e-12));
  }
}

TEST_CASE("cross products: m x* is minus the transpose of m x", "[spatial]") {
  std::mt19937 rng(3);
  const Vec6 m = random6(rng);
  Mat6 Cm, Cf;
  for (int i = 0; i < 6; ++i) {
    Cm.col(i) = cross_motion(m, Vec6::Unit(i));
    Cf.col(i) = cross_force(m, Vec6::Unit(i));
  }
  CHECK_ALL_CLOSE(Cf, Mat6(-Cm.transpose()), 1e-14, 0);
  CHECK_ALL_CLOSE(cross_motion(m, m), Vec6::Zero(), 1e-14, 0);
}

TEST_CASE("spatial inertia: matrix form, transform and parallel-axis sum", "[spatial]") {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.1, 2.0);
  const Vec3 c1 = test::draw3(u, rng);
  const Scalar m1 = u(rng);
  const Vec3 c2 = test::draw3(u, rng);
  const Scalar m2 = u(rng);
  const Inertia I1(m1, Vec3(c1.x(), -c1.y(), c1.z()), Vec3(1.0, 1.5, 2.0).asDiagonal());
  const Inertia I2(m2, Vec3(-c2.x(), c2.y(), c2.z()), Vec3(0.5, 0.7, 1.1).asDiagonal());
  const Vec6 v = random6(rng);
  CHECK_ALL_CLOSE(I1.apply(v), I1.matrix() * v, 1e-12, 1e-12);
  // Sum in one frame equals the sum of the matrices.
  CHECK_ALL_CLOSE((I1 + I2).matrix(), Mat6(I1.matrix() + I2.matrix()), 1e-12, 1e-12);
  // Expressing in A: I_A = X*_AB I_B X_BA (RBDA eq. 2.66).
  const SE3 X_AB = random_se3(rng);
  const Mat6 XBA = X_AB.inverse().motion_matrix();
  CHECK_ALL_CLOSE(I1.transformed(X_AB).matrix(), Mat6(XBA.transpose() * I1.matrix() * XBA), 1e-10, 1e-12);
  // Kinetic energy 1/2 v.Iv is frame invariant.
  CHECK(I1.transformed(X_AB).apply(X_AB.act_motion(v)).dot(X_AB.act_motion(v)) ==
        Approx(I1.apply(v).dot(v)).epsilon(1e-12));
}

TEST_CASE("quaternion exponential and logarithm are inverse", "[spatial]") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  for (int t = 0; t < 100; ++t) {
    const Vec3 phi = test::draw3(u, rng);
    CHECK_ALL_CLOSE(quat_log(quat_exp(phi)), phi, 1e-12, 1e-12);
    CHECK(quat_exp(phi).toRotationMatrix().isApprox(
        Eigen::AngleAxis<double>(phi.norm(), phi.normalized()).toRotationMatrix(), 1e-12));
  }
  CHECK_ALL_CLOSE(quat_log(quat_exp(Vec3(1e-10, 0, 0))), Vec3(1e-10, 0, 0), 1e-20, 1e-8);
  // URDF rpy: R = Rz(y) Ry(p) Rx(r)
  CHECK(rpy_to_matrix(0, 0, M_PI / 2).isApprox(Eigen::AngleAxis<double>(M_PI / 2, Vec3::UnitZ()).toRotationMatrix()));
}

// core/sincos.hpp: the inline pair that joint poses, quat_exp and the bisection slip search use.
// Against libm (glibc's sin and cos are correctly rounded, or within 1 ulp): at most 1 ulp apart
// for joint angles (|x| <= 100 rad), 2 ulp up to 1e6 rad (the reduction's k pi/2 error grows with
// k); exact identities at 0 and the fallback for huge and non-finite x.
TEST_CASE("sincos agrees with libm within 1-2 ulp and keeps sin^2 + cos^2 = 1", "[spatial][sincos]") {
  auto ulps = [](double a, double b) {  // |a - b| in units of b's last place
    const double ulp = std::nextafter(std::abs(b), 2.0) - std::abs(b);
    return std::abs(a - b) / ulp;
  };
  std::mt19937_64 rng(7);
  for (const double range : {1e-9, 1e-3, 0.7, 3.2, 20.0, 100.0, 1e4, 1e6}) {
    std::uniform_real_distribution<double> d(-range, range);
    const double bound = range <= 100 ? 1.0 : 2.0;
    double worst = 0, worst_norm = 0;
    for (int i = 0; i < 200000; ++i) {
      const double x = d(rng);
      double s, c;
      sincos(x, s, c);
      worst = std::max({worst, ulps(s, std::sin(x)), ulps(c, std::cos(x))});
      worst_norm = std::max(worst_norm, std::abs(s * s + c * c - 1));
    }
    INFO("range " << range);
    CHECK(worst <= bound);
    CHECK(worst_norm <= 4e-16);
  }
  // each quadrant's sign and swap, and the neighbours of k pi/2, where r is tiny and the
  // reduction's error shows (a reduction that rounds k (P2 + P3) at once is 14 ulp off at k = 6e5)
  for (const int k : {-8, -7, -6, -5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1001, -77777, 600001, -667000}) {
    double x = k * 1.5707963267948966;
    const double bound = std::abs(x) <= 100 ? 1.0 : 2.0;
    for (int j = 0; j < 40; ++j, x = std::nextafter(x, 1e9)) {
      double s, c;
      sincos(x, s, c);
      INFO("x = " << x);
      CHECK(ulps(s, std::sin(x)) <= bound);
      CHECK(ulps(c, std::cos(x)) <= bound);
    }
  }
  double s, c;
  sincos(0.0, s, c);
  CHECK(s == 0);
  CHECK(c == 1);
  for (const double x : {2e6, -3e9, 1e300}) {  // beyond the reduction's range: libm
    sincos(x, s, c);
    CHECK(s == std::sin(x));
    CHECK(c == std::cos(x));
  }
  sincos(std::numeric_limits<double>::infinity(), s, c);
  CHECK((std::isnan(s) && std::isnan(c)));
  sincos(std::numeric_limits<double>::quiet_NaN(), s, c);
  CHECK((std::isnan(s) && std::isnan(c)));
}
