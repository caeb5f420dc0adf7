// StepWorkspace: shared step scratch for batched Worlds. See step_workspace.hpp.
#include "impulse/world/step_workspace.hpp"

#include <atomic>

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

}  // namespace impulse
