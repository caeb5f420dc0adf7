// SDFormat loader (include/impulse/io/sdf.hpp). Specification: SDFormat 1.9 (sdformat.org/spec),
// as libsdformat 12 implements it; in particular the pose frame semantics of "Pose Frame
// Semantics" (sdformat.org/tutorials?tut=pose_frame_semantics): a link's pose is relative to the
// model frame, a joint's to its child link, an axis is expressed in the joint frame unless
// `expressed_in` says otherwise, and libsdformat's SemanticPose::Resolve and
// JointAxis::ResolveXyz evaluate those graphs. Everything is resolved into the model frame at
// zero joint positions, then into bodies as described in the header.
#include "impulse/io/sdf.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "impulse/core/check.hpp"
#include "impulse/core/error.hpp"
#include "impulse/core/file.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/model/model_builder.hpp"
#include "loader_common.hpp"

#ifdef IMPULSE_HAVE_SDFORMAT
#include <sdf/sdf.hh>
#include <tinyxml2.h>
#endif

namespace impulse {

#ifndef IMPULSE_HAVE_SDFORMAT

bool sdf_supported() { return false; }

SdfWorld load_sdf(const std::string& path, const SdfOptions&) {
  throw ModelError(path + ": this build of Impulse reads no SDF (libsdformat-dev was not found when it was "
                   "configured; install it and configure again)");
}

SdfWorld load_sdf_string(const std::string&, const SdfOptions&, const std::string& source_name) {
  return load_sdf(source_name, {});
}

#else

namespace {

namespace fs = std::filesystem;
namespace im = ignition::math;

using detail::fail;
using detail::Reporter;

// The path `rest` (of a model:// URI) under the first of `paths` where it exists, or "" with
// `looked` listing the paths tried ("nowhere" for none).
std::string find_in_paths(const std::vector<std::string>& paths, const std::string& rest, std::string& looked) {
  for (const std::string& dir : paths) {
    const fs::path candidate = fs::path(dir) / rest;
    std::error_code ec;
    if (fs::exists(candidate, ec)) return candidate.lexically_normal().string();
    looked += (looked.empty() ? "" : ", ") + dir;
  }
  if (looked.empty()) looked = "nowhere";
  return "";
}

SE3 to_se3(const im::Pose3d& X) {
  const im::Quaterniond& q = X.Rot();
  return SE3(Quat(q.W(), q.X(), q.Y(), q.Z()).normalized().toRotationMatrix(),
             Vec3(X.Pos().X(), X.Pos().Y(), X.Pos().Z()));
}

Vec3 to_vec3(const im::Vector3d& v) { return Vec3(v.X(), v.Y(), v.Z()); }

// "message (line N)" for the first errors of a libsdformat call.
std::string describe(const sdf::Errors& errors) {
  std::string text;
  const std::size_t shown = std::min<std::size_t>(errors.size(), 5);
  for (std::size_t k = 0; k < shown; ++k) {
    if (k > 0) text += "; ";
    text += errors[k].Message();
    if (errors[k].LineNumber()) text += " (line " + std::to_string(*errors[k].LineNumber()) + ")";
  }
  if (errors.size() > shown) text += "; and " + std::to_string(errors.size() - shown) + " more";
  return text;
}

// SDF writes "no limit" as +-1e16 (the spec's defaults for <lower>/<upper>) and -1 for effort and
// velocity.
Scalar limit_or_inf(Scalar v, Scalar sign) {
  return std::isfinite(v) && std::abs(v) < 1e15 ? v : sign * std::numeric_limits<Scalar>::infinity();
}

// The collision's Coulomb friction: <surface><friction><ode><mu>, else <bullet><friction>, else
// SDF's default 1.
Scalar surface_friction(const sdf::Collision& c) {
  const sdf::ElementPtr e = c.Element();
  if (!e || !e->HasElement("surface")) return 1.0;
  const sdf::ElementPtr friction = e->GetElement("surface")->FindElement("friction");
  if (!friction) return 1.0;
  if (const sdf::ElementPtr ode = friction->FindElement("ode"); ode && ode->HasElement("mu")) {
    return ode->Get<double>("mu");
  }
  if (const sdf::ElementPtr bullet = friction->FindElement("bullet"); bullet && bullet->HasElement("friction")) {
    return bullet->Get<double>("friction");
  }
  return 1.0;
}

std::string friction_material(Scalar mu) {
  std::ostringstream s;
  s.precision(17);
  s << "sdf:mu=" << mu;
  return s.str();
}

// Elements that change nothing Impulse simulates: counted and reported once per kind.
const char* const kIgnoredElements[] = {"plugin", "sensor", "light", "actor", "scene", "gui", "audio", "wind",
                                        "atmosphere", "spherical_coordinates", "magnetic_field", "particle_emitter",
                                        "population", "road", "projector", "battery"};

void count_ignored(const sdf::ElementPtr& root, std::map<std::string, int>& counts) {
  std::vector<sdf::ElementPtr> stack{root};
  while (!stack.empty()) {
    const sdf::ElementPtr e = stack.back();
    stack.pop_back();
    const std::string name = e->GetName();
    bool ignored = false;
    for (const char* n : kIgnoredElements) ignored = ignored || name == n;
    if (ignored) {
      // libsdformat adds defaults (<scene>, <atmosphere>, ...) that the file never wrote
      if (e->GetExplicitlySetInFile()) ++counts[name];
      continue;  // its content goes with it
    }
    for (sdf::ElementPtr c = e->GetFirstElement(); c; c = c->GetNextElement()) stack.push_back(c);
  }
}

class ModelReader {
 public:
  ModelReader(const sdf::Model& m, const SE3& X_WM, const std::vector<std::string>& resource_paths,
              const std::string& text_dir, const Reporter& report, SdfWorld& out)
      : m_(m), X_WM_(X_WM), resource_paths_(resource_paths), text_dir_(text_dir), report_(report),
        source_(report.source()), out_(out) {}

