// VecWorld (see the header).
#include "impulse/batch/vec_world.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "impulse/batch/limits.hpp"
#include "impulse/core/error.hpp"
#include "impulse/model/model_builder.hpp"

namespace impulse::batch {

VecWorld::VecWorld(const WorldDescription& description, Index num_worlds, int num_threads) : pool_(num_threads) {
  if (num_worlds < 1) throw InvalidArgument("VecWorld: num_worlds must be >= 1, got " + std::to_string(num_worlds));
  std::unique_ptr<World> first;
  make_first_within_memory("VecWorld", num_worlds, [&] {
    first = std::make_unique<World>();
    build_world(description, *first);
  });
  worlds_.resize(static_cast<std::size_t>(num_worlds));
  worlds_[0] = std::move(first);
  status_.assign(static_cast<std::size_t>(num_worlds), 0);
  lanes_ = lanes_default_width();
  for (int t = 0; t < pool_.num_threads(); ++t) workspaces_.push_back(std::make_unique<StepWorkspace>());
  for (int t = 0; t < pool_.num_threads(); ++t) world_lanes_.push_back(std::make_unique<WorldLanes>());
  ray_from_.resize(static_cast<std::size_t>(pool_.num_threads()));
  ray_t_.resize(static_cast<std::size_t>(pool_.num_threads()));
  // the other environments are clones of the first: one WorldModel, one copy of the Models and of
  // the collision geometry for all (clone() reads the first World only: clones in parallel are safe)
  const World& prototype = *worlds_[0];
  pool_.parallel_for(num_worlds - 1, [&](Index i) { worlds_[static_cast<std::size_t>(i + 1)] = prototype.clone(); });
  // every thread's workspace holds the Data of every World's systems (one per Model and rank:
  // worlds of one description share their Models), so that no step allocates
  for (auto& ws : workspaces_)
    for (const auto& w : worlds_) w->reserve_workspace(*ws);
  reserve_lanes();
}

VecWorld::VecWorld(const World& prototype, Index num_worlds, int num_threads) : pool_(num_threads) {
  if (num_worlds < 1) throw InvalidArgument("VecWorld: num_worlds must be >= 1, got " + std::to_string(num_worlds));
  std::unique_ptr<World> first;
  make_first_within_memory("VecWorld", num_worlds, [&] { first = prototype.clone(); });
  worlds_.resize(static_cast<std::size_t>(num_worlds));
  worlds_[0] = std::move(first);
  status_.assign(static_cast<std::size_t>(num_worlds), 0);
  lanes_ = lanes_default_width();
  for (int t = 0; t < pool_.num_threads(); ++t) workspaces_.push_back(std::make_unique<StepWorkspace>());
  for (int t = 0; t < pool_.num_threads(); ++t) world_lanes_.push_back(std::make_unique<WorldLanes>());
  ray_from_.resize(static_cast<std::size_t>(pool_.num_threads()));
  ray_t_.resize(static_cast<std::size_t>(pool_.num_threads()));
  // clone() reads the prototype only: clones in parallel are safe
  pool_.parallel_for(num_worlds - 1, [&](Index i) { worlds_[static_cast<std::size_t>(i + 1)] = prototype.clone(); });
  for (auto& ws : workspaces_)
    for (const auto& w : worlds_) w->reserve_workspace(*ws);
  reserve_lanes();
}

std::unique_ptr<VecWorld> VecWorld::from_file(const std::string& path, Index num_worlds, int num_threads) {
  return std::make_unique<VecWorld>(parse_world_file(path), num_worlds, num_threads);
}

World& VecWorld::world(Index i) {
  use_.check("VecWorld", "world");
  if (i < 0 || i >= size())
    throw InvalidArgument("VecWorld: world index " + std::to_string(i) + " out of range [0, " +
                          std::to_string(size()) + ")");
  return *worlds_[static_cast<std::size_t>(i)];
}

void VecWorld::integrate(Index steps) {
  const UseMarker::Scope in_use(use_, "VecWorld", "integrate");
  if (steps < 0) throw InvalidArgument("VecWorld::integrate: steps must be >= 0, got " + std::to_string(steps));
  // each thread steps its Worlds with its own workspace, whose Data stay in its cache; in groups
  // of lanes_ consecutive Worlds, whose dynamics it computes together (WorldLanes:
  // the same bits as one by one, so the grouping changes no result)
  const Index n = size(), width = lanes_;
  pool_.parallel_for((n + width - 1) / width, [&](Index g) {
    const Index begin = g * width, count = std::min<Index>(width, n - begin);
    World* worlds[8];
    for (Index w = 0; w < count; ++w) worlds[w] = worlds_[static_cast<std::size_t>(begin + w)].get();
    const std::size_t t = static_cast<std::size_t>(ThreadPool::thread_index());
    StepWorkspace& ws = *workspaces_[t];
    StepReport report[8];
    int first[8] = {};
    WorldLanes::GroupMemory memory;
    for (Index k = 0; k < steps; ++k) {
      world_lanes_[t]->integrate(worlds, static_cast<int>(count), static_cast<int>(width), ws, report, &memory);
      for (Index w = 0; w < count; ++w) {
        if (first[w] == 0) first[w] = static_cast<int>(report[w].status);
      }
    }
    for (Index w = 0; w < count; ++w) status_[static_cast<std::size_t>(begin + w)] = first[w];
  }, [&](Index next) {  // this thread's next group
    worlds_[static_cast<std::size_t>(next * width)]->prefetch(workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())].get());
  });
}

