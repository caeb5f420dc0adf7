// URDF loader. Three passes over the text:
//   1. tinyxml2: well-formedness (with the line of the error), every number finite, the link /
//      joint graph (parents and children exist, exactly one root, supported joint types) and
//      the file order of joints, which urdfdom loses (it keeps joints in a std::map).
//   2. urdfdom: the contents of links and joints (inertials, collisions, origins, axes, limits).
//      Its console_bridge log is captured, so a rejection becomes part of our error message.
//   3. a depth-first walk from the root that merges fixed joints into their parent body and
//      hands the bodies, frames and collision shapes to ModelBuilder.
#include "impulse/io/urdf.hpp"

#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include <console_bridge/console.h>
#include <urdf_parser/urdf_parser.h>

#include "impulse/core/check.hpp"
#include "impulse/core/file.hpp"
#include "impulse/model/model_builder.hpp"

namespace impulse {

namespace {

namespace fs = std::filesystem;

// Throws ModelError "<source>: <message>".
template <typename... Args>
[[noreturn]] void fail(const std::string& source, const Args&... args) {
  throw ModelError(detail::concat(source, ": ", args...));
}

// ---------------------------------------------------------------------------------------------
// pass 1: tinyxml2

// Attributes that hold numbers somewhere in a URDF link or joint.
const std::set<std::string>& numeric_attributes() {
  static const std::set<std::string> names = {
      "xyz", "rpy", "value", "ixx", "ixy", "ixz", "iyy", "iyz", "izz", "lower", "upper", "effort", "velocity",
      "damping", "friction", "soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity", "rising",
      "falling", "reference_position", "multiplier", "offset", "size", "radius", "length", "scale", "rgba"};
  return names;
}

// "link 'x'" or "joint 'y'" for the link or joint element that contains e, else "element <e>".
std::string owner_of(const tinyxml2::XMLElement* e) {
  for (const tinyxml2::XMLElement* a = e; a; a = a->Parent() ? a->Parent()->ToElement() : nullptr) {
    const std::string tag = a->Name();
    if (tag == "link" || tag == "joint") {
      const char* n = a->Attribute("name");
      return tag + " '" + (n ? n : "") + "'";
    }
  }
  return std::string("element <") + e->Name() + ">";
}

// Every number in the file must be finite: urdfdom and stream parsing may accept "nan" or
// overflow to inf silently, and one NaN poisons every algorithm downstream.
void check_numbers(const tinyxml2::XMLElement* e, const std::string& source) {
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    if (numeric_attributes().count(a->Name()) == 0) continue;
    std::istringstream tokens(a->Value());
    std::string t;
    while (tokens >> t) {
      char* end = nullptr;
      const double x = std::strtod(t.c_str(), &end);
      if (end == t.c_str() || *end != '\0' || !std::isfinite(x)) {
        fail(source, owner_of(e), ": <", e->Name(), "> attribute ", a->Name(), "=\"", a->Value(), "\" (line ",
             e->GetLineNum(), ") is not a finite number");
      }
    }
  }
  for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    check_numbers(c, source);
  }
}

struct XLink {
  std::string name;
  int line = 0;
  int parent_joint = -1;          // index into joints, -1 for a root
  std::vector<int> child_joints;  // in file order
};

struct XJoint {
  std::string name, type, parent, child;
  int line = 0;
};

struct XTree {
  std::string robot_name;
  std::vector<XLink> links;
  std::vector<XJoint> joints;  // in file order
  std::map<std::string, int> link_index;
  int root = -1;
};

std::string child_attribute(const tinyxml2::XMLElement* e, const char* child, const char* attr) {
  const tinyxml2::XMLElement* c = e->FirstChildElement(child);
  const char* v = c ? c->Attribute(attr) : nullptr;
  return v ? v : "";
}

