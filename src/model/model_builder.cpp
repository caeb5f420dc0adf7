#include "impulse/model/model_builder.hpp"

#include <algorithm>

#include <Eigen/Eigenvalues>
#include <cmath>

#include "impulse/core/check.hpp"

namespace impulse {

#define MODEL_CHECK(cond, ...) IMPULSE_CHECK_AS(::impulse::ModelError, cond, __VA_ARGS__)

namespace {

bool finite_se3(const SE3& X) { return X.R.allFinite() && X.p.allFinite(); }

}  // namespace

// (the triangle inequality: a real mass distribution has I1 + I2 >= I3 for every permutation)
void check_inertia(const Inertia& I, const std::string& what) {
  MODEL_CHECK(std::isfinite(I.m) && I.c.allFinite() && I.Ic.allFinite(), what, ": inertia has a non-finite entry");
  MODEL_CHECK(I.m >= 0, what, ": negative mass ", I.m);
  MODEL_CHECK((I.Ic - I.Ic.transpose()).norm() <= 1e-9 * (1 + I.Ic.norm()), what, ": inertia tensor is not symmetric");
  const Vec3 e = Eigen::SelfAdjointEigenSolver<Mat3>(I.Ic, Eigen::EigenvaluesOnly).eigenvalues();
  const Scalar tol = 1e-9 * (1 + e.cwiseAbs().maxCoeff());
  MODEL_CHECK(e.minCoeff() >= -tol, what, ": inertia tensor is not positive semi-definite (eigenvalues ",
              e.transpose(), ")");
  MODEL_CHECK(e[0] + e[1] >= e[2] - tol, what, ": principal moments ", e.transpose(),
              " violate the triangle inequality");
}

namespace {

// Motion subspace of joint i in its body frame at the neutral configuration.
Mat6X neutral_subspace(JointType t, const Vec3& axis) {
  Mat6X S = Mat6X::Zero(6, joint_nv(t));
  switch (t) {
    case JointType::Fixed: break;
    case JointType::Revolute: S.block<3, 1>(3, 0) = axis; break;
    case JointType::Prismatic: S.block<3, 1>(0, 0) = axis; break;
    case JointType::Spherical: S.bottomRows<3>().setIdentity(); break;
    case JointType::Floating: S.setIdentity(); break;
  }
  return S;
}

}  // namespace

ModelBuilder::ModelBuilder(std::string model_name) { model_.name = std::move(model_name); }

Index ModelBuilder::add_body(Index parent, const std::string& joint_name, JointType type, const SE3& X_PJ,
                             const Vec3& axis, const JointLimits& limits, const std::string& body_name,
                             const Inertia& inertia, const std::string& urdf_joint_type) {
  Model& m = model_;
  MODEL_CHECK(parent >= -1 && parent < m.nb, "joint '", joint_name, "': parent body index ", parent,
              " does not exist (bodies must be added parent first)");
  MODEL_CHECK(m.body_index_.count(body_name) == 0, "duplicate body name '", body_name, "'");
  MODEL_CHECK(m.joint_index_.count(joint_name) == 0, "duplicate joint name '", joint_name, "'");
  MODEL_CHECK(finite_se3(X_PJ), "joint '", joint_name, "': placement has a non-finite entry");
  Vec3 a = Vec3::Zero();
  if (type == JointType::Revolute || type == JointType::Prismatic) {
    MODEL_CHECK(axis.allFinite() && axis.norm() > 1e-12, "joint '", joint_name, "': axis ", axis.transpose(),
                " is zero or not finite");
    a = axis.normalized();
  }
  MODEL_CHECK(type != JointType::Floating || parent == -1, "joint '", joint_name,
              "': a floating joint must connect a root body to the world");
  MODEL_CHECK(!std::isnan(limits.lower) && !std::isnan(limits.upper) && !std::isnan(limits.effort) &&
                  !std::isnan(limits.velocity) && std::isfinite(limits.damping) && std::isfinite(limits.friction) &&
                  std::isfinite(limits.armature),
              "joint '", joint_name, "': limit or dynamics value is NaN or infinite");
  MODEL_CHECK(limits.lower <= limits.upper, "joint '", joint_name, "': lower limit ", limits.lower,
              " is above upper limit ", limits.upper);
  MODEL_CHECK(limits.effort >= 0 && limits.velocity >= 0 && limits.damping >= 0 && limits.friction >= 0 &&
                  limits.armature >= 0,
              "joint '", joint_name, "': effort, velocity, damping, friction and armature must be >= 0");
  check_inertia(inertia, "body '" + body_name + "'");

  const Index i = m.nb++;
  m.parent.push_back(parent);
  m.joint_type.push_back(type);
  m.joint_placement.push_back(X_PJ);
  m.joint_axis.push_back(a);
  m.idx_q.push_back(m.nq);
  m.idx_v.push_back(m.nv);
  m.nq_joint.push_back(joint_nq(type));
  m.nv_joint.push_back(joint_nv(type));
  m.inertia.push_back(inertia);
  m.body_names.push_back(body_name);
  m.joint_names.push_back(joint_name);
  m.joint_urdf_types.push_back(urdf_joint_type.empty() ? joint_type_name(type) : urdf_joint_type);
  m.body_index_[body_name] = i;
  m.joint_index_[joint_name] = i;

  const int nqj = joint_nq(type), nvj = joint_nv(type);
  const Scalar inf = std::numeric_limits<Scalar>::infinity();
  m.lower_position.conservativeResize(m.nq + nqj);
  m.upper_position.conservativeResize(m.nq + nqj);
  const bool scalar_joint = nqj == 1;
  m.lower_position.segment(m.nq, nqj).setConstant(scalar_joint ? limits.lower : -inf);
  m.upper_position.segment(m.nq, nqj).setConstant(scalar_joint ? limits.upper : inf);
  auto grow = [&](VecX& v, Scalar value) {
    v.conservativeResize(m.nv + nvj);
    v.segment(m.nv, nvj).setConstant(value);
  };
  grow(m.velocity_limit, scalar_joint ? limits.velocity : inf);
  grow(m.effort_limit, scalar_joint ? limits.effort : inf);
  grow(m.damping, limits.damping);
  grow(m.friction, limits.friction);
  grow(m.armature, limits.armature);
  m.nq += nqj;
  m.nv += nvj;

  add_frame(body_name, FrameType::Body, i, SE3());
  add_frame(joint_name, FrameType::Joint, parent, X_PJ);
  return i;
}

void ModelBuilder::add_inertia(Index body, const Inertia& inertia_B) {
  MODEL_CHECK(body >= 0 && body < model_.nb, "add_inertia: body index ", body, " does not exist");
  check_inertia(inertia_B, "inertia merged into body '" + model_.body_names[body] + "'");
  model_.inertia[body] = model_.inertia[body] + inertia_B;
}

void ModelBuilder::add_frame(const std::string& name, FrameType type, Index body, const SE3& X_BF) {
  MODEL_CHECK(body >= -1 && body < model_.nb, "frame '", name, "': body index ", body, " does not exist");
  MODEL_CHECK(finite_se3(X_BF), "frame '", name, "': placement has a non-finite entry");
  // A joint and a link may share a name in URDF: the first frame keeps the name for lookups.
  if (model_.frame_index_.count(name) == 0) model_.frame_index_[name] = static_cast<Index>(model_.frames.size());
  model_.frames.push_back(Frame{name, type, body, X_BF});
}

void ModelBuilder::add_collision(const CollisionShape& shape) {
  MODEL_CHECK(shape.body >= 0 && shape.body < model_.nb, "collision shape '", shape.name, "': body index ",
              shape.body, " does not exist");
  MODEL_CHECK(finite_se3(shape.X_BS) && shape.size.allFinite(), "collision shape '", shape.name,
              "' on link '", shape.link, "': pose or size is not finite");
  model_.collision.push_back(shape);
}

void ModelBuilder::add_visual(const VisualShape& shape) {
  MODEL_CHECK(shape.body >= 0 && shape.body < model_.nb, "visual '", shape.name, "': body index ", shape.body,
              " does not exist");
  MODEL_CHECK(finite_se3(shape.X_BS) && shape.size.allFinite() && shape.rgba.allFinite(), "visual '", shape.name,
              "' on link '", shape.link, "': pose, size or colour is not finite");
  model_.visuals.push_back(shape);
}

void ModelBuilder::add_mimic(const MimicJoint& mimic) {
  const Index n = model_.nb;
  MODEL_CHECK(mimic.joint >= 0 && mimic.joint < n && mimic.master >= 0 && mimic.master < n,
              "mimic: joint index ", mimic.joint, " or master index ", mimic.master, " does not exist");
  const std::string& name = model_.joint_names[mimic.joint];
  MODEL_CHECK(mimic.joint != mimic.master, "joint '", name, "' mimics itself");
  MODEL_CHECK(model_.nv_joint[mimic.joint] == 1 && model_.nv_joint[mimic.master] == 1, "joint '", name,
              "' mimics joint '", model_.joint_names[mimic.master], "': both must be 1-dof joints");
  MODEL_CHECK(std::isfinite(mimic.multiplier) && std::isfinite(mimic.offset), "joint '", name,
              "': mimic multiplier or offset is not finite");
  // one coupling per joint, and no cycle (a mimics b mimics a): the equality rows would be
  // contradictory or dependent
  for (const MimicJoint& other : model_.mimic) {
    MODEL_CHECK(other.joint != mimic.joint, "joint '", name, "' mimics two joints ('",
                model_.joint_names[other.master], "' and '", model_.joint_names[mimic.master], "')");
  }
  for (Index j = mimic.master, hops = 0; hops <= static_cast<Index>(model_.mimic.size()); ++hops) {
    auto it = std::find_if(model_.mimic.begin(), model_.mimic.end(), [&](const MimicJoint& m) { return m.joint == j; });
    if (it == model_.mimic.end()) break;
    j = it->master;
    MODEL_CHECK(j != mimic.joint, "joint '", name, "' mimics joint '", model_.joint_names[mimic.master],
                "', which follows '", name, "' in turn: mimic couplings form a cycle");
  }
  model_.mimic.push_back(mimic);
}

void ModelBuilder::set_gravity(const Vec3& g) {
  MODEL_CHECK(g.allFinite(), "gravity ", g.transpose(), " is not finite");
  model_.gravity = g;
}

Model ModelBuilder::finalize() const {
  Model m = model_;
  MODEL_CHECK(m.nb > 0, "model '", m.name, "' has no bodies");
  m.floating_base = m.joint_type[0] == JointType::Floating;

  // children and contiguous depth-first subtrees
  m.children.assign(m.nb, {});
  m.subtree_end.resize(m.nb);
  for (Index i = 0; i < m.nb; ++i) {
    m.subtree_end[i] = i + 1;
    if (m.parent[i] >= 0) m.children[m.parent[i]].push_back(i);
  }
  for (Index i = m.nb - 1; i >= 0; --i) {
    if (m.parent[i] >= 0) m.subtree_end[m.parent[i]] = std::max(m.subtree_end[m.parent[i]], m.subtree_end[i]);
  }
  // Every body inside the range of i must hang from a body of that range (then, by induction, it
  // descends from i). O(sum of subtree sizes), no walk to the root per pair: a 4000-link chain
  // stays fast.
  for (Index i = 0; i < m.nb; ++i) {
    for (Index j = i + 1; j < m.subtree_end[i]; ++j) {
      MODEL_CHECK(m.parent[j] >= i && m.parent[j] < j, "model '", m.name, "': bodies are not in depth-first order (body '", m.body_names[j],
                  "' lies inside the subtree of '", m.body_names[i], "' without descending from it)");
    }
  }

  // lambda(k) for the branch-induced sparsity of M (RBDA sec. 6.5)
  m.dof_parent.assign(m.nv, -1);
  m.dof_body.assign(m.nv, -1);
  for (Index i = 0; i < m.nb; ++i) {
    Index prev = -1;
    for (Index a = m.parent[i]; a >= 0; a = m.parent[a]) {
      if (m.nv_joint[a] > 0) {
        prev = m.idx_v[a] + m.nv_joint[a] - 1;
        break;
      }
    }
    for (Index k = 0; k < m.nv_joint[i]; ++k) {
      m.dof_parent[m.idx_v[i] + k] = k == 0 ? prev : m.idx_v[i] + k - 1;
      m.dof_body[m.idx_v[i] + k] = i;
    }
  }

  // Every moving joint must move some inertia along each of its directions, otherwise M is
  // singular and the joint's motion is undetermined (e.g. a massless link on a revolute joint).
  std::vector<Inertia> subtree(m.inertia.begin(), m.inertia.end());
  for (Index i = m.nb - 1; i >= 0; --i) {
    const Index p = m.parent[i];
    if (p < 0) continue;
    VecX q0(std::max(1, m.nq_joint[i]));
    joint_neutral(m.joint_type[i], q0.data());
    const SE3 X_PB = m.joint_placement[i] * joint_transform(m.joint_type[i], m.joint_axis[i], q0.data());
    subtree[p] = subtree[p] + subtree[i].transformed(X_PB);
  }
  for (Index i = 0; i < m.nb; ++i) {
    if (m.nv_joint[i] == 0) continue;
    const Mat6X S = neutral_subspace(m.joint_type[i], m.joint_axis[i]);
    const MatX D = S.transpose() * subtree[i].matrix() * S;
    const Scalar dmin = Eigen::SelfAdjointEigenSolver<MatX>(D, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
    MODEL_CHECK(dmin > 1e-12, "joint '", m.joint_names[i], "' moves no mass or inertia along some direction ",
                "(body '", m.body_names[i], "' and its subtree are massless): its motion would be undetermined");
  }
  return m;
}

}  // namespace impulse
