// Contact and ContactSet: the output of the collision stage, the input of the Delassus assembler.
//
// Convention (docs/collision.md, DESIGN.md sec. 1): `normal` is a unit vector pointing from body B
// into body A (for ground contact: up, into the robot); the contact impulse lambda acts on A and
// -lambda on B. `depth` is the penetration depth along the normal: positive when the shapes
// overlap, negative when they are apart but within the contact margin. `position` is the midpoint
// between the deepest point of A and the deepest point of B, in the world frame.
#pragma once

#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

struct Contact {
  Index object_a = -1;  // collision-world object of side A
  Index body_a = -1;    // body of A in its model (-1 for static objects: ground, static boxes)
  Index shape_a = -1;   // shape of A within its object (index into Model::collision for robots)
  Index object_b = -1;
  Index body_b = -1;
  Index shape_b = -1;
  Vec3 position = Vec3::Zero();        // world frame
  Vec3 normal = Vec3::UnitZ();         // unit, from B into A, world frame
  Scalar depth = 0;                    // > 0 overlapping, < 0 separated within the margin
  Scalar mu = 0;                       // Coulomb friction of the pair's materials
  Scalar restitution = 0;              // Newton restitution of the pair's materials
};

// A fixed-capacity list of contacts. The storage is allocated once by the constructor (or
// reserve); add() never grows it: when full it drops the contact and sets overflow().
class ContactSet {
 public:
  explicit ContactSet(Index capacity = 256) { reserve(capacity); }

  // Re-sizes the storage (allocates) and clears the set.
  void reserve(Index capacity) {
    contacts_.assign(static_cast<std::size_t>(capacity < 0 ? 0 : capacity), Contact());
    clear();
  }
  void clear() {
    size_ = 0;
    overflow_ = false;
  }
  // A slot for one more contact, or nullptr (and overflow() set) when the set is full.
  Contact* add() {
    if (size_ >= capacity()) {
      overflow_ = true;
      return nullptr;
    }
    return &contacts_[static_cast<std::size_t>(size_++)];
  }

  Index size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Index capacity() const { return static_cast<Index>(contacts_.size()); }
  bool overflow() const { return overflow_; }
  const Contact& operator[](Index i) const { return contacts_[static_cast<std::size_t>(i)]; }
  Contact& operator[](Index i) { return contacts_[static_cast<std::size_t>(i)]; }
  const Contact* begin() const { return contacts_.data(); }
  const Contact* end() const { return contacts_.data() + size_; }

 private:
  std::vector<Contact> contacts_;
  Index size_ = 0;
  bool overflow_ = false;
};

}  // namespace impulse