// Parses the XML and checks the link/joint graph; the first problem found is thrown.
XTree read_tree(const std::string& xml, const std::string& source) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) {
    // ErrorStr() is "Error=NAME ErrorID=.. Line number=N: detail"; keep the detail
    std::string detail = doc.ErrorStr() ? doc.ErrorStr() : "";
    const size_t colon = detail.find(": ");
    detail = colon == std::string::npos ? "" : ": " + detail.substr(colon + 2);
    fail(source, "line ", doc.ErrorLineNum(), ": XML is not well formed (", doc.ErrorName(), detail, ")");
  }
  const tinyxml2::XMLElement* robot = doc.RootElement();
  if (!robot || std::string(robot->Name()) != "robot") {
    fail(source, "the root element is <", robot ? robot->Name() : "", ">, expected <robot>");
  }
  for (const tinyxml2::XMLElement* e = robot->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string tag = e->Name();
    if (tag == "link" || tag == "joint" || tag == "material") check_numbers(e, source);
  }

  XTree tree;
  tree.robot_name = robot->Attribute("name") ? robot->Attribute("name") : "";
  for (const tinyxml2::XMLElement* e = robot->FirstChildElement("link"); e; e = e->NextSiblingElement("link")) {
    const char* n = e->Attribute("name");
    if (!n || !*n) fail(source, "line ", e->GetLineNum(), ": a <link> has no name");
    if (tree.link_index.count(n)) fail(source, "link '", n, "' is defined twice (line ", e->GetLineNum(), ")");
    tree.link_index[n] = static_cast<int>(tree.links.size());
    tree.links.push_back(XLink{n, e->GetLineNum(), -1, {}});
  }
  if (tree.links.empty()) fail(source, "the robot has no links");

  std::set<std::string> joint_names;
  for (const tinyxml2::XMLElement* e = robot->FirstChildElement("joint"); e; e = e->NextSiblingElement("joint")) {
    XJoint j;
    j.line = e->GetLineNum();
    j.name = e->Attribute("name") ? e->Attribute("name") : "";
    j.type = e->Attribute("type") ? e->Attribute("type") : "";
    j.parent = child_attribute(e, "parent", "link");
    j.child = child_attribute(e, "child", "link");
    if (j.name.empty()) fail(source, "line ", j.line, ": a <joint> has no name");
    if (!joint_names.insert(j.name).second) fail(source, "joint '", j.name, "' is defined twice (line ", j.line, ")");
    if (j.type == "planar") fail(source, "joint '", j.name, "': joint type 'planar' is not supported");
    if (j.type != "revolute" && j.type != "continuous" && j.type != "prismatic" && j.type != "fixed" &&
        j.type != "floating") {
      fail(source, "joint '", j.name, "': unknown joint type '", j.type, "'");
    }
    if (j.parent.empty()) fail(source, "joint '", j.name, "': no <parent link=...>");
    if (j.child.empty()) fail(source, "joint '", j.name, "': no <child link=...>");
    if (!tree.link_index.count(j.parent)) fail(source, "joint '", j.name, "': parent link '", j.parent, "' does not exist");
    if (!tree.link_index.count(j.child)) fail(source, "joint '", j.name, "': child link '", j.child, "' does not exist");
    if (j.parent == j.child) fail(source, "joint '", j.name, "': link '", j.child, "' is its own parent");
    const int k = static_cast<int>(tree.joints.size());
    XLink& child = tree.links[tree.link_index[j.child]];
    if (child.parent_joint >= 0) {
      fail(source, "link '", j.child, "' is the child of two joints: '", tree.joints[child.parent_joint].name, "' and '",
           j.name, "'");
    }
    child.parent_joint = k;
    tree.links[tree.link_index[j.parent]].child_joints.push_back(k);
    tree.joints.push_back(j);
  }

  std::vector<std::string> roots;
  for (size_t i = 0; i < tree.links.size(); ++i) {
    if (tree.links[i].parent_joint < 0) {
      roots.push_back(tree.links[i].name);
      tree.root = static_cast<int>(i);
    }
  }
  if (roots.empty()) fail(source, "no root link: every link is the child of a joint (the joints form a cycle)");
  if (roots.size() > 1) {
    std::string list;
    for (const std::string& r : roots) list += (list.empty() ? "'" : ", '") + r + "'";
    fail(source, "several root links (", list, "): a URDF must be one tree");
  }
  // one root and one parent per link: a link the root cannot reach sits on a cycle
  std::vector<bool> reached(tree.links.size(), false);
  std::function<void(int)> reach = [&](int l) {
    reached[l] = true;
    for (int j : tree.links[l].child_joints) reach(tree.link_index[tree.joints[j].child]);
  };
  reach(tree.root);
  for (size_t i = 0; i < tree.links.size(); ++i) {
    if (!reached[i]) fail(source, "link '", tree.links[i].name, "' is not connected to the root (the joints form a cycle)");
  }
  return tree;
}

