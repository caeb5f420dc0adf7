// World files (docs/world-format.md): tinyxml2 -> WorldDescription (all checks) -> World.
#include "impulse/world/world_file.hpp"

#include <tinyxml2.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <set>
#include <utility>
#include <sstream>

#include "impulse/core/file.hpp"
#include "impulse/collision/material.hpp"
#include "impulse/io/sdf.hpp"
#include "impulse/io/urdf.hpp"
#include "impulse/model/joint.hpp"
#include "impulse/contact/delassus_fields.hpp"
#include "impulse/solvers/solver_fields.hpp"
#include "impulse/world/settings.hpp"
#include "impulse/world/world_fields.hpp"

namespace impulse {

namespace {

using tinyxml2::XMLElement;

std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// One world file being read: every message is "path:line: <element> ...".
class Parser {
 public:
  explicit Parser(std::string path) : path_(std::move(path)), dir_(directory_of(path_)) {}

  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw WorldFileError(path_ + ":" + std::to_string(line) + ": " + msg);
  }
  [[noreturn]] void fail(const XMLElement* e, const std::string& msg) const {
    fail(e->GetLineNum(), "<" + std::string(e->Name()) + ">" + label(e) + ": " + msg);
  }
  [[noreturn]] void fail_attr(const XMLElement* e, const char* attr, const std::string& msg) const {
    fail(e, "attribute '" + std::string(attr) + "': " + msg);
  }

  static std::string label(const XMLElement* e) {
    const char* n = e->Attribute("name");
    return n && std::string(e->Name()) != "solver" ? " '" + std::string(n) + "'" : std::string();
  }

