// URDF loader. Three passes over the text:
//   1. tinyxml2: well-formedness (with the line of the error), the element schema (unknown
//      elements and attributes are warnings, missing required attributes errors), every number
//      finite, in range and of the right count, the link / joint graph (parents and children
//      exist, exactly one root, no cycle, supported joint types) and the file order of joints,
//      which urdfdom loses (it keeps joints in a std::map).
//   2. urdfdom: the contents of links and joints (inertials, collisions, visuals, origins, axes,
//      limits, mimic). Its console_bridge log is captured, so a rejection becomes part of our
//      error message.
//   3. a depth-first walk from the root (an explicit stack, no recursion) that merges fixed
//      joints into their parent body and hands the bodies, frames, collision and visual shapes
//      to ModelBuilder.
// Inertia repair follows the idea of MuJoCo's `balanceinertia` (a valid inertia has principal
// moments with I1 + I2 >= I3), but changes the moments as little as possible instead of
// replacing them by their mean.
#include "impulse/io/urdf.hpp"

#include <tinyxml2.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
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
#include "loader_common.hpp"

namespace impulse {

namespace {

namespace fs = std::filesystem;

using detail::fail;
using detail::Reporter;

// ---------------------------------------------------------------------------------------------
// pass 1: tinyxml2

// The URDF schema (ROS wiki XML specification, as urdfdom reads it): per element, its
// attributes, the required ones and its child elements.
struct ElementSpec {
  std::set<std::string> attributes, required, children;
};

const std::map<std::string, ElementSpec>& schema() {
  static const std::map<std::string, ElementSpec> spec = {
      {"robot", {{"name", "version"}, {}, {"link", "joint", "material"}}},
      {"link", {{"name", "type"}, {"name"}, {"inertial", "visual", "collision"}}},
      {"inertial", {{}, {}, {"origin", "mass", "inertia"}}},
      {"origin", {{"xyz", "rpy"}, {}, {}}},
      {"mass", {{"value"}, {"value"}, {}}},
      {"inertia", {{"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}, {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"}, {}}},
      {"visual", {{"name"}, {}, {"origin", "geometry", "material"}}},
      {"collision", {{"name"}, {}, {"origin", "geometry"}}},
      {"geometry", {{}, {}, {"box", "cylinder", "sphere", "mesh"}}},
      {"box", {{"size"}, {"size"}, {}}},
      {"cylinder", {{"radius", "length"}, {"radius", "length"}, {}}},
      {"sphere", {{"radius"}, {"radius"}, {}}},
      {"mesh", {{"filename", "scale"}, {"filename"}, {}}},
      {"material", {{"name"}, {}, {"color", "texture"}}},
      {"color", {{"rgba"}, {"rgba"}, {}}},
      {"texture", {{"filename"}, {}, {}}},
      {"joint", {{"name", "type"}, {"name", "type"},
                 {"origin", "parent", "child", "axis", "calibration", "dynamics", "limit", "mimic", "safety_controller"}}},
      {"parent", {{"link"}, {"link"}, {}}},
      {"child", {{"link"}, {"link"}, {}}},
      {"axis", {{"xyz"}, {"xyz"}, {}}},
      {"calibration", {{"rising", "falling", "reference_position"}, {}, {}}},
      {"dynamics", {{"damping", "friction"}, {}, {}}},
      {"limit", {{"lower", "upper", "effort", "velocity"}, {"effort", "velocity"}, {}}},
      {"mimic", {{"joint", "multiplier", "offset"}, {"joint"}, {}}},
      {"safety_controller", {{"soft_lower_limit", "soft_upper_limit", "k_position", "k_velocity"}, {"k_velocity"}, {}}},
  };
  return spec;
}

// Extension elements other tools define; skipped without a warning (their content is theirs).
bool known_extension(const std::string& parent, const std::string& tag) {
  if (parent == "robot") return tag == "gazebo" || tag == "transmission" || tag == "ros2_control" || tag == "sensor";
  if (parent == "link") return tag == "contact";  // PyBullet's contact parameters
  return false;
}

// Number of values each numeric attribute holds (0: any count).
int numeric_count(const std::string& attr) {
  static const std::map<std::string, int> counts = {
      {"xyz", 3}, {"rpy", 3}, {"value", 1}, {"ixx", 1}, {"ixy", 1}, {"ixz", 1}, {"iyy", 1}, {"iyz", 1},
      {"izz", 1}, {"lower", 1}, {"upper", 1}, {"effort", 1}, {"velocity", 1}, {"damping", 1}, {"friction", 1},
      {"soft_lower_limit", 1}, {"soft_upper_limit", 1}, {"k_position", 1}, {"k_velocity", 1}, {"rising", 1},
      {"falling", 1}, {"reference_position", 1}, {"multiplier", 1}, {"offset", 1}, {"size", 3}, {"radius", 1},
      {"length", 1}, {"scale", 3}, {"rgba", 4}};
  const auto it = counts.find(attr);
  return it == counts.end() ? -1 : it->second;
}

// Limits may legitimately be huge ("no limit"); every other number describes geometry or mass
// and beyond this magnitude it is a typo that would overflow the dynamics (1e300 kg).
bool unbounded_attribute(const std::string& attr) {
  return attr == "lower" || attr == "upper" || attr == "effort" || attr == "velocity" || attr == "soft_lower_limit" ||
         attr == "soft_upper_limit" || attr == "k_position" || attr == "k_velocity";
}
constexpr double kMaxMagnitude = 1e9;

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

// Numbers of one attribute: finite, in range, as many as the attribute holds. urdfdom and stream
// parsing may accept "nan" or overflow to inf silently, and one NaN poisons every algorithm.
void check_number_attribute(const tinyxml2::XMLElement* e, const tinyxml2::XMLAttribute* a,
                            const std::string& source) {
  const int expected = numeric_count(a->Name());
  if (expected < 0) return;
  auto where = [&] {
    return detail::concat(owner_of(e), ": <", e->Name(), "> attribute ", a->Name(), "=\"", a->Value(), "\" (line ",
                          e->GetLineNum(), ")");
  };
  std::istringstream tokens(a->Value());
  std::string t;
  int count = 0;
  while (tokens >> t) {
    ++count;
    char* end = nullptr;
    const double x = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end != '\0' || !std::isfinite(x)) fail(source, where(), " is not a finite number");
    // hexadecimal floats are accepted by strtod but by no URDF tool
    if (t.find_first_of("xX") != std::string::npos) fail(source, where(), " is not a decimal number");
    if (!unbounded_attribute(a->Name()) && std::abs(x) > kMaxMagnitude) {
      fail(source, where(), " is out of range (|value| <= ", kMaxMagnitude, ")");
    }
  }
  if (count != expected) fail(source, where(), " has ", count, " numbers, expected ", expected);
}

// Schema and numbers of every element under <robot>, iteratively (an explicit stack).
void check_elements(const tinyxml2::XMLElement* robot, const Reporter& report) {
  const auto& spec = schema();
  std::vector<const tinyxml2::XMLElement*> stack{robot};
  while (!stack.empty()) {
    const tinyxml2::XMLElement* e = stack.back();
    stack.pop_back();
    const std::string tag = e->Name();
    const ElementSpec& es = spec.at(tag);
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      const std::string name = a->Name();
      if (es.attributes.count(name) == 0) {
        if (tag == "robot" && name.compare(0, 5, "xmlns") == 0) continue;  // xacro namespaces
        report.warn(owner_of(e), ": unknown attribute '", name, "' of <", tag, "> (line ", e->GetLineNum(),
                    ") ignored");
        continue;
      }
      check_number_attribute(e, a, report.source());
    }
    for (const std::string& r : es.required) {
      if (!e->Attribute(r.c_str())) {
        fail(report.source(), owner_of(e), ": <", tag, "> (line ", e->GetLineNum(), ") has no attribute '", r, "'");
      }
    }
    // children pushed in reverse so that warnings come in file order
    std::vector<const tinyxml2::XMLElement*> children;
    for (const tinyxml2::XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string ctag = c->Name();
      if (es.children.count(ctag) == 0) {
        if (!known_extension(tag, ctag)) {
          report.warn(tag == "robot" ? std::string("<robot>") : owner_of(e), ": unknown element <", ctag, "> in <",
                      tag, "> (line ", c->GetLineNum(), ") ignored");
        }
        continue;
      }
      children.push_back(c);
    }
    if (tag == "geometry" && children.size() != 1) {
      fail(report.source(), owner_of(e), ": <geometry> (line ", e->GetLineNum(), ") must hold exactly one shape, it has ",
           children.size());
    }
    stack.insert(stack.end(), children.rbegin(), children.rend());
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
XTree read_tree(const std::string& xml, const Reporter& report) {
  const std::string& source = report.source();
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
  check_elements(robot, report);

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
  std::vector<int> stack{tree.root};
  while (!stack.empty()) {
    const int l = stack.back();
    stack.pop_back();
    reached[l] = true;
    for (int j : tree.links[l].child_joints) stack.push_back(tree.link_index[tree.joints[j].child]);
  }
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

// A link carries mass when it has an <inertial> with mass > 0 (mass 0 is a massless frame).
bool has_mass(const urdf::Link& l) { return l.inertial && l.inertial->mass > 0; }

}  // namespace

// ---------------------------------------------------------------------------------------------
// package paths

std::vector<std::string> package_search_path(const std::vector<std::string>& user) {
  std::vector<std::string> dirs = user;
  auto split = [&](const char* env, const char* suffix) {
    const char* value = std::getenv(env);
    if (!value) return;
    std::stringstream ss(value);
    std::string d;
    while (std::getline(ss, d, ':')) {
      if (!d.empty()) dirs.push_back(suffix ? (fs::path(d) / suffix).string() : d);
    }
  };
  split("IMPULSE_PACKAGE_PATH", nullptr);
  split("ROS_PACKAGE_PATH", nullptr);
  split("AMENT_PREFIX_PATH", "share");
  return dirs;
}

std::string resolve_resource_uri(const std::string& uri, const std::string& base_dir,
                                 const std::vector<std::string>& package_paths) {
  const std::string pkg_prefix = "package://", file_prefix = "file://";
  if (uri.compare(0, pkg_prefix.size(), pkg_prefix) == 0) {
    // "package:///pkg/..." (seen in published files, e.g. Talos) means the same as "package://pkg/..."
    const std::string rest = uri.substr(std::min(uri.find_first_not_of('/', pkg_prefix.size()), uri.size()));
    const size_t slash = rest.find('/');
    const std::string pkg = rest.substr(0, slash);
    const std::string inside = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (pkg.empty()) throw ModelError("'" + uri + "' names no package");
    const std::vector<std::string> dirs = package_search_path(package_paths);
    std::error_code ec;
    std::string looked;
    for (const std::string& d : dirs) {
      const fs::path candidate = fs::path(d) / pkg;
      if (fs::is_directory(candidate, ec)) return (candidate / inside).lexically_normal().string();
      looked += (looked.empty() ? "" : ", ") + candidate.string();
      if (fs::path(d).lexically_normal().filename() == pkg && fs::is_directory(d, ec)) {
        return (fs::path(d) / inside).lexically_normal().string();
      }
    }
    throw ModelError("package '" + pkg + "' of '" + uri + "' not found; looked in: " +
                     (looked.empty() ? std::string("nowhere") : looked) +
                     " (set UrdfOptions::package_paths, a world file's package_path, --package-path, "
                     "IMPULSE_PACKAGE_PATH, ROS_PACKAGE_PATH or AMENT_PREFIX_PATH)");
  }
  std::string path = uri;
  if (path.compare(0, file_prefix.size(), file_prefix) == 0) path = path.substr(file_prefix.size());
  const fs::path p(path);
  if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
  return (fs::path(base_dir) / p).lexically_normal().string();
}

namespace {

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
  bool has_inertial = false;  // some link of the body has mass
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
  TreeBuilder(const XTree& tree, const urdf::ModelInterface& urdf, const UrdfOptions& options, const Reporter& report,
              fs::path base_dir)
      : tree_(tree),
        urdf_(urdf),
        options_(options),
        report_(report),
        source_(report.source()),
        base_dir_(std::move(base_dir)) {}

  Model build() {
    find_welded_joints();
    const XLink& root = tree_.links[tree_.root];
    std::vector<Item> stack;
    if (root.name == "world") {
      // the world link is the world: its single child joint becomes the root joint
      if (urdf_link("world")->inertial) fail(source_, "link 'world' stands for the world and must have no <inertial>");
      if (root.child_joints.size() != 1) {
        fail(source_, "link 'world' must have exactly one child joint, it has ", root.child_joints.size());
      }
      const XJoint& j = tree_.joints[root.child_joints[0]];
      if (options_.floating_base) {
        // the user floats a robot the file welds: the child link becomes a floating root
        // (its initial pose is the user's; the joint's origin is dropped)
        add_root_body(tree_.link_index.at(j.child), JointType::Floating, stack);
      } else {
        stack.push_back(Item{root.child_joints[0], -1, SE3()});
      }
    } else {
      add_root_body(tree_.root, options_.fixed_base ? JointType::Fixed : JointType::Floating, stack);
    }
    // Depth-first, siblings in file order: children are pushed in reverse. Bodies are numbered
    // when popped, which is the preorder of the recursive walk.
    while (!stack.empty()) {
      const Item it = stack.back();
      stack.pop_back();
      const XJoint& j = tree_.joints[it.joint];
      const int child = tree_.link_index.at(j.child);
      if (is_fixed(it.joint) && it.parent_body >= 0) {
        const SE3 X_BC = it.X_BL * to_se3(urdf_joint(j)->parent_to_joint_origin_transform);
        frames_.push_back(PendingFrame{j.child, FrameType::Link, it.parent_body, X_BC});
        frames_.push_back(PendingFrame{j.name, FrameType::FixedJoint, it.parent_body, X_BC});
        ++bodies_[it.parent_body].merged_links;
        add_link(child, it.parent_body, X_BC, stack);
      } else {
        const Index b = add_moving_body(it.parent_body, it.joint, it.X_BL);
        add_link(child, b, SE3(), stack);
      }
    }
    if (unresolved_visuals_ > 0) {
      report_.warn(unresolved_visuals_, " visual mesh(es) not resolved (kept without a file; the physics does not ",
                   "use them), the first: ", first_unresolved_visual_);
    }
    check_bodies();
    add_mimics();
    return assemble();
  }

 private:
  // a joint still to walk: it hangs from body `parent_body`, whose frame holds its parent link at X_BL
  struct Item {
    int joint;
    Index parent_body;
    SE3 X_BL;
  };

  // urdfdom's record of a joint of our own tree walk. The two parses can disagree on a name
  // (bytes that are not valid text, found by fuzz_urdf): a clear error, never a null dereference.
  urdf::JointConstSharedPtr urdf_joint(const XJoint& j) const {
    urdf::JointConstSharedPtr uj = urdf_.getJoint(j.name);
    if (!uj) fail(source_, "joint '", j.name, "': not found by the URDF parser (a name with invalid characters?)");
    return uj;
  }
  urdf::LinkConstSharedPtr urdf_link(const std::string& name) const {
    urdf::LinkConstSharedPtr ul = urdf_.getLink(name);
    if (!ul) fail(source_, "link '", name, "': not found by the URDF parser (a name with invalid characters?)");
    return ul;
  }
  bool is_fixed(int joint) const { return tree_.joints[joint].type == "fixed" || welded_[joint]; }

  // A moving joint whose child subtree has no mass would make the mass matrix singular: such
  // joints carry only visual or sensor links, and are welded (with a warning).
  void find_welded_joints() {
    const size_t nl = tree_.links.size();
    welded_.assign(tree_.joints.size(), false);
    // links in preorder (iterative), then subtree mass bottom-up in reverse order
    std::vector<int> order, stack{tree_.root};
    while (!stack.empty()) {
      const int l = stack.back();
      stack.pop_back();
      order.push_back(l);
      for (int j : tree_.links[l].child_joints) stack.push_back(tree_.link_index.at(tree_.joints[j].child));
    }
    std::vector<bool> massive(nl, false);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const XLink& link = tree_.links[*it];
      bool m = has_mass(*urdf_link(link.name));
      for (int j : link.child_joints) m = m || massive[tree_.link_index.at(tree_.joints[j].child)];
      massive[*it] = m;
    }
    for (size_t k = 0; k < tree_.joints.size(); ++k) {
      const XJoint& j = tree_.joints[k];
      if (j.type == "fixed" || massive[tree_.link_index.at(j.child)]) continue;
      if (j.parent == "world" && tree_.links[tree_.root].name == "world") continue;  // the builder reports it
      report_.warn("joint '", j.name, "' (", j.type, ", line ", j.line, ") moves only massless links from '", j.child,
                   "' on: welded to its parent (a massless moving link has no determined motion)");
      welded_[k] = true;
    }
  }

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

  void add_root_body(int link, JointType type, std::vector<Item>& stack) {
    BodyRecord b;
    b.joint = "root";
    b.type = type;
    b.joint_urdf_type = type == JointType::Fixed ? "fixed" : "floating";
    b.link = tree_.links[link].name;
    bodies_.push_back(b);
    add_link(link, 0, SE3(), stack);
  }

  // A new body moved by joint k, hanging from body `parent` at X_PL * origin(k).
  Index add_moving_body(Index parent, int k, const SE3& X_PL) {
    const XJoint& j = tree_.joints[k];
    const urdf::JointConstSharedPtr uj = urdf_joint(j);
    const Scalar inf = std::numeric_limits<Scalar>::infinity();
    BodyRecord b;
    b.parent = parent;
    b.joint = j.name;
    b.joint_urdf_type = welded_[k] ? "fixed" : j.type;
    b.type = welded_[k] ? JointType::Fixed : joint_type(j, parent < 0);
    b.X_PJ = X_PL * to_se3(uj->parent_to_joint_origin_transform);
    if (b.type == JointType::Floating && !b.X_PJ.isApprox(SE3())) {
      // q of a floating base is the pose of the body in the world (docs/conventions.md)
      fail(source_, "joint '", j.name, "': a floating root joint must have an identity <origin> (its q is the pose ",
           "of link '", j.child, "' in the world)");
    }
    if (b.type == JointType::Floating && options_.fixed_base) b.type = JointType::Fixed;
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
    if (b.type == JointType::Fixed) b.limits = JointLimits();
    const Index i = static_cast<Index>(bodies_.size());
    bodies_.push_back(b);
    return i;
  }

  // Link l belongs to `body` at X_BL: its inertia, collisions and visuals; its child joints are
  // pushed for the walk (reversed, so that they pop in file order).
  void add_link(int l, Index body, const SE3& X_BL, std::vector<Item>& stack) {
    const XLink& link = tree_.links[l];
    const urdf::LinkConstSharedPtr ul = urdf_link(link.name);
    BodyRecord& b = bodies_[body];
    if (ul->inertial) {
      const Inertia I_L = link_inertia(*ul->inertial);
      if (I_L.m < 0) fail(source_, "link '", link.name, "': negative mass ", I_L.m);
      if (I_L.m > 0) {
        b.inertia = b.inertia + I_L.transformed(X_BL);
        b.has_inertial = true;
      } else if (!I_L.Ic.isZero(0)) {
        report_.warn("link '", link.name, "': rotational inertia without mass (mass 0) ignored: a massless link");
      }
    }
    for (size_t k = 0; k < ul->collision_array.size(); ++k) add_collision(*ul->collision_array[k], link.name, k, body, X_BL);
    for (size_t k = 0; k < ul->visual_array.size(); ++k) add_visual(*ul->visual_array[k], link.name, k, body, X_BL);
    for (auto it = link.child_joints.rbegin(); it != link.child_joints.rend(); ++it) stack.push_back(Item{*it, body, X_BL});
  }

  // Shape type and size of a urdfdom geometry (mesh: scale; the path is resolved by the caller).
  bool geometry(const urdf::Geometry& g, ShapeType& type, Vec3& size, std::string& uri) const {
    switch (g.type) {
      case urdf::Geometry::SPHERE: type = ShapeType::Sphere; size = Vec3(static_cast<const urdf::Sphere&>(g).radius, 0, 0); return true;
      case urdf::Geometry::BOX: {
        const auto& d = static_cast<const urdf::Box&>(g).dim;
        type = ShapeType::Box;
        size = Vec3(d.x, d.y, d.z);
        return true;
      }
      case urdf::Geometry::CYLINDER: {
        const auto& c = static_cast<const urdf::Cylinder&>(g);
        type = ShapeType::Cylinder;
        size = Vec3(c.radius, c.length, 0);
        return true;
      }
      case urdf::Geometry::MESH: {
        const auto& m = static_cast<const urdf::Mesh&>(g);
        type = ShapeType::Mesh;
        size = Vec3(m.scale.x, m.scale.y, m.scale.z);
        uri = m.filename;
        return true;
      }
    }
    return false;
  }

  void add_collision(const urdf::Collision& c, const std::string& link, size_t k, Index body, const SE3& X_BL) {
    CollisionShape s;
    s.name = c.name.empty() ? link + "/" + std::to_string(k) : c.name;
    s.link = link;
    s.body = body;
    s.X_BS = X_BL * to_se3(c.origin);
    if (!c.geometry) fail(source_, "link '", link, "': collision '", s.name, "' has no geometry");
    std::string uri;
    if (!geometry(*c.geometry, s.type, s.size, uri)) {
      fail(source_, "link '", link, "': collision '", s.name, "' has an unsupported geometry type");
    }
    if (s.type == ShapeType::Mesh) {
      try {
        s.mesh_path = resolve_resource_uri(uri, base_dir_.string(), options_.package_paths);
      } catch (const ModelError& e) {
        fail(source_, "link '", link, "': cannot resolve collision mesh '", uri, "': ", e.what());
      }
      s.mesh_collision = options_.mesh_collision;
    }
    if (s.type != ShapeType::Mesh && (s.size.array() < 0).any()) {
      fail(source_, "link '", link, "': collision '", s.name, "' has a negative size ", s.size.transpose());
    }
    shapes_.push_back(s);
  }

  void add_visual(const urdf::Visual& v, const std::string& link, size_t k, Index body, const SE3& X_BL) {
    VisualShape s;
    s.name = v.name.empty() ? link + "/visual/" + std::to_string(k) : v.name;
    s.link = link;
    s.body = body;
    s.X_BS = X_BL * to_se3(v.origin);
    if (!v.geometry || !geometry(*v.geometry, s.type, s.size, s.mesh_uri)) {
      report_.warn("link '", link, "': visual '", s.name, "' has no supported geometry: skipped");
      return;
    }
    if (s.type == ShapeType::Mesh) {
      // a viewer can live without a mesh; the physics does not need it: a warning, not an error
      try {
        s.mesh_path = resolve_resource_uri(s.mesh_uri, base_dir_.string(), options_.package_paths);
      } catch (const ModelError& e) {
        // one warning per load, not one per visual: reported by build()
        if (unresolved_visuals_++ == 0) first_unresolved_visual_ = "link '" + link + "': " + e.what();
      }
    }
    s.material = v.material_name;
    if (v.material) {
      const urdf::Color& c = v.material->color;
      s.rgba = Vec4(c.r, c.g, c.b, c.a);
    }
    visuals_.push_back(s);
  }

  // Every moving body with mass must be a physical rigid body once its fixed children are merged
  // (parts alone may be unphysical: ANYmal C's camera inertias are). Impossible inertias are
  // repaired with a warning (an error in strict mode).
  void check_bodies() {
    for (BodyRecord& b : bodies_) {
      if (b.type == JointType::Fixed && b.parent < 0) continue;  // welded to the world: never moves
      if (!b.has_inertial) continue;  // massless frame: the builder checks that its subtree has mass
      const std::string what = "link '" + b.link + "' (moved by joint '" + b.joint + "'" +
                               (b.merged_links ? ", with " + std::to_string(b.merged_links) + " fixed links merged" : "") +
                               ")";
      Vec3 before, after;
      if (detail::repair_inertia(b.inertia.Ic, before, after)) {
        const bool negative = before.minCoeff() < 0;
        report_.warn(what, ": principal moments (", before.transpose(), ") ",
                     negative ? "are not all positive" : "violate the triangle inequality",
                     "; repaired to (", after.transpose(), ")");
      }
    }
  }

  void add_mimics() {
    for (size_t k = 0; k < tree_.joints.size(); ++k) {
      const XJoint& j = tree_.joints[k];
      const urdf::JointConstSharedPtr uj = urdf_joint(j);
      if (!uj->mimic) continue;
      const std::string& master = uj->mimic->joint_name;
      if (master == j.name) fail(source_, "joint '", j.name, "' (line ", j.line, "): <mimic> names the joint itself");
      if (!urdf_.getJoint(master)) {
        fail(source_, "joint '", j.name, "' (line ", j.line, "): <mimic> names joint '", master, "', which does not exist");
      }
      MimicJoint m;
      m.multiplier = uj->mimic->multiplier;
      m.offset = uj->mimic->offset;
      for (size_t b = 0; b < bodies_.size(); ++b) {
        if (bodies_[b].joint == j.name) m.joint = static_cast<Index>(b);
        if (bodies_[b].joint == master) m.master = static_cast<Index>(b);
      }
      if (m.joint < 0 || m.master < 0 || bodies_[m.joint].type == JointType::Fixed ||
          bodies_[m.master].type == JointType::Fixed) {
        report_.warn("joint '", j.name, "' mimics joint '", master, "', but one of them is fixed or welded: mimic ignored");
        continue;
      }
      mimics_.push_back(m);  // enforced by an equality row in the contact problem (docs/robots.md)
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
      for (const VisualShape& s : visuals_) builder.add_visual(s);
      for (const MimicJoint& m : mimics_) builder.add_mimic(m);
      return builder.finalize();
    } catch (const ModelError& e) {
      fail(source_, e.what());
    }
  }

  const XTree& tree_;
  const urdf::ModelInterface& urdf_;
  const UrdfOptions& options_;
  const Reporter& report_;
  const std::string source_;
  const fs::path base_dir_;
  std::vector<bool> welded_;  // per joint (file order): a moving joint treated as fixed
  std::vector<BodyRecord> bodies_;
  std::vector<PendingFrame> frames_;
  std::vector<CollisionShape> shapes_;
  std::vector<VisualShape> visuals_;
  std::vector<MimicJoint> mimics_;
  int unresolved_visuals_ = 0;
  std::string first_unresolved_visual_;
};

Model load(const std::string& xml, const UrdfOptions& options, const std::string& source, const fs::path& base_dir) {
  const Reporter report(options, source);
  const XTree tree = read_tree(xml, report);
  const urdf::ModelInterfaceSharedPtr urdf = parse_urdfdom(xml, source);
  return TreeBuilder(tree, *urdf, options, report, base_dir).build();
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
