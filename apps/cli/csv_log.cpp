#include "cli/csv_log.hpp"

#include <cerrno>
#include <cstring>

#include "impulse/core/error.hpp"
#include "impulse/model/joint.hpp"

namespace impulse::cli {

CsvLog::CsvLog(const std::string& path, World& world) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (!file_) throw Error("cannot open CSV file '" + path + "' for writing: " + std::strerror(errno));
  std::string h = "time";
  for (const ArticulatedSystem* s : world.systems()) {
    const std::string p = "," + s->name() + ".";
    for (const char* c : {"x", "y", "z", "qw", "qx", "qy", "qz", "vx", "vy", "vz", "wx", "wy", "wz"}) h += p + c;
    const Model& m = s->model();
    for (Index i = 0; i < m.nb; ++i) {
      if (m.joint_type[i] == JointType::Floating) continue;
      const int n = joint_nq(m.joint_type[i]);
      for (int k = 0; k < n; ++k) h += p + m.joint_names[i] + (n > 1 ? "[" + std::to_string(k) + "]" : "");
    }
  }
  h += ",contacts,iterations,residual,max_penetration,kinetic_energy,potential_energy\n";
  std::fputs(h.c_str(), file_);
}

CsvLog::~CsvLog() {
  if (file_) std::fclose(file_);
}

void CsvLog::value(double x) { std::fprintf(file_, ",%.10g", x); }

void CsvLog::log(World& world) {
  std::fprintf(file_, "%.10g", world.time());
  double kinetic = 0, potential = 0;
  for (const ArticulatedSystem* s : world.systems()) {
    const Model& m = s->model();
    const VecX& q = s->q();
    const VecX& u = s->u();
    const SE3 X = s->body_pose(0);
    const Quat r(X.R);
    Index qb = 0;
    Vec6 v = Vec6::Zero();
    if (m.joint_type[0] == JointType::Floating) {
      qb = 7;
      v = u.head<6>();
    }
    for (int k = 0; k < 3; ++k) value(X.p[k]);
    if (qb == 7) {
      for (int k = 3; k < 7; ++k) value(q[k]);  // exactly the state's quaternion
    } else {
      value(r.w()), value(r.x()), value(r.y()), value(r.z());
    }
    for (int k = 0; k < 6; ++k) value(v[k]);
    for (Index k = qb; k < q.size(); ++k) value(q[k]);
    kinetic += s->kinetic_energy();
    potential += s->potential_energy();
  }
  const StepStats& st = world.stats();
  std::fprintf(file_, ",%ld", static_cast<long>(st.contacts));
  std::fprintf(file_, ",%ld", static_cast<long>(st.solver.iterations));
  value(st.solver.residual);
  value(st.max_penetration);
  value(kinetic);
  value(potential);
  std::fputc('\n', file_);
  ++rows_;
}

void CsvLog::flush() {
  if (file_ && std::fflush(file_) != 0) throw Error("cannot write CSV file '" + path_ + "'");
}

}  // namespace impulse::cli
