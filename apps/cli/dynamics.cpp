// `impulse dynamics MODEL.urdf` < {"q": [...], "u": [...], "tau": [...]}: the dynamics of one state.
#include <iostream>
#include <iterator>
#include <memory>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::cli {

namespace {

// Reads key of the state object as a vector of the expected size; absent keys give zeros.
VecX read_vector(const json& state, const char* key, Index size, bool required) {
  if (!state.contains(key)) {
    if (required) throw UsageError(std::string("state has no \"") + key + "\" (expected " + std::to_string(size) + " numbers)");
    return VecX::Zero(size);
  }
  const json& a = state.at(key);
  if (!a.is_array()) throw UsageError(std::string("\"") + key + "\" must be an array of numbers");
  if (static_cast<Index>(a.size()) != size) {
    throw UsageError(std::string("\"") + key + "\" has " + std::to_string(a.size()) + " entries, expected " +
                     std::to_string(size));
  }
  VecX v(size);
  for (Index i = 0; i < size; ++i) {
    if (!a[i].is_number()) throw UsageError(std::string("\"") + key + "\"[" + std::to_string(i) + "] is not a number");
    v[i] = a[i].get<double>();
    if (!std::isfinite(v[i])) throw UsageError(std::string("\"") + key + "\"[" + std::to_string(i) + "] is not finite");
  }
  return v;
}

// Quaternions in q must be unit up to rounding of the input; they are then normalised exactly.
void normalise_quaternions(const Model& m, VecX& q) {
  for (Index i = 0; i < m.nb; ++i) {
    Index k = -1;
    if (m.joint_type[i] == JointType::Floating) k = m.idx_q[i] + 3;
    if (m.joint_type[i] == JointType::Spherical) k = m.idx_q[i];
    if (k < 0) continue;
    const double n = q.segment<4>(k).norm();
    if (std::abs(n - 1.0) > 1e-3) {
      throw UsageError("quaternion of joint '" + m.joint_names[i] + "' at q[" + std::to_string(k) +
                       "..] has norm " + std::to_string(n) + ", expected 1 (order w, x, y, z)");
    }
    q.segment<4>(k) /= n;
  }
}

}  // namespace

namespace {
int run_dynamics(const std::string& model_path, bool fixed_base) {
  UrdfOptions uo;
  uo.fixed_base = fixed_base;
  const Model m = load_urdf(model_path, uo);

  const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  json state;
  try {
    state = json::parse(text);
  } catch (const json::exception& e) {
    // the library's text without its "[json.exception.parse_error.101] " tag; a number such as
    // 1e999 overflows a double (out_of_range 406)
    std::string msg = e.what();
    const std::size_t tag = msg.find("] ");
    if (msg.rfind("[json.exception.", 0) == 0 && tag != std::string::npos) msg = msg.substr(tag + 2);
    if (e.id == 406) throw UsageError("JSON on stdin: a number is out of range for a double (" + msg + ")");
    throw UsageError("malformed JSON on stdin: " + msg);
  }
  if (!state.is_object()) throw UsageError("stdin must hold a JSON object {\"q\": [...], \"u\": [...], \"tau\": [...]}");
  VecX q = read_vector(state, "q", m.nq, true);
  const VecX u = read_vector(state, "u", m.nv, false);
  const VecX tau = read_vector(state, "tau", m.nv, false);
  normalise_quaternions(m, q);

  Data d(m);
  json out;
  out["M"] = matrix_json(crba(m, d, q));
  out["h"] = vector_json(nonlinear_effects(m, d, q, u));
  out["udot"] = vector_json(aba(m, d, q, u, tau));
  out["kinetic_energy"] = kinetic_energy(m, d, q, u);
  out["potential_energy"] = potential_energy(m, d, q);
  out["com"] = vector_json(center_of_mass(m, d, q));
  forward_kinematics(m, d, q, u);
  json poses = json::object();
  for (Index i = 0; i < m.nb; ++i) poses[m.body_names[i]] = pose_json(d.oMi[i]);
  out["poses"] = poses;
  std::cout << out.dump(2) << "\n";
  return 0;
}
}  // namespace

void add_dynamics_command(CLI::App& app, Runner& run) {
  auto model = std::make_shared<std::string>();
  auto fixed = std::make_shared<bool>(false);
  auto* c = app.add_subcommand("dynamics",
                               "Read {\"q\",\"u\",\"tau\"} JSON on stdin; print M, h, udot, energies, com, poses");
  c->add_option("model", *model, "URDF file")->required();
  c->add_flag("--fixed-base", *fixed, "Weld the root body to the world");
  c->callback([=, &run]() { run = [=]() { return run_dynamics(*model, *fixed); }; });
}

}  // namespace impulse::cli
