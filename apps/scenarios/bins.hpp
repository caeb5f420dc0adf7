// Bins of the manipulation benches (`impulse bench scenes`: bin50, clutter48, cyl_bin,
// capsule_bin; the walls of pile216), shared with the tests that take islands from them.
#pragma once

#include "impulse/world/world.hpp"

namespace impulse::scenarios {

// Sets free body b's configuration: origin p, orientation r (unit quaternion); u is left as it is.
void place_free_body(ArticulatedSystem& b, const Vec3& p, const Quat& r);

// The ground and four walls |x|, |y| <= half (the pile's box and the bins).
void add_square_box(World& w, Scalar half);

// A 0.5 m square bin: add_square_box(w, 0.25); default material mu 0.6, inelastic.
void add_bin(World& w);

// 50 boxes (0.08 m, 0.5 kg) in two 5 x 5 layers 0.1 m apart, 0.15 and 0.27 m up, each turned
// about the vertical by 0.3 (i + 2 j + 3 k) rad, dropped into add_bin's bin (bench scenes bin50).
void build_box_bin(World& w);

// 48 objects of four shapes (boxes 0.08 x 0.05 x 0.04 m, cylinders r 0.03 m and 0.08 m long,
// capsules r 0.025 m and 0.08 m long, spheres r 0.03 m; 0.2 kg each, mu 0.6) dropped in three
// 4 x 4 layers 0.12 m apart (0.14 m between layers, none touching) into add_bin's bin, each
// turned by its own roll, pitch and yaw: the pile of a manipulation bench, with round bodies
// crossing each other and lying on faces. `shape` >= 0 makes every object of that one shape
// (0 box, 1 cylinder, 2 capsule, 3 sphere) in the same layout: the bins of one round shape.
// The time step is the World's (the benches use 1 ms).
void build_clutter(World& w, int shape = -1);

}  // namespace impulse::scenarios
