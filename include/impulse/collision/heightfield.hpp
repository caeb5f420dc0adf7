// Heightfield terrain: a regular grid of heights, solid below. The surface is piecewise linear:
// each cell (i, j)-(i+1, j+1) is split into two triangles along its (i, j)-(i+1, j+1) diagonal,
// so the heightfield is exactly the triangle mesh a viewer draws, and a height, a normal or a ray
// hit is that of one triangle.
//
// Grid: heights(i, j) is the height at x = x0 + i dx, y = y0 + j dy (i = 0..nx-1 along x, j along
// y); by default the grid is centred on the world origin. Outside the grid there is no terrain.
//
// Generators build common robotics terrains (all deterministic for a seed): random rough ground,
// stairs, slopes and stepping stones; from_pgm reads a grey-scale PGM image (P2 or P5).
//
// Collision (CollisionWorld::add_heightfield): every shape type against the terrain, with
// multi-point manifolds (heightfield_contacts below): sample points of the shape (sphere and
// capsule-cap spheres, box corners, cylinder rim points, mesh vertices) against the triangles
// under them, plus the terrain vertices that lie inside a box, sphere, capsule or cylinder (a
// stair edge under a flat foot). Ray casts (the height scan sensor) walk the grid cells along
// the ray (Amanatides and Woo 1987, "A Fast Voxel Traversal Algorithm"), testing the two
// triangles of each cell (Moller and Trumbore 1997).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "impulse/core/types.hpp"
#include "impulse/model/geometry.hpp"

namespace impulse {

struct ManifoldPoint;

// Most grid points a generator or an image may give (2^25, 256 MiB of heights; e.g. 5792 x 5792):
// larger sizes are an error before anything is allocated.
inline constexpr Index kMaxHeightfieldPoints = Index(1) << 25;

class Heightfield {
 public:
  Heightfield() = default;
  // heights: nx x ny (nx, ny >= 2), every entry finite; dx, dy > 0. x0, y0: position of
  // heights(0, 0); NaN (the default) centres the grid on the origin. Throws InvalidArgument.
  Heightfield(MatX heights, Scalar dx, Scalar dy, Scalar x0 = std::numeric_limits<Scalar>::quiet_NaN(),
              Scalar y0 = std::numeric_limits<Scalar>::quiet_NaN());

  // --- generators (square cells of size `cell`, grid of size_x x size_y metres, centred) ---
  // Random rough ground: uniform noise in [0, amplitude] smoothed by `smoothing` box-filter passes
  // (0: raw noise), then rescaled to span [0, amplitude] exactly.
  static Heightfield random_rough(Scalar size_x, Scalar size_y, Scalar cell, Scalar amplitude, std::uint64_t seed,
                                  int smoothing = 1);
  // Stairs rising along +x: steps of `run` metres and `rise` metres, flat ground before x_start.
  static Heightfield stairs(Scalar size_x, Scalar size_y, Scalar cell, Scalar run, Scalar rise, Scalar x_start = 0);
  // A ramp rising along +x with the given slope (rise per metre) from x_start on, flat before.
  static Heightfield slope(Scalar size_x, Scalar size_y, Scalar cell, Scalar gradient, Scalar x_start = 0);
  // Square stones of side `stone` on a grid of pitch `pitch`, tops at height 0, gaps `depth` deep;
  // a random height jitter in [-jitter, jitter] per stone (seeded).
  static Heightfield stepping_stones(Scalar size_x, Scalar size_y, Scalar cell, Scalar stone, Scalar pitch,
                                     Scalar depth, Scalar jitter, std::uint64_t seed);
  // Grey-scale PGM image (P2 or P5, 8 or 16 bit): pixel (row r, column c) -> x along columns, y
  // along rows (top row at the largest y); black = 0, white = max_height. Read through
  // read_regular_file. Throws ModelError naming the file.
  // The declared width x height is checked against kMaxHeightfieldPoints and against the pixel
  // data the file holds before anything is allocated.
  static Heightfield from_pgm(const std::string& path, Scalar size_x, Scalar size_y, Scalar max_height);
  // The same from the content of a PGM file; `source` names it in errors.
  static Heightfield from_pgm_data(const std::string& bytes, const std::string& source, Scalar size_x,
                                   Scalar size_y, Scalar max_height);

  Index nx() const { return static_cast<Index>(heights_.rows()); }
  Index ny() const { return static_cast<Index>(heights_.cols()); }
  Scalar dx() const { return dx_; }
  Scalar dy() const { return dy_; }
  Scalar x0() const { return x0_; }
  Scalar y0() const { return y0_; }
  const MatX& heights() const { return heights_; }
  Scalar min_height() const { return min_h_; }
  Scalar max_height() const { return max_h_; }
  bool empty() const { return heights_.size() == 0; }

  // Surface height and upward unit normal at (x, y); false (outputs untouched) outside the grid.
  bool height(Scalar x, Scalar y, Scalar& z) const;
  bool height_normal(Scalar x, Scalar y, Scalar& z, Vec3& normal) const;
  // First hit of the ray from + t dir (t in [0, max_t], dir need not be unit) with the surface,
  // from above or below: the ray parameter t and the upward normal of the triangle hit.
  bool raycast(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t, Vec3& normal) const;
  // The same without the normal (saves a square root per ray).
  bool raycast(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t) const;
  // Many vertical rays down (direction -z) at once, for a height scan: for each k, the hit of the
  // ray from from[k] replaces t[k] when it lies in [0, min(max_t, t[k])] (t[k] = +inf: no hit yet).
  void raycast_down(const Vec3* from, std::size_t count, Scalar max_t, Scalar* t) const;

  // Vertex (i, j) in the world.
  Vec3 vertex(Index i, Index j) const { return Vec3(x0_ + i * dx_, y0_ + j * dy_, heights_(i, j)); }

 private:
  // Height at (x, y) and the slopes (dz/du, dz/dv per cell) of the triangle under it.
  bool interpolate(Scalar x, Scalar y, Scalar& z, Scalar& gx, Scalar& gy) const;
  bool raycast_impl(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t, Vec3* normal) const;

  MatX heights_;
  Scalar dx_ = 1, dy_ = 1, x0_ = 0, y0_ = 0, min_h_ = 0, max_h_ = 0;
};

// Shape parameters for heightfield_contacts, world pose (R, p). Sizes as in manifold.hpp: sphere
// radius r; box half extents h; capsule and cylinder radius r and half-length hl along local z;
// mesh: its vertices in the shape frame.
struct TerrainShape {
  ShapeType type = ShapeType::Sphere;
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();
  Scalar r = 0, hl = 0;
  Vec3 h = Vec3::Zero();
  const Vec3* vertices = nullptr;
  int vertex_count = 0;
};

// Contacts of a shape (A) against the terrain (B): normal from the terrain into the shape, depth
// > 0 when penetrating, reported when depth >= -margin; at most 4 points (reduce_manifold).
// No allocation.
int heightfield_contacts(const Heightfield& hf, const TerrainShape& shape, Scalar margin, ManifoldPoint* out);

}  // namespace impulse
