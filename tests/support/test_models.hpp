// The set of models every dynamics property test runs on: random trees (several seeds, floating
// and fixed roots), the hand-built quadruped and, once it exists, ANYmal from URDF.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "support/random_model.hpp"

#if __has_include("impulse/io/urdf.hpp")
#include "impulse/io/urdf.hpp"
#define IMPULSE_TEST_HAVE_URDF 1
#endif

namespace impulse {
namespace test {

struct NamedModel {
  std::string name;
  Model model;
};

inline std::string anymal_urdf_path() { return std::string(IMPULSE_SOURCE_DIR) + "/models/anymal/anymal.urdf"; }

// ANYmal loaded from models/anymal/anymal.urdf, if the loader and the file exist.
inline bool load_anymal(Model& out) {
#ifdef IMPULSE_TEST_HAVE_URDF
  if (!std::ifstream(anymal_urdf_path()).good()) return false;
  out = load_urdf(anymal_urdf_path());
  return true;
#else
  (void)out;
  return false;
#endif
}

// `armature`: whether the random trees and the quadruped carry armature (energy tests: no).
inline std::vector<NamedModel> dynamics_test_models(bool armature = true) {
  std::vector<NamedModel> models;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    RandomTreeOptions o;
    o.armature = armature;
    o.num_bodies = 6 + 4 * static_cast<int>(seed);
    o.max_depth = 3 + static_cast<int>(seed);
    models.push_back({"random floating seed " + std::to_string(seed), random_tree(seed, o)});
    o.floating_root = false;
    models.push_back({"random fixed seed " + std::to_string(seed + 100), random_tree(seed + 100, o)});
  }
  RandomTreeOptions chain;  // a long serial chain: deep branch, no branching
  chain.max_children = 1;
  chain.num_bodies = 10;
  chain.max_depth = 10;
  chain.armature = armature;
  models.push_back({"random chain seed 7", random_tree(7, chain)});
  models.push_back({"quadruped", quadruped(armature ? 0.01 : 0.0)});
  Model anymal;
  if (load_anymal(anymal)) {
    if (!armature) anymal.armature.setZero();
    models.push_back({"anymal", anymal});
  }
  return models;
}

// A random state (q, u) for a model.
inline void random_state(const Model& model, std::mt19937& rng, VecX& q, VecX& u, Scalar u_scale = 1.0) {
  q = model.random_configuration(rng);
  std::uniform_real_distribution<Scalar> d(-u_scale, u_scale);
  u.resize(model.nv);
  for (Index k = 0; k < model.nv; ++k) u[k] = d(rng);
}

inline VecX random_vector(Index n, std::mt19937& rng, Scalar scale = 1.0) {
  std::uniform_real_distribution<Scalar> d(-scale, scale);
  VecX x(n);
  for (Index k = 0; k < n; ++k) x[k] = d(rng);
  return x;
}

// max |a - b| / (1 + max |b|): a relative error that stays meaningful near zero.
template <typename A, typename B>
Scalar rel_err(const A& a, const B& b) {
  return (a - b).cwiseAbs().maxCoeff() / (1.0 + b.cwiseAbs().maxCoeff());
}

}  // namespace test
}  // namespace impulse
