// CsvLog: the CSV log of `impulse run --csv FILE` (columns in docs/world-format.md).
// One header line, then one row per logged step:
//   time,
//   per system (robots and free bodies, in World order), columns prefixed "<name>.":
//     x y z (base position), qw qx qy qz (base quaternion), vx vy vz wx wy wz (base linear and
//     angular velocity, world frame), then one column per joint coordinate named after the joint,
//   contacts, iterations, residual, max_penetration, kinetic_energy, potential_energy (totals).
// A fixed base reports its constant pose and zero velocity. Numbers use 10 significant digits.
#pragma once

#include <cstdio>
#include <string>

#include "impulse/world/world.hpp"

namespace impulse::cli {

class CsvLog {
 public:
  // Opens (truncates) `path` and writes the header for the systems of `world`.
  // Throws impulse::Error when the file cannot be opened.
  CsvLog(const std::string& path, World& world);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;

  // One row: the current state of `world` and its last step's statistics.
  void log(World& world);
  void flush();
  long rows() const { return rows_; }

 private:
  void value(double x);
  std::string path_;
  std::FILE* file_ = nullptr;
  long rows_ = 0;
};

}  // namespace impulse::cli