void VecWorld::set_lanes(int width) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_lanes");
  check_lanes_width(width, "VecWorld::set_lanes");
  if (width == lanes_) return;
  lanes_ = width;
  reserve_lanes();
}

void VecWorld::reserve_lanes() {
  // every thread's lanes of this width made now (WorldLanes::reserve), not when it first takes a group
  for (std::size_t t = 0; t < world_lanes_.size(); ++t) world_lanes_[t]->reserve(*worlds_.front(), lanes_, *workspaces_[t]);
}

void VecWorld::check_rows(const char* what, Index rows, Index cols, Index s, bool position) const {
  const World& w0 = *worlds_.front();
  if (s < 0 || s >= w0.num_systems())
    throw InvalidArgument(std::string("VecWorld::") + what + ": system index " + std::to_string(s) +
                          " out of range [0, " + std::to_string(w0.num_systems()) + ")");
  const ArticulatedSystem& sys = *w0.systems()[static_cast<std::size_t>(s)];
  const Index n = position ? sys.nq() : sys.nv();
  if (rows != size() || cols != n)
    throw InvalidArgument(std::string("VecWorld::") + what + ": expected an array of shape (" +
                          std::to_string(size()) + ", " + std::to_string(n) + "), got (" + std::to_string(rows) +
                          ", " + std::to_string(cols) + ")");
}

void VecWorld::get_q(Index s, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_q");
  check_rows("get_q", out.rows(), out.cols(), s, true);
  for (Index i = 0; i < size(); ++i) out.row(i) = worlds_[static_cast<std::size_t>(i)]->systems()[s]->q().transpose();
}

void VecWorld::get_u(Index s, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_u");
  check_rows("get_u", out.rows(), out.cols(), s, false);
  for (Index i = 0; i < size(); ++i) out.row(i) = worlds_[static_cast<std::size_t>(i)]->systems()[s]->u().transpose();
}

