#include "impulse/model/model.hpp"

#include <cmath>

#include "impulse/core/check.hpp"

namespace impulse {

namespace {
Index find_in(const std::unordered_map<std::string, Index>& m, const std::string& n) {
  auto it = m.find(n);
  return it == m.end() ? -1 : it->second;
}
}  // namespace

Index Model::find_body(const std::string& n) const { return find_in(body_index_, n); }
Index Model::find_joint(const std::string& n) const { return find_in(joint_index_, n); }
Index Model::find_frame(const std::string& n) const { return find_in(frame_index_, n); }

Index Model::body_id(const std::string& n) const {
  const Index i = find_body(n);
  IMPULSE_CHECK(i >= 0, "model '", name, "' has no body named '", n, "'");
  return i;
}
Index Model::joint_id(const std::string& n) const {
  const Index i = find_joint(n);
  IMPULSE_CHECK(i >= 0, "model '", name, "' has no moving joint named '", n, "'");
  return i;
}
Index Model::frame_id(const std::string& n) const {
  const Index i = find_frame(n);
  IMPULSE_CHECK(i >= 0, "model '", name, "' has no frame named '", n, "'");
  return i;
}

Scalar Model::total_mass() const {
  Scalar m = 0;
  for (const Inertia& I : inertia) m += I.m;
  return m;
}

VecX Model::neutral_configuration() const {
  VecX q(nq);
  for (Index i = 0; i < nb; ++i) joint_neutral(joint_type[i], q.data() + idx_q[i]);
  return q;
}

void Model::integrate(const VecXcref& q, const VecXcref& u, Scalar dt, VecXref q_out) const {
  IMPULSE_ASSERT(q.size() == nq && u.size() == nv && q_out.size() == nq);
  for (Index i = 0; i < nb; ++i) {
    joint_integrate(joint_type[i], q.data() + idx_q[i], u.data() + idx_v[i], dt, q_out.data() + idx_q[i]);
  }
}

VecX Model::random_configuration(std::mt19937& rng) const {
  VecX q(nq);
  std::uniform_real_distribution<Scalar> unit(-1.0, 1.0);
  std::normal_distribution<Scalar> normal(0.0, 1.0);
  for (Index i = 0; i < nb; ++i) {
    Scalar* qi = q.data() + idx_q[i];
    switch (joint_type[i]) {
      case JointType::Fixed: break;
      case JointType::Revolute:
      case JointType::Prismatic: {
        Scalar lo = lower_position[idx_q[i]], hi = upper_position[idx_q[i]];
        if (!std::isfinite(lo) || !std::isfinite(hi)) { lo = -M_PI; hi = M_PI; }
        qi[0] = 0.5 * (lo + hi) + 0.5 * (hi - lo) * unit(rng);
        break;
      }
      case JointType::Floating:
        for (int k = 0; k < 3; ++k) qi[k] = unit(rng);
        qi += 3;
        [[fallthrough]];
      case JointType::Spherical: {
        // draws in a fixed order (the order of function arguments is unspecified: g++ and clang++
        // would give different configurations for one seed); last component first, as g++ did
        const Scalar d = normal(rng), c = normal(rng), b = normal(rng), a = normal(rng);
        Vec4 v(a, b, c, d);
        v.normalize();
        for (int k = 0; k < 4; ++k) qi[k] = v[k];
        break;
      }
    }
  }
  return q;
}

}  // namespace impulse
