// MJCF subset loader (mjcf.hpp). One pass over the XML with tinyxml2: defaults are resolved per
// element (own attribute, else its class, else the class's ancestors up to "main"), bodies are
// walked with an explicit stack (no recursion), and the result goes through ModelBuilder.
// MuJoCo conventions (MuJoCo documentation, "XML Reference"): quaternions are w x y z; angles are
// in degrees unless <compiler angle="radian">; euler angles follow eulerseq (default "xyz",
// rotations about the moving axes); geom sizes are half sizes; capsule and cylinder run along z.
#include "impulse/io/mjcf.hpp"

#include <tinyxml2.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "impulse/core/check.hpp"
#include "impulse/core/file.hpp"
#include "impulse/model/model_builder.hpp"
#include "loader_common.hpp"

namespace impulse {

namespace {

namespace fs = std::filesystem;
using tinyxml2::XMLElement;

using detail::fail;

using Attributes = std::map<std::string, std::string>;

// Attributes each supported element may carry; anything else is a warning.
const std::map<std::string, std::set<std::string>>& known_attributes() {
  static const std::map<std::string, std::set<std::string>> k = {
      {"body", {"name", "pos", "quat", "euler", "axisangle", "childclass"}},
      {"inertial", {"pos", "quat", "euler", "axisangle", "mass", "diaginertia", "fullinertia"}},
      {"joint", {"name", "class", "type", "pos", "axis", "range", "limited", "damping", "armature", "frictionloss",
                 "ref"}},
      {"freejoint", {"name"}},
      {"geom", {"name", "class", "type", "size", "fromto", "pos", "quat", "euler", "axisangle", "mass", "density", "rgba",
                "mesh", "material", "group"}},
      {"motor", {"name", "class", "joint", "gear", "ctrlrange", "ctrllimited"}},
      {"position", {"name", "class", "joint", "kp", "ctrlrange", "ctrllimited"}},
      {"mesh", {"name", "file", "scale"}},
  };
  return k;
}

class Loader {
 public:
  Loader(const MjcfOptions& options, std::string source, fs::path base_dir)
      : options_(options), source_(std::move(source)), base_dir_(std::move(base_dir)) {}