  void check_attributes(const XMLElement* e, std::initializer_list<const char*> allowed) const {
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      bool ok = false;
      for (const char* k : allowed) ok = ok || std::string(k) == a->Name();
      if (!ok) {
        std::vector<std::string> names(allowed.begin(), allowed.end());
        fail(e, "unknown attribute '" + std::string(a->Name()) + "' (valid: " + join(names) + ")");
      }
    }
  }
  void check_attributes(const XMLElement* e, const std::vector<std::string>& allowed) const {
    for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
      if (std::find(allowed.begin(), allowed.end(), a->Name()) == allowed.end()) {
        fail(e, "unknown attribute '" + std::string(a->Name()) + "' (valid: " + join(allowed) + ")");
      }
    }
  }
  void check_no_children(const XMLElement* e, bool text_allowed = false) const {
    if (const XMLElement* c = e->FirstChildElement()) fail(c, "unexpected element inside <" + std::string(e->Name()) + ">");
    if (!text_allowed) check_no_text(e, "inside <" + std::string(e->Name()) + ">" + label(e));
  }

  static bool has(const XMLElement* e, const char* attr) { return e->Attribute(attr) != nullptr; }

  // Runs a check of world/settings.hpp (or the solver registry) and reports its message at the
  // element and attribute (attr nullptr: the element).
  template <class F>
  void validated(const XMLElement* e, const char* attr, F&& check) const {
    try {
      check();
    } catch (const InvalidArgument& err) {
      if (attr) fail_attr(e, attr, err.what());
      fail(e, err.what());
    }
  }

  // Text inside an element (or between elements) is never meaningful in a world file: a typo
  // such as a lost '<' turns an element into text, which must not be silently ignored.
  void check_no_text(const tinyxml2::XMLNode* parent, const std::string& where) const {
    for (const tinyxml2::XMLNode* n = parent->FirstChild(); n; n = n->NextSibling()) {
      const tinyxml2::XMLText* t = n->ToText();
      if (!t) continue;
      std::string v = t->Value() ? t->Value() : "";
      if (v.find_first_not_of(" \t\r\n") == std::string::npos) continue;
      v = v.substr(v.find_first_not_of(" \t\r\n"));
      v = v.substr(0, v.find_last_not_of(" \t\r\n") + 1);
      if (v.size() > 40) v = v.substr(0, 40) + "...";
      for (char& c : v) {
        if (c == '\n' || c == '\r' || c == '\t') c = ' ';
      }
      fail(n->GetLineNum(), "stray text '" + v + "' " + where);
    }
  }

  // Material names used by objects: each must be "default" or appear in a <material> pair.
  struct MaterialUse {
    std::string name;
    int line;
    std::string element;
  };
  mutable std::vector<MaterialUse> material_uses_;
  std::string material(const XMLElement* e) const {
    if (!has(e, "material")) return "default";
    const std::string m = name(e, "material");
    material_uses_.push_back({m, e->GetLineNum(), "<" + std::string(e->Name()) + ">" + label(e)});
    return m;
  }

  std::string text(const XMLElement* e, const char* attr, const std::string& def = "") const {
    const char* v = e->Attribute(attr);
    return v ? std::string(v) : def;
  }
  std::string name(const XMLElement* e, const char* attr) const {
    const std::string n = text(e, attr);
    if (!has(e, attr)) fail(e, "missing attribute '" + std::string(attr) + "'");
    if (n.empty() || n.find_first_of(" \t\n\r,") != std::string::npos) {
      fail_attr(e, attr, "'" + n + "' is not a valid name (non-empty, no spaces or commas)");
    }
    return n;
  }

  // A plain decimal number: [+-] digits [. digits] [e [+-] digits]. strtod alone would also take
  // hex floats (0x1p-10), "inf", "nan" and "infinity", which a world file must not contain.
  static bool decimal(const std::string& t) {
    std::size_t i = 0, n = t.size();
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    std::size_t digits = 0;
    while (i < n && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++digits;
    if (i < n && t[i] == '.') {
      ++i;
      while (i < n && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++digits;
    }
    if (digits == 0) return false;
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
      ++i;
      if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
      std::size_t exp = 0;
      while (i < n && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++exp;
      if (exp == 0) return false;
    }
    return i == n;
  }

  // Parses a whitespace-separated list of finite decimal numbers.
  std::vector<Scalar> numbers(const XMLElement* e, const char* what, const std::string& s, bool is_attr) const {
    std::vector<Scalar> out;
    std::istringstream in(s);
    std::string tok;
    while (in >> tok) {
      errno = 0;
      char* end = nullptr;
      double x = std::strtod(tok.c_str(), &end);
      const std::string where = is_attr ? "attribute '" + std::string(what) + "'" : std::string(what);
      const std::string lower = [&] {
        std::string l = tok;
        for (char& ch : l) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        return l;
      }();
      if (lower.find("inf") != std::string::npos || lower.find("nan") != std::string::npos) {
        fail(e, where + ": '" + tok + "' is not finite");
      }
      if (!decimal(tok)) fail(e, where + ": '" + tok + "' is not a decimal number");
      if (end == tok.c_str() || *end != '\0') fail(e, where + ": '" + tok + "' is not a number");
      if (errno == ERANGE && std::abs(x) > 1) fail(e, where + ": '" + tok + "' is out of range (not finite)");
      if (!std::isfinite(x)) fail(e, where + ": '" + tok + "' is not finite");
      if (errno == ERANGE) x = 0;  // underflow to a denormal or zero: 1e-400 is zero
      out.push_back(x);
    }
    return out;
  }
  VecX vector(const XMLElement* e, const char* attr, Index n) const {
    const std::vector<Scalar> v = numbers(e, attr, text(e, attr), true);
    if (static_cast<Index>(v.size()) != n) {
      fail_attr(e, attr, "expected " + std::to_string(n) + " numbers, got " + std::to_string(v.size()) + " ('" +
                             text(e, attr) + "')");
    }
    return Eigen::Map<const VecX>(v.data(), n);
  }
  Scalar number(const XMLElement* e, const char* attr, Scalar def) const {
    return has(e, attr) ? vector(e, attr, 1)[0] : def;
  }
  Vec3 vec3(const XMLElement* e, const char* attr, const Vec3& def) const {
    return has(e, attr) ? Vec3(vector(e, attr, 3)) : def;
  }
  Scalar positive(const XMLElement* e, const char* attr, Scalar def, bool required = false) const {
    if (required && !has(e, attr)) fail(e, "missing attribute '" + std::string(attr) + "'");
    const Scalar x = number(e, attr, def);
    if (!(x > 0)) fail_attr(e, attr, "must be > 0, got " + text(e, attr));
    return x;
  }
  Scalar nonnegative(const XMLElement* e, const char* attr, Scalar def) const {
    const Scalar x = number(e, attr, def);
    if (!(x >= 0)) fail_attr(e, attr, "must be >= 0, got " + text(e, attr));
    return x;
  }
  // The decimal integer written in attribute attr; false when the text is not one.
  bool decimal(const XMLElement* e, const char* attr, long long& x) const {
    const std::string s = text(e, attr);
    char* end = nullptr;
    errno = 0;
    x = std::strtoll(s.c_str(), &end, 10);
    const bool digits = !s.empty() && s.find_first_not_of("+0123456789") == std::string::npos;
    return digits && end != s.c_str() && *end == '\0' && errno != ERANGE;
  }
  Index count(const XMLElement* e, const char* attr, Index def) const {
    if (!has(e, attr)) return def;
    long long x = 0;
    if (!decimal(e, attr, x) || x <= 0) fail_attr(e, attr, "'" + text(e, attr) + "' is not a positive integer");
    return static_cast<Index>(x);
  }
  std::uint32_t bits(const XMLElement* e, const char* attr, std::uint32_t def) const {
    if (!has(e, attr)) return def;
    const std::string s = text(e, attr);
    char* end = nullptr;
    errno = 0;
    const unsigned long long x = std::strtoull(s.c_str(), &end, 0);
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const bool octal = !hex && s.size() > 1 && s[0] == '0';  // strtoull would read 010 as 8
    if (s.empty() || octal || s[0] == '-' || s[0] == '+' || std::isspace(static_cast<unsigned char>(s[0])) ||
        end == s.c_str() || *end != '\0' || errno == ERANGE || x > 0xFFFFFFFFull) {
      fail_attr(e, attr, "'" + s + "' is not a 32-bit unsigned integer (decimal or 0x hex)");
    }
    return static_cast<std::uint32_t>(x);
  }
  bool boolean(const XMLElement* e, const char* attr, bool def) const {
    if (!has(e, attr)) return def;
    const std::string s = text(e, attr);
    if (s == "true" || s == "1") return true;
    if (s == "false" || s == "0") return false;
    fail_attr(e, attr, "'" + s + "' is not a boolean (true, false, 1, 0)");
  }
  // The attributes of e that are fields of table t (settings_field.hpp) into s: each parsed by
  // its kind and checked against its range (the table's message, which names the field).
  template <class S>
  void read_fields(const XMLElement* e, const FieldTable<S>& t, S& s) const {
    for (const Field<S>& f : t.fields) {
      const char* a = f.attr();
      if (!has(e, a)) continue;
      const std::string v = text(e, a);
      switch (f.kind) {
        case FieldKind::Real:
        case FieldKind::Integer: {
          double x = 0;
          if (f.kind == FieldKind::Real) {
            x = vector(e, a, 1)[0];
          } else {
            // [+-]digits; the range check below names the bounds (a huge count reads as a huge
            // double, or inf, and fails it)
            const std::size_t i = v[0] == '+' || v[0] == '-' ? 1 : 0;
            if (i >= v.size() || v.find_first_not_of("0123456789", i) != std::string::npos) {
              fail_attr(e, a, "'" + v + "' is not an integer");
            }
            x = std::strtod(v.c_str(), nullptr);
          }
          validated(e, nullptr, [&] { check_field_value(t, f, x); });
          f.set(s, x);
          break;
        }
        case FieldKind::Boolean: f.set(s, boolean(e, a, false) ? 1 : 0); break;
        case FieldKind::Keyword: {
          std::vector<std::string> names;
          for (int i = 0; i < f.num_keywords; ++i) names.emplace_back(f.keywords[i].keyword);
          const auto it = std::find(names.begin(), names.end(), v);
          if (it == names.end()) {
            fail_attr(e, a, "unknown " + std::string(f.enum_noun) + " '" + v + "' (valid: " + join(names) + ")");
          }
          f.set(s, f.keywords[it - names.begin()].value);
          break;
        }
        case FieldKind::Vector3: {
          const Vec3 x = vec3(e, a, Vec3::Zero());
          validated(e, nullptr, [&] { check_field_value(t, f, x); });
          f.set3(s, x);
          break;
        }
      }
    }
  }
  template <class S>
  static void add_attributes(const FieldTable<S>& t, std::vector<std::string>& out) {
    for (const Field<S>& f : t.fields) out.emplace_back(f.attr());
  }

  CollisionFilter filter(const XMLElement* e) const {
    CollisionFilter f;
    f.group = bits(e, "group", f.group);
    f.mask = bits(e, "mask", f.mask);
    return f;
  }
  // Orientation from quat="w x y z" (normalised; must have norm ~1) or rpy="r p y" (URDF order).
  Quat orientation(const XMLElement* e) const {
    if (has(e, "quat") && has(e, "rpy")) fail(e, "give either 'quat' or 'rpy', not both");
    if (has(e, "rpy")) {
      const Vec3 r = vector(e, "rpy", 3);
      return Quat(rpy_to_matrix(r.x(), r.y(), r.z()));
    }
    if (has(e, "quat")) {
      const VecX q = vector(e, "quat", 4);
      const Scalar n = q.norm();
      if (std::abs(n - 1) > 1e-3) {
        fail_attr(e, "quat", "has norm " + std::to_string(n) + ", expected a unit quaternion (order w x y z)");
      }
      return Quat(q[0] / n, q[1] / n, q[2] / n, q[3] / n);
    }
    return Quat::Identity();
  }
  std::string resolve(const std::string& file) const {
    if (file.empty() || file[0] == '/') return file;
    return dir_ + file;
  }

  WorldDescription parse(const std::string& xml);

 private:
  void parse_solver(const XMLElement* e, WorldDescription& w) const;
  void parse_contact(const XMLElement* e, WorldDescription& w) const;
  MaterialPairDescription parse_material(const XMLElement* e, bool is_default) const;
  BodyDescription parse_body(const XMLElement* e) const;
  RobotDescription parse_robot(const XMLElement* e) const;
  HeightfieldDescription parse_heightfield(const XMLElement* e) const;
  void joint_values(const XMLElement* e, const Model& m, bool velocities, VecX& out) const;

  std::string path_, dir_;
};

void Parser::parse_solver(const XMLElement* e, WorldDescription& w) const {
  check_no_children(e);
  WorldSolverDescription& s = w.solver;
  s.name = text(e, "name", "bisection");
  const auto& valid = contact_solver_names();
  if (std::find(valid.begin(), valid.end(), s.name) == valid.end()) {
    fail_attr(e, "name", "unknown contact solver '" + s.name + "'; valid names are: " + join_solver_names());
  }
  std::vector<std::string> allowed = {"name"};
  if (s.name == "bisection") {
    add_attributes(bisection_fields(), allowed);
    check_attributes(e, allowed);
    read_fields(e, bisection_fields(), s.bisection);
  } else if (s.name == "pgs") {
    add_attributes(pgs_fields(), allowed);
    check_attributes(e, allowed);
    read_fields(e, pgs_fields(), s.pgs);
  } else if (s.name == "lm") {
    add_attributes(lm_fields(), allowed);
    check_attributes(e, allowed);
    read_fields(e, lm_fields(), s.lm);
  } else {  // noslip
    add_attributes(noslip_fields(), allowed);
    check_attributes(e, allowed);
    read_fields(e, noslip_fields(), s.noslip);
  }
  validated(e, nullptr, [&] { validate_solver_settings(s); });  // the registry's range checks
}

void Parser::parse_contact(const XMLElement* e, WorldDescription& w) const {
  check_no_children(e);
  std::vector<std::string> allowed;
  add_attributes(world_contact_fields(), allowed);
  add_attributes(contact_fields(), allowed);
  check_attributes(e, allowed);
  read_fields(e, world_contact_fields(), w);
  read_fields(e, contact_fields(), w.contact);
}

MaterialPairDescription Parser::parse_material(const XMLElement* e, bool is_default) const {
  check_no_children(e);
  MaterialPairDescription m;
  if (is_default) {
    check_attributes(e, {"friction", "restitution"});
  } else {
    check_attributes(e, {"a", "b", "friction", "restitution"});
    m.a = name(e, "a");
    m.b = name(e, "b");
  }
  m.friction = nonnegative(e, "friction", m.friction);
  m.restitution = nonnegative(e, "restitution", m.restitution);
  if (m.restitution > 1) fail_attr(e, "restitution", "must be in [0, 1], got " + text(e, "restitution"));
  return m;
}

BodyDescription Parser::parse_body(const XMLElement* e) const {
  check_no_children(e);
  BodyDescription b;
  b.line = e->GetLineNum();
  const std::string tag = e->Name();
  b.name = name(e, "name");
  b.is_static = boolean(e, "static", false);
  if (tag == "box") {
    check_attributes(e, {"name", "size", "static", "mass", "pos", "quat", "rpy", "vel", "angvel", "material", "group",
                         "mask"});
    b.shape = BodyDescription::Shape::Box;
    if (!has(e, "size")) fail(e, "missing attribute 'size' (full side lengths x y z)");
    b.size = vec3(e, "size", Vec3::Zero());
    if (!(b.size.minCoeff() > 0)) fail_attr(e, "size", "sides must be > 0");
  } else {
    check_attributes(e, {"name", "radius", "length", "static", "mass", "pos", "quat", "rpy", "vel", "angvel",
                         "material", "group", "mask"});
    if (b.is_static) fail_attr(e, "static", "only boxes can be static");
    b.size.x() = positive(e, "radius", 0, true);
    if (tag == "sphere") {
      b.shape = BodyDescription::Shape::Sphere;
      if (has(e, "length")) fail(e, "unknown attribute 'length' (a sphere has only a radius)");
    } else {
      b.shape = tag == "capsule" ? BodyDescription::Shape::Capsule : BodyDescription::Shape::Cylinder;
      b.size.y() = positive(e, "length", 0, true);
    }
  }
  b.position = vec3(e, "pos", Vec3::Zero());
  b.orientation = orientation(e);
  b.material = material(e);
  b.filter = filter(e);
  if (b.is_static) {
    for (const char* a : {"mass", "vel", "angvel"}) {
      if (has(e, a)) fail_attr(e, a, "a static box has no " + std::string(a));
    }
  } else {
    b.mass = positive(e, "mass", 0, true);
    b.linear_velocity = vec3(e, "vel", Vec3::Zero());
    b.angular_velocity = vec3(e, "angvel", Vec3::Zero());
  }
  return b;
}

// Joint positions (or velocities) of a <q>, <u> or <pd_target> element into `out` (layout of q or
// u): the text holds every joint coordinate after the floating base, in joint order; attributes
// named after 1-dof joints set single joints (after the text).
void Parser::joint_values(const XMLElement* e, const Model& m, bool velocities, VecX& out) const {
  check_no_children(e, true);  // the text holds the values
  const Index base = m.floating_base ? (velocities ? 6 : 7) : 0;
  const Index n = (velocities ? m.nv : m.nq) - base;
  if (const char* t = e->GetText()) {
    const std::vector<Scalar> v = numbers(e, "text", t, false);
    if (!v.empty()) {
      if (static_cast<Index>(v.size()) != n) {
        fail(e, "expected " + std::to_string(n) + " joint " + (velocities ? "velocities" : "positions") +
                    " in joint order, got " + std::to_string(v.size()));
      }
      out.segment(base, n) = Eigen::Map<const VecX>(v.data(), n);
    }
  }
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    const Index j = m.find_joint(a->Name());
    if (j < 0 || m.nv_joint[j] != 1 || joint_nq(m.joint_type[j]) != 1) {
      std::vector<std::string> names;
      for (Index i = 0; i < m.nb; ++i) {
        if (m.nv_joint[i] == 1 && joint_nq(m.joint_type[i]) == 1) names.push_back(m.joint_names[i]);
      }
      fail(e, "unknown attribute '" + std::string(a->Name()) + "': not a 1-dof joint of '" + m.name +
                  "' (joints: " + join(names) + ")");
    }
    out[velocities ? m.idx_v[j] : m.idx_q[j]] = vector(e, a->Name(), 1)[0];
  }
}