void VecWorld::set_state(Index s, const RowMatXcref& q, const RowMatXcref& u) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_state");
  check_rows("set_state", q.rows(), q.cols(), s, true);
  check_rows("set_state", u.rows(), u.cols(), s, false);
  // check every row first (the system's own check: finite, unit quaternions), then set them all:
  // a bad row changes nothing, not even the free-flight history the setter drops
  for (Index i = 0; i < size(); ++i) {
    if (!q.row(i).allFinite() || !u.row(i).allFinite())
      throw InvalidArgument("VecWorld::set_state: row " + std::to_string(i) + " is not finite");
    try {
      worlds_[static_cast<std::size_t>(i)]->systems()[s]->check_state(q.row(i).transpose(), u.row(i).transpose());
    } catch (const Error& e) {
      throw InvalidArgument("VecWorld::set_state: row " + std::to_string(i) + ": " + e.what());
    }
  }
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[s]->set_state(q.row(i).transpose(), u.row(i).transpose());
}

void VecWorld::set_pd_targets(Index s, const RowMatXcref& q_target, const RowMatXcref& u_target) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_pd_targets");
  check_rows("set_pd_targets", q_target.rows(), q_target.cols(), s, true);
  check_rows("set_pd_targets", u_target.rows(), u_target.cols(), s, false);
  if (!q_target.allFinite() || !u_target.allFinite())
    throw InvalidArgument("VecWorld::set_pd_targets: targets must be finite");
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[s]->set_pd_targets(q_target.row(i).transpose(),
                                                                      u_target.row(i).transpose());
}

void VecWorld::set_generalized_force(Index s, const RowMatXcref& tau) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_generalized_force");
  check_rows("set_generalized_force", tau.rows(), tau.cols(), s, false);
  if (!tau.allFinite()) throw InvalidArgument("VecWorld::set_generalized_force: tau must be finite");
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[s]->set_generalized_force(tau.row(i).transpose());
}

void VecWorld::check_frames(const char* what, Index s, const std::vector<Index>& ids, bool bodies, Index rows,
                            Index cols, Index per) const {
  const World& w0 = *worlds_.front();
  if (s < 0 || s >= w0.num_systems())
    throw InvalidArgument(std::string("VecWorld::") + what + ": system index " + std::to_string(s) +
                          " out of range [0, " + std::to_string(w0.num_systems()) + ")");
  const ArticulatedSystem& sys = *worlds_.front()->systems()[static_cast<std::size_t>(s)];
  const Index count = bodies ? sys.model().nb : static_cast<Index>(sys.model().frames.size());
  for (Index id : ids)
    if (id < 0 || id >= count)
      throw InvalidArgument(std::string("VecWorld::") + what + ": " + (bodies ? "body" : "frame") + " index " +
                            std::to_string(id) + " out of range [0, " + std::to_string(count) + ")");
  const Index want = per * static_cast<Index>(ids.size());
  if (rows != size() || cols != want)
    throw InvalidArgument(std::string("VecWorld::") + what + ": expected an array of shape (" +
                          std::to_string(size()) + ", " + std::to_string(want) + "), got (" + std::to_string(rows) +
                          ", " + std::to_string(cols) + ")");
}

void VecWorld::reset(const Eigen::Ref<const Eigen::Matrix<bool, Eigen::Dynamic, 1>>& mask, Index s,
                     const RowMatXcref& q, const RowMatXcref& u) {
  const UseMarker::Scope in_use(use_, "VecWorld", "reset");
  if (mask.size() != size())
    throw InvalidArgument("VecWorld::reset: mask must have size " + std::to_string(size()) + ", got " +
                          std::to_string(mask.size()));
  check_rows("reset", q.rows(), q.cols(), s, true);
  check_rows("reset", u.rows(), u.cols(), s, false);
  // check the masked rows first (finite, unit quaternions: the system's own check), so a bad row
  // resets nothing
  for (Index i = 0; i < size(); ++i) {
    if (!mask[i]) continue;
    if (!q.row(i).allFinite() || !u.row(i).allFinite())
      throw InvalidArgument("VecWorld::reset: row " + std::to_string(i) + " is not finite");
    try {
      worlds_[static_cast<std::size_t>(i)]->systems()[s]->check_state(q.row(i).transpose(), u.row(i).transpose());
    } catch (const Error& e) {
      throw InvalidArgument("VecWorld::reset: row " + std::to_string(i) + ": " + e.what());
    }
  }
  pool_.parallel_for(size(), [&](Index i) {
    if (!mask[i]) return;
    World& w = *worlds_[static_cast<std::size_t>(i)];
    w.reset();
    w.systems()[static_cast<std::size_t>(s)]->set_state(q.row(i).transpose(), u.row(i).transpose());
  });
}

