// The per-step CSV log of the scenario demos (`impulse demo NAME --csv FILE`), one row per step:
//   step, time, x y z qw qx qy qz (base pose), vx vy vz (base velocity, world frame),
//   contacts, limits, iterations, residual, status, max_penetration,
//   us_dynamics us_collision us_delassus us_solve us_integrate (stage timings, microseconds)
#pragma once

#include <cstdio>
#include <string>

#include "scenarios/scenario.hpp"

namespace impulse::scenarios {

class ScenarioCsv {
 public:
  // Throws impulse::Error when `path` cannot be opened for writing.
  explicit ScenarioCsv(const std::string& path);
  ~ScenarioCsv();
  ScenarioCsv(const ScenarioCsv&) = delete;
  ScenarioCsv& operator=(const ScenarioCsv&) = delete;

  void log(const Scenario& s);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace impulse::scenarios
