// Contact and ContactSet: the output of the collision stage, the input of the Delassus assembler.
//
// Convention (docs/collision.md, docs/conventions.md): `normal` is a unit vector pointing from body B
// into body A (for ground contact: up, into the robot); the contact impulse lambda acts on A and
// -lambda on B. `depth` is the penetration depth along the normal: positive when the shapes
// overlap, negative when they are apart but within the contact margin. `position` is the midpoint
// between the deepest point of A and the deepest point of B, in the world frame.
#pragma once

#include <algorithm>
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

// A list of contacts whose storage grows with use. `capacity()` is a safety cap, not an
// allocation: the storage doubles (from 16) the first time more contacts are added and is kept
// across clear(), so a scene allocates only while it reaches a new contact count. When the cap
// is reached add() drops the contact, counts it in dropped() and sets overflow(): never silent.
class ContactSet {
 public:
  static constexpr Index kDefaultCapacity = 16384;  // 1000 boxes dropped at once peak above 4096
  explicit ContactSet(Index capacity = kDefaultCapacity) { reserve(capacity); }

  // Sets the cap and clears the set (allocates nothing; storage grows in add()).
  void reserve(Index capacity) {
    cap_ = capacity < 0 ? 0 : capacity;
    clear();
  }
  void clear() {
    size_ = 0;
    dropped_ = 0;
  }
  // A slot for one more contact, or nullptr (counted in dropped()) when the cap is reached. The
  // pointer is valid until the next add().
  Contact* add() {
    if (size_ >= cap_) {
      ++dropped_;
      return nullptr;
    }
    if (size_ >= static_cast<Index>(contacts_.size())) {
      const Index grown = std::min<Index>(cap_, std::max<Index>(16, 2 * static_cast<Index>(contacts_.size())));
      contacts_.resize(static_cast<std::size_t>(grown));
    }
    return &contacts_[static_cast<std::size_t>(size_++)];
  }

  Index size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Index capacity() const { return cap_; }                                       // the cap
  Index allocated() const { return static_cast<Index>(contacts_.size()); }      // storage now held
  bool overflow() const { return dropped_ > 0; }
  Index dropped() const { return dropped_; }  // contacts refused since clear()
  const Contact& operator[](Index i) const { return contacts_[static_cast<std::size_t>(i)]; }
  Contact& operator[](Index i) { return contacts_[static_cast<std::size_t>(i)]; }
  const Contact* begin() const { return contacts_.data(); }
  const Contact* end() const { return contacts_.data() + size_; }

 private:
  std::vector<Contact> contacts_;
  Index size_ = 0, cap_ = 0, dropped_ = 0;
};

}  // namespace impulse