// <heightfield name= type="random|stairs|slope|stones|image" size="x y" cell= .../>: the generators of
// collision/heightfield.hpp with their parameters as attributes (docs/terrain.md).
HeightfieldDescription Parser::parse_heightfield(const XMLElement* e) const {
  check_no_children(e);
  check_attributes(e, {"name", "type", "size", "cell", "amplitude", "seed", "smoothing", "run", "rise", "start",
                       "gradient", "stone", "pitch", "depth", "jitter", "image", "max_height", "material", "group",
                       "mask"});
  HeightfieldDescription h;
  h.line = e->GetLineNum();
  h.name = has(e, "name") ? name(e, "name") : "terrain";
  h.material = has(e, "material") ? name(e, "material") : "default";
  h.filter = filter(e);
  if (!has(e, "type")) fail(e, "missing attribute 'type' (random, stairs, slope, stones, image)");
  const std::string type = text(e, "type");
  if (!has(e, "size")) fail(e, "missing attribute 'size' (\"x y\" in metres)");
  const VecX size = vector(e, "size", 2);
  if (!(size[0] > 0 && size[1] > 0)) fail_attr(e, "size", "must be > 0, got " + text(e, "size"));
  const Scalar cell = positive(e, "cell", 0.05);
  const std::uint64_t seed = static_cast<std::uint64_t>(count(e, "seed", 1));
  try {
    Heightfield f;
    if (type == "random") {
      f = Heightfield::random_rough(size[0], size[1], cell, nonnegative(e, "amplitude", 0.05), seed,
                                    static_cast<int>(nonnegative(e, "smoothing", 1)));
    } else if (type == "stairs") {
      f = Heightfield::stairs(size[0], size[1], cell, positive(e, "run", 0.3), number(e, "rise", 0.15),
                              number(e, "start", 0));
    } else if (type == "slope") {
      f = Heightfield::slope(size[0], size[1], cell, number(e, "gradient", 0.2), number(e, "start", 0));
    } else if (type == "stones") {
      f = Heightfield::stepping_stones(size[0], size[1], cell, positive(e, "stone", 0.3), positive(e, "pitch", 0.4),
                                       nonnegative(e, "depth", 0.5), nonnegative(e, "jitter", 0), seed);
    } else if (type == "image") {
      if (!has(e, "image")) fail(e, "missing attribute 'image' (a PGM file, relative to the world file)");
      f = Heightfield::from_pgm(resolve(text(e, "image")), size[0], size[1], number(e, "max_height", 1));
    } else {
      fail_attr(e, "type", "'" + type + "' is not a heightfield type (random, stairs, slope, stones, image)");
    }
    h.field = std::make_shared<const Heightfield>(std::move(f));
  } catch (const WorldFileError&) {
    throw;
  } catch (const Error& err) {
    fail(e, err.what());
  }
  return h;
}

