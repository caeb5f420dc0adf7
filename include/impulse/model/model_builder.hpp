// ModelBuilder: assembles and validates a Model. Every check of a robot description runs here
// (or in the URDF loader before it), so a finalized Model is always consistent.
#pragma once

#include <limits>
#include <string>

#include "impulse/model/model.hpp"

namespace impulse {

struct JointLimits {
  Scalar lower = -std::numeric_limits<Scalar>::infinity();
  Scalar upper = std::numeric_limits<Scalar>::infinity();
  Scalar effort = std::numeric_limits<Scalar>::infinity();
  Scalar velocity = std::numeric_limits<Scalar>::infinity();
  Scalar damping = 0;
  Scalar friction = 0;
  Scalar armature = 0;
};

// Physical validity of a rigid-body inertia (finite, m >= 0, Ic symmetric positive semi-definite,
// principal moments satisfying the triangle inequality); throws ModelError naming `what`.
void check_inertia(const Inertia& inertia, const std::string& what);

class ModelBuilder {
 public:
  explicit ModelBuilder(std::string model_name = "model");

  // Adds body `body_name` moved by joint `joint_name` of type `type` relative to `parent`
  // (-1: the world). X_PJ places the joint frame in the parent body frame; `axis` (normalised
  // here) is used by revolute and prismatic joints. Parents must be added before children.
  // Returns the body index.
  Index add_body(Index parent, const std::string& joint_name, JointType type, const SE3& X_PJ,
                 const Vec3& axis, const JointLimits& limits, const std::string& body_name,
                 const Inertia& inertia, const std::string& urdf_joint_type = "");

  // Adds inertia (expressed in the body frame) to a body: used to merge fixed children.
  void add_inertia(Index body, const Inertia& inertia_B);
  void add_frame(const std::string& name, FrameType type, Index body, const SE3& X_BF);
  void add_collision(const CollisionShape& shape);
  void add_visual(const VisualShape& shape);
  // Records a mimic coupling between two 1-dof joints (by body index), enforced by the stepper as
  // one equality row (contact/delassus.hpp, docs/robots.md "Mimic joints").
  void add_mimic(const MimicJoint& mimic);
  void set_gravity(const Vec3& g);

  Index num_bodies() const { return model_.nb; }
  const std::string& body_name(Index b) const { return model_.body_names.at(b); }

  // Validates (names unique, inertias physical, every moving joint moves some mass) and returns
  // the Model. Throws ModelError naming the offending body or joint.
  Model finalize() const;

 private:
  Model model_;
};

}  // namespace impulse
