// StepWorkspace: the dynamics scratch memory (Data) of a step, shared by Worlds that one thread
// steps one after the other (module world/; used by batch/VecWorld and batch/LocomotionTask).
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
// Model. It is made on the first step that needs it and kept (steady state allocates nothing).
// One workspace per thread: it must not be used by two steps at once.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"

namespace impulse {

class StepWorkspace {
 public:
  StepWorkspace();
  StepWorkspace(const StepWorkspace&) = delete;
  StepWorkspace& operator=(const StepWorkspace&) = delete;

  // The Data of the k-th articulated system with this Model (made on first use).
  Data& data(const std::shared_ptr<const Model>& model, Index k);

  // A number no other workspace of this process has had (a World remembers which workspace's
  // Data it used last, without holding a pointer that could outlive the workspace).
  std::uint64_t id() const { return id_; }
  Index size() const { return static_cast<Index>(entries_.size()); }

 private:
  struct Key {
    const Model* model;
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
  std::uint64_t id_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
};

}  // namespace impulse
