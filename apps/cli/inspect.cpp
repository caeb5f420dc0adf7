// `impulse inspect MODEL.urdf [--json]`: what the loader made of a robot description.
#include <iomanip>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/io/urdf.hpp"

namespace impulse::cli {

namespace {

const char* frame_type_name(FrameType t) {
  switch (t) {
    case FrameType::Body: return "body";
    case FrameType::Link: return "link";
    case FrameType::FixedJoint: return "fixed_joint";
    case FrameType::Joint: return "joint";
    case FrameType::User: return "user";
  }
  return "unknown";
}

std::string body_name(const Model& m, Index b) { return b < 0 ? "world" : m.body_names[b]; }

json shape_size(const CollisionShape& s) {
  switch (s.type) {
    case ShapeType::Sphere: return {s.size[0]};
    case ShapeType::Cylinder:
    case ShapeType::Capsule: return {s.size[0], s.size[1]};
    case ShapeType::Box:
    case ShapeType::Mesh: return vector_json(s.size);
  }
  return json::array();
}

json model_json(const Model& m) {
  json j;
  j["name"] = m.name;
  j["nq"] = m.nq;
  j["nu"] = m.nv;
  j["mass"] = m.total_mass();
  j["floating_base"] = m.floating_base;
  j["gravity"] = vector_json(m.gravity);
  j["joints"] = json::array();
  for (Index i = 0; i < m.nb; ++i) {
    const bool scalar = m.nq_joint[i] == 1;
    const Index iq = m.idx_q[i], iv = m.idx_v[i];
    json jj{{"name", m.joint_names[i]},
            {"type", m.joint_urdf_types[i]},
            {"parent", body_name(m, m.parent[i])},
            {"child", m.body_names[i]},
            {"q_index", m.nq_joint[i] ? json(iq) : json(nullptr)},
            {"u_index", m.nv_joint[i] ? json(iv) : json(nullptr)},
            {"nq", m.nq_joint[i]},
            {"nu", m.nv_joint[i]},
            {"lower", scalar ? number(m.lower_position[iq]) : json(nullptr)},
            {"upper", scalar ? number(m.upper_position[iq]) : json(nullptr)},
            {"effort", scalar ? number(m.effort_limit[iv]) : json(nullptr)},
            {"velocity", scalar ? number(m.velocity_limit[iv]) : json(nullptr)}};
    if (scalar) {
      jj["axis"] = vector_json(m.joint_axis[i]);
      jj["damping"] = m.damping[iv];
      jj["friction"] = m.friction[iv];
    }
    j["joints"].push_back(jj);
  }
  j["bodies"] = json::array();
  for (Index i = 0; i < m.nb; ++i) {
    const Inertia& I = m.inertia[i];
    j["bodies"].push_back({{"name", m.body_names[i]},
                           {"mass", I.m},
                           {"com", vector_json(I.c)},
                           {"inertia", matrix_json(I.Ic)}});
  }
  j["frames"] = json::array();
  for (const Frame& f : m.frames) {
    j["frames"].push_back({{"name", f.name},
                           {"type", frame_type_name(f.type)},
                           {"body", body_name(m, f.body)},
                           {"origin", pose_json(f.X_BF)}});
  }
  j["collision"] = json::array();
  for (const CollisionShape& s : m.collision) {
    json c{{"name", s.name},
           {"body", body_name(m, s.body)},
           {"link", s.link},
           {"type", shape_type_name(s.type)},
           {"size", shape_size(s)},
           {"origin", pose_json(s.X_BS)},
           {"material", s.material}};
    if (s.type == ShapeType::Mesh) c["mesh"] = s.mesh_path;
    j["collision"].push_back(c);
  }
  return j;
}

void print_text(const Model& m, std::ostream& os) {
  os << "model '" << m.name << "': " << m.nb << " bodies, nq = " << m.nq << ", nu = " << m.nv << ", mass "
     << std::setprecision(6) << m.total_mass() << " kg, " << (m.floating_base ? "floating" : "fixed")
     << " base\n\njoints (depth-first):\n";
  os << "  " << std::left << std::setw(14) << "name" << std::setw(11) << "type" << std::setw(14) << "parent"
     << std::setw(14) << "child" << std::setw(5) << "q" << std::setw(5) << "u"
     << "limits\n";
  for (Index i = 0; i < m.nb; ++i) {
    os << "  " << std::left << std::setw(14) << m.joint_names[i] << std::setw(11) << m.joint_urdf_types[i]
       << std::setw(14) << body_name(m, m.parent[i]) << std::setw(14) << m.body_names[i] << std::setw(5)
       << m.idx_q[i] << std::setw(5) << m.idx_v[i];
    if (m.nq_joint[i] == 1) {
      os << "[" << m.lower_position[m.idx_q[i]] << ", " << m.upper_position[m.idx_q[i]] << "]  effort "
         << m.effort_limit[m.idx_v[i]] << "  velocity " << m.velocity_limit[m.idx_v[i]];
    }
    os << "\n";
  }
  os << "\nbodies:\n";
  for (Index i = 0; i < m.nb; ++i) {
    os << "  " << std::left << std::setw(14) << m.body_names[i] << std::right << std::setw(10) << std::fixed
       << std::setprecision(4) << m.inertia[i].m << " kg   com (" << m.inertia[i].c.transpose() << ")\n";
  }
  os.unsetf(std::ios::floatfield);
  os << "\nframes: " << m.frames.size() << "\ncollision shapes:\n";
  for (const CollisionShape& s : m.collision) {
    os << "  " << std::left << std::setw(10) << shape_type_name(s.type) << " on " << std::setw(14)
       << body_name(m, s.body) << " size (" << s.size.transpose() << ") at (" << s.X_BS.p.transpose() << ")\n";
  }
}

}  // namespace

void add_inspect_command(CLI::App& app, Runner& run) {
  struct Options {
    std::string model;
    bool json = false;
    bool fixed_base = false;
  };
  auto o = std::make_shared<Options>();
  auto* c = app.add_subcommand("inspect", "Summarise a URDF model (joints, bodies, frames, collision)");
  c->add_option("model", o->model, "URDF file")->required();
  c->add_flag("--json", o->json, "Print one JSON object");
  c->add_flag("--fixed-base", o->fixed_base, "Weld the root body to the world");
  c->callback([o, &run]() {
    run = [o]() {
      UrdfOptions uo;
      uo.fixed_base = o->fixed_base;
      const Model m = load_urdf(o->model, uo);
      if (o->json) {
        std::cout << model_json(m).dump(2) << "\n";
      } else {
        print_text(m, std::cout);
      }
      return 0;
    };
  });
}

}  // namespace impulse::cli