RobotDescription Parser::parse_robot(const XMLElement* e) const {
  check_attributes(e, {"name", "urdf", "pos", "quat", "rpy", "vel", "angvel", "fixed_base", "self_collision", "group",
                       "mask", "package_path", "mesh_collision"});
  RobotDescription r;
  r.line = e->GetLineNum();
  check_no_text(e, "inside <robot>" + label(e));
  if (!has(e, "urdf")) fail(e, "missing attribute 'urdf' (path relative to the world file)");
  r.urdf = resolve(text(e, "urdf"));
  r.fixed_base = boolean(e, "fixed_base", false);
  r.self_collision = boolean(e, "self_collision", false);
  r.filter = filter(e);
  const Vec3 pos = vec3(e, "pos", Vec3::Zero());
  const Quat rot = orientation(e);
  const Vec3 vel = vec3(e, "vel", Vec3::Zero()), angvel = vec3(e, "angvel", Vec3::Zero());

  // checked without opening it (opening a FIFO blocks); load_urdf reads it through read_regular_file
  std::error_code ec;
  if (!std::filesystem::is_regular_file(r.urdf, ec)) {
    fail_attr(e, "urdf", (std::filesystem::exists(r.urdf, ec) ? "not a regular file: URDF '" : "cannot open URDF file '") +
                             r.urdf + "'");
  }
  UrdfOptions uo;
  uo.fixed_base = r.fixed_base;
  if (has(e, "mesh_collision")) {
    const std::string mc = text(e, "mesh_collision");
    if (mc != "convex_hull" && mc != "triangles") {
      fail_attr(e, "mesh_collision", "'" + mc + "' is not one of convex_hull, triangles");
    }
    uo.mesh_collision = mc == "triangles" ? MeshCollision::Triangles : MeshCollision::ConvexHull;
  }
  if (has(e, "package_path")) {
    // "dir1:dir2", each relative to the world file: searched first for package:// URIs
    std::stringstream dirs(text(e, "package_path"));
    for (std::string d; std::getline(dirs, d, ':');) {
      if (!d.empty()) uo.package_paths.push_back(resolve(d));
    }
  }
  Model m;
  try {
    m = load_urdf(r.urdf, uo);
  } catch (const Error& err) {
    fail_attr(e, "urdf", err.what());
  }
  r.name = has(e, "name") ? name(e, "name") : m.name;
  if (!m.floating_base) {
    // a fixed base: place the root joint (the base pose is constant)
    if (has(e, "vel") || has(e, "angvel")) fail(e, "a fixed-base robot has no base velocity");
    m.joint_placement[0] = SE3(rot.toRotationMatrix(), pos) * m.joint_placement[0];
  } else if (m.joint_type[0] != JointType::Floating) {
    fail(e, "unexpected root joint");
  }

  r.q = m.neutral_configuration();
  r.u = VecX::Zero(m.nv);
  if (m.floating_base) {
    r.q.head<3>() = pos;
    r.q.segment<4>(3) << rot.w(), rot.x(), rot.y(), rot.z();
    r.u.head<3>() = vel;
    r.u.segment<3>(3) = angvel;
  }
  bool has_target = false;
  VecX target = r.q;
  VecX kp = VecX::Zero(m.nv), kd = VecX::Zero(m.nv);
  bool has_pd = false;
  for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
    const std::string tag = c->Name();
    if (tag == "q") {
      joint_values(c, m, false, r.q);
    } else if (tag == "u") {
      joint_values(c, m, true, r.u);
    } else if (tag == "pd_target") {
      joint_values(c, m, false, target);
      has_target = true;
    } else if (tag == "pd") {
      check_no_children(c);
      check_attributes(c, {"kp", "kd", "joint"});
      has_pd = true;
      const Scalar p = nonnegative(c, "kp", 0), d = nonnegative(c, "kd", 0);
      if (has(c, "joint")) {
        const std::string jn = text(c, "joint");
        const Index j = m.find_joint(jn);
        if (j < 0 || m.nv_joint[j] != 1) fail_attr(c, "joint", "'" + jn + "' is not a 1-dof joint of '" + m.name + "'");
        kp[m.idx_v[j]] = p;
        kd[m.idx_v[j]] = d;
      } else {
        for (Index j = 0; j < m.nb; ++j) {
          if (m.nv_joint[j] != 1) continue;
          kp[m.idx_v[j]] = p;
          kd[m.idx_v[j]] = d;
        }
      }
    } else {
      fail(c, "unknown element inside <robot> (valid: q, u, pd, pd_target)");
    }
  }
  if (has_pd) {
    r.kp = kp;
    r.kd = kd;
    // without <pd_target>, PD holds the initial joint positions
    r.q_target = has_target ? target : r.q;
    r.u_target = VecX::Zero(m.nv);
  } else if (has_target) {
    fail(e, "<pd_target> without <pd> gains");
  }
  r.model = std::make_shared<const Model>(std::move(m));
  return r;
}