  void read() {
    const std::string name = m_.Name();
    if (m_.ModelCount() > 0) {
      report_.warn("model '", name, "': ", m_.ModelCount(), " nested model(s) ignored (first: '",
                   m_.ModelByIndex(0)->Name(), "'); add them as models of the world");
    }
    const Index nl = static_cast<Index>(m_.LinkCount());
    if (nl == 0) {
      report_.warn("model '", name, "' has no link: ignored");
      return;
    }
    for (Index l = 0; l < nl; ++l) {
      const sdf::Link& link = *m_.LinkByIndex(static_cast<std::uint64_t>(l));
      link_index_[link.Name()] = l;
      im::Pose3d X;
      const sdf::Errors e = link.SemanticPose().Resolve(X, "__model__");
      if (!e.empty()) fail(source_, "model '", name, "', link '", link.Name(), "': pose: ", describe(e));
      X_ML_.push_back(to_se3(X));
    }
    SdfModel sm;
    sm.name = name;
    sm.is_static = m_.Static();
    sm.self_collision = m_.SelfCollide();
    ModelBuilder builder(name);
    if (sm.is_static) {
      read_static(builder);
    } else {
      read_tree(builder);
    }
    if (bodies_ == 0) return;  // only planes: they are in out_.planes
    try {
      sm.model = builder.finalize();
    } catch (const ModelError& e) {
      fail(source_, "model '", name, "': ", e.what());
    }
    sm.q0 = sm.model.neutral_configuration();
    if (sm.model.floating_base) {
      const SE3 X_WB = X_WM_ * X_MB_root_;
      const Quat q(X_WB.R);
      sm.q0.head<3>() = X_WB.p;
      sm.q0.segment<4>(3) << q.w(), q.x(), q.y(), q.z();
    }
    out_.models.push_back(std::move(sm));
  }

 private:
  // A static model: every link welded to the world where it is (planes become half-spaces).
  void read_static(ModelBuilder& builder) {
    for (Index l = 0; l < static_cast<Index>(X_ML_.size()); ++l) {
      const sdf::Link& link = *m_.LinkByIndex(static_cast<std::uint64_t>(l));
      const SE3 X_WL = X_WM_ * X_ML_[static_cast<std::size_t>(l)];
      // planes first: a link holding only planes needs no body
      bool solid = false;
      for (std::uint64_t k = 0; k < link.CollisionCount(); ++k) {
        const sdf::Collision& c = *link.CollisionByIndex(k);
        if (c.Geom() && c.Geom()->Type() == sdf::GeometryType::PLANE) {
          add_plane(link, c, X_WL);
        } else {
          solid = true;
        }
      }
      if (!solid && link.VisualCount() == 0) continue;
      const Index b = builder.add_body(-1, link.Name() + "_weld", JointType::Fixed, X_WL, Vec3::UnitX(), JointLimits(),
                                       link.Name(), Inertia());
      new_body();
      add_shapes(builder, link, b, SE3(), /*skip_planes=*/true);
    }
  }

  void add_plane(const sdf::Link& link, const sdf::Collision& c, const SE3& X_WL) {
    im::Pose3d X;
    const sdf::Errors e = c.SemanticPose().Resolve(X);
    if (!e.empty()) fail(source_, "collision '", c.Name(), "' of link '", link.Name(), "': pose: ", describe(e));
    const SE3 X_WS = X_WL * to_se3(X);
    const Vec3 n = X_WS.R * to_vec3(c.Geom()->PlaneShape()->Normal()).normalized();
    SdfPlane p;
    p.name = m_.Name() + "/" + link.Name() + "/" + c.Name();
    p.normal = n;
    p.offset = n.dot(X_WS.p);
    p.material = material(c);
    out_.planes.push_back(p);
  }