void VecWorld::get_frame_poses(Index s, const std::vector<Index>& frames, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_frame_poses");
  check_frames("get_frame_poses", s, frames, false, out.rows(), out.cols(), 7);
  const_cast<ThreadPool&>(pool_).parallel_for(size(), [&](Index i) {
    const ArticulatedSystem& sys = *worlds_[static_cast<std::size_t>(i)]->systems()[static_cast<std::size_t>(s)];
    sys.frame_poses(frames, out.row(i).data());
  });
}

void VecWorld::get_frame_velocities(Index s, const std::vector<Index>& frames, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_frame_velocities");
  check_frames("get_frame_velocities", s, frames, false, out.rows(), out.cols(), 6);
  const_cast<ThreadPool&>(pool_).parallel_for(size(), [&](Index i) {
    const ArticulatedSystem& sys = *worlds_[static_cast<std::size_t>(i)]->systems()[static_cast<std::size_t>(s)];
    sys.frame_velocities(frames, out.row(i).data());
  });
}

void VecWorld::get_contact_forces(Index s, const std::vector<Index>& bodies, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_contact_forces");
  check_frames("get_contact_forces", s, bodies, true, out.rows(), out.cols(), 3);
  for (Index i = 0; i < size(); ++i) {
    const World& w = *worlds_[static_cast<std::size_t>(i)];
    const ArticulatedSystem& sys = *w.systems()[static_cast<std::size_t>(s)];
    out.row(i).setZero();
    for (const BodyContactImpulse& c : sys.contact_impulses())
      for (std::size_t k = 0; k < bodies.size(); ++k)
        if (c.body == bodies[k]) out.row(i).segment<3>(3 * static_cast<Index>(k)) += c.impulse.transpose() / w.time_step();
  }
}

void VecWorld::set_gravity(const RowMatXcref& gravity) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_gravity");
  if (gravity.rows() != size() || gravity.cols() != 3)
    throw InvalidArgument("VecWorld::set_gravity: expected an array of shape (" + std::to_string(size()) +
                          ", 3), got (" + std::to_string(gravity.rows()) + ", " + std::to_string(gravity.cols()) + ")");
  if (!gravity.allFinite()) throw InvalidArgument("VecWorld::set_gravity: gravity must be finite");
  for (Index i = 0; i < size(); ++i) worlds_[static_cast<std::size_t>(i)]->set_gravity(gravity.row(i).transpose());
}

void VecWorld::set_friction(const VecXcref& friction) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_friction");
  if (friction.size() != size())
    throw InvalidArgument("VecWorld::set_friction: expected " + std::to_string(size()) + " values, got " +
                          std::to_string(friction.size()));
  if (!friction.allFinite() || (friction.array() < 0).any())
    throw InvalidArgument("VecWorld::set_friction: friction must be finite and >= 0");
  for (Index i = 0; i < size(); ++i) {
    World& w = *worlds_[static_cast<std::size_t>(i)];
    w.set_default_material(friction[i], w.materials().default_pair().restitution);
  }
}

void VecWorld::set_pd_gains(Index s, const RowMatXcref& kp, const RowMatXcref& kd) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_pd_gains");
  check_rows("set_pd_gains", kp.rows(), kp.cols(), s, false);
  check_rows("set_pd_gains", kd.rows(), kd.cols(), s, false);
  // the system checks each row (finite, >= 0, zero on the floating base); check all rows on the
  // first world's system before any change, restoring its gains afterwards
  ArticulatedSystem& probe = *worlds_.front()->systems()[static_cast<std::size_t>(s)];
  const VecX kp0 = probe.kp(), kd0 = probe.kd();
  for (Index i = 0; i < size(); ++i) {
    try {
      probe.set_pd_gains(kp.row(i).transpose(), kd.row(i).transpose());
    } catch (const Error& e) {
      probe.set_pd_gains(kp0, kd0);
      throw InvalidArgument("VecWorld::set_pd_gains: row " + std::to_string(i) + ": " + e.what());
    }
  }
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[static_cast<std::size_t>(s)]->set_pd_gains(kp.row(i).transpose(),
                                                                                              kd.row(i).transpose());
}