WorldDescription Parser::parse(const std::string& xml) {
  tinyxml2::XMLDocument doc;
  if (doc.Parse(xml.c_str(), xml.size()) != tinyxml2::XML_SUCCESS) {
    fail(std::max(1, doc.ErrorLineNum()), std::string("malformed XML: ") + doc.ErrorName() +
                                 (doc.ErrorStr() ? std::string(" (") + doc.ErrorStr() + ")" : std::string()));
  }
  const XMLElement* root = doc.RootElement();
  if (!root) fail(1, "empty file (expected a <world> element)");
  if (std::string(root->Name()) != "world") fail(root, "the root element must be <world>");
  if (const XMLElement* second = root->NextSiblingElement()) {
    fail(second, "a second root element after <world> (line " + std::to_string(root->GetLineNum()) +
                     "); a world file has exactly one <world>");
  }
  check_no_text(&doc, "outside <world>");
  check_no_text(root, "inside <world>");
  std::vector<std::string> allowed;
  add_attributes(world_fields(), allowed);
  allowed.emplace_back("name");
  check_attributes(root, allowed);

  WorldDescription w;
  w.path = path_;
  read_fields(root, world_fields(), w);

  std::set<std::string> names;
  bool seen_solver = false, seen_contact = false;
  for (const XMLElement* e = root->FirstChildElement(); e; e = e->NextSiblingElement()) {
    const std::string tag = e->Name();
    if (tag == "solver") {
      if (seen_solver) fail(e, "only one <solver> is allowed");
      seen_solver = true;
      parse_solver(e, w);
    } else if (tag == "contact") {
      if (seen_contact) fail(e, "only one <contact> is allowed");
      seen_contact = true;
      parse_contact(e, w);
    } else if (tag == "default_material") {
      w.has_default_material = true;
      w.default_material = parse_material(e, true);
    } else if (tag == "material") {
      w.materials.push_back(parse_material(e, false));
    } else if (tag == "ground") {
      check_no_children(e);
      check_attributes(e, {"height", "material", "group", "mask"});
      GroundDescription g;
      g.height = number(e, "height", 0);
      g.material = material(e);
      g.filter = filter(e);
      w.grounds.push_back(g);
    } else if (tag == "plane") {
      check_no_children(e);
      check_attributes(e, {"name", "normal", "offset", "material", "group", "mask"});
      PlaneDescription p;
      p.name = name(e, "name");
      if (!has(e, "normal")) fail(e, "missing attribute 'normal'");
      p.normal = vec3(e, "normal", Vec3::UnitZ());
      if (!(p.normal.norm() > 1e-9)) fail_attr(e, "normal", "must be non-zero");
      p.offset = number(e, "offset", 0);
      p.material = material(e);
      p.filter = filter(e);
      if (!names.insert(p.name).second) fail_attr(e, "name", "'" + p.name + "' is already used");
      w.planes.push_back(p);
    } else if (tag == "heightfield") {
      HeightfieldDescription h = parse_heightfield(e);
      if (!names.insert(h.name).second) fail_attr(e, "name", "'" + h.name + "' is already used");
      w.heightfields.push_back(std::move(h));
    } else if (tag == "box" || tag == "sphere" || tag == "capsule" || tag == "cylinder") {
      BodyDescription b = parse_body(e);
      if (!names.insert(b.name).second) fail_attr(e, "name", "'" + b.name + "' is already used");
      w.bodies.push_back(b);
    } else if (tag == "robot") {
      RobotDescription r = parse_robot(e);
      if (!names.insert(r.name).second) {
        fail(e, "name '" + r.name + "' is already used" + (has(e, "name") ? "" : " (set the attribute 'name')"));
      }
      w.robots.push_back(std::move(r));
    } else {
      fail(e, "unknown element (valid: solver, contact, default_material, material, ground, plane, heightfield, box, "
              "sphere, capsule, cylinder, robot)");
    }
  }
  std::set<std::string> materials = {"default"};
  for (const auto& m : w.materials) materials.insert({m.a, m.b});
  for (const MaterialUse& u : material_uses_) {
    if (materials.count(u.name)) continue;
    std::vector<std::string> known(materials.begin(), materials.end());
    fail(u.line, u.element + ": attribute 'material': unknown material '" + u.name +
                     "' (materials are named by <material a=... b=...> pairs; known: " + join(known) + ")");
  }
  return w;
}

}  // namespace

