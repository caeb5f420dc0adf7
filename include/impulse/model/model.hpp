// Model: the immutable description of one articulated system (a kinematic tree).
//
// Bodies are numbered 0..nb-1 in depth-first order from the root; body i is moved by joint i
// (joint i connects parent[i] to body i; parent[i] == -1 means the world). Fixed URDF joints
// are merged: their links become frames of the body they are welded to, their inertia is added
// to it and their collision shapes move with it. Built by ModelBuilder::finalize() or the URDF
// loader; never changed afterwards, so many Data workspaces may share one Model.
#pragma once

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "impulse/core/types.hpp"
#include "impulse/model/geometry.hpp"
#include "impulse/model/joint.hpp"
#include "impulse/spatial/spatial.hpp"

namespace impulse {

enum class FrameType { Body, Link, FixedJoint, Joint, User };

// A named frame rigidly attached to a body: every URDF link (merged or not), every joint.
// A URDF mimic joint: q[joint] = multiplier * q[master] + offset. The dynamics passes treat the
// joint as a degree of freedom of its own; the stepper keeps the coupling with one equality row
// in the contact problem (contact/delassus.hpp; docs/robots.md, "Mimic joints").
struct MimicJoint {
  Index joint = -1;   // body/joint index of the mimicking joint
  Index master = -1;  // body/joint index of the joint it follows
  Scalar multiplier = 1;
  Scalar offset = 0;
};

struct Frame {
  std::string name;
  FrameType type = FrameType::User;
  Index body = -1;
  SE3 X_BF;  // pose of the frame in the body frame
};

class Model {
 public:
  std::string name;
  Index nq = 0;  // size of q
  Index nv = 0;  // size of u (and of tau)
  Index nb = 0;  // number of bodies = number of joints (fixed root included)
  bool floating_base = false;
  // Default gravity for a Data built on this Model (Data::gravity). The algorithms read
  // Data::gravity; a World sets its own gravity there and never writes into the Model.
  Vec3 gravity = Vec3(0, 0, -9.81);

  // topology and joints (size nb), indexed by body
  std::vector<Index> parent;            // parent body, -1 for the world
  std::vector<JointType> joint_type;
  std::vector<SE3> joint_placement;     // X_PJ: joint frame in parent body frame at q = 0
  std::vector<Vec3> joint_axis;         // unit axis in J (revolute, prismatic)
  std::vector<Index> idx_q, idx_v;      // first coordinate of joint i in q and in u
  std::vector<Index> nq_joint, nv_joint;
  std::vector<std::vector<Index>> children;  // child bodies of each body
  std::vector<Index> subtree_end;       // bodies i..subtree_end[i]-1 form the subtree of i

  // inertia (size nb), in the body frame, fixed children merged
  std::vector<Inertia> inertia;

  // per degree of freedom (size nv) and per coordinate (size nq)
  std::vector<Index> dof_parent;  // lambda(k): previous dof on the path to the root, -1 if none
  std::vector<Index> dof_body;    // body moved by dof k
  VecX lower_position, upper_position;  // size nq; +-inf where unlimited
  VecX velocity_limit, effort_limit;    // size nv; +inf where unlimited
  VecX damping, friction;               // size nv (URDF <dynamics>)
  VecX armature;                        // size nv, added to the diagonal of M

  // names
  std::vector<std::string> body_names;   // URDF link name of each body
  std::vector<std::string> joint_names;  // URDF joint name of each joint ("root" for a root joint)
  std::vector<std::string> joint_urdf_types;  // "revolute", "continuous", "floating", ...
  std::vector<Frame> frames;
  std::vector<CollisionShape> collision;
  std::vector<VisualShape> visuals;  // for viewers only, separate from the collision geometry
  std::vector<MimicJoint> mimic;     // described couplings (not enforced, see MimicJoint)

  // name lookups: index, or -1 when absent (find_*); or throw InvalidArgument (*_id)
  Index find_body(const std::string& n) const;
  Index find_joint(const std::string& n) const;
  Index find_frame(const std::string& n) const;
  Index body_id(const std::string& n) const;
  Index joint_id(const std::string& n) const;
  Index frame_id(const std::string& n) const;

  Scalar total_mass() const;
  // One rigid body on a floating joint (a ball, a box, a dropped object), no other joints.
  bool is_free_body() const { return nb == 1 && joint_type[0] == JointType::Floating; }
  VecX neutral_configuration() const;
  // q (+) u dt over all joints (quaternions by the exponential map). q_out may alias q.
  void integrate(const VecXcref& q, const VecXcref& u, Scalar dt, VecXref q_out) const;
  // u = q1 (-) q0: the velocity that integrate() turns q0 into q1 in unit time, joint by joint
  // (joint_difference). Throws InvalidArgument when a size does not match.
  void difference(const VecXcref& q0, const VecXcref& q1, VecXref u) const;
  // A random configuration: joints uniform within limits (or [-pi, pi]), unit quaternions.
  VecX random_configuration(std::mt19937& rng) const;

  // Two descriptions are equal when every public member is equal, value for value (names,
  // topology, placements, inertias, limits, frames, collision and visual shapes, mimic
  // couplings). Equal Models are interchangeable: World::add_articulated_system uses this to
  // hold one copy for many robots loaded from the same file (docs/benchmarks.md, "Scenes at scale").
  bool operator==(const Model& other) const;
  bool operator!=(const Model& other) const { return !(*this == other); }
  // Equal but for the physical parameters a domain randomization changes per environment: the
  // bodies' inertias (mass, centre of mass, rotational inertia) and the joints' damping and
  // friction. A Data made for one serves the other (its workspace depends on topology, joints and
  // sizes only), and so does a Stepper (it reads these values from the Model at each step), so
  // StepWorkspace shares them.
  bool equal_except_parameters(const Model& other) const;

 private:
  friend class ModelBuilder;
  bool equal(const Model& other, bool with_parameters) const;
  std::unordered_map<std::string, Index> body_index_, joint_index_, frame_index_;
};

}  // namespace impulse
