// StepWorkspace: shared step scratch for batched Worlds. See step_workspace.hpp.
#include "impulse/world/step_workspace.hpp"

#include <atomic>
#include <cstring>

#include "impulse/solvers/solver_registry.hpp"

namespace impulse {

namespace {
std::atomic<std::uint64_t> next_workspace_id{1};  // 0: "none" in World's cache
}  // namespace

StepWorkspace::StepWorkspace() : id_(next_workspace_id.fetch_add(1, std::memory_order_relaxed)) {}

Data& StepWorkspace::data(const std::shared_ptr<const Model>& model, Index k) {
  const Key key{model.get(), k};
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
    for (std::size_t i = 0; i < models.size() && same; ++i) same = e.models[i] == models[i];
    if (same) return e.stepper.get();
  }
  return nullptr;
}

Stepper& StepWorkspace::stepper(const std::vector<std::shared_ptr<const Model>>& models,
                                const std::vector<StepperSystem>& systems, const std::vector<Index>& object_system) {
  if (Stepper* s = find_stepper(models, object_system)) return *s;
  StepperEntry e{models, object_system, std::make_unique<Stepper>()};
  e.stepper->reserve(systems, object_system);
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