WorldDescription parse_world_string(const std::string& xml, const std::string& path) {
  return Parser(path).parse(xml);
}

namespace {

// ` attr="value"` for each field of s whose value differs from the default d's.
template <class S>
void write_fields(std::ostream& os, const FieldTable<S>& t, const S& s, const S& d) {
  for (const Field<S>& f : t.fields) {
    const std::string v = field_text(f, s);
    if (v != field_text(f, d)) os << ' ' << f.attr() << "=\"" << v << '"';
  }
}

}  // namespace

std::string world_settings_xml(const WorldDescription& w) {
  const WorldDescription d;
  std::ostringstream os;
  os << "<world";
  write_fields(os, world_fields(), w, d);
  os << ">\n  <solver name=\"" << w.solver.name << '"';
  if (w.solver.name == "bisection") write_fields(os, bisection_fields(), w.solver.bisection, d.solver.bisection);
  if (w.solver.name == "pgs") write_fields(os, pgs_fields(), w.solver.pgs, d.solver.pgs);
  if (w.solver.name == "lm") write_fields(os, lm_fields(), w.solver.lm, d.solver.lm);
  if (w.solver.name == "noslip") write_fields(os, noslip_fields(), w.solver.noslip, d.solver.noslip);
  os << "/>\n  <contact";
  write_fields(os, world_contact_fields(), w, d);
  write_fields(os, contact_fields(), w.contact, d.contact);
  os << "/>\n</world>\n";
  return os.str();
}

