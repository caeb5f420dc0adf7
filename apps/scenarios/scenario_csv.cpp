#include "scenarios/scenario_csv.hpp"

#include "impulse/core/error.hpp"

namespace impulse::scenarios {

ScenarioCsv::ScenarioCsv(const std::string& path) : file_(std::fopen(path.c_str(), "w")) {
  if (!file_) throw Error("cannot open CSV log '" + path + "' for writing");
  std::fputs(
      "step,time,x,y,z,qw,qx,qy,qz,vx,vy,vz,contacts,limits,iterations,residual,status,max_penetration,"
      "us_dynamics,us_collision,us_delassus,us_solve,us_integrate\n",
      file_);
}

ScenarioCsv::~ScenarioCsv() {
  if (file_) std::fclose(file_);
}

void ScenarioCsv::log(const Scenario& s) {
  const VecX& q = s.robot().q();
  const VecX& u = s.robot().u();
  const StepStats& st = s.world().stats();
  std::fprintf(file_, "%ld,%.6f", s.steps(), s.world().time());
  for (int i = 0; i < 7; ++i) std::fprintf(file_, ",%.10g", q[i]);
  for (int i = 0; i < 3; ++i) std::fprintf(file_, ",%.10g", u[i]);
  std::fprintf(file_, ",%ld,%ld,%ld,%.6g,%s,%.6g,%.3f,%.3f,%.3f,%.3f,%.3f\n", static_cast<long>(st.contacts),
               static_cast<long>(st.limits), static_cast<long>(st.solver.iterations), st.solver.residual,
               to_string(st.status), st.max_penetration, st.times.dynamics, st.times.collision, st.times.delassus,
               st.times.solve, st.times.integrate);
}

}  // namespace impulse::scenarios
