// Solo12 standing under joint PD (solo12_stand.hpp).
#include "scenarios/solo12_stand.hpp"

#include <algorithm>

#include "impulse/collision/mesh.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::scenarios {

std::string solo12_urdf_path() { return resolve_resource_uri(kSolo12Uri, ".", package_search_path()); }

VecX solo12_standing_joints(const Model& model) {
  VecX joints(model.nv - 6);
  for (Index i = 1; i < model.nb; ++i) {
    if (model.nv_joint[i] != 1) continue;
    const std::string& n = model.joint_names[static_cast<std::size_t>(i)];
    const bool front = n.size() > 0 && n[0] == 'F';
    Scalar a = 0;
    if (n.find("HFE") != std::string::npos) a = front ? 0.8 : -0.8;
    if (n.find("KFE") != std::string::npos) a = front ? -1.6 : 1.6;
    joints[model.idx_v[i] - 6] = a;
  }
  return joints;
}

Scalar solo12_standing_height(const Model& model) {
  VecX q = model.neutral_configuration();
  q.tail(model.nq - 7) = solo12_standing_joints(model);
  Data d(model);
  forward_kinematics(model, d, q);
  // the lowest vertex of the collision meshes (Solo12 collides through meshes only)
  Scalar lowest = 1e9;
  for (const CollisionShape& s : model.collision) {
    if (s.type != ShapeType::Mesh) continue;
    const SE3 X = d.oMi[static_cast<std::size_t>(s.body)] * s.X_BS;
    for (const Vec3& v : load_mesh(s.mesh_path, s.size).vertices) lowest = std::min(lowest, X.act_point(v).z());
  }
  return q[2] - lowest - 0.001;
}

ArticulatedSystem& add_solo12_standing(World& world, MeshCollision mesh_collision) {
  UrdfOptions uo;
  uo.mesh_collision = mesh_collision;
  auto model = std::make_shared<const Model>(load_urdf(solo12_urdf_path(), uo));
  world.add_ground();
  ArticulatedSystem& r = world.add_articulated_system(model);
  VecX q = model->neutral_configuration();
  q[2] = solo12_standing_height(*model);
  q.tail(model->nq - 7) = solo12_standing_joints(*model);
  r.set_q(q);
  VecX kp = VecX::Zero(r.nv()), kd = VecX::Zero(r.nv());
  kp.tail(r.nv() - 6).setConstant(kSolo12Kp);
  kd.tail(r.nv() - 6).setConstant(kSolo12Kd);
  r.set_pd_gains(kp, kd);
  r.set_pd_targets(q, VecX::Zero(r.nv()));
  return r;
}

}  // namespace impulse::scenarios