void apply_world_setting(WorldDescription& d, const std::string& assignment) {
  const auto fail = [&](const std::string& msg) { throw WorldFileError("--set " + assignment + ": " + msg); };
  const std::size_t dot = assignment.find('.'), eq = assignment.find('=');
  if (dot == std::string::npos || eq == std::string::npos || dot > eq || dot + 1 == eq) {
    fail("expected ELEMENT.ATTRIBUTE=VALUE (ELEMENT: world, solver or contact)");
  }
  const std::string element = assignment.substr(0, dot), attr = assignment.substr(dot + 1, eq - dot - 1);
  if (element != "world" && element != "solver" && element != "contact") {
    fail("unknown element '" + element + "' (valid: world, solver, contact)");
  }
  if (element == "solver" && attr == "name") fail("the solver is chosen by --solver");
  // the settings as a world file with the one attribute set, read back by the world-file parser:
  // the same attributes, syntax, ranges and messages
  tinyxml2::XMLDocument doc;
  const std::string xml = world_settings_xml(d);
  doc.Parse(xml.c_str(), xml.size());
  XMLElement* e = doc.RootElement();
  if (element != "world") e = e->FirstChildElement(element.c_str());
  e->SetAttribute(attr.c_str(), assignment.substr(eq + 1).c_str());
  tinyxml2::XMLPrinter printer;
  doc.Print(&printer);
  WorldDescription s;
  try {
    s = parse_world_string(printer.CStr(), "settings");
  } catch (const WorldFileError& err) {
    // "settings:2: <solver>: ..." without the place in the generated text
    const std::string m = err.what();
    const std::size_t colon = m.find(':', std::string("settings:").size());
    fail(colon == std::string::npos ? m : m.substr(colon + 2));
  }
  d.dt = s.dt;
  d.gravity = s.gravity;
  d.stage_timing = s.stage_timing;
  d.margin = s.margin;
  d.max_contacts = s.max_contacts;
  d.contact = s.contact;
  d.solver = s.solver;
}

