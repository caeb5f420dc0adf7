// VecWorld (see the header).
#include "impulse/batch/vec_world.hpp"

#include <string>

#include "impulse/batch/limits.hpp"
#include "impulse/core/error.hpp"

namespace impulse::batch {

VecWorld::VecWorld(const WorldDescription& description, Index num_worlds, int num_threads) : pool_(num_threads) {
  if (num_worlds < 1) throw InvalidArgument("VecWorld: num_worlds must be >= 1, got " + std::to_string(num_worlds));
  std::unique_ptr<World> first;
  make_first_within_memory("VecWorld", num_worlds, [&] {
    first = std::make_unique<World>();
    build_world(description, *first);
  });
  worlds_.resize(static_cast<std::size_t>(num_worlds));
  worlds_[0] = std::move(first);
  status_.assign(static_cast<std::size_t>(num_worlds), 0);
  for (int t = 0; t < pool_.num_threads(); ++t) workspaces_.push_back(std::make_unique<StepWorkspace>());
  pool_.parallel_for(num_worlds - 1, [&](Index i) {
    auto w = std::make_unique<World>();
    build_world(description, *w);
    worlds_[static_cast<std::size_t>(i + 1)] = std::move(w);
  });
  // every thread's workspace holds the Data of every World's systems (one per Model and rank:
  // worlds of one description share their Models), so that no step allocates
  for (auto& ws : workspaces_)
    for (const auto& w : worlds_) w->reserve_workspace(*ws);
}

std::unique_ptr<VecWorld> VecWorld::from_file(const std::string& path, Index num_worlds, int num_threads) {
  return std::make_unique<VecWorld>(parse_world_file(path), num_worlds, num_threads);
}

World& VecWorld::world(Index i) {
  use_.check("VecWorld", "world");
  if (i < 0 || i >= size())
    throw InvalidArgument("VecWorld: world index " + std::to_string(i) + " out of range [0, " +
                          std::to_string(size()) + ")");
  return *worlds_[static_cast<std::size_t>(i)];
}

void VecWorld::integrate(Index steps) {
  const UseMarker::Scope in_use(use_, "VecWorld", "integrate");
  if (steps < 0) throw InvalidArgument("VecWorld::integrate: steps must be >= 0, got " + std::to_string(steps));
  // each thread steps its Worlds with its own workspace, whose Data stay in its cache
  pool_.parallel_for(size(), [&](Index i) {
    World& w = *worlds_[static_cast<std::size_t>(i)];
    StepWorkspace& ws = *workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())];
    int first = 0;
    for (Index k = 0; k < steps; ++k) {
      const StepStatus s = w.integrate(ws);
      if (first == 0) first = static_cast<int>(s);
    }
    status_[static_cast<std::size_t>(i)] = first;
  }, [&](Index next) {  // this thread's next World
    worlds_[static_cast<std::size_t>(next)]->prefetch(workspaces_[static_cast<std::size_t>(ThreadPool::thread_index())].get());
  });
}

void VecWorld::check_rows(const char* what, Index rows, Index cols, Index s, bool position) const {
  const World& w0 = *worlds_.front();
  if (s < 0 || s >= w0.num_systems())
    throw InvalidArgument(std::string("VecWorld::") + what + ": system index " + std::to_string(s) +
                          " out of range [0, " + std::to_string(w0.num_systems()) + ")");
  const ArticulatedSystem& sys = *w0.systems()[static_cast<std::size_t>(s)];
  const Index n = position ? sys.nq() : sys.nv();
  if (rows != size() || cols != n)
    throw InvalidArgument(std::string("VecWorld::") + what + ": expected an array of shape (" +
                          std::to_string(size()) + ", " + std::to_string(n) + "), got (" + std::to_string(rows) +
                          ", " + std::to_string(cols) + ")");
}

void VecWorld::get_q(Index s, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_q");
  check_rows("get_q", out.rows(), out.cols(), s, true);
  for (Index i = 0; i < size(); ++i) out.row(i) = worlds_[static_cast<std::size_t>(i)]->systems()[s]->q().transpose();
}

void VecWorld::get_u(Index s, RowMatXref out) const {
  const UseMarker::Scope in_use(use_, "VecWorld", "get_u");
  check_rows("get_u", out.rows(), out.cols(), s, false);
  for (Index i = 0; i < size(); ++i) out.row(i) = worlds_[static_cast<std::size_t>(i)]->systems()[s]->u().transpose();
}

void VecWorld::set_state(Index s, const RowMatXcref& q, const RowMatXcref& u) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_state");
  check_rows("set_state", q.rows(), q.cols(), s, true);
  check_rows("set_state", u.rows(), u.cols(), s, false);
  // validate every row first (the setters check), so a bad row changes nothing
  const Index nq = q.cols(), nv = u.cols();
  for (Index i = 0; i < size(); ++i) {
    if (!q.row(i).allFinite() || !u.row(i).allFinite())
      throw InvalidArgument("VecWorld::set_state: row " + std::to_string(i) + " is not finite");
  }
  // set row by row; if a setter rejects a row (e.g. a non-unit quaternion), restore the rows
  // already set, so a failed call changes nothing
  VecX qi(nq), ui(nv);
  std::vector<VecX> old_q, old_u;
  for (Index i = 0; i < size(); ++i) {
    ArticulatedSystem& sys = *worlds_[static_cast<std::size_t>(i)]->systems()[s];
    old_q.push_back(sys.q());
    old_u.push_back(sys.u());
    qi = q.row(i).transpose();
    ui = u.row(i).transpose();
    try {
      sys.set_state(qi, ui);
    } catch (const Error& e) {
      for (Index j = 0; j < i; ++j)
        worlds_[static_cast<std::size_t>(j)]->systems()[s]->set_state(old_q[static_cast<std::size_t>(j)],
                                                                     old_u[static_cast<std::size_t>(j)]);
      throw InvalidArgument("VecWorld::set_state: row " + std::to_string(i) + ": " + e.what());
    }
  }
}

void VecWorld::set_pd_targets(Index s, const RowMatXcref& q_target, const RowMatXcref& u_target) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_pd_targets");
  check_rows("set_pd_targets", q_target.rows(), q_target.cols(), s, true);
  check_rows("set_pd_targets", u_target.rows(), u_target.cols(), s, false);
  if (!q_target.allFinite() || !u_target.allFinite())
    throw InvalidArgument("VecWorld::set_pd_targets: targets must be finite");
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[s]->set_pd_targets(q_target.row(i).transpose(),
                                                                      u_target.row(i).transpose());
}

void VecWorld::set_generalized_force(Index s, const RowMatXcref& tau) {
  const UseMarker::Scope in_use(use_, "VecWorld", "set_generalized_force");
  check_rows("set_generalized_force", tau.rows(), tau.cols(), s, false);
  if (!tau.allFinite()) throw InvalidArgument("VecWorld::set_generalized_force: tau must be finite");
  for (Index i = 0; i < size(); ++i)
    worlds_[static_cast<std::size_t>(i)]->systems()[s]->set_generalized_force(tau.row(i).transpose());
}

}  // namespace impulse::batch