  MjcfModel load(const std::string& xml) {
    tinyxml2::XMLDocument doc;
    if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) {
      fail(source_, "line ", doc.ErrorLineNum(), ": XML is not well formed (", doc.ErrorName(), ")");
    }
    const XMLElement* root = doc.RootElement();
    if (!root || std::string(root->Name()) != "mujoco") {
      fail(source_, "the root element is <", root ? root->Name() : "", ">, expected <mujoco>");
    }
    MjcfModel out;
    name_ = attr(root, "model", "mjcf");
    // settings first: they change how the rest is read
    for (const XMLElement* e = root->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag == "compiler") {
        const std::string angle = attr(e, "angle", "degree");
        if (angle != "degree" && angle != "radian") bad(e, "angle", "must be degree or radian");
        degrees_ = angle == "degree";
        meshdir_ = attr(e, "meshdir", "");
        eulerseq_ = attr(e, "eulerseq", "xyz");
        if (eulerseq_.size() != 3 || eulerseq_.find_first_not_of("xyzXYZ") != std::string::npos) {
          bad(e, "eulerseq", "must be three of x, y, z (or X, Y, Z)");
        }
        for (const XMLAttribute_it& a : attributes(e)) {
          if (a.first != "angle" && a.first != "meshdir" && a.first != "eulerseq") unsupported_attr(e, a.first);
        }
      } else if (tag == "option") {
        if (e->Attribute("timestep")) out.timestep = numbers(e, "timestep", 1)[0];
        if (e->Attribute("gravity")) out.gravity = vec3(e, "gravity");
      } else if (tag == "default") {
        read_defaults(e);
      } else if (tag == "asset") {
        read_assets(e);
      }
    }
    for (const XMLElement* e = root->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag == "worldbody") {
        read_worldbody(e, out);
      } else if (tag == "actuator") {
        // after the bodies (joint names)
      } else if (tag == "equality") {
        read_equality(e);
      } else if (tag != "compiler" && tag != "option" && tag != "default" && tag != "asset") {
        warn("unsupported element <", tag, "> (line ", e->GetLineNum(), ") ignored");
      }
    }
    out.model = assemble();
    for (const XMLElement* e = root->FirstChildElement("actuator"); e; e = e->NextSiblingElement("actuator")) {
      read_actuators(e, out);
    }
    out.q0 = out.model.neutral_configuration();
    for (const auto& fq : free_q0_) {
      const Index iq = out.model.idx_q[fq.first];
      out.q0.segment<7>(iq) = fq.second;
    }
    return out;
  }

 private:
  using XMLAttribute_it = std::pair<std::string, std::string>;

  // ---- reporting

  template <typename... Args>
  void warn(const Args&... args) const {
    const std::string what = detail::concat(args...);
    if (options_.strict) fail(source_, what, " (an error in strict mode)");
    if (options_.on_warning) {
      options_.on_warning(source_ + ": " + what);
    } else {
      std::cerr << "warning: " << source_ << ": " << what << "\n";
    }
  }
  [[noreturn]] void bad(const XMLElement* e, const char* a, const std::string& why) const {
    fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), ") attribute ", a, "=\"", e->Attribute(a) ? e->Attribute(a) : "",
         "\": ", why);
  }
  void unsupported_attr(const XMLElement* e, const std::string& a) const {
    warn("unsupported attribute '", a, "' of <", e->Name(), "> (line ", e->GetLineNum(), ") ignored");
  }

  static std::vector<XMLAttribute_it> attributes(const XMLElement* e) {
    std::vector<XMLAttribute_it> v;
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) v.emplace_back(a->Name(), a->Value());
    return v;
  }

  // ---- attribute values with defaults

  // The attributes of element e: its own, then its class (explicit, or the childclass in force),
  // then the class's ancestors; `cls` is the class in force for e.
  Attributes resolve(const XMLElement* e, const std::string& cls) const {
    Attributes a;
    const std::string tag = e->Name();
    const std::string c = e->Attribute("class") ? e->Attribute("class") : cls;
    if (!c.empty() && classes_.count(c) == 0) bad(e, "class", "no <default class=\"" + c + "\">");
    for (std::string k = c.empty() ? "main" : c; !k.empty();) {
      const auto it = classes_.find(k);
      if (it == classes_.end()) break;
      const auto t = it->second.find(tag);
      if (t != it->second.end()) {
        for (const auto& kv : t->second) a.emplace(kv.first, kv.second);  // emplace: nearer class wins
      }
      k = parent_class_.count(k) ? parent_class_.at(k) : "";
    }
    for (const XMLAttribute_it& kv : attributes(e)) a[kv.first] = kv.second;
    const auto known = known_attributes().find(tag);
    if (known != known_attributes().end()) {
      for (const XMLAttribute_it& kv : attributes(e)) {
        if (known->second.count(kv.first) == 0) unsupported_attr(e, kv.first);
      }
    }
    return a;
  }

  std::string attr(const XMLElement* e, const char* n, const std::string& def) const {
    const char* v = e->Attribute(n);
    return v ? v : def;
  }

  std::vector<Scalar> parse_numbers(const XMLElement* e, const std::string& n, const std::string& text, int min_count,
                                    int max_count) const {
    std::istringstream in(text);
    std::vector<Scalar> v;
    std::string t;
    while (in >> t) {
      char* end = nullptr;
      const double x = std::strtod(t.c_str(), &end);
      if (end == t.c_str() || *end != '\0' || !std::isfinite(x) || t.find_first_of("xX") != std::string::npos) {
        fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), ") attribute ", n, "=\"", text,
             "\": not a finite decimal number");
      }
      if (std::abs(x) > 1e9) {
        fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), ") attribute ", n, "=\"", text,
             "\": out of range (|value| <= 1e9)");
      }
      v.push_back(x);
    }
    if (static_cast<int>(v.size()) < min_count || static_cast<int>(v.size()) > max_count) {
      fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), ") attribute ", n, "=\"", text, "\": ", v.size(),
           " numbers, expected ", min_count == max_count ? std::to_string(min_count)
                                                         : std::to_string(min_count) + " to " + std::to_string(max_count));
    }
    return v;
  }
  std::vector<Scalar> numbers(const XMLElement* e, const char* n, int count) const {
    return parse_numbers(e, n, attr(e, n, ""), count, count);
  }
  std::vector<Scalar> get(const XMLElement* e, const Attributes& a, const std::string& n, int min_count,
                          int max_count) const {
    const auto it = a.find(n);
    if (it == a.end()) return {};
    return parse_numbers(e, n, it->second, min_count, max_count);
  }
  Vec3 vec3(const XMLElement* e, const char* n) const {
    const std::vector<Scalar> v = numbers(e, n, 3);
    return Vec3(v[0], v[1], v[2]);
  }
  Scalar scalar(const XMLElement* e, const Attributes& a, const std::string& n, Scalar def) const {
    const std::vector<Scalar> v = get(e, a, n, 1, 1);
    return v.empty() ? def : v[0];
  }

  // Orientation from quat (w x y z), euler (eulerseq, degrees or radians) or axisangle.
  Mat3 orientation(const XMLElement* e, const Attributes& a) const {
    const int given = int(a.count("quat")) + int(a.count("euler")) + int(a.count("axisangle"));
    if (given > 1) fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), "): more than one of quat, euler, axisangle");
    const Scalar unit = degrees_ ? M_PI / 180 : 1;
    if (a.count("quat")) {
      const std::vector<Scalar> q = get(e, a, "quat", 4, 4);
      const Quat Q(q[0], q[1], q[2], q[3]);
      if (!(Q.norm() > 1e-12)) fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), "): quat is zero");
      return Q.normalized().toRotationMatrix();
    }
    if (a.count("axisangle")) {
      const std::vector<Scalar> v = get(e, a, "axisangle", 4, 4);
      const Vec3 axis(v[0], v[1], v[2]);
      if (!(axis.norm() > 1e-12)) fail(source_, "<", e->Name(), "> (line ", e->GetLineNum(), "): axisangle axis is zero");
      return Eigen::AngleAxisd(v[3] * unit, axis.normalized()).toRotationMatrix();
    }
    if (a.count("euler")) {
      const std::vector<Scalar> v = get(e, a, "euler", 3, 3);
      Mat3 R = Mat3::Identity();
      for (int k = 0; k < 3; ++k) {
        const char ch = eulerseq_[k];
        const int axis = std::tolower(ch) - 'x';
        const Mat3 Rk = Eigen::AngleAxisd(v[k] * unit, Vec3::Unit(axis)).toRotationMatrix();
        // lower case: rotations about the moving (intrinsic) axes; upper case: fixed axes
        R = std::islower(static_cast<unsigned char>(ch)) ? Mat3(R * Rk) : Mat3(Rk * R);
      }
      return R;
    }
    return Mat3::Identity();
  }
  SE3 pose(const XMLElement* e, const Attributes& a) const {
    const std::vector<Scalar> p = get(e, a, "pos", 3, 3);
    return SE3(orientation(e, a), p.empty() ? Vec3::Zero() : Vec3(p[0], p[1], p[2]));
  }

  // ---- <default> and <asset>

  void read_defaults(const XMLElement* top) {
    // iterative: (element, parent class name)
    std::vector<std::pair<const XMLElement*, std::string>> stack{{top, ""}};
    while (!stack.empty()) {
      const auto [d, parent] = stack.back();
      stack.pop_back();
      const std::string cls = attr(d, "class", parent.empty() ? "main" : "");
      if (cls.empty()) fail(source_, "<default> (line ", d->GetLineNum(), ") nested without a class name");
      if (classes_.count(cls)) fail(source_, "<default class=\"", cls, "\"> (line ", d->GetLineNum(), ") is defined twice");
      classes_[cls];
      if (!parent.empty()) parent_class_[cls] = parent;
      for (const XMLElement* c = d->FirstChildElement(); c; c = c->NextSiblingElement()) {
        const std::string tag = c->Name();
        if (tag == "default") {
          stack.emplace_back(c, cls);
        } else if (tag == "joint" || tag == "geom" || tag == "motor" || tag == "position") {
          for (const XMLAttribute_it& kv : attributes(c)) classes_[cls][tag][kv.first] = kv.second;
        } else {
          warn("unsupported default element <", tag, "> (line ", c->GetLineNum(), ") ignored");
        }
      }
    }
  }

  void read_assets(const XMLElement* asset) {
    for (const XMLElement* m = asset->FirstChildElement(); m; m = m->NextSiblingElement()) {
      if (std::string(m->Name()) != "mesh") {
        warn("unsupported asset <", m->Name(), "> (line ", m->GetLineNum(), ") ignored");
        continue;
      }
      const Attributes a = resolve(m, "");
      if (!a.count("file")) fail(source_, "<mesh> (line ", m->GetLineNum(), ") has no file");
      fs::path file = fs::path(meshdir_) / a.at("file");
      if (!file.is_absolute()) file = base_dir_ / file;
      std::string name = a.count("name") ? a.at("name") : fs::path(a.at("file")).stem().string();
      const std::vector<Scalar> s = get(m, a, "scale", 3, 3);
      meshes_[name] = {file.lexically_normal().string(), s.empty() ? Vec3::Ones() : Vec3(s[0], s[1], s[2])};
    }
  }

  // ---- bodies

  struct Body {
    Index parent = -1;
    std::string name, joint;
    JointType type = JointType::Fixed;
    SE3 X_PJ;
    Vec3 axis = Vec3::UnitZ();
    JointLimits limits;
    Inertia inertia;
    bool explicit_inertia = false;
  };

  // Mass properties of a geom at X_BG from density (or its mass): uniform solid.
  Inertia geom_inertia(const CollisionShape& g, Scalar mass, Scalar density, const XMLElement* e) const {
    Scalar volume = 0;
    Vec3 I = Vec3::Zero();  // principal moments per unit mass, along the geom axes
    const Scalar r = g.size.x();
    switch (g.type) {
      case ShapeType::Sphere:
        volume = 4.0 / 3.0 * M_PI * r * r * r;
        I.setConstant(0.4 * r * r);
        break;
      case ShapeType::Box: {
        const Vec3& s = g.size;  // full sides
        volume = s.prod();
        I = Vec3(s.y() * s.y() + s.z() * s.z(), s.x() * s.x() + s.z() * s.z(), s.x() * s.x() + s.y() * s.y()) / 12.0;
        break;
      }
      case ShapeType::Cylinder: {
        const Scalar L = g.size.y();
        volume = M_PI * r * r * L;
        I = Vec3((3 * r * r + L * L) / 12.0, (3 * r * r + L * L) / 12.0, 0.5 * r * r);
        break;
      }
      case ShapeType::Capsule: {
        // cylinder of length L plus a sphere split into two caps at its ends
        const Scalar L = g.size.y();
        const Scalar vc = M_PI * r * r * L, vs = 4.0 / 3.0 * M_PI * r * r * r;
        volume = vc + vs;
        const Scalar mc = vc / volume, ms = vs / volume;  // mass fractions
        const Scalar axial = mc * 0.5 * r * r + ms * 0.4 * r * r;
        // each hemisphere: COM 3r/8 from its flat face; parallel axis to the capsule centre
        // two caps of mass ms/2: about their own COM 0.4 (ms/2) r^2 - (ms/2)(3r/8)^2, then shifted by
        // L/2 + 3r/8: together ms (0.4 r^2 + L^2/4 + 3 L r/8)
        const Scalar cap = ms * (0.4 * r * r + 0.25 * L * L + 0.375 * L * r);
        const Scalar lateral = mc * (3 * r * r + L * L) / 12.0 + cap;
        I = Vec3(lateral, lateral, axial);
        break;
      }
      case ShapeType::Mesh:
        warn("<geom type=\"mesh\"> (line ", e->GetLineNum(), "): mass properties of meshes are not computed; ",
             "give the body an <inertial> (the mesh adds no mass)");
        return Inertia();
    }
    const Scalar m = mass >= 0 ? mass : density * volume;
    return Inertia(m, g.X_BS.p, g.X_BS.R * (m * I).asDiagonal() * g.X_BS.R.transpose());
  }

  // A <geom> as a collision shape in the frame of its body element (before joint-anchor shifts).
  bool read_geom(const XMLElement* e, const std::string& cls, CollisionShape& g, Scalar& mass, Scalar& density,
                 bool& plane) const {
    const Attributes a = resolve(e, cls);
    const std::string type = a.count("type") ? a.at("type") : "sphere";
    g.name = a.count("name") ? a.at("name") : "";
    SE3 X = pose(e, a);
    const std::vector<Scalar> size = get(e, a, "size", 0, 3);
    const std::vector<Scalar> fromto = get(e, a, "fromto", 6, 6);
    mass = scalar(e, a, "mass", -1);
    density = scalar(e, a, "density", 1000);
    plane = false;
    auto need = [&](std::size_t n) {
      if (size.size() < n) fail(source_, "<geom type=\"", type, "\"> (line ", e->GetLineNum(), ") needs ", n, " size values");
    };
    Scalar half_length = 0;
    if (!fromto.empty()) {
      // segment from a to b: the geom's z axis along it, centred
      const Vec3 p0(fromto[0], fromto[1], fromto[2]), p1(fromto[3], fromto[4], fromto[5]);
      const Vec3 d = p1 - p0;
      if (!(d.norm() > 1e-12)) fail(source_, "<geom> (line ", e->GetLineNum(), "): fromto has zero length");
      X.p = 0.5 * (p0 + p1);
      X.R = Quat::FromTwoVectors(Vec3::UnitZ(), d.normalized()).toRotationMatrix();
      half_length = 0.5 * d.norm();
    }
    if (type == "sphere") {
      need(1);
      g.type = ShapeType::Sphere;
      g.size = Vec3(size[0], 0, 0);
    } else if (type == "box") {
      need(3);
      g.type = ShapeType::Box;
      g.size = 2 * Vec3(size[0], size[1], size[2]);
    } else if (type == "capsule" || type == "cylinder") {
      need(fromto.empty() ? 2 : 1);
      g.type = type == "capsule" ? ShapeType::Capsule : ShapeType::Cylinder;
      g.size = Vec3(size[0], 2 * (fromto.empty() ? size[1] : half_length), 0);
    } else if (type == "mesh") {
      if (!a.count("mesh")) fail(source_, "<geom type=\"mesh\"> (line ", e->GetLineNum(), ") names no mesh");
      const auto it = meshes_.find(a.at("mesh"));
      if (it == meshes_.end()) fail(source_, "<geom> (line ", e->GetLineNum(), "): unknown mesh '", a.at("mesh"), "'");
      g.type = ShapeType::Mesh;
      g.mesh_path = it->second.first;
      g.size = it->second.second;
    } else if (type == "plane") {
      plane = true;
      g.type = ShapeType::Box;
      g.size = Vec3::Zero();
    } else {
      warn("<geom type=\"", type, "\"> (line ", e->GetLineNum(), ") is not supported: ignored");
      return false;
    }
    if ((g.size.array() < 0).any()) fail(source_, "<geom> (line ", e->GetLineNum(), "): negative size");
    g.X_BS = X;
    return true;
  }

  void read_worldbody(const XMLElement* wb, MjcfModel& out) {
    // world geoms
    for (const XMLElement* c = wb->FirstChildElement(); c; c = c->NextSiblingElement()) {
      const std::string tag = c->Name();
      if (tag == "geom") {
        CollisionShape g;
        Scalar mass, density;
        bool plane;
        if (read_geom(c, "", g, mass, density, plane)) {
          g.link = "world";
          out.world_geoms.push_back(g);
          out.world_geom_is_plane.push_back(plane);
        }
      } else if (tag != "body") {
        warn("unsupported element <", tag, "> in <worldbody> (line ", c->GetLineNum(), ") ignored");
      }
    }
    // bodies, depth-first in file order: (element, parent body index, X_PB0 of the element's
    // frame in the parent body frame, class in force)
    struct Item {
      const XMLElement* e;
      Index parent;
      SE3 X_PE;
      std::string cls;
    };
    std::vector<Item> stack;
    std::vector<const XMLElement*> tops;
    for (const XMLElement* c = wb->FirstChildElement("body"); c; c = c->NextSiblingElement("body")) tops.push_back(c);
    for (auto it = tops.rbegin(); it != tops.rend(); ++it) stack.push_back(Item{*it, -1, SE3(), ""});
    while (!stack.empty()) {
      const Item item = stack.back();
      stack.pop_back();
      const XMLElement* e = item.e;
      const Attributes ba = resolve(e, "");
      const std::string cls = e->Attribute("childclass") ? e->Attribute("childclass") : item.cls;
      if (!cls.empty() && classes_.count(cls) == 0) bad(e, "childclass", "no <default class=\"" + cls + "\">");
      const std::string bname = ba.count("name") ? ba.at("name") : "body" + std::to_string(unnamed_++);
      const SE3 X_PB = item.X_PE * pose(e, ba);  // body frame (at q = 0) in the parent body frame

      // joints of this body, in file order
      std::vector<const XMLElement*> joints;
      for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
        const std::string tag = c->Name();
        if (tag == "joint" || tag == "freejoint") joints.push_back(c);
      }
      Index body = item.parent;  // the Model body this element's content goes to
      SE3 X_BE = X_PB;           // this element's frame in that body's frame
      for (std::size_t k = 0; k < joints.size(); ++k) {
        const XMLElement* j = joints[k];
        const Attributes ja = resolve(j, cls);
        const std::string jtag = j->Name();
        const std::string type = jtag == "freejoint" ? "free" : (ja.count("type") ? ja.at("type") : "hinge");
        Body b;
        b.parent = body;
        b.joint = ja.count("name") ? ja.at("name") : bname + "_joint" + std::to_string(k);
        b.name = k + 1 == joints.size() ? bname : bname + "_" + b.joint;
        const std::vector<Scalar> jp = get(j, ja, "pos", 3, 3);
        const Vec3 anchor = jp.empty() ? Vec3::Zero() : Vec3(jp[0], jp[1], jp[2]);  // in the element frame
        if (type == "free") {
          if (item.parent >= 0 || k > 0) fail(source_, "<", jtag, "> (line ", j->GetLineNum(), ") in body '", bname,
                                              "': a free joint is supported only on a top-level body, alone");
          b.type = JointType::Floating;
          b.X_PJ = SE3();
          Eigen::Matrix<Scalar, 7, 1> q;
          const Quat Q(X_PB.R);
          q << X_PB.p, Q.w(), Q.x(), Q.y(), Q.z();
          free_q0_.emplace_back(static_cast<Index>(bodies_.size()), q);
          X_BE = SE3();  // the body frame is the element frame itself
        } else {
          if (type == "hinge") {
            b.type = JointType::Revolute;
          } else if (type == "slide") {
            b.type = JointType::Prismatic;
          } else if (type == "ball") {
            b.type = JointType::Spherical;
          } else {
            bad(j, "type", "must be hinge, slide, ball or free");
          }
          // joint frame: at the anchor, axes of the element frame
          b.X_PJ = X_BE * SE3(Mat3::Identity(), anchor);
          const std::vector<Scalar> ax = get(j, ja, "axis", 3, 3);
          b.axis = ax.empty() ? Vec3::UnitZ() : Vec3(ax[0], ax[1], ax[2]);
          const std::vector<Scalar> range = get(j, ja, "range", 2, 2);
          const std::string limited = ja.count("limited") ? ja.at("limited") : "auto";
          if (!range.empty() && limited != "false" && b.type != JointType::Spherical) {
            const Scalar unit = b.type == JointType::Revolute && degrees_ ? M_PI / 180 : 1;
            b.limits.lower = range[0] * unit;
            b.limits.upper = range[1] * unit;
            if (!(b.limits.lower <= b.limits.upper)) bad(j, "range", "lower bound above upper bound");
          }
          b.limits.damping = scalar(j, ja, "damping", 0);
          b.limits.friction = scalar(j, ja, "frictionloss", 0);
          b.limits.armature = scalar(j, ja, "armature", 0);
          if (ja.count("ref")) warn("<joint> (line ", j->GetLineNum(), "): ref is not supported (taken as 0)");
          X_BE = SE3(Mat3::Identity(), -anchor);  // the element frame in the new body (joint) frame
        }
        body = static_cast<Index>(bodies_.size());
        bodies_.push_back(b);
      }
      if (body < 0) {
        // a top-level body without joints: welded to the world
        Body b;
        b.name = bname;
        b.joint = bname + "_weld";
        b.X_PJ = X_PB;
        body = static_cast<Index>(bodies_.size());
        bodies_.push_back(b);
        X_BE = SE3();
      } else if (joints.empty()) {
        frames_.push_back({bname, body, X_BE});  // merged into its parent body
      }

      // inertial and geoms of the element, expressed in `body` at X_BE
      const XMLElement* inertial = e->FirstChildElement("inertial");
      if (inertial) {
        const Attributes ia = resolve(inertial, cls);
        const Scalar m = scalar(inertial, ia, "mass", -1);
        if (m < 0) fail(source_, "<inertial> (line ", inertial->GetLineNum(), ") of body '", bname, "' needs mass >= 0");
        const std::vector<Scalar> diag = get(inertial, ia, "diaginertia", 3, 3);
        const std::vector<Scalar> full = get(inertial, ia, "fullinertia", 6, 6);
        Mat3 I = Mat3::Zero();
        if (!diag.empty()) {
          I = Vec3(diag[0], diag[1], diag[2]).asDiagonal();
        } else if (!full.empty()) {
          I << full[0], full[3], full[4], full[3], full[1], full[5], full[4], full[5], full[2];
        } else if (m > 0) {
          fail(source_, "<inertial> (line ", inertial->GetLineNum(), ") of body '", bname,
               "' needs diaginertia or fullinertia");
        }
        const SE3 X_EI = pose(inertial, ia);
        bodies_[body].inertia = bodies_[body].inertia + Inertia(m, X_EI.p, X_EI.R * I * X_EI.R.transpose()).transformed(X_BE);
        bodies_[body].explicit_inertia = true;
      }
      for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
        const std::string tag = c->Name();
        if (tag == "geom") {
          CollisionShape g;
          Scalar mass, density;
          bool plane;
          if (!read_geom(c, cls, g, mass, density, plane)) continue;
          if (plane) {
            warn("<geom type=\"plane\"> (line ", c->GetLineNum(), ") in body '", bname, "' is not supported: ignored");
            continue;
          }
          if (!inertial) {
            bodies_[body].inertia = bodies_[body].inertia + geom_inertia(g, mass, density, c).transformed(X_BE);
          }
          g.X_BS = X_BE * g.X_BS;
          g.body = body;
          g.link = bname;
          if (g.name.empty()) g.name = bname + "/" + std::to_string(geoms_.size());
          geoms_.push_back(g);
        } else if (tag == "body") {
          // pushed below, in reverse
        } else if (tag != "joint" && tag != "freejoint" && tag != "inertial") {
          warn("unsupported element <", tag, "> in body '", bname, "' (line ", c->GetLineNum(), ") ignored");
        }
      }
      std::vector<const XMLElement*> children;
      for (const XMLElement* c = e->FirstChildElement("body"); c; c = c->NextSiblingElement("body")) children.push_back(c);
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(Item{*it, body, X_BE, cls});
    }
  }

  // <equality><joint joint1 joint2 polycoef>: joint1 = c0 + c1 joint2 (+ higher terms) becomes a
  // mimic coupling (Model::mimic, enforced exactly by the stepper; solref/solimp, MuJoCo's
  // softness, do not apply). Other kinds, polynomial couplings and a joint1 locked alone
  // (no joint2) are reported as unsupported.
  void read_equality(const XMLElement* eq) {
    static const std::set<std::string> known = {"name", "class", "joint1", "joint2", "polycoef", "active", "solref",
                                                "solimp"};
    for (const XMLElement* e = eq->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      const int line = e->GetLineNum();
      if (tag != "joint") {
        warn("unsupported equality <", tag, "> (line ", line, ") ignored");
        continue;
      }
      for (const XMLAttribute_it& kv : attributes(e)) {
        if (known.count(kv.first) == 0) unsupported_attr(e, kv.first);
      }
      if (attr(e, "active", "true") == "false") continue;
      const std::string j1 = attr(e, "joint1", ""), j2 = attr(e, "joint2", "");
      if (j1.empty()) fail(source_, "<equality><joint> (line ", line, ") names no joint1");
      if (j2.empty()) {
        warn("<equality><joint> (line ", line, ") without joint2 (joint1 held at a constant) is not supported: ignored");
        continue;
      }
      std::vector<Scalar> c = {0, 1, 0, 0, 0};
      if (e->Attribute("polycoef")) {
        const std::vector<Scalar> v = parse_numbers(e, "polycoef", attr(e, "polycoef", ""), 1, 5);
        for (std::size_t k = 0; k < v.size(); ++k) c[k] = v[k];
      }
      if (c[2] != 0 || c[3] != 0 || c[4] != 0) {
        warn("<equality><joint> (line ", line, "): polycoef with terms beyond linear is not supported: ignored");
        continue;
      }
      equalities_.push_back(PendingMimic{j1, j2, c[1], c[0], line});
    }
  }

  void read_actuators(const XMLElement* act, MjcfModel& out) const {
    for (const XMLElement* e = act->FirstChildElement(); e; e = e->NextSiblingElement()) {
      const std::string tag = e->Name();
      if (tag != "motor" && tag != "position") {
        warn("unsupported actuator <", tag, "> (line ", e->GetLineNum(), ") ignored");
        continue;
      }
      const Attributes a = resolve(e, "");
      MjcfActuator m;
      m.type = tag == "motor" ? MjcfActuator::Type::Motor : MjcfActuator::Type::Position;
      if (!a.count("joint")) fail(source_, "<", tag, "> (line ", e->GetLineNum(), ") names no joint");
      m.joint = out.model.find_joint(a.at("joint"));
      if (m.joint < 0) fail(source_, "<", tag, "> (line ", e->GetLineNum(), "): unknown joint '", a.at("joint"), "'");
      m.name = a.count("name") ? a.at("name") : a.at("joint");
      const std::vector<Scalar> gear = get(e, a, "gear", 1, 6);
      if (!gear.empty()) m.gear = gear[0];
      m.kp = scalar(e, a, "kp", 1);
      const std::vector<Scalar> cr = get(e, a, "ctrlrange", 2, 2);
      if (!cr.empty() && (!a.count("ctrllimited") || a.at("ctrllimited") != "false")) {
        m.ctrl_lower = cr[0];
        m.ctrl_upper = cr[1];
      }
      out.actuators.push_back(m);
    }
  }

  Model assemble() const {
    if (bodies_.empty()) fail(source_, "<worldbody> has no <body>");
    try {
      ModelBuilder builder(name_);
      for (const Body& b : bodies_) {
        builder.add_body(b.parent, b.joint, b.type, b.X_PJ, b.axis, b.limits, b.name, b.inertia,
                         joint_type_name(b.type));
      }
      for (const auto& f : frames_) builder.add_frame(std::get<0>(f), FrameType::Link, std::get<1>(f), std::get<2>(f));
      for (const CollisionShape& g : geoms_) builder.add_collision(g);
      for (const PendingMimic& p : equalities_) {
        MimicJoint mj;
        mj.multiplier = p.multiplier;
        mj.offset = p.offset;
        for (std::size_t b = 0; b < bodies_.size(); ++b) {
          if (bodies_[b].type == JointType::Fixed) continue;
          if (bodies_[b].joint == p.joint) mj.joint = static_cast<Index>(b);
          if (bodies_[b].joint == p.master) mj.master = static_cast<Index>(b);
        }
        for (const std::string* n : {&p.joint, &p.master}) {
          if ((n == &p.joint ? mj.joint : mj.master) < 0) {
            fail(source_, "<equality><joint> (line ", p.line, "): unknown joint '", *n, "'");
          }
        }
        builder.add_mimic(mj);
      }
      return builder.finalize();
    } catch (const ModelError& e) {
      fail(source_, e.what());
    }
  }

  const MjcfOptions& options_;
  const std::string source_;
  const fs::path base_dir_;
  std::string name_;
  bool degrees_ = true;
  std::string meshdir_, eulerseq_ = "xyz";
  std::map<std::string, std::map<std::string, Attributes>> classes_;  // class -> tag -> attributes
  std::map<std::string, std::string> parent_class_;
  std::map<std::string, std::pair<std::string, Vec3>> meshes_;
  std::vector<Body> bodies_;
  std::vector<std::tuple<std::string, Index, SE3>> frames_;
  std::vector<CollisionShape> geoms_;
  struct PendingMimic {
    std::string joint, master;  // joint1 = multiplier joint2 + offset
    Scalar multiplier = 1, offset = 0;
    int line = 0;
  };
  std::vector<PendingMimic> equalities_;
  std::vector<std::pair<Index, Eigen::Matrix<Scalar, 7, 1>>> free_q0_;
  int unnamed_ = 0;
};

}  // namespace

MjcfModel load_mjcf(const std::string& path, const MjcfOptions& options) {
  const std::string xml = read_regular_file<ModelError>(path, kMaxDescriptionBytes, "MJCF file");
  return Loader(options, path, fs::path(path).parent_path()).load(xml);
}

MjcfModel load_mjcf_string(const std::string& xml, const MjcfOptions& options, const std::string& source_name) {
  return Loader(options, source_name, fs::path()).load(xml);
}

}  // namespace impulse
