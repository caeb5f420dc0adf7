// StepWorkspace: the scratch memory of a step (the systems' Data and the stepper's buffers),
// shared by Worlds that one thread steps one after the other (module world/; used by
// batch/VecWorld and batch/LocomotionTask).
//
// A step rewrites every entry of its systems' Data before reading it (poses, J, M and its factor,
// h), so nothing of it carries over from one step to the next. Each World owns
// one Data per articulated system, and a thread that steps 128 environments in turn finds each of
// them cold: with 256 ANYmal environments a control step moved about 35 KiB per environment
// through the caches, a third of it Data (docs/benchmarks.md). World::integrate(StepWorkspace&)
// steps with the workspace's Data instead, which stay in the thread's cache from one World to the
// next. The results are the same bits as World::integrate() (tests/world/test_step_workspace.cpp).
//
// A workspace holds one Data per (Model, k): the k-th articulated system of a World with that
// Model; and one Stepper (the collision, assembly and solve buffers) per layout: the list of a
// World's systems' Models and its collision objects' systems, so Worlds built from one description
// share one. Models equal but for their inertias and joint damping and friction
// (Model::equal_except_parameters: copies with randomized parameters) count as one here: their
// Data and Steppers are the same size and shape. Both are made on the first step that needs them
// and kept (steady state allocates nothing). What a step leaves for the next (warm start, contacts, statistics) is the World's
// (StepperState), never the workspace's. One workspace per thread: it must not be used by two
// steps at once.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include <vector>

#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"
#include "impulse/stepper/lanes_step.hpp"
#include "impulse/stepper/stepper.hpp"

namespace impulse {

class StepWorkspace {
 public:
  StepWorkspace();
  StepWorkspace(const StepWorkspace&) = delete;
  StepWorkspace& operator=(const StepWorkspace&) = delete;

  // The Data of the k-th articulated system with this Model (made on first use).
  Data& data(const std::shared_ptr<const Model>& model, Index k);
  // The Stepper of a layout (made and sized on first use): `models` the systems' Models in order,
  // `systems` their stepper views (sizes), `object_system` each collision object's system or -1.
  Stepper& stepper(const std::vector<std::shared_ptr<const Model>>& models, const std::vector<StepperSystem>& systems,
                   const std::vector<Index>& object_system);
  // The Stepper of that layout if this workspace has one, else null.
  Stepper* find_stepper(const std::vector<std::shared_ptr<const Model>>& models,
                        const std::vector<Index>& object_system);
  // A contact solver of the registry with this name (made on first use): its workspace serves the
  // solves of the Worlds stepped here, each with its own solver's settings
  // (ContactSolver::solve(problem, lambda, settings)).
  ContactSolver& solver(const char* name);

  // The systems whose first dynamics pass a batched stepper computed in SIMD lanes for the steps
  // on this workspace (stepper/lanes_step.hpp; batch::WorldLanes fills it, the dynamics stage of
  // this workspace's Steppers takes from it).
  LanesPending& lanes_pending() { return lanes_pending_; }

  // A number no other workspace of this process has had (a World remembers which workspace's
  // Data it used last, without holding a pointer that could outlive the workspace).
  std::uint64_t id() const { return id_; }
  Index size() const { return static_cast<Index>(entries_.size()); }

 private:
  // The first Model seen that `model` equals but for inertias (or `model` itself).
  const Model* canonical(const std::shared_ptr<const Model>& model);

  struct Key {
    const Model* model;  // canonical
    Index k;
    bool operator==(const Key& o) const { return model == o.model && k == o.k; }
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const {
      return std::hash<const void*>()(key.model) ^ (static_cast<std::size_t>(key.k) * 0x9e3779b97f4a7c15ULL);
    }
  };
  struct Entry {
    std::shared_ptr<const Model> model;  // keeps the Model, and so the key's address, alive
    std::unique_ptr<Data> data;
  };
  struct Alias {
    // the Model at the key's address when the alias was made: expired when that Model is gone
    // (its address may then hold another one). Weak, so that Models made for a while (a
    // randomized inertia per episode) are not kept alive by every workspace that stepped them.
    std::weak_ptr<const Model> model;
    const Model* canonical;
  };
  struct StepperEntry {
    std::vector<const Model*> models;  // canonical (kept alive by canonical_models_)
    std::vector<Index> object_system;
    std::unique_ptr<Stepper> stepper;
  };
  std::uint64_t id_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::unordered_map<const Model*, Alias> canonical_;
  std::size_t prune_at_ = 64;  // canonical_'s size at which expired aliases are dropped
  std::vector<std::shared_ptr<const Model>> canonical_models_;
  std::vector<StepperEntry> steppers_;  // a few layouts at most: searched in order
  std::vector<std::unique_ptr<ContactSolver>> solvers_;  // one per registry name in use
  LanesPending lanes_pending_;
};

}  // namespace impulse