void VecWorld::get_applied_torques(Index s, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_applied_torques");
  check_rows("get_applied_torques", out.rows(), out.cols(), s, false);
  for (Index i = 0; i < size(); ++i)
    out.row(i) = worlds_[static_cast<std::size_t>(i)]->systems()[static_cast<std::size_t>(s)]->applied_torque().transpose();
}

void VecWorld::get_height_scan(Index s, Index frame, const RowMatXcref& pattern, RowMatXref out, Scalar ray_start,
                               Scalar max_distance) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_height_scan");
  const Index P = pattern.rows();
  if (pattern.cols() != 2 || P < 1)
    throw InvalidArgument("VecWorld::get_height_scan: pattern must have shape (P, 2) with P >= 1, got (" +
                          std::to_string(pattern.rows()) + ", " + std::to_string(pattern.cols()) + ")");
  if (!pattern.allFinite()) throw InvalidArgument("VecWorld::get_height_scan: pattern must be finite");
  if (!(std::isfinite(ray_start) && std::isfinite(max_distance) && max_distance > 0))
    throw InvalidArgument("VecWorld::get_height_scan: ray_start must be finite and max_distance finite and > 0");
  check_frames("get_height_scan", s, {frame}, false, out.rows(), out.cols(), P);  // out: (N, P)
  const std::vector<Index> frames{frame};
  const_cast<ThreadPool&>(pool_).parallel_for(size(), [&](Index i) {
    const World& w = *worlds_[static_cast<std::size_t>(i)];
    const ArticulatedSystem& sys = *w.systems()[static_cast<std::size_t>(s)];
    Scalar pose[7];
    sys.frame_poses(frames, pose);
    const Eigen::Quaternion<Scalar> q(pose[3], pose[4], pose[5], pose[6]);
    const Mat3 R = q.toRotationMatrix();
    // yaw-aligned: the heading of the frame's x axis in the horizontal plane (sensors.hpp's HeightScan)
    const Scalar yaw = std::atan2(R(1, 0), R(0, 0));
    const Scalar c = std::cos(yaw), sn = std::sin(yaw);
    const Scalar z0 = pose[2] + ray_start;
    const auto t_index = static_cast<std::size_t>(ThreadPool::thread_index());
    std::vector<Vec3>& from = ray_from_[t_index];
    std::vector<Scalar>& t = ray_t_[t_index];
    from.resize(static_cast<std::size_t>(P));
    t.resize(static_cast<std::size_t>(P));
    for (Index k = 0; k < P; ++k) {
      const Scalar px = pattern(k, 0), py = pattern(k, 1);
      from[static_cast<std::size_t>(k)] = Vec3(pose[0] + c * px - sn * py, pose[1] + sn * px + c * py, z0);
    }
    w.collision().raycast_static_down(from.data(), from.size(), max_distance, t.data());
    for (Index k = 0; k < P; ++k) {
      const Scalar tk = t[static_cast<std::size_t>(k)];
      out(i, k) = tk <= max_distance ? z0 - tk : std::numeric_limits<Scalar>::quiet_NaN();
    }
  });
}