  std::string material(const sdf::Collision& c) {
    const Scalar mu = surface_friction(c);
    if (!(mu >= 0) || !std::isfinite(mu)) {
      fail(source_, "model '", m_.Name(), "', collision '", c.Name(), "': friction ", mu, " must be finite and >= 0");
    }
    const std::string name = friction_material(mu);
    bool known = false;
    for (const SdfFriction& f : out_.frictions) known = known || f.material == name;
    if (!known) out_.frictions.push_back(SdfFriction{name, mu});
    return name;
  }

  // The link's collisions and visuals on body b, the link at X_BL in the body frame.
  void add_shapes(ModelBuilder& builder, const sdf::Link& link, Index b, const SE3& X_BL, bool skip_planes) {
    for (std::uint64_t k = 0; k < link.CollisionCount(); ++k) {
      const sdf::Collision& c = *link.CollisionByIndex(k);
      const std::string what = "collision '" + c.Name() + "' of link '" + link.Name() + "'";
      CollisionShape s;
      s.name = link.Name() + "/" + c.Name();
      s.link = link.Name();
      s.body = b;
      s.X_BS = X_BL * pose_in_link(c, what);
      const sdf::Geometry* g = c.Geom();
      if (g && g->Type() == sdf::GeometryType::PLANE) {
        if (skip_planes) continue;
        fail(source_, "model '", m_.Name(), "', link '", link.Name(), "': collision '", c.Name(),
             "' is a plane, which only a static model may hold (an infinite plane cannot move)");
      }
      if (!geometry(g, s.type, s.size, s.mesh_path, what)) continue;
      s.material = material(c);
      builder.add_collision(s);
    }
    for (std::uint64_t k = 0; k < link.VisualCount(); ++k) {
      const sdf::Visual& v = *link.VisualByIndex(k);
      const std::string what = "visual '" + v.Name() + "' of link '" + link.Name() + "'";
      VisualShape s;
      s.name = link.Name() + "/visual/" + v.Name();
      s.link = link.Name();
      s.body = b;
      s.X_BS = X_BL * pose_in_link(v, what);
      if (v.Geom() && v.Geom()->Type() == sdf::GeometryType::PLANE) continue;  // a viewer draws its own ground
      if (!geometry(v.Geom(), s.type, s.size, s.mesh_path, what)) continue;
      if (v.Geom()->Type() == sdf::GeometryType::MESH) s.mesh_uri = v.Geom()->MeshShape()->Uri();
      if (const sdf::Material* mat = v.Material()) {
        const im::Color d = mat->Diffuse();
        s.rgba = Vec4(d.R(), d.G(), d.B(), d.A());
      }
      builder.add_visual(s);
    }
  }

  // The pose of a collision or a visual in its link's frame.
  template <class Element>
  SE3 pose_in_link(const Element& e, const std::string& what) const {
    im::Pose3d X;
    const sdf::Errors err = e.SemanticPose().Resolve(X);
    if (!err.empty()) fail(source_, what, ": pose: ", describe(err));
    return to_se3(X);
  }

  // Shape type and size; meshes resolved to a file. False (with a warning) for a geometry Impulse
  // does not collide.
  bool geometry(const sdf::Geometry* g, ShapeType& type, Vec3& size, std::string& mesh_path, const std::string& what) {
    if (!g) {
      report_.warn("model '", m_.Name(), "': ", what, " has no geometry: skipped");
      return false;
    }
    switch (g->Type()) {
      case sdf::GeometryType::BOX:
        type = ShapeType::Box;
        size = to_vec3(g->BoxShape()->Size());
        break;
      case sdf::GeometryType::SPHERE:
        type = ShapeType::Sphere;
        size = Vec3(g->SphereShape()->Radius(), 0, 0);
        break;
      case sdf::GeometryType::CYLINDER:
        type = ShapeType::Cylinder;
        size = Vec3(g->CylinderShape()->Radius(), g->CylinderShape()->Length(), 0);
        break;
      case sdf::GeometryType::CAPSULE:
        type = ShapeType::Capsule;
        size = Vec3(g->CapsuleShape()->Radius(), g->CapsuleShape()->Length(), 0);
        break;
      case sdf::GeometryType::MESH: {
        const sdf::Mesh& mesh = *g->MeshShape();
        type = ShapeType::Mesh;
        size = to_vec3(mesh.Scale());
        if (!mesh.Submesh().empty()) {
          report_.warn("model '", m_.Name(), "': ", what, ": <submesh> '", mesh.Submesh(), "' ignored (the whole mesh ",
                       "is used)");
        }
        mesh_path = resolve_mesh(mesh, what);
        break;
      }
      default:
        report_.warn("model '", m_.Name(), "': ", what, " has a geometry Impulse does not collide (ellipsoid, ",
                     "heightmap, polyline or empty): skipped");
        return false;
    }
    if (!size.allFinite() || (type != ShapeType::Mesh && (size.array() < 0).any())) {
      fail(source_, "model '", m_.Name(), "': ", what, " has an invalid size ", size.transpose());
    }
    return true;
  }