// ---------------------------------------------------------------------------------------------
// pass 2: urdfdom

// Collects console_bridge messages while urdfdom parses, instead of printing them.
class CapturedLog : public console_bridge::OutputHandler {
 public:
  CapturedLog() { console_bridge::useOutputHandler(this); }
  ~CapturedLog() override { console_bridge::restorePreviousOutputHandler(); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  void log(const std::string& text, console_bridge::LogLevel level, const char*, int) override {
    if (level >= console_bridge::CONSOLE_BRIDGE_LOG_ERROR) errors.push_back(text);
  }
  std::vector<std::string> errors;
};

urdf::ModelInterfaceSharedPtr parse_urdfdom(const std::string& xml, const std::string& source) {
  urdf::ModelInterfaceSharedPtr model;
  std::string why;
  {
    // console_bridge's handler is process-wide: one urdfdom parse at a time
    static std::mutex mutex;
    const std::lock_guard<std::mutex> lock(mutex);
    CapturedLog log;
    try {
      model = urdf::parseURDF(xml);
    } catch (const std::exception& e) {
      why = e.what();
    }
    for (const std::string& e : log.errors) why += (why.empty() ? "" : "; ") + e;
  }
  if (!model) fail(source, "urdfdom rejected the file: ", why.empty() ? "no reason given" : why);
  return model;
}

SE3 to_se3(const urdf::Pose& X) {
  const Quat r(X.rotation.w, X.rotation.x, X.rotation.y, X.rotation.z);
  return SE3(r.normalized().toRotationMatrix(), Vec3(X.position.x, X.position.y, X.position.z));
}

// Inertia of a link's <inertial> in the link frame.
Inertia link_inertia(const urdf::Inertial& in) {
  Mat3 I;
  I << in.ixx, in.ixy, in.ixz, in.ixy, in.iyy, in.iyz, in.ixz, in.iyz, in.izz;
  const SE3 X_LI = to_se3(in.origin);  // inertial frame in the link frame
  return Inertia(in.mass, X_LI.p, X_LI.R * I * X_LI.R.transpose());
}

// ---------------------------------------------------------------------------------------------
// mesh paths

std::vector<std::string> package_search_path(const UrdfOptions& options) {
  std::vector<std::string> dirs = options.package_paths;
  if (const char* env = std::getenv("ROS_PACKAGE_PATH")) {
    std::stringstream ss(env);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty()) dirs.push_back(d);
    }
  }
  return dirs;
}

