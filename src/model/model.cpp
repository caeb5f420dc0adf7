#include "impulse/model/model.hpp"

#include <cmath>

#include "impulse/core/check.hpp"
#include "../core/isa_dispatch.hpp"

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

void Model::difference(const VecXcref& q0, const VecXcref& q1, VecXref u) const {
  IMPULSE_CHECK(q0.size() == nq, "q0 has size ", q0.size(), ", the model needs nq = ", nq);
  IMPULSE_CHECK(q1.size() == nq, "q1 has size ", q1.size(), ", the model needs nq = ", nq);
  IMPULSE_CHECK(u.size() == nv, "u has size ", u.size(), ", the model needs nv = ", nv);
  for (Index i = 0; i < nb; ++i) {
    joint_difference(joint_type[i], q0.data() + idx_q[i], q1.data() + idx_q[i], u.data() + idx_v[i]);
  }
}

void Model::integrate(const VecXcref& q, const VecXcref& u, Scalar dt, VecXref q_out) const {
  IMPULSE_ASSERT(q.size() == nq && u.size() == nv && q_out.size() == nq);
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  for (Index i = 0; i < nb; ++i) {
    joint_integrate(joint_type[i], q.data() + idx_q[i], u.data() + idx_v[i], dt, q_out.data() + idx_q[i]);
  }
  };
  return detail::run_kernel(kernel_body);
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

namespace impulse {

namespace {
// Exact, value-for-value comparisons (a Model is a description: two loads of one file give the
// same bits, and anything else is a different description).
bool eq(const Vec3& a, const Vec3& b) { return a == b; }
bool eq(const Vec4& a, const Vec4& b) { return a == b; }
bool eq(const VecX& a, const VecX& b) { return a.size() == b.size() && a == b; }
bool eq(const SE3& a, const SE3& b) { return a.R == b.R && a.p == b.p; }
bool eq(const Inertia& a, const Inertia& b) { return a.m == b.m && a.c == b.c && a.Ic == b.Ic; }
bool eq(const Frame& a, const Frame& b) {
  return a.name == b.name && a.type == b.type && a.body == b.body && eq(a.X_BF, b.X_BF);
}
bool eq(const MimicJoint& a, const MimicJoint& b) {
  return a.joint == b.joint && a.master == b.master && a.multiplier == b.multiplier && a.offset == b.offset;
}
bool eq(const CollisionShape& a, const CollisionShape& b) {
  return a.name == b.name && a.link == b.link && a.body == b.body && a.type == b.type && eq(a.size, b.size) &&
         eq(a.X_BS, b.X_BS) && a.mesh_path == b.mesh_path && a.mesh_collision == b.mesh_collision &&
         a.material == b.material;
}
bool eq(const VisualShape& a, const VisualShape& b) {
  return a.name == b.name && a.link == b.link && a.body == b.body && a.type == b.type && eq(a.size, b.size) &&
         eq(a.X_BS, b.X_BS) && a.mesh_path == b.mesh_path && a.mesh_uri == b.mesh_uri && a.material == b.material &&
         eq(a.rgba, b.rgba);
}
template <typename T>
bool eq(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!eq(a[i], b[i])) return false;
  return true;
}

// A member added to one of these structs must be added to the comparisons above: the sizes of
// the layouts they were written for (libstdc++, x86-64, Eigen's default 16-byte alignment) catch
// a forgotten one at compile time.
#if defined(__GLIBCXX__) && defined(__x86_64__) && !defined(_GLIBCXX_DEBUG) && EIGEN_MAX_STATIC_ALIGN_BYTES == 16
static_assert(sizeof(Frame) == 136, "Frame changed: update eq(Frame) in model.cpp");
static_assert(sizeof(MimicJoint) == 24, "MimicJoint changed: update eq(MimicJoint) in model.cpp");
static_assert(sizeof(CollisionShape) == 264, "CollisionShape changed: update eq(CollisionShape) in model.cpp");
static_assert(sizeof(VisualShape) == 320, "VisualShape changed: update eq(VisualShape) in model.cpp");
static_assert(sizeof(Model) == 832, "Model changed: update Model::operator== in model.cpp");
#endif
}  // namespace

bool Model::equal(const Model& o, bool with_parameters) const {
  // cheap members first: different robots differ in their sizes or their name
  return nq == o.nq && nv == o.nv && nb == o.nb && floating_base == o.floating_base && name == o.name &&
         eq(gravity, o.gravity) && parent == o.parent && joint_type == o.joint_type &&
         eq(joint_placement, o.joint_placement) && eq(joint_axis, o.joint_axis) && idx_q == o.idx_q &&
         idx_v == o.idx_v && nq_joint == o.nq_joint && nv_joint == o.nv_joint && children == o.children &&
         subtree_end == o.subtree_end && (!with_parameters || eq(inertia, o.inertia)) && dof_parent == o.dof_parent &&
         dof_body == o.dof_body && eq(lower_position, o.lower_position) && eq(upper_position, o.upper_position) &&
         eq(velocity_limit, o.velocity_limit) && eq(effort_limit, o.effort_limit) &&
         (!with_parameters || (eq(damping, o.damping) && eq(friction, o.friction))) && eq(armature, o.armature) && body_names == o.body_names &&
         joint_names == o.joint_names && joint_urdf_types == o.joint_urdf_types && eq(frames, o.frames) &&
         eq(collision, o.collision) && eq(visuals, o.visuals) && eq(mimic, o.mimic);
}

bool Model::operator==(const Model& o) const { return equal(o, true); }

bool Model::equal_except_parameters(const Model& o) const { return equal(o, false); }

}  // namespace impulse
