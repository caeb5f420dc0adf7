// StepWorkspace: shared step scratch for batched Worlds. See step_workspace.hpp.
#include "impulse/world/step_workspace.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <iterator>

#include "impulse/solvers/solver_registry.hpp"

namespace impulse {

namespace {
std::atomic<std::uint64_t> next_workspace_id{1};  // 0: "none" in World's cache
}  // namespace

StepWorkspace::StepWorkspace() : id_(next_workspace_id.fetch_add(1, std::memory_order_relaxed)) {}

const Model* StepWorkspace::canonical(const std::shared_ptr<const Model>& model) {
  auto it = canonical_.find(model.get());
  if (it != canonical_.end()) {
    if (!it->second.model.expired()) return it->second.canonical;
    canonical_.erase(it);  // its Model is gone: this one took its address
  }
  if (canonical_.size() >= prune_at_) {
    for (auto a = canonical_.begin(); a != canonical_.end();) a = a->second.model.expired() ? canonical_.erase(a) : std::next(a);
    prune_at_ = std::max<std::size_t>(64, 2 * canonical_.size());
  }
  // a Model seen for the first time: the first one it equals but for the inertias, or itself
  const Model* c = model.get();
  for (const std::shared_ptr<const Model>& m : canonical_models_)
    if (m->equal_except_parameters(*model)) {
      c = m.get();
      break;
    }
  if (c == model.get()) canonical_models_.push_back(model);
  canonical_.emplace(model.get(), Alias{model, c});
  return c;
}

Data& StepWorkspace::data(const std::shared_ptr<const Model>& model, Index k) {
  const Key key{canonical(model), k};
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    Entry e;
    e.model = model;
    e.data = std::make_unique<Data>(*model);
    it = entries_.emplace(key, std::move(e)).first;
  }
  return *it->second.data;
}

Stepper* StepWorkspace::find_stepper(const std::vector<std::shared_ptr<const Model>>& models,
                                     const std::vector<Index>& object_system) {
  for (StepperEntry& e : steppers_) {
    if (e.object_system != object_system || e.models.size() != models.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < models.size() && same; ++i) same = e.models[i] == canonical(models[i]);
    if (same) return e.stepper.get();
  }
  return nullptr;
}

Stepper& StepWorkspace::stepper(const std::vector<std::shared_ptr<const Model>>& models,
                                const std::vector<StepperSystem>& systems, const std::vector<Index>& object_system) {
  if (Stepper* s = find_stepper(models, object_system)) return *s;
  StepperEntry e{{}, object_system, std::make_unique<Stepper>()};
  for (const auto& m : models) e.models.push_back(canonical(m));
  e.stepper->reserve(systems, object_system);
  e.stepper->set_lanes_pending(&lanes_pending_);
  steppers_.push_back(std::move(e));
  return *steppers_.back().stepper;
}

ContactSolver& StepWorkspace::solver(const char* name) {
  for (const auto& s : solvers_)
    if (std::strcmp(s->name(), name) == 0) return *s;
  solvers_.push_back(make_contact_solver(name));
  return *solvers_.back();
}

}  // namespace impulse
