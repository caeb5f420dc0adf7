// WorldLanes (see the header).
#include "impulse/batch/world_lanes.hpp"

#include <algorithm>

#include "impulse/core/check.hpp"
#include "impulse/core/error.hpp"
#include "impulse/stepper/lanes_step.hpp"

namespace impulse::batch {

StepLanes* WorldLanes::lanes(const std::shared_ptr<const Model>& model, int width) {
  for (const Entry& e : entries_)
    if (e.model == model && e.width == width) return e.lanes.get();
  // Models made for a while (randomized per episode) are dropped once only this cache holds them
  if (entries_.size() >= 16) {
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.model.use_count() == 1; }),
                   entries_.end());
  }
  std::unique_ptr<StepLanes> l;
  if (width > 1 && !model->is_free_body() && lanes_supported(*model)) l = std::make_unique<StepLanes>(*model, width);
  entries_.push_back({model, width, std::move(l)});
  return entries_.back().lanes.get();
}

StepWorkspace& WorldLanes::workspace(int w, StepWorkspace& ws) {
  if (w == 0) return ws;
  while (static_cast<int>(workspaces_.size()) < w) workspaces_.push_back(std::make_unique<StepWorkspace>());
  return *workspaces_[static_cast<std::size_t>(w - 1)];
}

void WorldLanes::reserve(const World& prototype, int width, StepWorkspace& ws) {
  if (width <= 1) return;
  std::unique_ptr<World> copies[8];
  World* worlds[8];
  StepReport report[8];
  try {
    for (int w = 0; w < width; ++w) {
      copies[w] = prototype.clone();
      worlds[w] = copies[w].get();
      worlds[w]->reserve_workspace(workspace(w, ws));
    }
    integrate(worlds, width, width, ws, report);
  } catch (const InvalidArgument&) {
  }
}

void WorldLanes::integrate(World* const* worlds, int count, int width, StepWorkspace& ws, StepReport* report,
                           GroupMemory* memory) {
  IMPULSE_ASSERT(count >= 1 && count <= std::max(width, 1));
  if (width <= 1 || count <= 1) {  // the scalar path: World by World on ws
    for (int w = 0; w < count; ++w) {
      if (w + 1 < count) worlds[w + 1]->prefetch(&ws);
      report[w] = worlds[w]->integrate(ws);
    }
    return;
  }
  StepWorkspace* group[8];
  for (int w = 0; w < count; ++w) {
    group[w] = &workspace(w, ws);
    group[w]->lanes_pending().clear();
  }
  const World& first = *worlds[0];
  const std::vector<ArticulatedSystem*>& systems = first.systems();
  for (std::size_t j = 0; j < systems.size(); ++j) {
    const std::shared_ptr<const Model>& model = systems[j]->shared_model();
    bool repeated = false;  // (one StepLanes per Model: the second system of a Model is scalar)
    for (std::size_t k = 0; k < j; ++k) repeated = repeated || systems[k]->shared_model() == model;
    if (repeated) continue;
    // the Worlds whose system j takes a lane (bit w: World w)
    unsigned used = 0;
    for (int w = 0; w < count; ++w) {
      const World& x = *worlds[w];
      if (j >= x.systems().size() || x.systems()[j]->shared_model() != model) continue;
      if (x.gravity() != first.gravity() || x.settings().dt != first.settings().dt) continue;
      if (x.data().systems[j].has_f_ext) continue;
      used |= 1u << w;
    }
    if ((used & (used - 1)) == 0) continue;  // one World or none: its step computes it
    StepLanes* l = lanes(model, width);
    if (l == nullptr) continue;
    l->set_gravity(first.gravity());
    int some = 0;
    for (int w = 0; w < count; ++w)
      if (used & (1u << w)) some = w;
    for (int w = 0; w < width; ++w) {
      // (a lane no World takes computes a copy of another's state: finite, not read)
      const SystemState& st = worlds[(used & (1u << w)) ? w : some]->data().systems[j];
      l->set_state(w, st.q, st.u);
      l->set_drive(w, st.tau, st.kp, st.kd, st.q_target, st.u_target);
    }
    l->compute();
    l->implicit_pd(first.settings().dt);
    l->factor();
    l->solve();
    for (int w = 0; w < count; ++w)
      if (used & (1u << w)) group[w]->lanes_pending().put(&worlds[w]->data().systems[j], l, w);
  }
  // (a step that threw leaves the group's begun steps cancelled and what no stage took dropped)
  struct Cancel {
    World* const* worlds;
    StepWorkspace* const* group;
    int count;
    ~Cancel() {
      for (int w = 0; w < count; ++w) {
        worlds[w]->cancel_step();
        group[w]->lanes_pending().clear();
      }
    }
  } cancel{worlds, group, count};
  // each World's dynamics, collision and rows, on its workspace of the group
  const bool defer_paths = memory == nullptr || memory->defer_paths;
  for (int w = 0; w < count; ++w) {
    if (w + 1 < count) worlds[w + 1]->prefetch(group[w + 1]);
    worlds[w]->begin_step(*group[w], defer_paths);
  }
  // the G of the rows, those of one layout in lanes
  assemblers_.resize(static_cast<std::size_t>(count));
  views_.resize(static_cast<std::size_t>(count));
  for (int w = 0; w < count; ++w) {
    Stepper& s = worlds[w]->step_stepper();
    assemblers_[static_cast<std::size_t>(w)] = &s.pending_rows();
    views_[static_cast<std::size_t>(w)] = &s.system_views();
  }
  const int shared = rows_.assemble_products(assemblers_.data(), views_.data(), count, width);
  if (memory != nullptr) memory->defer_paths = shared >= std::min(kMinShared, width);
  // each World's targets and warm start, the solves the lanes take together (BisectionLanes),
  // each World's solve of the rest
  unsigned begun = 0, solved = 0;
  for (int w = 0; w < count; ++w)
    if (worlds[w]->begin_solve()) begun |= 1u << w;
  sweeps_.solve(worlds, begun, count, width);
  for (int w = 0; w < count; ++w)
    if (worlds[w]->solve_step()) solved |= 1u << w;
  // the velocity updates, those of one layout in lanes
  const Scalar* lambda[8];
  std::vector<VecX>* u_next[8];
  for (int w = 0; w < count; ++w) {
    Stepper& s = worlds[w]->step_stepper();
    lambda[w] = s.solved_lambda().data();
    u_next[w] = &s.velocity_update();
  }
  const unsigned updated = rows_.update_velocities(assemblers_.data(), views_.data(), lambda, u_next, solved, count, width);
  for (int w = 0; w < count; ++w)
    if (updated & (1u << w)) worlds[w]->step_stepper().set_velocity_update();
  // each World's update
  for (int w = 0; w < count; ++w) report[w] = worlds[w]->end_step();
}

}  // namespace impulse::batch
