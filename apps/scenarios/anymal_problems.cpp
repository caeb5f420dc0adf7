#include "scenarios/anymal_problems.hpp"

#include <cmath>

#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/stepper/targets.hpp"
#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

namespace {
constexpr Scalar kDt = 1e-3;
constexpr Index kMaxContacts = 64;

Scalar uni(std::mt19937& rng, Scalar lo, Scalar hi) { return std::uniform_real_distribution<Scalar>(lo, hi)(rng); }
Scalar gauss(std::mt19937& rng, Scalar s) { return std::normal_distribution<Scalar>(0, s)(rng); }
}  // namespace

AnymalProblemBuilder::AnymalProblemBuilder()
    : model_(std::make_unique<Model>(load_urdf(anymal_urdf_path()))), data_(std::make_unique<Data>(*model_)),
      contacts_(kMaxContacts) {
  assembler_.reserve({model_.get()});
}

AnymalProblemBuilder::~AnymalProblemBuilder() = default;

void AnymalProblemBuilder::configure(std::mt19937& rng, Index n) {
  const Model& m = *model_;
  Data& d = *data_;
  // configuration: base 0.5 m up, roll / pitch / yaw perturbed, joints around the nominal pose
  q_ = m.neutral_configuration();
  // Every draw below is sequenced: the order of function arguments and operands is unspecified
  // (g++ evaluates them last first, clang++ first first), and Vec3(uni(rng), uni(rng), ...) gave
  // each compiler its own problems. The order is g++'s, which produced the published figures.
  const Scalar y = uni(rng, -1, 1), x = uni(rng, -1, 1);
  q_.head<3>() = Vec3(x, y, anymal_nominal_height());
  const Scalar roll = gauss(rng, 0.15), pitch = gauss(rng, 0.15), yaw = uni(rng, -3.14, 3.14);
  const Quat R = (Eigen::AngleAxis<Scalar>(yaw, Vec3::UnitZ()) * Eigen::AngleAxis<Scalar>(pitch, Vec3::UnitY()) *
                  Eigen::AngleAxis<Scalar>(roll, Vec3::UnitX()));
  q_[3] = R.w(), q_[4] = R.x(), q_[5] = R.y(), q_[6] = R.z();
  const VecX nominal = anymal_nominal_joints();
  for (Index k = 0; k < 12; ++k) q_[7 + k] = nominal[k] + gauss(rng, 0.3);
  u_.resize(m.nv);
  for (Index k = 0; k < m.nv; ++k) u_[k] = gauss(rng, k < 6 ? 0.2 : 1.0);
  u_free_ = u_;
  u_free_[2] -= 0.3;  // falling: most contacts close
  // the stepper's dynamics stage: M~ = M + dt Kd + dt^2 Kp on the joints, factored
  crba(m, d, q_);
  compute_joint_jacobians(m, d, q_);
  for (Index k = 6; k < m.nv; ++k) d.M(k, k) += kDt * kJointKd + kDt * kDt * kJointKp;
  ltdl_factor(m, d);

  // contact points: feet, torso corners, then points along the shanks and the torso
  std::vector<std::pair<Index, Vec3>> points;  // body, point in the body frame
  std::vector<Index> feet, shanks;
  Index base_box = -1;
  for (std::size_t s = 0; s < m.collision.size(); ++s) {
    const CollisionShape& sh = m.collision[s];
    if (sh.type == ShapeType::Sphere) {
      feet.push_back(static_cast<Index>(s));
    } else if (sh.type == ShapeType::Box && sh.body == 0) {
      base_box = static_cast<Index>(s);
    }
  }
  for (Index s : feet) points.push_back({m.collision[s].body, m.collision[s].X_BS.p - Vec3(0, 0, m.collision[s].size.x())});
  const CollisionShape* box = base_box >= 0 ? &m.collision[base_box] : nullptr;
  const Vec3 half = box ? Vec3(0.5 * box->size) : Vec3(0.29, 0.07, 0.09);
  for (Scalar z : {-1.0, 1.0})
    for (Scalar x : {1.0, -1.0})
      for (Scalar y : {1.0, -1.0}) {
        const Vec3 corner(x * half.x(), y * half.y(), z * half.z());
        points.push_back({box ? box->body : 0, box ? box->X_BS.act_point(corner) : corner});
      }
  for (Index k = 0; static_cast<Index>(points.size()) < n; ++k) {
    // along the shank of foot k % 4 (between knee and foot) or on the torso
    if (k % 2 == 0 && !feet.empty()) {
      const Index body = m.collision[feet[static_cast<std::size_t>((k / 2) % feet.size())]].body;
      const Scalar z = uni(rng, 0.0, 0.25), y = gauss(rng, 0.02), x = gauss(rng, 0.02);
      points.push_back({body, Vec3(x, y, z)});
    } else {
      const Scalar y = uni(rng, -half.y(), half.y()), x = uni(rng, -half.x(), half.x());
      points.push_back({box ? box->body : 0, Vec3(x, y, -half.z())});
    }
  }
  forward_kinematics(m, d, q_);
  contacts_.clear();
  for (Index i = 0; i < n; ++i) {
    Contact* c = contacts_.add();
    const auto& pt = points[static_cast<std::size_t>(i)];
    c->object_a = 0;
    c->body_a = pt.first;
    c->shape_a = 0;
    c->object_b = 1;
    c->body_b = -1;
    c->shape_b = 0;
    c->position = d.oMi[pt.first].act_point(pt.second);
    // terrain normal tilted by up to ~0.2 rad
    const Scalar ny = gauss(rng, 0.1), nx = gauss(rng, 0.1);
    c->normal = Vec3(nx, ny, 1).normalized();
    c->depth = 1e-4;
    c->mu = uni(rng, 0.3, 1.0);
    c->restitution = 0;
  }
}

AnymalProblem AnymalProblemBuilder::make(std::mt19937& rng, Index n) {
  configure(rng, n);
  SystemView view{model_.get(), data_.get(), &q_, &u_, &u_free_};
  DelassusSettings settings;
  settings.joint_limits = false;
  const std::vector<SystemView> views = {view};
  assembler_.assemble(views, {0, -1}, contacts_, kDt, settings);
  PositionUpdatePlan plan;
  plan.reserve(1);
  targets_stage(assembler_, views, kDt, settings, plan);
  const ContactProblem p = assembler_.problem();
  AnymalProblem out;
  out.G = p.G;
  out.c = p.c;
  out.mu = p.mu.head(p.nc);
  out.nc = p.nc;
  out.nl = p.nl;
  return out;
}

AnymalProblem AnymalProblemBuilder::make_sticking(std::mt19937& rng, Index n, VecX& lambda_star) {
  AnymalProblem p = make(rng, n);
  lambda_star.setZero(p.G.rows());
  for (Index i = 0; i < p.nc; ++i) {
    const Scalar z = uni(rng, 0.5, 2.0), r = uni(rng, 0, 0.7) * p.mu[i] * z, a = uni(rng, -3.14, 3.14);
    lambda_star.segment<3>(3 * i) = Vec3(r * std::cos(a), r * std::sin(a), z);
  }
  p.c = -p.G * lambda_star;
  return p;
}

}  // namespace impulse::scenarios