  // model://<name>/rest through the resource paths (libsdformat's find callback did that for
  // <include>, but a mesh URI is kept as written), package:// through the package paths, other
  // URIs relative to the file that holds them.
  std::string resolve_mesh(const sdf::Mesh& mesh, const std::string& what) const {
    const std::string uri = mesh.Uri();
    const std::string model_prefix = "model://";
    if (uri.compare(0, model_prefix.size(), model_prefix) == 0) {
      std::string looked;
      const std::string found = find_in_paths(resource_paths_, uri.substr(model_prefix.size()), looked);
      if (!found.empty()) return found;
      fail(source_, "model '", m_.Name(), "': ", what, ": mesh '", uri, "' not found; looked in: ", looked,
           " (set SdfOptions::resource_paths, SDF_PATH, GZ_SIM_RESOURCE_PATH or IGN_GAZEBO_RESOURCE_PATH)");
    }
    // elements of text loaded from a string (a file whose includes were rewritten) carry no file
    const std::string file = mesh.FilePath() == "data-string" ? std::string() : mesh.FilePath();
    const std::string base = file.empty() ? text_dir_ : fs::path(file).parent_path().string();
    try {
      return resolve_resource_uri(uri, base, {});
    } catch (const ModelError& e) {
      fail(source_, "model '", m_.Name(), "': ", what, ": ", e.what());
    }
  }

  // A dynamic model: one tree from its root link (joints to "world" weld or hinge it).
  void read_tree(ModelBuilder& builder) {
    const std::string name = m_.Name();
    const std::size_t nl = X_ML_.size();
    std::vector<int> parent_joint(nl, -1);  // joint whose child is the link
    std::vector<std::vector<int>> child_joints(nl);
    int world_joint = -1;
    const int nj = static_cast<int>(m_.JointCount());
    std::vector<std::size_t> child_link(static_cast<std::size_t>(nj));  // of each joint
    for (int j = 0; j < nj; ++j) {
      const sdf::Joint& joint = *m_.JointByIndex(static_cast<std::uint64_t>(j));
      std::string parent, child;
      sdf::Errors e = joint.ResolveParentLink(parent);
      if (e.empty()) e = joint.ResolveChildLink(child);
      if (!e.empty()) fail(source_, "model '", name, "', joint '", joint.Name(), "': ", describe(e));
      if (!link_index_.count(child)) {
        fail(source_, "model '", name, "', joint '", joint.Name(), "': child '", child, "' is not a link of the model");
      }
      const int c = static_cast<int>(link_index_.at(child));
      child_link[static_cast<std::size_t>(j)] = static_cast<std::size_t>(c);
      if (parent_joint[static_cast<std::size_t>(c)] >= 0) {
        fail(source_, "model '", name, "': link '", child, "' is the child of two joints ('",
             m_.JointByIndex(static_cast<std::uint64_t>(parent_joint[static_cast<std::size_t>(c)]))->Name(), "' and '",
             joint.Name(), "'): a closed kinematic loop, which Impulse does not simulate");
      }
      parent_joint[static_cast<std::size_t>(c)] = j;
      if (parent == "world") {
        if (world_joint >= 0) {
          fail(source_, "model '", name, "': two joints attach it to the world ('",
               m_.JointByIndex(static_cast<std::uint64_t>(world_joint))->Name(), "' and '", joint.Name(),
               "'): a closed kinematic loop, which Impulse does not simulate");
        }
        world_joint = j;
      } else {
        if (!link_index_.count(parent)) {
          fail(source_, "model '", name, "', joint '", joint.Name(), "': parent '", parent, "' is not a link of the model");
        }
        child_joints[static_cast<std::size_t>(link_index_.at(parent))].push_back(j);
      }
    }
    std::vector<std::size_t> roots;
    for (std::size_t l = 0; l < nl; ++l) {
      const int pj = parent_joint[l];
      if (pj < 0 || pj == world_joint) roots.push_back(l);
    }
    if (roots.size() != 1) {
      std::string names;
      for (std::size_t r : roots) names += (names.empty() ? "'" : ", '") + m_.LinkByIndex(r)->Name() + "'";
      fail(source_, "model '", name, "' has ", roots.size(), " root links (", names,
           "): Impulse simulates one tree per model; join them with joints or make them separate models");
    }
    mass_below_.assign(nl, 0);
    subtree_mass(roots[0], child_joints, child_link);

    // depth-first from the root, children in file order
    struct Item {
      std::size_t link;
      int joint;            // -1: the root without a joint to the world
      Index parent_body;    // -1: the world
      SE3 X_MP;             // parent body frame in the model frame
    };
    std::vector<Item> stack{Item{roots[0], world_joint, -1, SE3()}};
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      const sdf::Link& link = *m_.LinkByIndex(it.link);
      const SE3& X_ML = X_ML_[it.link];
      Index body = -1;
      SE3 X_MB;
      if (it.joint < 0) {  // floating root: the body frame is the link frame
        X_MB = X_ML;
        X_MB_root_ = X_MB;
        body = builder.add_body(-1, "root", JointType::Floating, SE3(), Vec3::UnitX(), JointLimits(), link.Name(),
                                Inertia(), "floating");
        new_body();
      } else {
        const sdf::Joint& joint = *m_.JointByIndex(static_cast<std::uint64_t>(it.joint));
        JointType type;
        JointLimits limits;
        Vec3 axis_M;
        std::string type_name;
        joint_description(joint, type, limits, axis_M, type_name);
        im::Pose3d Xj;
        const sdf::Errors e = joint.SemanticPose().Resolve(Xj, "__model__");
        if (!e.empty()) fail(source_, "model '", name, "', joint '", joint.Name(), "': pose: ", describe(e));
        const SE3 X_MJ = to_se3(Xj);
        if (type != JointType::Fixed && mass_below_[it.link] <= 0) {
          report_.warn("model '", name, "': joint '", joint.Name(), "' (", type_name, ") moves only massless links from '",
                       link.Name(), "' on: welded to its parent (a massless moving link has no determined motion)");
          type = JointType::Fixed;
        }
        if (type == JointType::Fixed && it.parent_body >= 0) {
          // merged into the parent body
          body = it.parent_body;
          X_MB = it.X_MP;
          builder.add_frame(joint.Name(), FrameType::FixedJoint, body, X_MB.inverse() * X_MJ);
        } else {
          // a body at the joint frame; for the world as parent the placement is in the world
          X_MB = X_MJ;
          const SE3 X_PJ = it.parent_body < 0 ? X_WM_ * X_MJ : it.X_MP.inverse() * X_MJ;
          const Vec3 axis_J = X_MJ.R.transpose() * axis_M;
          if (type == JointType::Fixed) limits = JointLimits();
          body = builder.add_body(it.parent_body, joint.Name(), type, X_PJ, axis_J, limits, link.Name(), Inertia(),
                                  type == JointType::Fixed ? "fixed" : type_name);
          new_body();
        }
      }
      // A link with a body of its own names that body (whose frame is the joint frame: the link
      // frame unless the joint has a <pose>); a merged link becomes a frame of its parent's body.
      const SE3 X_BL = X_MB.inverse() * X_ML;
      if (body == it.parent_body) builder.add_frame(link.Name(), FrameType::Link, body, X_BL);
      add_inertia(link, body, X_BL);
      add_shapes(builder, link, body, X_BL, false);
      const auto& children = child_joints[it.link];
      for (auto c = children.rbegin(); c != children.rend(); ++c) {
        stack.push_back(Item{child_link[static_cast<std::size_t>(*c)], *c, body, X_MB});
      }
    }
    add_inertias(builder);
  }