WorldDescription world_description_from_sdf(const SdfWorld& sdf, const std::string& path) {
  WorldDescription d;
  d.path = path;
  d.dt = sdf.time_step;
  d.gravity = sdf.gravity;
  // friction per collision, a pair taking the smaller coefficient (Gazebo's rule); objects added
  // later with the "default" material meet SDF shapes with the smaller of the two as well
  const Scalar default_mu = MaterialPair().mu;
  for (std::size_t i = 0; i < sdf.frictions.size(); ++i) {
    const SdfFriction& a = sdf.frictions[i];
    d.materials.push_back(MaterialPairDescription{a.material, "default", std::min(a.mu, default_mu), 0});
    for (std::size_t j = i; j < sdf.frictions.size(); ++j) {
      const SdfFriction& b = sdf.frictions[j];
      d.materials.push_back(MaterialPairDescription{a.material, b.material, std::min(a.mu, b.mu), 0});
    }
  }
  // Static models and planes never move: they belong to group bit 31 and ignore it, so no two of
  // them make contacts (a wall standing in the ground plane would give contacts every step that
  // no impulse can act on). Everything else collides with them as usual.
  const std::uint32_t kStaticBit = 1u << 31;
  const CollisionFilter static_filter{kStaticBit, ~kStaticBit};
  for (const SdfPlane& p : sdf.planes) {
    PlaneDescription pd;
    pd.filter = static_filter;
    pd.name = p.name;
    pd.normal = p.normal;
    pd.offset = p.offset;
    pd.material = p.material;
    d.planes.push_back(pd);
  }
  for (const SdfModel& m : sdf.models) {
    RobotDescription r;
    r.name = m.name;
    r.urdf = path;
    r.model = std::make_shared<const Model>(m.model);
    r.fixed_base = !m.model.floating_base;
    r.self_collision = m.self_collision;
    if (m.is_static) r.filter = static_filter;
    r.q = m.q0;
    r.u = VecX::Zero(m.model.nv);
    d.robots.push_back(std::move(r));
  }
  return d;
}

WorldDescription parse_world_file(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".sdf" || ext == ".world") {
    try {
      return world_description_from_sdf(load_sdf(path), path);
    } catch (const WorldFileError&) {
      throw;
    } catch (const Error& e) {
      throw WorldFileError(e.what());
    }
  }
  return parse_world_string(read_regular_file<WorldFileError>(path, kMaxDescriptionBytes, "world file"), path);
}

void build_world(const WorldDescription& d, World& world) {
  auto at = [&](int line, const std::function<void()>& f) {
    try {
      f();
    } catch (const WorldFileError&) {
      throw;
    } catch (const Error& e) {
      throw WorldFileError(d.path + ":" + std::to_string(line) + ": " + e.what());
    }
  };
  world.set_time_step(d.dt);
  world.set_gravity(d.gravity);
  world.set_contact_margin(d.margin);
  world.set_contact_settings(d.contact);
  world.set_max_contacts(d.max_contacts);
  world.set_stage_timing(d.stage_timing);
  world.set_contact_solver(make_contact_solver(d.solver));
  if (d.has_default_material) world.set_default_material(d.default_material.friction, d.default_material.restitution);
  for (const auto& m : d.materials) world.set_material_pair(m.a, m.b, m.friction, m.restitution);
  for (const auto& g : d.grounds) world.add_ground(g.height, g.material, g.filter);
  for (const auto& p : d.planes) world.add_wall(p.name, p.normal, p.offset, p.material, p.filter);
  for (const auto& h : d.heightfields) {
    at(h.line, [&]() { world.add_heightfield(h.name, h.field, h.material, h.filter); });
  }
  for (const auto& b : d.bodies) {
    at(b.line, [&]() {
      if (b.is_static) {
        world.add_static_box(b.name, SE3(b.orientation.toRotationMatrix(), b.position), b.size, b.material, b.filter);
        return;
      }
      ArticulatedSystem* s = nullptr;
      switch (b.shape) {
        case BodyDescription::Shape::Box: s = &world.add_box(b.name, b.size, b.mass, b.material, b.filter); break;
        case BodyDescription::Shape::Sphere:
          s = &world.add_sphere(b.name, b.size.x(), b.mass, b.material, b.filter);
          break;
        case BodyDescription::Shape::Capsule:
          s = &world.add_capsule(b.name, b.size.x(), b.size.y(), b.mass, b.material, b.filter);
          break;
        case BodyDescription::Shape::Cylinder:
          s = &world.add_cylinder(b.name, b.size.x(), b.size.y(), b.mass, b.material, b.filter);
          break;
      }
      VecX q(7), u(6);
      q << b.position, b.orientation.w(), b.orientation.x(), b.orientation.y(), b.orientation.z();
      u << b.linear_velocity, b.angular_velocity;
      s->set_state(q, u);
    });
  }
  for (const auto& r : d.robots) {
    at(r.line, [&]() {
      SystemOptions o;
      o.name = r.name;
      o.filter = r.filter;
      o.self_collision = r.self_collision;
      o.urdf.fixed_base = r.fixed_base;
      ArticulatedSystem& s = world.add_articulated_system(r.model, o);
      s.set_state(r.q, r.u);
      if (r.kp.size() > 0) {
        s.set_pd_gains(r.kp, r.kd);
        s.set_pd_targets(r.q_target, r.u_target);
      }
    });
  }
}

void load_world(const std::string& path, World& world) { build_world(parse_world_file(path), world); }

std::unique_ptr<World> load_world(const std::string& path) {
  const WorldDescription d = parse_world_file(path);
  auto world = std::make_unique<World>();
  build_world(d, *world);
  return world;
}

}  // namespace impulse
