// Materials: a name per collision shape ("default" unless set) and a symmetric pair table giving
// the Coulomb friction coefficient mu and the restitution e of each pair of material names. Pairs
// not set explicitly use the default pair (mu 0.8, e 0, as in RaiSim).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

struct MaterialPair {
  Scalar mu = 0.8;          // Coulomb friction coefficient, >= 0
  Scalar restitution = 0;   // Newton restitution coefficient, in [0, 1]
};

class MaterialTable {
 public:
  MaterialTable();

  // Index of a material name, registering it when new (allocates; call at set-up time).
  Index id(const std::string& name);
  // Index of a material name, or -1 when it was never registered.
  Index find(const std::string& name) const;
  const std::string& name(Index id) const;
  Index size() const { return static_cast<Index>(names_.size()); }

  // Sets the pair (a, b) == (b, a). Throws InvalidArgument for mu < 0, e outside [0, 1] or NaN.
  void set_pair(const std::string& a, const std::string& b, const MaterialPair& pair);
  void set_default(const MaterialPair& pair);
  const MaterialPair& default_pair() const { return pairs_[0]; }

  // The pair of two registered materials: O(1), no allocation (used by the collision stage).
  const MaterialPair& pair(Index a, Index b) const {
    return pairs_[static_cast<std::size_t>(table_[static_cast<std::size_t>(a * size() + b)])];
  }
  // The pair of two names (default pair for unknown names).
  const MaterialPair& pair(const std::string& a, const std::string& b) const;

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, Index> index_;
  std::vector<MaterialPair> pairs_;  // pairs_[0] is the default
  std::vector<int> table_;           // size() x size(), index into pairs_
};

}  // namespace impulse