void VecWorld::set_material_friction(const std::string& a, const std::string& b, const VecXcref& friction) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_material_friction");
  if (friction.size() != size())
    throw InvalidArgument("VecWorld::set_material_friction: expected " + std::to_string(size()) + " values, got " +
                          std::to_string(friction.size()));
  if (!friction.allFinite() || (friction.array() < 0).any())
    throw InvalidArgument("VecWorld::set_material_friction: friction must be finite and >= 0");
  for (const std::string* name : {&a, &b})
    if (worlds_.front()->materials().find(*name) < 0)
      throw InvalidArgument("VecWorld::set_material_friction: no material '" + *name + "' in the worlds");
  for (Index i = 0; i < size(); ++i) {
    World& w = *worlds_[static_cast<std::size_t>(i)];
    w.set_material_pair(a, b, friction[i], w.materials().pair(a, b).restitution);
  }
}

void VecWorld::set_body_mass(Index s, Index body, const VecXcref& mass, const RowMatXcref& com) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_body_mass");
  check_frames("set_body_mass", s, {body}, true, com.rows(), com.cols(), 3);
  if (mass.size() != size())
    throw InvalidArgument("VecWorld::set_body_mass: expected " + std::to_string(size()) + " masses, got " +
                          std::to_string(mass.size()));
  // every row is checked (as World::set_body_inertia would) before any world changes
  const auto b = static_cast<std::size_t>(body);
  for (Index i = 0; i < size(); ++i) {
    const World& w = *worlds_[static_cast<std::size_t>(i)];
    const Inertia& I = w.systems()[static_cast<std::size_t>(s)]->model().inertia[b];
    try {
      check_inertia(Inertia(mass[i], com.row(i).transpose(), I.Ic), "VecWorld::set_body_mass: row " + std::to_string(i));
    } catch (const ModelError& e) {
      throw InvalidArgument(e.what());
    }
  }
  pool_.parallel_for(size(), [&](Index i) {
    World& w = *worlds_[static_cast<std::size_t>(i)];
    const Inertia& I = w.systems()[static_cast<std::size_t>(s)]->model().inertia[b];
    w.set_body_inertia(s, body, Inertia(mass[i], com.row(i).transpose(), I.Ic));
  });
}

void VecWorld::set_joint_damping(Index s, const RowMatXcref& damping) {
  set_joint_values("set_joint_damping", s, damping, &World::set_joint_damping);
}

void VecWorld::set_joint_friction(Index s, const RowMatXcref& friction) {
  set_joint_values("set_joint_friction", s, friction, &World::set_joint_friction);
}

void VecWorld::set_joint_values(const char* what, Index s, const RowMatXcref& values,
                                void (World::*set)(Index, const VecX&)) {
  const UseMarker::Scope in_use(use_, "VecWorld", what);
  check_rows(what, values.rows(), values.cols(), s, false);
  // every row is checked (as the World would) before any world changes
  if (!values.allFinite() || (values.array() < 0).any())
    throw InvalidArgument(std::string("VecWorld::") + what + ": values must be finite and >= 0");
  pool_.parallel_for(size(), [&](Index i) {
    World& w = *worlds_[static_cast<std::size_t>(i)];
    (w.*set)(s, values.row(i).transpose());
  });
}

void VecWorld::set_external_wrenches(Index s, const std::vector<Index>& bodies, const RowMatXcref& wrenches) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_external_wrenches");
  check_frames("set_external_wrenches", s, bodies, true, wrenches.rows(), wrenches.cols(), 6);
  if (!wrenches.allFinite()) throw InvalidArgument("VecWorld::set_external_wrenches: wrenches must be finite");
  pool_.parallel_for(size(), [&](Index i) {
    ArticulatedSystem& sys = *worlds_[static_cast<std::size_t>(i)]->systems()[static_cast<std::size_t>(s)];
    sys.clear_external_forces();
    for (std::size_t k = 0; k < bodies.size(); ++k) {
      const auto c = static_cast<Index>(6 * k);
      const Vec3 f = wrenches.row(i).segment<3>(c).transpose(), tau = wrenches.row(i).segment<3>(c + 3).transpose();
      sys.set_external_force(bodies[k], f, sys.body_pose(bodies[k]).p);
      sys.set_external_torque(bodies[k], tau);
    }
  });
}

}  // namespace impulse::batch
