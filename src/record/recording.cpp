// Recordings (docs/recording.md): the scene JSON, the frame encoder, the file writer and reader.
// Everything is little-endian; floats are IEEE binary32 except time (binary64), which keeps
// 1 ms steps exact over long runs. Values are written with memcpy, so no alignment is assumed.
#include "impulse/record/recording.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <limits>
#include <new>
#include <sstream>

#include <sys/mman.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "impulse/collision/mesh.hpp"
#include "impulse/core/error.hpp"
#include "impulse/core/file.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/sensors/sensors.hpp"

namespace impulse {

namespace {

static_assert(std::numeric_limits<float>::is_iec559 && std::numeric_limits<double>::is_iec559,
              "recordings store IEEE floats");

// The scene as JSON: keys in the order written (the readers look them up by name; people and
// the tests read them in this order).
using SceneJson = nlohmann::ordered_json;

// A number rounded to 9 significant digits (poses, sizes and mesh vertices are recorded as floats:
// more digits would only lengthen the scene), null when not finite (JSON has no NaN or infinity).
// nlohmann prints a double with the digits that read back to it: mostly those 9, now and then
// 17 (its Grisu2 is not always the shortest), the same number either way.
SceneJson num(double x) {
  if (!std::isfinite(x)) return nullptr;
  char text[32];
  const auto printed = std::to_chars(text, text + sizeof text, x, std::chars_format::general, 9);
  double rounded = x;
  std::from_chars(text, printed.ptr, rounded);
  return rounded;
}

template <class V>
SceneJson array(const V& v, int n) {
  SceneJson a = SceneJson::array();
  for (int i = 0; i < n; ++i) a.push_back(num(static_cast<double>(v[i])));
  return a;
}

// position and quaternion (w, x, y, z) of a pose
SceneJson pose_json(const SE3& X) {
  const Quat qt(X.R);
  const double p[7] = {X.p.x(), X.p.y(), X.p.z(), qt.w(), qt.x(), qt.y(), qt.z()};
  return array(p, 7);
}

// A colour per system, so robots are told apart; static objects are grey (the page may override).
std::string system_colour(Index i) {
  static const char* kColours[] = {"#e8a33d", "#4c8bd6", "#5fb86a", "#d65f5f", "#9b6fd0", "#d0b84a"};
  return kColours[static_cast<std::size_t>(i) % 6];
}

SceneJson shape_json(const CollisionShape& cs, const std::string& colour) {
  SceneJson o = {{"name", cs.name}, {"body", cs.body}, {"type", shape_type_name(cs.type)},
                 {"size", array(cs.size, 3)}, {"pose", pose_json(cs.X_BS)}, {"colour", colour}};
  if (cs.type == ShapeType::Mesh) {
    o["mesh"] = cs.mesh_path;
    try {
      const TriangleMesh m = load_mesh(cs.mesh_path, cs.size);
      SceneJson vertices = SceneJson::array(), triangles = SceneJson::array();
      for (const Vec3& v : m.vertices) {
        for (int k = 0; k < 3; ++k) vertices.push_back(num(v[k]));
      }
      for (const auto& t : m.triangles) {
        for (int k = 0; k < 3; ++k) triangles.push_back(t[k]);
      }
      o["vertices"] = std::move(vertices);
      o["triangles"] = std::move(triangles);
    } catch (const Error&) {
      // drawn as its bounding box by the page; the collision stage reported the file already
    }
  }
  return o;
}

template <class T>
void put(std::vector<char>& b, std::size_t& at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
  at += sizeof v;
}

template <class T>
T get(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The fixed fields at the start of a frame (docs/recording.md, "Frame"), read by frame() and series().
struct FramePrefix {
  std::uint32_t contacts, status, iterations, limits;
  std::uint64_t step;
  double time;
  float residual, max_penetration, step_us;
};
FramePrefix read_prefix(const char* p) {
  return {get<std::uint32_t>(p + 4),  get<std::uint32_t>(p + 24), get<std::uint32_t>(p + 28),
          get<std::uint32_t>(p + 40), get<std::uint64_t>(p + 8),  get<double>(p + 16),
          get<float>(p + 32),         get<float>(p + 36),         get<float>(p + 44)};
}

// Bytes of one system in a frame: kinetic, potential, com (3), poses (7 nb), q (nq), u (nv), tau (nv).
std::uint64_t system_bytes(std::uint64_t nb, std::uint64_t nq, std::uint64_t nv) { return 4 * (5 + 7 * nb + nq + 2 * nv); }
std::uint32_t system_fixed_bytes(const Model& m) {
  return static_cast<std::uint32_t>(system_bytes(std::uint64_t(m.nb), std::uint64_t(m.nq), std::uint64_t(m.nv)));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// recorded sensors

namespace {
std::vector<std::string> xyz(const std::string& prefix) { return {prefix + "_x", prefix + "_y", prefix + "_z"}; }
void put3(float*& out, const Vec3& v) {
  for (int k = 0; k < 3; ++k) *out++ = static_cast<float>(v[k]);
}
}  // namespace

void RecordedSensors::add(SensorChannel channel) {
  for (const SensorChannel& c : channels_) {
    if (c.name == channel.name) throw InvalidArgument("recorded sensors: the name '" + channel.name + "' is used twice");
  }
  if (!channel.read) throw InvalidArgument("recorded sensor '" + channel.name + "': no read function");
  channels_.push_back(std::move(channel));
}

void RecordedSensors::add(const std::string& name, const Imu& imu) {
  std::vector<std::string> f = xyz("acc");
  for (const std::string& g : xyz("gyro")) f.push_back(g);
  add(SensorChannel{name, "imu", f, [&imu](float* out) {
                      put3(out, imu.linear_acceleration());
                      put3(out, imu.angular_velocity());
                    }});
}

void RecordedSensors::add(const std::string& name, const JointSensor& joints) {
  std::vector<std::string> f;
  for (const char* kind : {"q:", "u:", "tau:"}) {
    for (const std::string& j : joints.names()) f.push_back(kind + j);
  }
  add(SensorChannel{name, "joints", f, [&joints](float* out) {
                      for (const VecX* v : {&joints.position(), &joints.velocity(), &joints.torque()}) {
                        for (Index k = 0; k < v->size(); ++k) *out++ = static_cast<float>((*v)[k]);
                      }
                    }});
}

void RecordedSensors::add(const std::string& name, const ContactSensor& contact) {
  std::vector<std::string> f{"count"};
  for (const std::string& g : xyz("force")) f.push_back(g);
  for (const std::string& g : xyz("normal")) f.push_back(g);
  add(SensorChannel{name, "contact", f, [&contact](float* out) {
                      *out++ = static_cast<float>(contact.count());
                      put3(out, contact.force());
                      put3(out, contact.normal());
                    }});
}

void RecordedSensors::add(const std::string& name, const ForceTorqueSensor& ft) {
  std::vector<std::string> f = xyz("force");
  for (const std::string& g : xyz("torque")) f.push_back(g);
  add(SensorChannel{name, "force_torque", f, [&ft](float* out) {
                      put3(out, ft.force());
                      put3(out, ft.torque());
                    }});
}

void RecordedSensors::add(const std::string& name, const HeightScan& scan) {
  std::vector<std::string> f;
  for (Index k = 0; k < scan.size(); ++k) {
    for (const char* c : {"x", "y", "z"}) f.push_back(c + std::to_string(k));
  }
  add(SensorChannel{name, "height_scan", f, [&scan](float* out) {
                      for (const Vec3& p : scan.points()) put3(out, p);
                    }});
}

std::uint32_t RecordedSensors::floats() const {
  std::size_t n = 0;
  for (const SensorChannel& c : channels_) n += c.fields.size();
  return static_cast<std::uint32_t>(n);
}

std::string scene_json(World& world) { return scene_json(world, RecordedSensors()); }

std::string scene_json(World& world, const RecordedSensors& sensors) {
  SceneJson systems = SceneJson::array();
  for (Index i = 0; i < world.num_systems(); ++i) {
    const ArticulatedSystem& s = *world.systems()[static_cast<std::size_t>(i)];
    const Model& m = s.model();
    SceneJson bodies = SceneJson::array(), joints = SceneJson::array(), shapes = SceneJson::array();
    for (Index b = 0; b < m.nb; ++b) {
      const auto k = static_cast<std::size_t>(b);
      bodies.push_back({{"name", m.body_names[k]}, {"parent", m.parent[k]}, {"mass", num(m.inertia[k].m)}});
    }
    for (Index j = 0; j < m.nb; ++j) {
      const auto k = static_cast<std::size_t>(j);
      joints.push_back({{"name", m.joint_names[k]}, {"type", m.joint_urdf_types[k]}, {"body", j},
                        {"idx_q", m.idx_q[k]}, {"nq", m.nq_joint[k]}, {"idx_v", m.idx_v[k]}, {"nv", m.nv_joint[k]}});
    }
    for (const CollisionShape& cs : m.collision) shapes.push_back(shape_json(cs, system_colour(i)));
    systems.push_back({{"name", s.name()}, {"nb", m.nb}, {"nq", m.nq}, {"nv", m.nv},
                       {"floating_base", m.floating_base}, {"mass", num(m.total_mass())},
                       {"colour", system_colour(i)}, {"bodies", std::move(bodies)}, {"joints", std::move(joints)},
                       {"shapes", std::move(shapes)}});
  }
  SceneJson statics = SceneJson::array();
  CollisionWorld& cw = world.collision();
  for (Index ob = 0; ob < cw.num_objects(); ++ob) {
    if (!cw.is_static(ob)) continue;
    if (cw.is_plane(ob)) {
      statics.push_back({{"name", cw.object_name(ob)}, {"type", "plane"}, {"pose", pose_json(cw.shape_pose(ob, 0))}});
      continue;
    }
    SceneJson shapes = SceneJson::array();
    for (Index k = 0; k < cw.num_shapes(ob); ++k) {
      CollisionShape cs = cw.shape_description(ob, k);
      cs.X_BS = cw.shape_pose(ob, k);
      shapes.push_back(shape_json(cs, "#9aa0a6"));
    }
    statics.push_back({{"name", cw.object_name(ob)}, {"type", "shapes"}, {"shapes", std::move(shapes)}});
  }
  SceneJson channels = SceneJson::array();
  for (const SensorChannel& c : sensors.channels()) {
    channels.push_back({{"name", c.name}, {"type", c.type}, {"fields", c.fields}});
  }
  const SceneJson scene = {{"format", "impulse-recording"}, {"version", record::kVersion},
                           {"dt", num(world.time_step())},  {"gravity", array(world.gravity(), 3)},
                           {"solver", world.contact_solver().name()}, {"systems", std::move(systems)},
                           {"static", std::move(statics)},   {"sensors", std::move(channels)}};
  // names and paths that are not UTF-8 (a URDF in Latin-1) get U+FFFD for their bad bytes: the
  // readers accept only UTF-8 JSON
  return scene.dump(-1, ' ', false, SceneJson::error_handler_t::replace);
}

FrameEncoder::FrameEncoder(const World& world, RecordedSensors sensors) : sensors_(std::move(sensors)) {
  fixed_bytes_ = record::kFramePrefixBytes;
  for (const ArticulatedSystem* s : world.systems()) {
    data_.emplace_back(s->model());
    fixed_bytes_ += system_fixed_bytes(s->model());
  }
  fixed_bytes_ += 4 * sensors_.floats();
  std::size_t largest = 0;
  for (const SensorChannel& c : sensors_.channels()) largest = std::max(largest, c.fields.size());
  sensor_values_.assign(largest, 0.0f);
  Index max_object = -1;
  for (const ArticulatedSystem* s : world.systems()) max_object = std::max(max_object, s->collision_object());
  object_system_.assign(static_cast<std::size_t>(max_object + 1), -1);
  for (Index i = 0; i < world.num_systems(); ++i) {
    object_system_[static_cast<std::size_t>(world.systems()[static_cast<std::size_t>(i)]->collision_object())] = i;
  }
  buffer_.reserve(fixed_bytes_ + 16 * record::kContactBytes);
}

const std::vector<char>& FrameEncoder::encode(const World& world, std::uint64_t step) {
  const std::vector<ContactReport> contacts = world.contact_reports();
  const auto nc = static_cast<std::uint32_t>(contacts.size());
  const std::uint32_t size = fixed_bytes_ + nc * record::kContactBytes;
  buffer_.resize(size);
  std::size_t at = 0;
  const StepStats& st = world.stats();
  put<std::uint32_t>(buffer_, at, size);
  put<std::uint32_t>(buffer_, at, nc);
  put<std::uint64_t>(buffer_, at, step);
  put<double>(buffer_, at, world.time());
  put<std::uint32_t>(buffer_, at, static_cast<std::uint32_t>(st.status));
  put<std::uint32_t>(buffer_, at, static_cast<std::uint32_t>(st.solver.iterations));
  put<float>(buffer_, at, static_cast<float>(st.solver.residual));
  put<float>(buffer_, at, static_cast<float>(st.max_penetration));
  put<std::uint32_t>(buffer_, at, static_cast<std::uint32_t>(st.limits));
  put<float>(buffer_, at, static_cast<float>(st.times.total()));
  for (std::size_t i = 0; i < data_.size(); ++i) {
    const ArticulatedSystem& s = *world.systems()[i];
    const Model& m = s.model();
    Data& d = data_[i];
    put<float>(buffer_, at, static_cast<float>(kinetic_energy(m, d, s.q(), s.u())));
    put<float>(buffer_, at, static_cast<float>(potential_energy(m, d, s.q())));
    const Vec3 com = center_of_mass(m, d, s.q());
    for (int k = 0; k < 3; ++k) put<float>(buffer_, at, static_cast<float>(com[k]));
    const SE3Vector& X = forward_kinematics(m, d, s.q());
    for (Index b = 0; b < m.nb; ++b) {
      const SE3& Xb = X[static_cast<std::size_t>(b)];
      const Quat qt(Xb.R);
      const double p[7] = {Xb.p.x(), Xb.p.y(), Xb.p.z(), qt.w(), qt.x(), qt.y(),
                           qt.z()};
      for (double v : p) put<float>(buffer_, at, static_cast<float>(v));
    }
    for (Index k = 0; k < m.nq; ++k) put<float>(buffer_, at, static_cast<float>(s.q()[k]));
    for (Index k = 0; k < m.nv; ++k) put<float>(buffer_, at, static_cast<float>(s.u()[k]));
    // joint effort: the explicit generalized force plus the implicit PD evaluated at the new state
    for (Index k = 0; k < m.nv; ++k) {
      Scalar tau = s.generalized_force()[k];
      if (s.kp().size() == m.nv && (s.kp()[k] != 0 || s.kd()[k] != 0)) {
        tau += s.kd()[k] * (s.u_target()[k] - s.u()[k]);
        if (s.kp()[k] != 0) {
          const Index j = m.dof_body[static_cast<std::size_t>(k)];
          const Index qk = m.idx_q[static_cast<std::size_t>(j)] + (k - m.idx_v[static_cast<std::size_t>(j)]);
          tau += s.kp()[k] * (s.q_target()[qk] - s.q()[qk]);
        }
      }
      put<float>(buffer_, at, static_cast<float>(tau));
    }
  }
  for (const SensorChannel& c : sensors_.channels()) {
    c.read(sensor_values_.data());
    for (std::size_t k = 0; k < c.fields.size(); ++k) put<float>(buffer_, at, sensor_values_[k]);
  }
  auto system_of = [&](Index object) -> int {
    if (object < 0 || object >= static_cast<Index>(object_system_.size())) return -1;
    return static_cast<int>(object_system_[static_cast<std::size_t>(object)]);
  };
  for (const ContactReport& r : contacts) {
    const Contact& c = r.contact;
    for (int k = 0; k < 3; ++k) put<float>(buffer_, at, static_cast<float>(c.position[k]));
    for (int k = 0; k < 3; ++k) put<float>(buffer_, at, static_cast<float>(c.normal[k]));
    for (int k = 0; k < 3; ++k) put<float>(buffer_, at, static_cast<float>(r.impulse[k]));
    put<float>(buffer_, at, static_cast<float>(c.depth));
    put<std::int32_t>(buffer_, at, system_of(c.object_a));
    put<std::int32_t>(buffer_, at, static_cast<std::int32_t>(c.body_a));
    put<std::int32_t>(buffer_, at, system_of(c.object_b));
    put<std::int32_t>(buffer_, at, static_cast<std::int32_t>(c.body_b));
  }
  return buffer_;
}

Recorder::Recorder(const std::string& path, World& world, long every, RecordedSensors sensors)
    : path_(path), encoder_(world, sensors), every_(every) {
  if (every < 1) throw InvalidArgument("recording '" + path + "': every must be >= 1, got " + std::to_string(every));
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw Error("recording '" + path + "': cannot open for writing: " + std::strerror(errno));
  const std::string scene = scene_json(world, sensors);
  const auto nsys = static_cast<std::uint32_t>(world.num_systems());
  // header, system sizes, sensor values per frame, scene length and scene, padded with spaces to
  // a multiple of 8 bytes
  std::size_t header = record::kHeaderBytes + 12 * nsys + 4 + 4 + scene.size();
  header = (header + 7) / 8 * 8;
  std::vector<char> h(header, ' ');
  std::size_t at = 0;
  std::memcpy(h.data(), record::kMagic, 8);
  at = 8;
  put<std::uint32_t>(h, at, record::kVersion);
  put<std::uint32_t>(h, at, static_cast<std::uint32_t>(header));
  put<std::uint32_t>(h, at, nsys);
  put<std::uint32_t>(h, at, encoder_.fixed_bytes());
  put<std::uint32_t>(h, at, record::kContactBytes);
  put<std::uint32_t>(h, at, static_cast<std::uint32_t>(every));
  put<double>(h, at, world.time_step());
  for (const ArticulatedSystem* s : world.systems()) {
    put<std::uint32_t>(h, at, static_cast<std::uint32_t>(s->model().nb));
    put<std::uint32_t>(h, at, static_cast<std::uint32_t>(s->model().nq));
    put<std::uint32_t>(h, at, static_cast<std::uint32_t>(s->model().nv));
  }
  put<std::uint32_t>(h, at, sensors.floats());
  put<std::uint32_t>(h, at, static_cast<std::uint32_t>(scene.size()));
  std::memcpy(h.data() + at, scene.data(), scene.size());
  write(h.data(), h.size());
  if (failed_) {
    std::fclose(file_);
    file_ = nullptr;
    throw Error("recording '" + path + "': write failed");
  }
  world.set_stage_timing(true);  // each frame carries the step's wall time, the sum of the stage timers
}

Recorder::~Recorder() {
  if (file_) std::fclose(file_);
}

void Recorder::write(const void* p, std::size_t n) {
  if (std::fwrite(p, 1, n, file_) != n) failed_ = true;
  bytes_ += n;
}

void Recorder::record(const World& world) {
  ++calls_;
  if (calls_ % static_cast<std::uint64_t>(every_) != 0 || !file_) return;
  const auto step = static_cast<std::uint64_t>(std::llround(world.time() / world.time_step()));
  const std::vector<char>& f = encoder_.encode(world, step);
  write(f.data(), f.size());
  ++frames_;
}

void Recorder::close() {
  if (!file_) return;
  const bool ok = std::fflush(file_) == 0 && !failed_;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) throw Error("recording '" + path_ + "': write failed (disk full?)");
}

// ---------------------------------------------------------------------------------------------
// reader: the validation rules of docs/recording.md ("Validation"), cited by number below; the
// Python reader (python/impulse_viz/recording.py) and the page's (viewer/src/recording.js)
// apply the same rules in the same order.

namespace {

// A whole number (rule 8): a JSON number with an integral value, not a boolean.
bool whole(const nlohmann::json& v, double& out) {
  if (!v.is_number()) return false;
  out = v.get<double>();
  return std::isfinite(out) && std::floor(out) == out;
}

// Rule 8 on the parsed scene; returns the problem, or "" when the scene is fine.
std::string scene_problem(const nlohmann::json& scene, const std::vector<RecordingReader::SystemSize>& sizes,
                          std::uint32_t sensor_floats) {
  if (!scene.is_object()) return "the scene is not a JSON object";
  const auto systems = scene.find("systems");
  if (systems == scene.end() || !systems->is_array()) return "the scene has no \"systems\" array";
  if (systems->size() != sizes.size()) {
    return "the scene has " + std::to_string(systems->size()) + " systems, the header " + std::to_string(sizes.size());
  }
  auto is_string = [](const nlohmann::json& o, const char* key) {
    const auto it = o.find(key);
    return it != o.end() && it->is_string();
  };
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const nlohmann::json& s = (*systems)[i];
    const std::string at = "scene system " + std::to_string(i);
    if (!s.is_object() || !is_string(s, "name")) return at + " is not an object with a \"name\"";
    const int header[3] = {sizes[i].nb, sizes[i].nq, sizes[i].nv};
    const char* keys[3] = {"nb", "nq", "nv"};
    for (int k = 0; k < 3; ++k) {
      double v = 0;
      const auto it = s.find(keys[k]);
      if (it == s.end() || !whole(*it, v) || v != header[k]) {
        return at + ": \"" + keys[k] + "\" is not " + std::to_string(header[k]) + " as in the header";
      }
    }
    const auto bodies = s.find("bodies");
    if (bodies == s.end() || !bodies->is_array() || bodies->size() != static_cast<std::size_t>(sizes[i].nb)) {
      return at + ": \"bodies\" is not an array of " + std::to_string(sizes[i].nb);
    }
    for (const nlohmann::json& b : *bodies) {
      if (!b.is_object() || !is_string(b, "name")) return at + ": a body is not an object with a \"name\"";
    }
    const auto joints = s.find("joints");
    if (joints == s.end() || !joints->is_array()) return at + ": no \"joints\" array";
    for (const nlohmann::json& j : *joints) {
      if (!j.is_object() || !is_string(j, "name")) return at + ": a joint is not an object with a \"name\"";
      double idx_q = 0, nq = 0, idx_v = 0, nv = 0;
      const auto iq = j.find("idx_q"), q = j.find("nq"), iv = j.find("idx_v"), v = j.find("nv");
      if (iq == j.end() || q == j.end() || iv == j.end() || v == j.end() || !whole(*iq, idx_q) || !whole(*q, nq) ||
          !whole(*iv, idx_v) || !whole(*v, nv) || idx_q < 0 || nq < 0 || idx_v < 0 || nv < 0 ||
          idx_q + nq > sizes[i].nq || idx_v + nv > sizes[i].nv) {
        return at + ": joint '" + j["name"].get<std::string>() + "' has coordinates outside the system's";
      }
    }
  }
  const auto sensors = scene.find("sensors");
  if (sensors == scene.end()) {
    if (sensor_floats > 0) return "the scene has no \"sensors\" for the header's " + std::to_string(sensor_floats) + " values";
    return "";
  }
  if (!sensors->is_array()) return "the scene's \"sensors\" is not an array";
  std::uint64_t fields = 0;
  for (const nlohmann::json& c : *sensors) {
    if (!c.is_object() || !is_string(c, "name") || !is_string(c, "type")) {
      return "a scene sensor is not an object with a \"name\" and a \"type\"";
    }
    const auto f = c.find("fields");
    if (f == c.end() || !f->is_array()) return "scene sensor '" + c["name"].get<std::string>() + "' has no \"fields\" array";
    for (const nlohmann::json& label : *f) {
      if (!label.is_string()) return "scene sensor '" + c["name"].get<std::string>() + "' has a field that is not a string";
    }
    fields += f->size();
  }
  if (fields != sensor_floats) {
    return "the scene's sensors have " + std::to_string(fields) + " fields, the header " + std::to_string(sensor_floats) +
           " values";
  }
  return "";
}

std::string fmt_double(double x) {
  std::ostringstream o;
  o << std::setprecision(17) << x;
  return o.str();
}

}  // namespace

bool is_recording_file(const std::string& path) {
  std::uint64_t size = 0;
  int fd = -1;
  try {
    fd = open_regular_file<Error>(path, "recording", size);  // rule 1: never blocks
  } catch (const Error&) {
    return false;
  }
  char magic[8] = {};
  const bool ok = size >= 8 && ::pread(fd, magic, 8, 0) == 8 && std::memcmp(magic, record::kMagic, 8) == 0;
  ::close(fd);
  return ok;
}

RecordingReader::RecordingReader(const std::string& path) : path_(path) {
  const std::string head = "recording '" + path + "': ";
  auto fail = [&head](const std::string& problem, std::uint64_t at, int rule) {
    throw Error(head + problem + " at byte " + std::to_string(at) + " (rule " + std::to_string(rule) + ")");
  };
  std::uint64_t file_size = 0;
  const int fd = open_regular_file<Error>(path, "recording", file_size);  // rule 1
  if (file_size < 48) {  // rule 2 (and nothing to map for an empty file)
    ::close(fd);
    fail("not an Impulse recording (bad magic: the file has " + std::to_string(file_size) + " bytes)", 0, 2);
  }
  if (file_size > std::numeric_limits<std::size_t>::max()) {
    ::close(fd);
    throw Error(head + "too large to map");
  }
  size_ = static_cast<std::size_t>(file_size);
  // read-only mapping: memory is the pages that are read (the page cache's, reclaimable), not a
  // copy of the file
  void* map = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (map == MAP_FAILED) throw Error(head + "cannot map the file: " + std::strerror(map_errno));
  const std::size_t mapped = size_;
  bytes_ = std::shared_ptr<const char>(static_cast<const char*>(map),
                                       [mapped](const char* q) { ::munmap(const_cast<char*>(q), mapped); });
  const char* p = bytes_.get();
  const std::uint64_t n = size_;
  if (std::memcmp(p, record::kMagic, 8) != 0) fail("not an Impulse recording (bad magic)", 0, 2);  // rule 2
  const auto version = get<std::uint32_t>(p + 8);
  if (version != 1 && version != record::kVersion) {  // rule 3
    fail("version " + std::to_string(version) + " is not supported (this build reads 1 and " +
             std::to_string(record::kVersion) + ")",
         8, 3);
  }
  version_ = version;
  const auto header = get<std::uint32_t>(p + 12);
  const auto nsys = get<std::uint32_t>(p + 16);
  const auto fixed = get<std::uint32_t>(p + 20);
  const auto contact = get<std::uint32_t>(p + 24);
  const auto every = get<std::uint32_t>(p + 28);
  dt_ = get<double>(p + 32);
  if (contact != record::kContactBytes) fail("contact_bytes is " + std::to_string(contact) + ", not 56", 24, 4);  // rule 4
  if (every < 1) fail("every is 0, not >= 1", 28, 5);                                                            // rule 5
  if (!std::isfinite(dt_) || !(dt_ > 0)) fail("dt is " + fmt_double(dt_) + ", not a finite number > 0", 32, 5);
  every_ = every;
  // rule 6: the header fits in the file and holds its parts (64-bit sums: no wrap-around)
  if (header % 8 != 0) fail("header_bytes " + std::to_string(header) + " is not a multiple of 8", 12, 6);
  if (header > n) {
    fail("header_bytes " + std::to_string(header) + " is beyond the end of the file (" + std::to_string(n) + " bytes)",
         12, 6);
  }
  // version 2 adds the sensor values per frame (u32) after the system sizes
  const std::uint64_t sizes_end = record::kHeaderBytes + 12 * std::uint64_t(nsys) + (version >= 2 ? 8 : 4);
  if (sizes_end > header) {
    fail(std::to_string(nsys) + " systems do not fit in header_bytes " + std::to_string(header), 16, 6);
  }
  const auto scene_len = get<std::uint32_t>(p + sizes_end - 4);
  if (sizes_end + scene_len > header) {
    fail("the scene's " + std::to_string(scene_len) + " bytes do not fit in header_bytes " + std::to_string(header),
         sizes_end - 4, 6);
  }
  // rule 7: sizes with a sanity bound, and the frame size they give
  std::uint64_t expect = record::kFramePrefixBytes;
  for (std::uint32_t i = 0; i < nsys; ++i) {
    const std::uint64_t at = record::kHeaderBytes + 12 * std::uint64_t(i);
    const std::uint32_t nb = get<std::uint32_t>(p + at), nq = get<std::uint32_t>(p + at + 4),
                        nv = get<std::uint32_t>(p + at + 8);
    if (nb > 100000 || nq > 1000000 || nv > 1000000) {
      fail("system " + std::to_string(i) + " sizes (nb " + std::to_string(nb) + ", nq " + std::to_string(nq) + ", nv " +
               std::to_string(nv) + ") are out of bounds",
           at, 7);
    }
    systems_.push_back(SystemSize{static_cast<int>(nb), static_cast<int>(nq), static_cast<int>(nv)});
    expect += system_bytes(nb, nq, nv);
  }
  if (version >= 2) {
    sensor_floats_ = get<std::uint32_t>(p + sizes_end - 8);
    if (sensor_floats_ > 100000000) {
      fail(std::to_string(sensor_floats_) + " sensor values per frame are out of bounds", sizes_end - 8, 7);
    }
    expect += 4 * std::uint64_t(sensor_floats_);
  }
  if (expect != fixed) {
    fail("fixed_bytes is " + std::to_string(fixed) + ", the sizes give " + std::to_string(expect), 20, 7);
  }
  fixed_bytes_ = fixed;
  // rule 8: the scene
  scene_.assign(p + sizes_end, scene_len);
  // (nlohmann skips a byte order mark, which the other readers' JSON parsers reject: so does this one)
  const bool bom = scene_.compare(0, 3, "\xEF\xBB\xBF") == 0;
  const nlohmann::json scene = bom ? nlohmann::json(nlohmann::json::value_t::discarded)
                                   : nlohmann::json::parse(scene_, nullptr, false);
  if (scene.is_discarded()) fail("the scene is not valid UTF-8 JSON", sizes_end, 8);
  const std::string problem = scene_problem(scene, systems_, sensor_floats_);
  if (!problem.empty()) fail(problem, sizes_end, 8);
  // rules 9 to 12: the frames, back to back from header_bytes
  std::uint64_t at = header;
  while (at < n) {
    if (n - at < 8) {  // rule 12: a partial last frame, too short for its size fields
      dropped_bytes_ = n - at;
      break;
    }
    const std::uint64_t size = get<std::uint32_t>(p + at);
    const std::uint64_t nc = get<std::uint32_t>(p + at + 4);
    if (size != fixed + nc * contact) {  // rule 9
      fail("frame " + std::to_string(offsets_.size()) + " has size " + std::to_string(size) + ", not fixed_bytes + 56 x " +
               std::to_string(nc) + " contacts = " + std::to_string(fixed + nc * contact),
           at, 9);
    }
    if (size > n - at) {  // rule 12: a partial last frame (the file of a run that was killed)
      dropped_bytes_ = n - at;
      break;
    }
    offsets_.push_back(static_cast<std::size_t>(at));
    at += size;
  }
  // rules 10 and 11, frame by frame (after the boundaries, as the other readers do)
  for (std::size_t k = 0; k < offsets_.size(); ++k) {
    const std::uint64_t at = offsets_[k];
    const std::uint64_t nc = get<std::uint32_t>(p + at + 4);
    const auto status = get<std::uint32_t>(p + at + 24);
    if (status > 4) fail("frame " + std::to_string(k) + " has status " + std::to_string(status) + ", not 0..4", at + 24, 10);
    for (std::uint64_t c = 0; c < nc; ++c) {
      const std::uint64_t ca = at + fixed + 56 * c + 40;
      for (int side = 0; side < 2; ++side) {
        const auto system = get<std::int32_t>(p + ca + 8 * side);
        const auto body = get<std::int32_t>(p + ca + 8 * side + 4);
        const bool ok = system == -1 ? body == -1
                                     : system >= 0 && static_cast<std::uint32_t>(system) < nsys && body >= 0 &&
                                           body < systems_[static_cast<std::size_t>(system)].nb;
        if (!ok) {
          fail("frame " + std::to_string(k) + " contact " + std::to_string(c) + " has system " + std::to_string(system) +
                   " and body " + std::to_string(body) + ", not a body of the recording",
               ca + 8 * side, 11);
        }
      }
    }
  }
}

std::string RecordingReader::dropped_warning() const {
  return "recording '" + path_ + "': the last frame is incomplete (a run that was killed?): its " +
         std::to_string(dropped_bytes_) + " bytes at byte " + std::to_string(size_ - dropped_bytes_) +
         " are dropped (rule 12)";
}

std::uint32_t RecordingReader::frame_size(std::size_t k) const { return get<std::uint32_t>(frame_data(k)); }

std::size_t RecordingReader::system_offset(std::size_t system) const {
  std::size_t at = record::kFramePrefixBytes;
  for (std::size_t i = 0; i < system; ++i) {
    const SystemSize& z = systems_[i];
    at += static_cast<std::size_t>(system_bytes(std::uint64_t(z.nb), std::uint64_t(z.nq), std::uint64_t(z.nv)));
  }
  return at;
}

std::pair<const char*, std::size_t> RecordingReader::frames_bytes(std::size_t first, std::size_t count) const {
  if (count == 0 || first >= offsets_.size() || count > offsets_.size() - first) {
    throw Error("recording '" + path_ + "': frames " + std::to_string(first) + " .. " + std::to_string(first + count) +
                " are not inside its " + std::to_string(offsets_.size()) + " frames");
  }
  const std::size_t last = first + count - 1;
  return {frame_data(first), offsets_[last] + frame_size(last) - offsets_[first]};
}

RecordingSeries RecordingReader::series() const {
  const std::size_t n = offsets_.size();
  RecordingSeries s;
  for (auto* v : {&s.kinetic, &s.potential, &s.contacts, &s.normal_force, &s.iterations, &s.residual, &s.max_penetration}) {
    v->resize(n);
  }
  s.time.resize(n);
  // the byte offset of each system (its energies first) inside a frame
  std::vector<std::size_t> system_at;
  for (std::size_t i = 0; i < systems_.size(); ++i) system_at.push_back(system_offset(i));
  for (std::size_t k = 0; k < n; ++k) {
    const char* p = frame_data(k);
    const FramePrefix head = read_prefix(p);
    const std::uint32_t nc = head.contacts;
    s.time[k] = head.time;
    s.iterations[k] = static_cast<float>(head.iterations);
    s.residual[k] = head.residual;
    s.max_penetration[k] = head.max_penetration;
    double kinetic = 0, potential = 0;
    for (const std::size_t o : system_at) {
      kinetic += get<float>(p + o);
      potential += get<float>(p + o + 4);
    }
    s.kinetic[k] = static_cast<float>(kinetic);
    s.potential[k] = static_cast<float>(potential);
    s.contacts[k] = static_cast<float>(nc);
    double fn = 0;  // impulse . normal: the normal impulse of each contact
    for (std::uint32_t c = 0; c < nc; ++c) {
      const char* q = p + fixed_bytes_ + std::size_t(c) * record::kContactBytes;
      for (int i = 0; i < 3; ++i) fn += double(get<float>(q + 12 + 4 * i)) * get<float>(q + 24 + 4 * i);
    }
    s.normal_force[k] = static_cast<float>(fn / dt_);
  }
  return s;
}

DofSeries RecordingReader::dof_series(int system, int iq, int iv) const {
  if (system < 0 || system >= static_cast<int>(systems_.size())) {
    throw Error("recording '" + path_ + "': no system " + std::to_string(system) + " (it has " +
                std::to_string(systems_.size()) + ")");
  }
  const SystemSize& z = systems_[static_cast<std::size_t>(system)];
  if (iq < 0 || iq >= z.nq || iv < 0 || iv >= z.nv) {
    throw Error("recording '" + path_ + "': system " + std::to_string(system) + " has nq " + std::to_string(z.nq) +
                " and nv " + std::to_string(z.nv) + ", not iq " + std::to_string(iq) + ", iv " + std::to_string(iv));
  }
  const std::size_t at = system_offset(static_cast<std::size_t>(system));
  const std::size_t q_at = at + 4 * (5 + 7 * std::size_t(z.nb)) + 4 * std::size_t(iq);
  const std::size_t u_at = at + 4 * (5 + 7 * std::size_t(z.nb) + z.nq) + 4 * std::size_t(iv);
  const std::size_t tau_at = u_at + 4 * std::size_t(z.nv);
  DofSeries d;
  const std::size_t n = offsets_.size();
  d.q.resize(n);
  d.u.resize(n);
  d.tau.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const char* p = frame_data(k);
    d.q[k] = get<float>(p + q_at);
    d.u[k] = get<float>(p + u_at);
    d.tau[k] = get<float>(p + tau_at);
  }
  return d;
}

RecordedFrame RecordingReader::frame(std::size_t k) const {
  const char* p = frame_data(k);
  RecordedFrame f;
  const FramePrefix head = read_prefix(p);
  const std::uint32_t nc = head.contacts;
  f.step = head.step;
  f.time = head.time;
  f.status = head.status;
  f.iterations = head.iterations;
  f.residual = head.residual;
  f.max_penetration = head.max_penetration;
  f.limits = head.limits;
  f.step_us = head.step_us;
  p += record::kFramePrefixBytes;
  auto fl = [&p]() {
    const float v = get<float>(p);
    p += 4;
    return static_cast<Scalar>(v);
  };
  for (const SystemSize& z : systems_) {
    f.kinetic.push_back(static_cast<float>(fl()));
    f.potential.push_back(static_cast<float>(fl()));
    Vec3 c;
    for (int i = 0; i < 3; ++i) c[i] = fl();
    f.com.push_back(c);
    std::vector<SE3> poses;
    for (int b = 0; b < z.nb; ++b) {
      Vec3 t;
      for (int i = 0; i < 3; ++i) t[i] = fl();
      const Scalar w = fl(), x = fl(), y = fl(), zz = fl();
      poses.emplace_back(Quat(w, x, y, zz).normalized().toRotationMatrix(), t);
    }
    f.poses.push_back(std::move(poses));
    VecX q(z.nq), u(z.nv), tau(z.nv);
    for (int i = 0; i < z.nq; ++i) q[i] = fl();
    for (int i = 0; i < z.nv; ++i) u[i] = fl();
    for (int i = 0; i < z.nv; ++i) tau[i] = fl();
    f.q.push_back(q);
    f.u.push_back(u);
    f.tau.push_back(tau);
  }
  f.sensors.resize(sensor_floats_);
  for (std::uint32_t k = 0; k < sensor_floats_; ++k) f.sensors[k] = static_cast<float>(fl());
  for (std::uint32_t c = 0; c < nc; ++c) {
    RecordedContact rc;
    for (int i = 0; i < 3; ++i) rc.position[i] = fl();
    for (int i = 0; i < 3; ++i) rc.normal[i] = fl();
    for (int i = 0; i < 3; ++i) rc.impulse[i] = fl();
    rc.depth = fl();
    rc.system_a = get<std::int32_t>(p);
    rc.body_a = get<std::int32_t>(p + 4);
    rc.system_b = get<std::int32_t>(p + 8);
    rc.body_b = get<std::int32_t>(p + 12);
    p += 16;
    f.contacts.push_back(rc);
  }
  return f;
}

}  // namespace impulse