// package://pkg/rest -> <dir>/pkg/rest (or <dir>/rest when dir itself is the package);
// file:///abs -> /abs; relative -> against the URDF's directory. The file itself is not opened.
std::string resolve_mesh(const std::string& uri, const fs::path& base_dir, const UrdfOptions& options,
                         const std::string& source, const std::string& link) {
  const std::string pkg_prefix = "package://", file_prefix = "file://";
  if (uri.compare(0, pkg_prefix.size(), pkg_prefix) == 0) {
    const std::string rest = uri.substr(pkg_prefix.size());
    const size_t slash = rest.find('/');
    const std::string pkg = rest.substr(0, slash);
    const std::string inside = slash == std::string::npos ? "" : rest.substr(slash + 1);
    const std::vector<std::string> dirs = package_search_path(options);
    std::error_code ec;
    for (const std::string& d : dirs) {
      if (fs::is_directory(fs::path(d) / pkg, ec)) return (fs::path(d) / pkg / inside).lexically_normal().string();
      if (fs::path(d).filename() == pkg && fs::is_directory(d, ec)) return (fs::path(d) / inside).lexically_normal().string();
    }
    std::string searched;
    for (const std::string& d : dirs) searched += (searched.empty() ? "" : ":") + d;
    fail(source, "link '", link, "': cannot resolve mesh '", uri, "': package '", pkg, "' not found in [",
         searched, "] (UrdfOptions::package_paths, then ROS_PACKAGE_PATH)");
  }
  std::string path = uri;
  if (path.compare(0, file_prefix.size(), file_prefix) == 0) path = path.substr(file_prefix.size());
  const fs::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (base_dir / p).lexically_normal().string();
}

// ---------------------------------------------------------------------------------------------
// pass 3: bodies

struct BodyRecord {
  Index parent = -1;
  std::string joint, joint_urdf_type, link;
  JointType type = JointType::Fixed;
  SE3 X_PJ;
  Vec3 axis = Vec3::UnitX();
  JointLimits limits;
  Inertia inertia;            // merged, in the body frame
  bool has_inertial = false;  // some link of the body declares an <inertial>
  int merged_links = 0;       // fixed-joint links merged into the body
};

struct PendingFrame {
  std::string name;
  FrameType type;
  Index body;
  SE3 X_BF;
};

class TreeBuilder {
 public:
  TreeBuilder(const XTree& tree, const urdf::ModelInterface& urdf, const UrdfOptions& options, std::string source,
              fs::path base_dir)
      : tree_(tree), urdf_(urdf), options_(options), source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  Model build() {
    const XLink& root = tree_.links[tree_.root];
    if (root.name == "world") {
      // the world link is the world: its single child joint becomes the root joint
      if (urdf_.getLink("world")->inertial) fail(source_, "link 'world' stands for the world and must have no <inertial>");
      if (root.child_joints.size() != 1) {
        fail(source_, "link 'world' must have exactly one child joint, it has ", root.child_joints.size());
      }
      const XJoint& j = tree_.joints[root.child_joints[0]];
      add_moving_body(-1, j, SE3());
    } else {
      BodyRecord b;
      b.joint = "root";
      b.type = options_.fixed_base ? JointType::Fixed : JointType::Floating;
      b.joint_urdf_type = options_.fixed_base ? "fixed" : "floating";
      b.link = root.name;
      bodies_.push_back(b);
      visit(tree_.root, 0, SE3());
    }
    check_bodies();
    return assemble();
  }

 private:
  urdf::JointConstSharedPtr urdf_joint(const XJoint& j) const { return urdf_.getJoint(j.name); }

  JointType joint_type(const XJoint& j, bool at_root) const {
    if (j.type == "revolute" || j.type == "continuous") return JointType::Revolute;
    if (j.type == "prismatic") return JointType::Prismatic;
    if (j.type == "fixed") return JointType::Fixed;
    if (!at_root) {
      fail(source_, "joint '", j.name, "': a floating joint inside the tree is not supported (only between the 'world' "
           "link and the root)");
    }
    return JointType::Floating;
  }