  // mass_below_[l]: the mass of the links from l on (iterative post-order from `root`)
  void subtree_mass(std::size_t root, const std::vector<std::vector<int>>& child_joints,
                    const std::vector<std::size_t>& child_link) {
    std::vector<std::size_t> order, stack{root};
    while (!stack.empty()) {
      const std::size_t l = stack.back();
      stack.pop_back();
      order.push_back(l);
      for (int j : child_joints[l]) stack.push_back(child_link[static_cast<std::size_t>(j)]);
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Scalar m = m_.LinkByIndex(*it)->Inertial().MassMatrix().Mass();
      for (int j : child_joints[*it]) m += mass_below_[child_link[static_cast<std::size_t>(j)]];
      mass_below_[*it] = m;
    }
  }

  void joint_description(const sdf::Joint& joint, JointType& type, JointLimits& limits, Vec3& axis_M,
                         std::string& type_name) const {
    const std::string& name = m_.Name();
    switch (joint.Type()) {
      case sdf::JointType::REVOLUTE: type = JointType::Revolute; type_name = "revolute"; break;
      case sdf::JointType::CONTINUOUS: type = JointType::Revolute; type_name = "continuous"; break;
      case sdf::JointType::PRISMATIC: type = JointType::Prismatic; type_name = "prismatic"; break;
      case sdf::JointType::BALL: type = JointType::Spherical; type_name = "ball"; break;
      case sdf::JointType::FIXED: type = JointType::Fixed; type_name = "fixed"; break;
      default:
        fail(source_, "model '", name, "', joint '", joint.Name(), "': type not supported (revolute, continuous, ",
             "prismatic, ball and fixed are; universal, revolute2, screw and gearbox are not)");
    }
    axis_M = Vec3::UnitZ();
    if (type != JointType::Revolute && type != JointType::Prismatic) return;
    const sdf::JointAxis* axis = joint.Axis(0);
    if (!axis) fail(source_, "model '", name, "', joint '", joint.Name(), "': no <axis>");
    im::Vector3d xyz;
    const sdf::Errors e = axis->ResolveXyz(xyz, "__model__");
    if (!e.empty()) fail(source_, "model '", name, "', joint '", joint.Name(), "': axis: ", describe(e));
    axis_M = to_vec3(xyz);
    if (!axis_M.allFinite() || axis_M.norm() < 1e-12) {
      fail(source_, "model '", name, "', joint '", joint.Name(), "': axis ", axis_M.transpose(), " is not a direction");
    }
    axis_M.normalize();
    if (type_name != "continuous") {
      limits.lower = limit_or_inf(axis->Lower(), -1);
      limits.upper = limit_or_inf(axis->Upper(), +1);
    }
    if (axis->Effort() >= 0 && std::isfinite(axis->Effort())) limits.effort = axis->Effort();
    if (axis->MaxVelocity() >= 0 && std::isfinite(axis->MaxVelocity())) limits.velocity = axis->MaxVelocity();
    limits.damping = axis->Damping();
    limits.friction = axis->Friction();
    if (axis->SpringStiffness() != 0) {
      report_.warn("model '", name, "', joint '", joint.Name(), "': <spring_stiffness> ", axis->SpringStiffness(),
                   " ignored (Impulse has no joint springs; use PD gains)");
    }
  }

