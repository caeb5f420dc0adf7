#include "impulse/collision/material.hpp"

#include <cmath>

#include "impulse/core/check.hpp"

namespace impulse {

MaterialTable::MaterialTable() {
  pairs_.push_back(MaterialPair());
  id("default");
}

Index MaterialTable::id(const std::string& name) {
  IMPULSE_CHECK(!name.empty(), "material name is empty");
  const auto it = index_.find(name);
  if (it != index_.end()) return it->second;
  // grow the dense n x n table to (n+1) x (n+1), new entries on the default pair
  const Index n = size();
  std::vector<int> table(static_cast<std::size_t>((n + 1) * (n + 1)), 0);
  for (Index a = 0; a < n; ++a) {
    for (Index b = 0; b < n; ++b) table[static_cast<std::size_t>(a * (n + 1) + b)] = table_[static_cast<std::size_t>(a * n + b)];
  }
  table_.swap(table);
  names_.push_back(name);
  index_[name] = n;
  return n;
}

Index MaterialTable::find(const std::string& name) const {
  const auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

const std::string& MaterialTable::name(Index i) const {
  IMPULSE_CHECK(i >= 0 && i < size(), "material index ", i, " out of range [0, ", size(), ")");
  return names_[static_cast<std::size_t>(i)];
}

namespace {
// `what` is only formatted on failure: set_default (a per-episode friction) allocates nothing
template <class What>
void check_pair(const MaterialPair& p, const What& what) {
  IMPULSE_CHECK(std::isfinite(p.mu) && p.mu >= 0, what, ": friction coefficient ", p.mu, " must be finite and >= 0");
  IMPULSE_CHECK(std::isfinite(p.restitution) && p.restitution >= 0 && p.restitution <= 1, what, ": restitution ",
                p.restitution, " must be in [0, 1]");
}
}  // namespace

void MaterialTable::set_pair(const std::string& a, const std::string& b, const MaterialPair& pair) {
  check_pair(pair, "material pair ('" + a + "', '" + b + "')");
  const Index ia = id(a), ib = id(b);
  const int k = static_cast<int>(pairs_.size());
  pairs_.push_back(pair);
  table_[static_cast<std::size_t>(ia * size() + ib)] = k;
  table_[static_cast<std::size_t>(ib * size() + ia)] = k;
}

void MaterialTable::set_default(const MaterialPair& pair) {
  check_pair(pair, "default material pair");
  pairs_[0] = pair;
}

const MaterialPair& MaterialTable::pair(const std::string& a, const std::string& b) const {
  const Index ia = find(a), ib = find(b);
  if (ia < 0 || ib < 0) return default_pair();
  return pair(ia, ib);
}

}  // namespace impulse
