// Locomotion configs: JSON (nlohmann-json) into LocomotionSettings. One table of keys: the parser,
// the unknown-key error and locomotion_config_keys() read it, so a key is added in one place.
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "impulse/core/error.hpp"
#include "impulse/core/file.hpp"
#include "impulse/tasks/locomotion.hpp"

namespace impulse::tasks {

namespace {

using Json = nlohmann::json;

struct Ctx {
  std::string source;    // the config's name in errors
  std::string base_dir;  // relative paths resolve against it
  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InvalidArgument(source + ": key '" + key + "' " + what);
  }
};

Scalar number(const Json& v, const std::string& key, const Ctx& c) {
  if (!v.is_number()) c.fail(key, "must be a number");
  return v.get<Scalar>();
}
Index integer(const Json& v, const std::string& key, const Ctx& c) {
  if (!v.is_number_integer()) c.fail(key, "must be an integer");
  return v.get<Index>();
}
bool boolean(const Json& v, const std::string& key, const Ctx& c) {
  if (!v.is_boolean()) c.fail(key, "must be true or false");
  return v.get<bool>();
}
std::string string(const Json& v, const std::string& key, const Ctx& c) {
  if (!v.is_string()) c.fail(key, "must be a string");
  return v.get<std::string>();
}
std::vector<std::string> strings(const Json& v, const std::string& key, const Ctx& c) {
  if (!v.is_array()) c.fail(key, "must be a list of strings");
  std::vector<std::string> out;
  for (const Json& x : v) out.push_back(string(x, key, c));
  return out;
}
std::vector<Scalar> numbers(const Json& v, const std::string& key, const Ctx& c, bool allow_scalar) {
  if (allow_scalar && v.is_number()) return {v.get<Scalar>()};
  if (!v.is_array()) c.fail(key, allow_scalar ? "must be a number or a list of numbers" : "must be a list of numbers");
  std::vector<Scalar> out;
  for (const Json& x : v) out.push_back(number(x, key, c));
  return out;
}
Range range(const Json& v, const std::string& key, const Ctx& c) {
  if (v.is_number()) return Range{v.get<Scalar>(), v.get<Scalar>()};
  const std::vector<Scalar> r = numbers(v, key, c, false);
  if (r.size() != 2) c.fail(key, "must be [lo, hi] (or one number)");
  if (!(r[0] <= r[1])) c.fail(key, "must have lo <= hi");
  return Range{r[0], r[1]};
}
// relative paths against the config's directory; package:// URIs and absolute paths as they are
std::string path(const std::string& p, const Ctx& c) {
  if (p.empty() || p.rfind("package://", 0) == 0 || p.rfind("file://", 0) == 0 ||
      std::filesystem::path(p).is_absolute())
    return p;
  return (std::filesystem::path(c.base_dir) / p).lexically_normal().string();
}

using Setter = std::function<void(LocomotionSettings&, const Json&, const std::string&, const Ctx&)>;
struct Key {
  const char* name;
  Setter set;
};

#define NUM(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.field = number(v, k, c); }}
#define INT(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.field = integer(v, k, c); }}
#define RANGE(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.field = range(v, k, c); }}
#define STRS(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.field = strings(v, k, c); }}
#define RNUM(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.rewards.field = number(v, k, c); }}
#define TNUM(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.terrain.field = number(v, k, c); }}
#define ZRANGE(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.randomization.field = range(v, k, c); }}
#define ZNUM(field) {#field, [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.randomization.field = number(v, k, c); }}

const std::vector<Key>& reward_keys() {
  static const std::vector<Key> keys = {
      RNUM(tracking_lin_vel), RNUM(tracking_ang_vel), RNUM(tracking_sigma), RNUM(lin_vel_z), RNUM(ang_vel_xy),
      RNUM(orientation), RNUM(torques), RNUM(action_rate), RNUM(base_height), RNUM(base_height_target),
      RNUM(feet_air_time), RNUM(air_time_target), RNUM(collision),
      {"only_positive", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         s.rewards.only_positive = boolean(v, k, c);
       }}};
  return keys;
}

const std::vector<Key>& terrain_keys() {
  static const std::vector<Key> keys = {
      {"type", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         s.terrain.type = string(v, k, c);
         if (s.terrain.type != "flat" && s.terrain.type != "rough") c.fail(k, "must be \"flat\" or \"rough\"");
       }},
      {"rows", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.terrain.rows = integer(v, k, c); }},
      TNUM(row_length), TNUM(width), TNUM(max_amplitude), TNUM(cell),
      {"curriculum", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         s.terrain.curriculum = boolean(v, k, c);
       }},
      {"max_start_row", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         s.terrain.max_start_row = integer(v, k, c);
       }}};
  return keys;
}