  void new_body() {
    body_inertia_.emplace_back();
    ++bodies_;
  }

  // The link's <inertial>, moved into the body frame and summed there (add_inertias hands the
  // sums to the builder once every merged link is in).
  void add_inertia(const sdf::Link& link, Index body, const SE3& X_BL) {
    const im::Inertiald& in = link.Inertial();
    const Scalar m = in.MassMatrix().Mass();
    if (!(m >= 0) || !std::isfinite(m)) fail(source_, "model '", m_.Name(), "', link '", link.Name(), "': mass ", m);
    if (m == 0) return;
    const im::Matrix3d moi = in.MassMatrix().Moi();
    Mat3 I;
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) I(r, c) = moi(static_cast<std::size_t>(r), static_cast<std::size_t>(c));
    }
    if (!I.allFinite()) fail(source_, "model '", m_.Name(), "', link '", link.Name(), "': inertia is not finite");
    // inertia about the CoM in the <inertial> frame -> the link frame -> the body frame
    const SE3 X_LI = to_se3(in.Pose());
    const Inertia I_L(m, X_LI.p, X_LI.R * I * X_LI.R.transpose());
    Inertia& sum = body_inertia_[static_cast<std::size_t>(body)];
    sum = sum + I_L.transformed(X_BL);
  }

  // The summed inertias go to the builder. Each link's is physical (libsdformat rejects one that
  // is not, naming the link), and sums and shifts of physical inertias are physical.
  void add_inertias(ModelBuilder& builder) {
    for (std::size_t b = 0; b < body_inertia_.size(); ++b) {
      if (body_inertia_[b].m > 0) builder.add_inertia(static_cast<Index>(b), body_inertia_[b]);
    }
  }

  const sdf::Model& m_;
  const SE3 X_WM_;
  const std::vector<std::string>& resource_paths_;  // model:// search directories
  const std::string text_dir_;  // folder of the loaded file (empty for a string)
  const Reporter& report_;
  const std::string source_;
  SdfWorld& out_;
  std::map<std::string, Index> link_index_;
  std::vector<SE3> X_ML_;  // link frames in the model frame
  std::vector<Scalar> mass_below_;
  std::vector<Inertia> body_inertia_;  // per body, in the body frame
  SE3 X_MB_root_;
  int bodies_ = 0;
};

sdf::ParserConfig parser_config(const SdfOptions& options, std::vector<std::string>& paths) {
  paths = options.resource_paths;
  for (const char* env : {"SDF_PATH", "GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH"}) {
    const char* value = std::getenv(env);
    if (!value) continue;
    std::stringstream ss(value);
    for (std::string d; std::getline(ss, d, ':');) {
      if (!d.empty()) paths.push_back(d);
    }
  }
  // libsdformat's console would print its parse errors too; they reach the user in our error
  sdf::Console::Instance()->SetQuiet(true);
  sdf::ParserConfig config;
  for (const std::string& p : paths) config.AddURIPath("model://", p);
  // <include> of a URI none of the paths holds: an empty answer makes libsdformat report it
  config.SetFindCallback([](const std::string&) { return std::string(); });
  return config;
}