  // A new body moved by joint j, hanging from body `parent` at X_PL * origin(j).
  void add_moving_body(Index parent, const XJoint& j, const SE3& X_PL) {
    const urdf::JointConstSharedPtr uj = urdf_joint(j);
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    BodyRecord b;
    b.parent = parent;
    b.joint = j.name;
    b.joint_urdf_type = j.type;
    b.type = joint_type(j, parent < 0);
    b.X_PJ = X_PL * to_se3(uj->parent_to_joint_origin_transform);
    if (b.type == JointType::Floating && !b.X_PJ.isApprox(SE3())) {
      // q of a floating base is the pose of the body in the world (docs/conventions.md)
      fail(source_, "joint '", j.name, "': a floating root joint must have an identity <origin> (its q is the pose ",
           "of link '", j.child, "' in the world)");
    }
    b.axis = Vec3(uj->axis.x, uj->axis.y, uj->axis.z);
    b.link = j.child;
    if (uj->limits) {
      b.limits.effort = uj->limits->effort;
      b.limits.velocity = uj->limits->velocity;
      if (j.type != "continuous") {
        b.limits.lower = uj->limits->lower;
        b.limits.upper = uj->limits->upper;
      }
    }
    if (j.type == "continuous") {
      b.limits.lower = -inf;
      b.limits.upper = inf;
    }
    if (uj->dynamics) {
      b.limits.damping = uj->dynamics->damping;
      b.limits.friction = uj->dynamics->friction;
    }
    const Index i = static_cast<Index>(bodies_.size());
    bodies_.push_back(b);
    visit(tree_.link_index.at(j.child), i, SE3());
  }

  // Depth-first over the links: link l belongs to `body` at X_BL. Fixed joints stay in the
  // body; moving joints start a new one. Siblings in file order.
  void visit(int l, Index body, const SE3& X_BL) {
    const XLink& link = tree_.links[l];
    const urdf::LinkConstSharedPtr ul = urdf_.getLink(link.name);
    BodyRecord& b = bodies_[body];
    if (ul->inertial) {
      const Inertia I_L = link_inertia(*ul->inertial);
      if (I_L.m < 0) fail(source_, "link '", link.name, "': negative mass ", I_L.m);
      b.inertia = b.inertia + I_L.transformed(X_BL);
      b.has_inertial = true;
    }
    for (size_t k = 0; k < ul->collision_array.size(); ++k) add_collision(*ul->collision_array[k], link.name, k, body, X_BL);
    for (int jk : link.child_joints) {
      const XJoint& j = tree_.joints[jk];
      if (j.type == "fixed") {
        const SE3 X_BC = X_BL * to_se3(urdf_joint(j)->parent_to_joint_origin_transform);
        frames_.push_back(PendingFrame{j.child, FrameType::Link, body, X_BC});
        frames_.push_back(PendingFrame{j.name, FrameType::FixedJoint, body, X_BC});
        ++bodies_[body].merged_links;
        visit(tree_.link_index.at(j.child), body, X_BC);
      } else {
        add_moving_body(body, j, X_BL);
      }
    }
  }

  void add_collision(const urdf::Collision& c, const std::string& link, size_t k, Index body, const SE3& X_BL) {
    CollisionShape s;
    s.name = c.name.empty() ? link + "/" + std::to_string(k) : c.name;
    s.link = link;
    s.body = body;
    s.X_BS = X_BL * to_se3(c.origin);
    if (!c.geometry) fail(source_, "link '", link, "': collision '", s.name, "' has no geometry");
    switch (c.geometry->type) {
      case urdf::Geometry::SPHERE: {
        const auto& g = static_cast<const urdf::Sphere&>(*c.geometry);
        s.type = ShapeType::Sphere;
        s.size = Vec3(g.radius, 0, 0);
        break;
      }
      case urdf::Geometry::BOX: {
        const auto& g = static_cast<const urdf::Box&>(*c.geometry);
        s.type = ShapeType::Box;
        s.size = Vec3(g.dim.x, g.dim.y, g.dim.z);
        break;
      }
      case urdf::Geometry::CYLINDER: {
        const auto& g = static_cast<const urdf::Cylinder&>(*c.geometry);
        s.type = ShapeType::Cylinder;
        s.size = Vec3(g.radius, g.length, 0);
        break;
      }
      case urdf::Geometry::MESH: {
        const auto& g = static_cast<const urdf::Mesh&>(*c.geometry);
        s.type = ShapeType::Mesh;
        s.size = Vec3(g.scale.x, g.scale.y, g.scale.z);
        s.mesh_path = resolve_mesh(g.filename, base_dir_, options_, source_, link);
        break;
      }
      default: fail(source_, "link '", link, "': collision '", s.name, "' has an unsupported geometry type");
    }
    if (s.type != ShapeType::Mesh && (s.size.array() < 0).any()) {
      fail(source_, "link '", link, "': collision '", s.name, "' has a negative size ", s.size.transpose());
    }
    shapes_.push_back(s);
  }