const std::vector<Key>& randomization_keys() {
  static const std::vector<Key> keys = {ZRANGE(friction),   ZRANGE(kp_scale),  ZRANGE(kd_scale),
                                        ZRANGE(motor_strength), ZRANGE(added_mass), ZRANGE(com_shift),
                                        ZRANGE(joint_damping), ZRANGE(joint_friction),
                                        ZNUM(push_interval), ZNUM(push_velocity)};
  return keys;
}

void parse_object(LocomotionSettings& s, const Json& obj, const std::vector<Key>& keys, const std::string& prefix,
                  const Ctx& c);

const std::vector<Key>& top_keys() {
  static const std::vector<Key> keys = {
      {"description", [](LocomotionSettings&, const Json& v, const std::string& k, const Ctx& c) { string(v, k, c); }},
      // the task a training script builds from the config (examples/python/train_locomotion.py)
      {"task", [](LocomotionSettings&, const Json& v, const std::string& k, const Ctx& c) {
         if (string(v, k, c) != "locomotion") c.fail(k, "must be \"locomotion\" for a locomotion task");
       }},
      {"urdf", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.urdf = path(string(v, k, c), c); }},
      {"package_path", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         s.package_path.clear();
         for (const std::string& p : strings(v, k, c)) s.package_path.push_back(path(p, c));
       }},
      {"mesh_collision", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         const std::string m = string(v, k, c);
         if (m != "convex_hull" && m != "triangles") c.fail(k, "must be \"convex_hull\" or \"triangles\"");
         s.mesh_collision = m == "triangles" ? MeshCollision::Triangles : MeshCollision::ConvexHull;
       }},
      STRS(joints), STRS(feet),
      {"nominal", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.nominal = numbers(v, k, c, false); }},
      NUM(base_height),
      {"kp", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.kp = numbers(v, k, c, true); }},
      {"kd", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.kd = numbers(v, k, c, true); }},
      NUM(action_scale), NUM(action_clip), STRS(terminate_contacts), STRS(penalize_contacts), NUM(physics_dt),
      INT(substeps),
      {"solver", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) { s.solver = string(v, k, c); }},
      INT(max_contacts), NUM(friction), INT(max_episode_steps), RANGE(command_vx), RANGE(command_vy),
      RANGE(command_yaw), NUM(init_joint_noise), NUM(init_velocity_noise), NUM(min_base_height), NUM(min_uprightness),
      {"rewards", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         parse_object(s, v, reward_keys(), k + ".", c);
       }},
      {"terrain", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         parse_object(s, v, terrain_keys(), k + ".", c);
       }},
      {"randomization", [](LocomotionSettings& s, const Json& v, const std::string& k, const Ctx& c) {
         parse_object(s, v, randomization_keys(), k + ".", c);
       }}};
  return keys;
}

void parse_object(LocomotionSettings& s, const Json& obj, const std::vector<Key>& keys, const std::string& prefix,
                  const Ctx& c) {
  if (!obj.is_object()) c.fail(prefix.empty() ? "(top level)" : prefix.substr(0, prefix.size() - 1), "must be an object");
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string full = prefix + it.key();
    const Key* key = nullptr;
    for (const Key& k : keys)
      if (it.key() == k.name) key = &k;
    if (key == nullptr) {
      std::string known;
      for (const Key& k : keys) known += (known.empty() ? "" : ", ") + std::string(k.name);
      throw InvalidArgument(c.source + ": unknown key '" + full + "' (known: " + known + ")");
    }
    key->set(s, it.value(), full, c);
  }
}

#undef NUM
#undef INT
#undef RANGE
#undef STRS
#undef RNUM
#undef TNUM
#undef ZRANGE
#undef ZNUM

}  // namespace

LocomotionSettings parse_locomotion_config(const std::string& json_text, const std::string& base_dir,
                                           const std::string& source) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    throw InvalidArgument(source + ": not valid JSON: " + e.what());
  }
  const Ctx c{source, base_dir.empty() ? "." : base_dir};
  LocomotionSettings s;
  parse_object(s, j, top_keys(), "", c);
  for (const char* required : {"urdf", "joints", "feet", "nominal", "base_height"})
    if (!j.contains(required)) throw InvalidArgument(source + ": missing key '" + std::string(required) + "'");
  return s;
}

LocomotionSettings load_locomotion_config(const std::string& path) {
  const std::string text = read_regular_file<InvalidArgument>(path, kMaxDescriptionBytes, "locomotion config");
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return parse_locomotion_config(text, dir, path);
}

std::vector<std::string> locomotion_config_keys() {
  std::vector<std::string> out;
  for (const Key& k : top_keys()) out.push_back(k.name);
  for (const Key& k : reward_keys()) out.push_back(std::string("rewards.") + k.name);
  for (const Key& k : terrain_keys()) out.push_back(std::string("terrain.") + k.name);
  for (const Key& k : randomization_keys()) out.push_back(std::string("randomization.") + k.name);
  return out;
}

}  // namespace impulse::tasks
