// VecWorld: N independent Worlds stepped in parallel by a ThreadPool (module batch/, above world/;
// docs/architecture.md, "Module layering"). The worlds share nothing, so stepping them on any number of threads gives
// bit-identical results; state is gathered into and scattered from caller-provided contiguous
// row-major arrays (one row per world), so a Python caller hands numpy arrays straight through.
//
//   VecWorld vec(parse_world_file("models/worlds/anymal_stand.xml"), 256, /*threads*/ 2);
//   RowMatX q(256, vec.world(0).system(0).nq());
//   vec.integrate(10);          // 10 steps of every world
//   vec.get_q(0, q);            // system 0 of every world
//
// integrate() and the get/set calls allocate nothing.
#pragma once

#include <memory>
#include <vector>

#include "impulse/batch/thread_pool.hpp"
#include "impulse/world/world.hpp"
#include "impulse/world/world_file.hpp"

namespace impulse::batch {

using RowMatX = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatXref = Eigen::Ref<RowMatX>;
using RowMatXcref = Eigen::Ref<const RowMatX>;

class VecWorld {
 public:
  // num_worlds copies of `description` (build_world per copy, in parallel). num_threads as in
  // ThreadPool (0: one per hardware thread). Throws InvalidArgument for num_worlds < 1.
  VecWorld(const WorldDescription& description, Index num_worlds, int num_threads = 0);
  // The same from a world file (parsed once). Throws WorldFileError.
  static std::unique_ptr<VecWorld> from_file(const std::string& path, Index num_worlds, int num_threads = 0);

  Index size() const { return static_cast<Index>(worlds_.size()); }
  int num_threads() const { return pool_.num_threads(); }
  World& world(Index i);
  ThreadPool& pool() { return pool_; }

  // Advances every world by `steps` steps. status (size N, optional) receives per world the
  // first non-Ok StepStatus of these steps (as int, 0 = Ok).
  void integrate(Index steps = 1);
  const std::vector<int>& status() const { return status_; }

  // State of system `s` of every world: rows are worlds. Sizes are checked (InvalidArgument).
  void get_q(Index s, RowMatXref out) const;
  void get_u(Index s, RowMatXref out) const;
  void set_state(Index s, const RowMatXcref& q, const RowMatXcref& u);
  // PD targets of system s: q_target (N x nq), u_target (N x nv).
  void set_pd_targets(Index s, const RowMatXcref& q_target, const RowMatXcref& u_target);
  void set_generalized_force(Index s, const RowMatXcref& tau);

  // One thread at a time (docs/threading.md): the calls above hold this marker and refuse with
  // ConcurrentUseError while another thread holds it.
  const UseMarker& use_marker() const { return use_; }

 private:
  void check_rows(const char* what, Index rows, Index cols, Index s, bool position) const;

  ThreadPool pool_;
  std::vector<std::unique_ptr<World>> worlds_;
  std::vector<int> status_;
  std::vector<std::unique_ptr<StepWorkspace>> workspaces_;  // one per thread (step_workspace.hpp)
  UseMarker use_;
};

}  // namespace impulse::batch