  // Every moving body that declares mass must be a physical rigid body once its fixed
  // children are merged (parts alone may be unphysical: ANYmal C's camera inertias are).
  void check_bodies() const {
    for (const BodyRecord& b : bodies_) {
      if (b.type == JointType::Fixed && b.parent < 0) continue;  // welded to the world: never moves
      if (!b.has_inertial) continue;  // massless frame: the builder checks that its subtree has mass
      const std::string what = "link '" + b.link + "' (moved by joint '" + b.joint + "'" +
                               (b.merged_links ? ", with " + std::to_string(b.merged_links) + " fixed links merged" : "") +
                               ")";
      if (!(b.inertia.m > 0)) fail(source_, what, ": mass ", b.inertia.m, " is not positive");
      const Vec3 e = Eigen::SelfAdjointEigenSolver<Mat3>(b.inertia.Ic, Eigen::EigenvaluesOnly).eigenvalues();
      const Scalar tol = 1e-12 * (1 + e.cwiseAbs().maxCoeff());
      if (e.minCoeff() < -tol) {
        fail(source_, what, ": inertia is not positive definite (principal moments ", e.transpose(), ")");
      }
      if (e[0] + e[1] < e[2] - tol) {
        fail(source_, what, ": principal moments ", e.transpose(), " violate the triangle inequality");
      }
    }
  }

  Model assemble() const {
    try {
      ModelBuilder builder(tree_.robot_name);
      for (const BodyRecord& b : bodies_) {
        builder.add_body(b.parent, b.joint, b.type, b.X_PJ, b.axis, b.limits, b.link, b.inertia, b.joint_urdf_type);
      }
      for (const PendingFrame& f : frames_) builder.add_frame(f.name, f.type, f.body, f.X_BF);
      for (const CollisionShape& s : shapes_) builder.add_collision(s);
      return builder.finalize();
    } catch (const ModelError& e) {
      fail(source_, e.what());
    }
  }

  const XTree& tree_;
  const urdf::ModelInterface& urdf_;
  const UrdfOptions& options_;
  const std::string source_;
  const fs::path base_dir_;
  std::vector<BodyRecord> bodies_;
  std::vector<PendingFrame> frames_;
  std::vector<CollisionShape> shapes_;
};

Model load(const std::string& xml, const UrdfOptions& options, const std::string& source, const fs::path& base_dir) {
  const XTree tree = read_tree(xml, source);
  const urdf::ModelInterfaceSharedPtr urdf = parse_urdfdom(xml, source);
  return TreeBuilder(tree, *urdf, options, source, base_dir).build();
}

}  // namespace

Model load_urdf(const std::string& path, const UrdfOptions& options) {
  const std::string xml = read_regular_file<ModelError>(path, kMaxDescriptionBytes, "URDF file");
  return load(xml, options, path, fs::path(path).parent_path());
}

Model load_urdf_string(const std::string& xml, const UrdfOptions& options, const std::string& source_name) {
  return load(xml, options, source_name, fs::path());
}

}  // namespace impulse