// <include> URIs. libsdformat opens included files itself, resolves a relative URI against the
// working directory (not the file that names it) and would block on a FIFO. So before it runs,
// every <include> is resolved and checked here, in the file and, recursively, in the files it
// includes (at most kMaxIncludeDepth deep, kMaxIncludedFiles in all, which also stops a cycle):
//   - model://<name>/rest: the first resource path that holds <name>/rest, as libsdformat looks;
//   - file:// and absolute paths: as written; a relative path in the loaded file (or string):
//     against that file's folder (a string's: the working directory); the URI is rewritten to
//     the resolved path before libsdformat reads the text, so that it opens that very file;
//   - a relative path inside an included file is refused (libsdformat would resolve it against
//     the working directory; model:// URIs work there);
//   - the target is a regular file within kMaxDescriptionBytes, or a folder whose model.config
//     is one and whose <sdf> files are (libsdformat picks one of them).
constexpr int kMaxIncludeDepth = 16;
constexpr int kMaxIncludedFiles = 1000;

class IncludeCheck {
 public:
  IncludeCheck(const std::vector<std::string>& paths, std::string source) : paths_(paths), source_(std::move(source)) {}

  // Checks the includes of `xml` (the loaded file or string; `base_dir`: its folder, empty for a
  // string). Returns the text with relative include URIs made absolute, or `xml` unchanged when
  // there were none.
  std::string top(const std::string& xml, const fs::path& base_dir) {
    tinyxml2::XMLDocument doc;
    // an XML error is left to libsdformat, which names it with its line
    if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) return xml;
    bool rewritten = false;
    walk(doc.RootElement(), source_, base_dir, 0, &rewritten);
    if (!rewritten) return xml;
    tinyxml2::XMLPrinter printer;
    doc.Print(&printer);
    return printer.CStr();
  }

 private:
  // The includes under `e` of file `file` (depth 0: the loaded one, whose relative URIs resolve
  // against base_dir and are rewritten).
  void walk(tinyxml2::XMLElement* root, const std::string& file, const fs::path& base_dir, int depth,
            bool* rewritten) {
    std::vector<tinyxml2::XMLElement*> stack;
    if (root) stack.push_back(root);
    while (!stack.empty()) {
      tinyxml2::XMLElement* e = stack.back();
      stack.pop_back();
      for (tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) stack.push_back(c);
      if (std::string(e->Name()) != "include") continue;
      tinyxml2::XMLElement* u = e->FirstChildElement("uri");
      if (!u || !u->GetText()) continue;  // libsdformat reports a missing URI
      std::string uri = u->GetText();
      const auto first = uri.find_first_not_of(" \t\r\n"), last = uri.find_last_not_of(" \t\r\n");
      uri = first == std::string::npos ? std::string() : uri.substr(first, last - first + 1);
      const std::string where = (depth == 0 ? std::string() : "in included file '" + file + "': ") + "<include> '" +
                                uri + "' (line " + std::to_string(u->GetLineNum()) + ")";
      const std::string target = resolve(uri, base_dir, depth, where);
      if (depth == 0 && uri.compare(0, 8, "model://") != 0 && target != uri) {
        u->SetText(target.c_str());
        *rewritten = true;
      }
      check_target(target, depth, where);
    }
  }

  std::string resolve(const std::string& uri, const fs::path& base_dir, int depth, const std::string& where) const {
    const std::string model_prefix = "model://", file_prefix = "file://";
    if (uri.compare(0, model_prefix.size(), model_prefix) == 0) {
      std::string looked;
      const std::string found = find_in_paths(paths_, uri.substr(model_prefix.size()), looked);
      if (!found.empty()) return found;
      fail(source_, where, ": not found; looked in: ", looked,
           " (set SdfOptions::resource_paths, SDF_PATH, GZ_SIM_RESOURCE_PATH or IGN_GAZEBO_RESOURCE_PATH)");
    }
    std::string path = uri.compare(0, file_prefix.size(), file_prefix) == 0 ? uri.substr(file_prefix.size()) : uri;
    if (path.empty()) fail(source_, where, ": names no file");
    if (fs::path(path).is_absolute()) return path;
    if (depth > 0) {
      fail(source_, where, ": a relative URI in an included file is not supported (libsdformat would resolve it "
           "against the working directory); use model:// or an absolute path");
    }
    return base_dir.empty() ? path : (base_dir / path).lexically_normal().string();
  }

  void check_target(const std::string& target, int depth, const std::string& where) {
    if (depth + 1 > kMaxIncludeDepth) fail(source_, where, ": includes nested more than ", kMaxIncludeDepth, " deep (a cycle?)");
    if (++files_ > kMaxIncludedFiles) fail(source_, where, ": more than ", kMaxIncludedFiles, " included files");
    std::error_code ec;
    std::vector<std::string> files;
    if (fs::is_directory(target, ec)) {
      const std::string config = (fs::path(target) / "model.config").string();
      if (!fs::exists(config, ec)) return;  // libsdformat reports the folder without a model.config
      const std::string text = read(config, where);
      tinyxml2::XMLDocument doc;
      if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS || !doc.RootElement()) return;
      for (const tinyxml2::XMLElement* e = doc.RootElement()->FirstChildElement("sdf"); e; e = e->NextSiblingElement("sdf")) {
        if (e->GetText()) files.push_back((fs::path(target) / e->GetText()).string());
      }
    } else {
      files.push_back(target);
    }
    for (const std::string& f : files) {
      const std::string text = read(f, where);
      tinyxml2::XMLDocument doc;
      if (doc.Parse(text.c_str(), text.size()) != tinyxml2::XML_SUCCESS) continue;  // libsdformat names it
      walk(doc.RootElement(), f, fs::path(f).parent_path(), depth + 1, nullptr);
    }
  }

  std::string read(const std::string& file, const std::string& where) const {
    try {
      return read_regular_file<ModelError>(file, kMaxDescriptionBytes, "file");
    } catch (const ModelError& e) {
      fail(source_, where, ": ", e.what());
    }
  }

  const std::vector<std::string>& paths_;
  const std::string source_;
  int files_ = 0;
};

SdfWorld read(sdf::Root& root, const sdf::Errors& load_errors, const SdfOptions& options, const std::string& source,
              const std::vector<std::string>& paths, const std::string& text_dir) {
  const Reporter report(options, source);
  if (!load_errors.empty()) fail(source, describe(load_errors));
  SdfWorld out;
  std::vector<std::pair<const sdf::Model*, SE3>> models;
  sdf::ElementPtr top;
  if (root.WorldCount() > 0) {
    const sdf::World& w = *root.WorldByIndex(0);
    if (root.WorldCount() > 1) report.warn(root.WorldCount(), " worlds in the file: only the first, '", w.Name(), "', is read");
    out.name = w.Name();
    out.gravity = to_vec3(w.Gravity());
    if (const sdf::Physics* ph = w.PhysicsDefault()) out.time_step = ph->MaxStepSize();
    if (!(out.time_step > 0) || !std::isfinite(out.time_step)) {
      fail(source, "<physics><max_step_size> ", out.time_step, " must be finite and > 0");
    }
    if (!out.gravity.allFinite()) fail(source, "<gravity> is not finite");
    for (std::uint64_t k = 0; k < w.ModelCount(); ++k) {
      const sdf::Model& m = *w.ModelByIndex(k);
      im::Pose3d X;
      const sdf::Errors e = m.SemanticPose().Resolve(X);
      if (!e.empty()) fail(source, "model '", m.Name(), "': pose: ", describe(e));
      models.emplace_back(&m, to_se3(X));
    }
    top = w.Element();
  } else if (root.Model()) {
    const sdf::Model& m = *root.Model();
    out.name = m.Name();
    models.emplace_back(&m, to_se3(m.RawPose()));
    top = m.Element();
  } else {
    fail(source, "neither a <world> nor a <model>");
  }
  std::map<std::string, int> ignored;
  if (top) count_ignored(top, ignored);
  for (const auto& [tag, n] : ignored) {
    report.warn(n, " <", tag, "> element(s) ignored (Impulse does not simulate them)");
  }
  for (const auto& [m, X_WM] : models) {
    ModelReader(*m, X_WM, paths, text_dir, report, out).read();
  }
  return out;
}

}  // namespace

bool sdf_supported() { return true; }

SdfWorld load_sdf(const std::string& path, const SdfOptions& options) {
  // read by read_regular_file (a regular file within the size limit, like every description)
  const std::string xml = read_regular_file<ModelError>(path, kMaxDescriptionBytes, "SDF file");
  std::vector<std::string> paths;
  sdf::ParserConfig config = parser_config(options, paths);
  paths.push_back(fs::path(path).parent_path().string());  // model:// next to the file
  config.AddURIPath("model://", fs::path(path).parent_path().string());
  const std::string checked = IncludeCheck(paths, path).top(xml, fs::path(path).parent_path());
  sdf::Root root;
  // libsdformat parses the bytes read and checked above, never the path again (which could name
  // another file by then); the file's folder stands in for the file in mesh URIs
  const sdf::Errors errors = root.LoadSdfString(checked, config);
  return read(root, errors, options, path, paths, fs::path(path).parent_path().string());
}

SdfWorld load_sdf_string(const std::string& xml, const SdfOptions& options, const std::string& source_name) {
  std::vector<std::string> paths;
  const sdf::ParserConfig config = parser_config(options, paths);
  const std::string checked = IncludeCheck(paths, source_name).top(xml, fs::path());
  sdf::Root root;
  const sdf::Errors errors = root.LoadSdfString(checked, config);
  return read(root, errors, options, source_name, paths, std::string());
}

#endif

}  // namespace impulse
