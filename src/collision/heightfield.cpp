// Heightfield terrain: grid queries, generators, ray casts and shape contacts (heightfield.hpp).
//
// Triangles of cell (i, j), with corners a = (i, j), b = (i+1, j), c = (i+1, j+1), d = (i, j+1)
// and local coordinates u = (x - x_i) / dx, v = (y - y_j) / dy in [0, 1]:
//   lower triangle (a, b, c) where u >= v: z = z_a + u (z_b - z_a) + v (z_c - z_b)
//   upper triangle (a, c, d) where u <  v: z = z_a + v (z_d - z_a) + u (z_c - z_d)
// Closest point on a triangle: Ericson, Real-Time Collision Detection (2005), sec. 5.1.5.
// Ray-triangle: Moller and Trumbore (1997); grid walk: Amanatides and Woo (1987).
#include "impulse/collision/heightfield.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "impulse/collision/manifold.hpp"
#include "impulse/core/check.hpp"
#include "impulse/core/file.hpp"

namespace impulse {

namespace {

// Deterministic uniform number in [0, 1) from a 64-bit state (splitmix64): the same terrain for
// the same seed on every platform and standard library.
struct SplitMix {
  std::uint64_t s;
  double next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);
  }
};

Index grid_count(Scalar size, Scalar cell, const char* what) {
  IMPULSE_CHECK(std::isfinite(size) && std::isfinite(cell) && size > 0 && cell > 0, "heightfield ", what,
                ": size ", size, " and cell ", cell, " must be finite and > 0");
  const Scalar n = std::round(size / cell) + 1;
  IMPULSE_CHECK(n >= 2 && n <= 1e5, "heightfield ", what, ": ", n, " grid points along an axis (2 .. 1e5)");
  return static_cast<Index>(n);
}

// The grid's point count, checked against kMaxHeightfieldPoints before anything is allocated
// (1e5 points along each axis would be 80 GB of heights).
void check_grid_points(Index nx, Index ny, const char* what) {
  IMPULSE_CHECK(static_cast<double>(nx) * static_cast<double>(ny) <= static_cast<double>(kMaxHeightfieldPoints),
                "heightfield ", what, ": ", nx, " x ", ny, " grid points, more than the limit of ",
                kMaxHeightfieldPoints, " (a larger cell or a smaller size)");
}

// Closest point on triangle (a, b, c) to p; region 0 when it lies inside the face.
Vec3 closest_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c, int& region) {
  const Vec3 ab = b - a, ac = c - a, ap = p - a;
  const Scalar d1 = ab.dot(ap), d2 = ac.dot(ap);
  region = 1;
  if (d1 <= 0 && d2 <= 0) return a;
  const Vec3 bp = p - b;
  const Scalar d3 = ab.dot(bp), d4 = ac.dot(bp);
  if (d3 >= 0 && d4 <= d3) return b;
  const Scalar vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) return a + (d1 / (d1 - d3)) * ab;
  const Vec3 cp = p - c;
  const Scalar d5 = ab.dot(cp), d6 = ac.dot(cp);
  if (d6 >= 0 && d5 <= d6) return c;
  const Scalar vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) return a + (d2 / (d2 - d6)) * ac;
  const Scalar va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) return b + ((d4 - d3) / ((d4 - d3) + (d5 - d6))) * (c - b);
  region = 0;
  const Scalar denom = 1 / (va + vb + vc);
  return a + ab * (vb * denom) + ac * (vc * denom);
}

// A fixed-capacity list of candidate points (no allocation). When it is full it is reduced to
// the 4 points reduce_manifold keeps (the deepest and the three spanning the largest area), so
// a large flat contact keeps its extent however many grid vertices it covers.
struct Candidates {
  static constexpr int kCapacity = 32;
  ManifoldPoint pts[kCapacity];
  int n = 0;
  void add(const Vec3& position, const Vec3& normal, Scalar depth) {
    if (n == kCapacity) n = reduce_manifold(pts, n);
    pts[n].position = position;
    pts[n].normal = normal;
    pts[n].depth = depth;
    ++n;
  }
};

}  // namespace

Heightfield::Heightfield(MatX heights, Scalar dx, Scalar dy, Scalar x0, Scalar y0)
    : heights_(std::move(heights)), dx_(dx), dy_(dy) {
  IMPULSE_CHECK(heights_.rows() >= 2 && heights_.cols() >= 2, "heightfield: the grid is ", heights_.rows(), " x ",
                heights_.cols(), ", needs at least 2 x 2 points");
  IMPULSE_CHECK(heights_.allFinite(), "heightfield: a height is not finite");
  IMPULSE_CHECK(std::isfinite(dx) && std::isfinite(dy) && dx > 0 && dy > 0, "heightfield: spacing (", dx, ", ", dy,
                ") must be finite and > 0");
  IMPULSE_CHECK(!std::isinf(x0) && !std::isinf(y0), "heightfield: origin (", x0, ", ", y0, ") is infinite");
  x0_ = std::isnan(x0) ? -0.5 * dx * static_cast<Scalar>(heights_.rows() - 1) : x0;
  y0_ = std::isnan(y0) ? -0.5 * dy * static_cast<Scalar>(heights_.cols() - 1) : y0;
  min_h_ = heights_.minCoeff();
  max_h_ = heights_.maxCoeff();
}

Heightfield Heightfield::random_rough(Scalar size_x, Scalar size_y, Scalar cell, Scalar amplitude, std::uint64_t seed,
                                      int smoothing) {
  const Index nx = grid_count(size_x, cell, "random_rough"), ny = grid_count(size_y, cell, "random_rough");
  check_grid_points(nx, ny, "random_rough");
  IMPULSE_CHECK(std::isfinite(amplitude) && amplitude >= 0, "heightfield random_rough: amplitude ", amplitude,
                " must be finite and >= 0");
  IMPULSE_CHECK(smoothing >= 0 && smoothing <= 100, "heightfield random_rough: smoothing ", smoothing,
                " must be in [0, 100]");
  SplitMix rng{seed};
  MatX h(nx, ny);
  for (Index j = 0; j < ny; ++j) {
    for (Index i = 0; i < nx; ++i) h(i, j) = rng.next();
  }
  for (int pass = 0; pass < smoothing; ++pass) {
    MatX s(nx, ny);
    for (Index i = 0; i < nx; ++i) {
      for (Index j = 0; j < ny; ++j) {
        Scalar sum = 0;
        int count = 0;
        for (Index a = std::max<Index>(0, i - 1); a <= std::min<Index>(nx - 1, i + 1); ++a) {
          for (Index b = std::max<Index>(0, j - 1); b <= std::min<Index>(ny - 1, j + 1); ++b) {
            sum += h(a, b);
            ++count;
          }
        }
        s(i, j) = sum / count;
      }
    }
    h.swap(s);
  }
  const Scalar lo = h.minCoeff(), hi = h.maxCoeff();
  h = (h.array() - lo) * (hi > lo ? amplitude / (hi - lo) : 0.0);
  return Heightfield(std::move(h), cell, cell);
}

Heightfield Heightfield::stairs(Scalar size_x, Scalar size_y, Scalar cell, Scalar run, Scalar rise, Scalar x_start) {
  const Index nx = grid_count(size_x, cell, "stairs"), ny = grid_count(size_y, cell, "stairs");
  check_grid_points(nx, ny, "stairs");
  IMPULSE_CHECK(std::isfinite(run) && run > 0 && std::isfinite(rise) && std::isfinite(x_start),
                "heightfield stairs: run ", run, " must be > 0, rise ", rise, " and start ", x_start, " finite");
  MatX h(nx, ny);
  const Scalar x0 = -0.5 * cell * static_cast<Scalar>(nx - 1);
  for (Index i = 0; i < nx; ++i) {
    const Scalar x = x0 + cell * static_cast<Scalar>(i);
    // a small epsilon keeps grid points that sit on a riser on the upper step
    const Scalar steps = x < x_start ? 0 : std::floor((x - x_start) / run + 1e-9) + 1;
    h.row(i).setConstant(rise * steps);
  }
  return Heightfield(std::move(h), cell, cell);
}

Heightfield Heightfield::slope(Scalar size_x, Scalar size_y, Scalar cell, Scalar gradient, Scalar x_start) {
  const Index nx = grid_count(size_x, cell, "slope"), ny = grid_count(size_y, cell, "slope");
  check_grid_points(nx, ny, "slope");
  IMPULSE_CHECK(std::isfinite(gradient) && std::isfinite(x_start), "heightfield slope: gradient ", gradient,
                " and start ", x_start, " must be finite");
  MatX h(nx, ny);
  const Scalar x0 = -0.5 * cell * static_cast<Scalar>(nx - 1);
  for (Index i = 0; i < nx; ++i) {
    const Scalar x = x0 + cell * static_cast<Scalar>(i);
    h.row(i).setConstant(x < x_start ? 0 : gradient * (x - x_start));
  }
  return Heightfield(std::move(h), cell, cell);
}

Heightfield Heightfield::stepping_stones(Scalar size_x, Scalar size_y, Scalar cell, Scalar stone, Scalar pitch,
                                         Scalar depth, Scalar jitter, std::uint64_t seed) {
  const Index nx = grid_count(size_x, cell, "stepping_stones"), ny = grid_count(size_y, cell, "stepping_stones");
  check_grid_points(nx, ny, "stepping_stones");
  IMPULSE_CHECK(std::isfinite(stone) && std::isfinite(pitch) && stone > 0 && pitch >= stone && std::isfinite(depth) &&
                    depth >= 0 && std::isfinite(jitter) && jitter >= 0,
                "heightfield stepping_stones: need 0 < stone ", stone, " <= pitch ", pitch, ", depth ", depth,
                " >= 0 and jitter ", jitter, " >= 0");
  // one jitter per stone, drawn in stone order so that the terrain depends only on the seed
  const Index sx = static_cast<Index>(std::ceil(size_x / pitch)) + 2, sy = static_cast<Index>(std::ceil(size_y / pitch)) + 2;
  SplitMix rng{seed};
  MatX offset(sx, sy);
  for (Index a = 0; a < sx; ++a) {
    for (Index b = 0; b < sy; ++b) offset(a, b) = jitter * (2 * rng.next() - 1);
  }
  MatX h(nx, ny);
  for (Index i = 0; i < nx; ++i) {
    for (Index j = 0; j < ny; ++j) {
      // stones are laid out from the grid corner (i, j) = (0, 0)
      const Scalar x = cell * static_cast<Scalar>(i), y = cell * static_cast<Scalar>(j);
      const Index a = static_cast<Index>(std::floor(x / pitch)), b = static_cast<Index>(std::floor(y / pitch));
      const Scalar ux = x - a * pitch, uy = y - b * pitch;
      const bool on_stone = ux <= stone + 1e-12 && uy <= stone + 1e-12;
      h(i, j) = on_stone ? offset(std::min(a, sx - 1), std::min(b, sy - 1)) : -depth;
    }
  }
  return Heightfield(std::move(h), cell, cell);
}

Heightfield Heightfield::from_pgm(const std::string& path, Scalar size_x, Scalar size_y, Scalar max_height) {
  return from_pgm_data(read_regular_file<ModelError>(path, kMaxMeshBytes, "heightfield image"), path, size_x, size_y,
                       max_height);
}

Heightfield Heightfield::from_pgm_data(const std::string& bytes, const std::string& path, Scalar size_x,
                                       Scalar size_y, Scalar max_height) {
  IMPULSE_CHECK_AS(ModelError, std::isfinite(size_x) && std::isfinite(size_y) && size_x > 0 && size_y > 0 &&
                                   std::isfinite(max_height),
                   "heightfield image '", path, "': size (", size_x, ", ", size_y, ") must be > 0 and max height ",
                   max_height, " finite");
  std::size_t pos = 0;
  // header tokens, skipping whitespace and # comments
  auto token = [&]() {
    std::string t;
    while (pos < bytes.size()) {
      const char ch = bytes[pos];
      if (ch == '#') {
        while (pos < bytes.size() && bytes[pos] != '\n') ++pos;
      } else if (std::isspace(static_cast<unsigned char>(ch))) {
        if (!t.empty()) break;
        ++pos;
      } else {
        t += ch;
        ++pos;
      }
    }
    return t;
  };
  auto number = [&](const char* what) {
    const std::string t = token();
    char* end = nullptr;
    const long v = std::strtol(t.c_str(), &end, 10);
    IMPULSE_CHECK_AS(ModelError, !t.empty() && *end == '\0' && v > 0 && v <= 100000, "heightfield image '", path,
                     "': bad ", what, " '", t, "' (1 .. 100000)");
    return v;
  };
  const std::string magic = token();
  IMPULSE_CHECK_AS(ModelError, magic == "P2" || magic == "P5", "heightfield image '", path,
                   "': not a grey-scale PGM (P2 or P5), magic '", magic, "'");
  const long w = number("width"), hgt = number("height"), maxval = number("maximum value");
  IMPULSE_CHECK_AS(ModelError, w >= 2 && hgt >= 2 && maxval < 65536, "heightfield image '", path, "': ", w, " x ", hgt,
                   " pixels, maximum ", maxval, " (need >= 2 x 2, maximum < 65536)");
  // the declared size is checked against the limit and against the data the file holds before
  // the grid is allocated
  const std::size_t pixels = static_cast<std::size_t>(w) * static_cast<std::size_t>(hgt);
  IMPULSE_CHECK_AS(ModelError, pixels <= static_cast<std::size_t>(kMaxHeightfieldPoints), "heightfield image '", path,
                   "': width x height ", w, " x ", hgt, " is more than the limit of ", kMaxHeightfieldPoints,
                   " pixels");
  const std::size_t bpp = maxval < 256 ? 1 : 2;
  if (magic == "P5") {
    ++pos;  // the single whitespace after the header
    const std::size_t have = pos <= bytes.size() ? bytes.size() - pos : 0;
    IMPULSE_CHECK_AS(ModelError, have >= bpp * pixels, "heightfield image '", path, "': width x height ", w, " x ",
                     hgt, " needs ", bpp * pixels, " bytes of pixel data, the file holds ", have);
  } else {
    // a P2 pixel takes at least a digit and a separator
    const std::size_t have = bytes.size() - std::min(pos, bytes.size());
    IMPULSE_CHECK_AS(ModelError, have + 1 >= 2 * pixels, "heightfield image '", path, "': width x height ", w, " x ",
                     hgt, " needs at least ", 2 * pixels - 1, " bytes of pixel text, the file holds ", have);
  }
  MatX h(w, hgt);
  if (magic == "P5") {
    for (long r = 0; r < hgt; ++r) {
      for (long c = 0; c < w; ++c) {
        const std::size_t k = pos + bpp * static_cast<std::size_t>(r * w + c);
        const unsigned v = bpp == 1 ? static_cast<unsigned char>(bytes[k])
                                    : (static_cast<unsigned char>(bytes[k]) << 8) | static_cast<unsigned char>(bytes[k + 1]);
        // a value above the maximum would put the terrain above max_height
        IMPULSE_CHECK_AS(ModelError, v <= static_cast<unsigned>(maxval), "heightfield image '", path, "': pixel ", v,
                         " at row ", r, ", column ", c, " is above the maximum value ", maxval);
        h(c, hgt - 1 - r) = max_height * v / static_cast<Scalar>(maxval);
      }
    }
  } else {
    for (long r = 0; r < hgt; ++r) {
      for (long c = 0; c < w; ++c) {
        const std::string t = token();
        char* end = nullptr;
        const long v = std::strtol(t.c_str(), &end, 10);
        IMPULSE_CHECK_AS(ModelError, !t.empty() && *end == '\0' && v >= 0 && v <= maxval, "heightfield image '", path,
                         "': bad pixel '", t, "' at row ", r, ", column ", c);
        h(c, hgt - 1 - r) = max_height * v / static_cast<Scalar>(maxval);
      }
    }
  }
  return Heightfield(std::move(h), size_x / static_cast<Scalar>(w - 1), size_y / static_cast<Scalar>(hgt - 1));
}

bool Heightfield::interpolate(Scalar x, Scalar y, Scalar& z, Scalar& gx, Scalar& gy) const {
  if (heights_.size() == 0) return false;
  const Scalar fx = (x - x0_) / dx_, fy = (y - y0_) / dy_;
  const Index nx1 = nx() - 1, ny1 = ny() - 1;
  if (!(fx >= 0 && fy >= 0 && fx <= nx1 && fy <= ny1)) return false;
  const Index i = std::min<Index>(static_cast<Index>(fx), nx1 - 1), j = std::min<Index>(static_cast<Index>(fy), ny1 - 1);
  const Scalar u = fx - i, v = fy - j;
  const Scalar za = heights_(i, j), zb = heights_(i + 1, j), zc = heights_(i + 1, j + 1), zd = heights_(i, j + 1);
  if (u >= v) {
    gx = zb - za;
    gy = zc - zb;
  } else {
    gx = zc - zd;
    gy = zd - za;
  }
  z = za + u * gx + v * gy;
  return true;
}

bool Heightfield::height_normal(Scalar x, Scalar y, Scalar& z, Vec3& normal) const {
  Scalar gx, gy;
  if (!interpolate(x, y, z, gx, gy)) return false;
  normal = Vec3(-gx / dx_, -gy / dy_, 1).normalized();
  return true;
}

bool Heightfield::height(Scalar x, Scalar y, Scalar& z) const {
  Scalar gx, gy;
  return interpolate(x, y, z, gx, gy);
}

bool Heightfield::raycast(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t_hit, Vec3& n_hit) const {
  return raycast_impl(from, dir, max_t, t_hit, &n_hit);
}

bool Heightfield::raycast(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t_hit) const {
  return raycast_impl(from, dir, max_t, t_hit, nullptr);
}

void Heightfield::raycast_down(const Vec3* from, std::size_t count, Scalar max_t, Scalar* t) const {
  for (std::size_t k = 0; k < count; ++k) {
    Scalar z, gx, gy;
    if (!interpolate(from[k].x(), from[k].y(), z, gx, gy)) continue;
    const Scalar tk = from[k].z() - z;  // bit for bit the t of raycast() with dir (0, 0, -1)
    if (tk >= 0 && tk <= max_t && tk <= t[k]) t[k] = tk;
  }
}

bool Heightfield::raycast_impl(const Vec3& from, const Vec3& dir, Scalar max_t, Scalar& t_hit, Vec3* n_hit) const {
  if (heights_.size() == 0 || !(max_t >= 0)) return false;
  // vertical rays (the common height scan): one height lookup
  if (dir.x() == 0 && dir.y() == 0) {
    if (dir.z() == 0) return false;
    Scalar z, gx, gy;
    if (!interpolate(from.x(), from.y(), z, gx, gy)) return false;
    const Scalar t = (z - from.z()) / dir.z();
    if (!(t >= 0 && t <= max_t)) return false;
    t_hit = t;
    if (n_hit) *n_hit = Vec3(-gx / dx_, -gy / dy_, 1).normalized();
    return true;
  }
  // clip the ray to the grid's bounding box
  const Vec3 lo(x0_, y0_, min_h_), hi(x0_ + dx_ * (nx() - 1), y0_ + dy_ * (ny() - 1), max_h_);
  Scalar t0 = 0, t1 = max_t;
  for (int k = 0; k < 3; ++k) {
    if (dir[k] == 0) {
      if (from[k] < lo[k] || from[k] > hi[k]) return false;
      continue;
    }
    Scalar ta = (lo[k] - from[k]) / dir[k], tb = (hi[k] - from[k]) / dir[k];
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return false;
  }
  // walk the cells the xy-projection of the ray crosses, in order
  const Vec3 start = from + t0 * dir;
  Index i = std::clamp<Index>(static_cast<Index>(std::floor((start.x() - x0_) / dx_)), 0, nx() - 2);
  Index j = std::clamp<Index>(static_cast<Index>(std::floor((start.y() - y0_) / dy_)), 0, ny() - 2);
  const int si = dir.x() > 0 ? 1 : (dir.x() < 0 ? -1 : 0), sj = dir.y() > 0 ? 1 : (dir.y() < 0 ? -1 : 0);
  const Scalar inf = std::numeric_limits<Scalar>::infinity();
  auto next_t = [&](Index cell, int step, Scalar o, Scalar d, Scalar f, Scalar dd) {
    if (step == 0) return inf;
    const Scalar boundary = o + d * static_cast<Scalar>(cell + (step > 0 ? 1 : 0));
    return (boundary - f) / dd;
  };
  Scalar tx = next_t(i, si, x0_, dx_, from.x(), dir.x()), ty = next_t(j, sj, y0_, dy_, from.y(), dir.y());
  const Scalar dtx = si ? dx_ / std::abs(dir.x()) : inf, dty = sj ? dy_ / std::abs(dir.y()) : inf;
  for (;;) {
    // the two triangles of cell (i, j)
    const Vec3 a = vertex(i, j), b = vertex(i + 1, j), c = vertex(i + 1, j + 1), d = vertex(i, j + 1);
    Scalar best = inf;
    Vec3 best_n = Vec3::UnitZ();
    const Vec3* tris[2][3] = {{&a, &b, &c}, {&a, &c, &d}};
    for (auto& tri : tris) {
      const Vec3 e1 = *tri[1] - *tri[0], e2 = *tri[2] - *tri[0];
      const Vec3 pv = dir.cross(e2);
      const Scalar det = e1.dot(pv);
      if (std::abs(det) < 1e-300) continue;
      const Scalar inv = 1 / det;
      const Vec3 tv = from - *tri[0];
      const Scalar u = tv.dot(pv) * inv;
      if (u < -1e-12 || u > 1 + 1e-12) continue;
      const Vec3 qv = tv.cross(e1);
      const Scalar v = dir.dot(qv) * inv;
      if (v < -1e-12 || u + v > 1 + 1e-12) continue;
      const Scalar t = e2.dot(qv) * inv;
      if (t >= t0 - 1e-12 && t <= t1 && t < best) {
        best = t;
        best_n = e1.cross(e2);
      }
    }
    if (best < inf) {
      t_hit = std::max<Scalar>(best, 0);
      if (n_hit) *n_hit = (best_n.z() >= 0 ? best_n : Vec3(-best_n)).normalized();
      return true;
    }
    // next cell
    if (tx < ty) {
      if (tx > t1) return false;
      i += si;
      tx += dtx;
    } else {
      if (ty > t1) return false;
      j += sj;
      ty += dty;
    }
    if (i < 0 || j < 0 || i > nx() - 2 || j > ny() - 2) return false;
  }
}

namespace {

// Grid index range [lo, hi] covering [a, b] along one axis (empty when lo > hi).
void cell_range(Scalar a, Scalar b, Scalar origin, Scalar step, Index n, Index& lo, Index& hi) {
  lo = std::max<Index>(0, static_cast<Index>(std::floor((a - origin) / step)));
  hi = std::min<Index>(n - 2, static_cast<Index>(std::floor((b - origin) / step)));
}

// Contacts of one sphere whose normals lie within kMergeAngle of a deeper one are dropped: in a
// shallow crease between two triangles the sphere touches both faces at points r * angle apart
// (4 mm for ANYmal's 3 cm foot in an 8 degree crease of 5 cm rough terrain). For a sphere that
// ends a limb (a foot) the two contacts' rows of G are then nearly dependent (G had eigenvalues
// 4e-7 and 4e-6 against 11 there), and when their push-out targets differ no impulse meets both:
// every solver stalled at a 1e-4 residual (bisection and PGS for 1000-10000 sweeps, LM too) while
// the impulses drifted along the null space. The deepest contact is the sphere's closest point on
// the terrain, exact for the face it lies on; the dropped face is within 15 degrees of it, below
// the friction angle of any usable material (mu >= 0.27), so the kept contact's cone still holds
// the sphere in the crease, and a sphere that slides into the other face meets it at the next
// detection. Sharper creases (a stair's step and riser, a V-groove) keep one contact per face.
constexpr Scalar kMergeAngle = 15 * M_PI / 180;

// Moves the contacts of `from` into `out`, deepest first, dropping those within kMergeAngle of a
// kept one (see above).
void add_merged(Candidates& from, Candidates& out) {
  const Scalar cos_merge = std::cos(kMergeAngle);
  for (;;) {
    int best = -1;
    for (int k = 0; k < from.n; ++k) {
      if (best < 0 || from.pts[k].depth > from.pts[best].depth) best = k;
    }
    if (best < 0) return;
    const ManifoldPoint kept = from.pts[best];
    out.add(kept.position, kept.normal, kept.depth);
    int m = 0;  // keep the others that are not within the merge angle of `kept`
    for (int k = 0; k < from.n; ++k) {
      if (k != best && from.pts[k].normal.dot(kept.normal) < cos_merge) from.pts[m++] = from.pts[k];
    }
    from.n = m;
  }
}

// Sphere (centre c, radius r) against the triangles under it. Face contacts (closest point inside
// a triangle) are kept; edge and vertex contacts only when there is no face contact (a ridge or a
// peak), so a flat patch gives one contact and a valley one per face (merged as above).
void sphere_terrain(const Heightfield& hf, const Vec3& c, Scalar r, Scalar margin, Candidates& out) {
  Scalar zs;
  Vec3 ns;
  if (!hf.height_normal(c.x(), c.y(), zs, ns)) return;
  if (c.z() - r - margin > hf.max_height()) return;
  if (c.z() <= zs) {
    // the centre is under the surface: push out along the normal of the triangle under it
    const Scalar depth = r + (zs - c.z()) * ns.z();
    out.add(c - r * ns + 0.5 * depth * ns, ns, depth);
    return;
  }
  const Scalar reach = r + margin;
  Index i0, i1, j0, j1;
  cell_range(c.x() - reach, c.x() + reach, hf.x0(), hf.dx(), hf.nx(), i0, i1);
  cell_range(c.y() - reach, c.y() + reach, hf.y0(), hf.dy(), hf.ny(), j0, j1);
  Candidates face, edge;  // face contacts; edge and vertex contacts, deduplicated by position
  for (Index i = i0; i <= i1; ++i) {
    for (Index j = j0; j <= j1; ++j) {
      const Vec3 a = hf.vertex(i, j), b = hf.vertex(i + 1, j), cc = hf.vertex(i + 1, j + 1), d = hf.vertex(i, j + 1);
      const Vec3* tris[2][3] = {{&a, &b, &cc}, {&a, &cc, &d}};
      for (auto& tri : tris) {
        int region;
        const Vec3 q = closest_on_triangle(c, *tri[0], *tri[1], *tri[2], region);
        const Vec3 diff = c - q;
        const Scalar dist = diff.norm();
        const Scalar depth = r - dist;
        if (depth < -margin || dist < 1e-12) continue;
        const Vec3 n = diff / dist;
        const Vec3 pos = 0.5 * (c - r * n + q);
        if (region == 0) {
          face.add(pos, n, depth);
        } else {
          bool seen = false;
          for (int k = 0; k < edge.n && !seen; ++k) seen = (edge.pts[k].position - pos).squaredNorm() < 1e-18;
          if (!seen) edge.add(pos, n, depth);
        }
      }
    }
  }
  add_merged(face.n > 0 ? face : edge, out);
}

// A point of the shape against the triangle under it (signed distance to its plane).
void point_terrain(const Heightfield& hf, const Vec3& p, Scalar margin, Candidates& out) {
  Scalar z;
  Vec3 n;
  if (p.z() - margin > hf.max_height() || !hf.height_normal(p.x(), p.y(), z, n)) return;
  const Scalar depth = (z - p.z()) * n.z();  // distance from p to the triangle's plane, > 0 below
  if (depth >= -margin) out.add(p + 0.5 * depth * n, n, depth);
}

// Terrain vertices inside the shape (or within the margin): the features the shape's sample
// points miss, such as a stepping stone smaller than a foot or a stair edge under the middle of a
// box. The terrain supports from below, so a vertex pushes the shape out through a face that
// looks down (outward normal with z < -0.2): the one of least penetration among those. A vertex
// just inside a side face would otherwise push the shape sideways on flat ground.
void vertices_in_shape(const Heightfield& hf, const TerrainShape& s, const Vec3& half_extent, Scalar margin,
                       Candidates& out) {
  constexpr Scalar kDown = -0.2;
  const Vec3 lo = s.p - half_extent, hi = s.p + half_extent;
  if (lo.z() - margin > hf.max_height()) return;
  const Index i0 = std::max<Index>(0, static_cast<Index>(std::ceil((lo.x() - margin - hf.x0()) / hf.dx())));
  const Index i1 = std::min<Index>(hf.nx() - 1, static_cast<Index>(std::floor((hi.x() + margin - hf.x0()) / hf.dx())));
  const Index j0 = std::max<Index>(0, static_cast<Index>(std::ceil((lo.y() - margin - hf.y0()) / hf.dy())));
  const Index j1 = std::min<Index>(hf.ny() - 1, static_cast<Index>(std::floor((hi.y() + margin - hf.y0()) / hf.dy())));
  for (Index i = i0; i <= i1; ++i) {
    for (Index j = j0; j <= j1; ++j) {
      const Vec3 v = hf.vertex(i, j);
      if (v.z() < lo.z() - margin) continue;
      const Vec3 l = s.R.transpose() * (v - s.p);  // vertex in the shape frame
      Vec3 outward = Vec3::Zero();                 // world frame
      Scalar depth = std::numeric_limits<Scalar>::infinity();
      switch (s.type) {
        case ShapeType::Box: {
          const Vec3 pen = s.h - l.cwiseAbs();
          if (pen.minCoeff() < -margin) continue;
          for (int k = 0; k < 3; ++k) {
            // the face on the vertex's side along axis k, and the opposite one
            for (const Scalar sign : {1.0, -1.0}) {
              const Vec3 o = sign * s.R.col(k);
              if (o.z() >= kDown) continue;
              const Scalar d = s.h[k] - sign * l[k];
              if (d < depth) {
                depth = d;
                outward = o;
              }
            }
          }
          break;
        }
        case ShapeType::Cylinder: {
          const Scalar rho = std::hypot(l.x(), l.y());
          if (s.hl - std::abs(l.z()) < -margin || s.r - rho < -margin) continue;
          for (const Scalar sign : {1.0, -1.0}) {
            const Vec3 o = sign * s.R.col(2);
            if (o.z() < kDown && s.hl - sign * l.z() < depth) {
              depth = s.hl - sign * l.z();
              outward = o;
            }
          }
          if (rho > 1e-12) {
            const Vec3 o = s.R * Vec3(l.x() / rho, l.y() / rho, 0);
            if (o.z() < kDown && s.r - rho < depth) {
              depth = s.r - rho;
              outward = o;
            }
          }
          break;
        }
        case ShapeType::Capsule: {
          const Vec3 d = l - Vec3(0, 0, std::clamp(l.z(), -s.hl, s.hl));
          const Scalar dist = d.norm();
          if (s.r - dist < -margin || dist < 1e-12) continue;
          const Vec3 o = s.R * (d / dist);
          if (o.z() < kDown) {
            depth = s.r - dist;
            outward = o;
          }
          break;
        }
        default: return;
      }
      if (!(depth >= -margin) || !std::isfinite(depth)) continue;
      // the shape leaves the vertex by moving against its outward normal there
      out.add(v + 0.5 * depth * outward, -outward, depth);
    }
  }
}

}  // namespace

int heightfield_contacts(const Heightfield& hf, const TerrainShape& s, Scalar margin, ManifoldPoint* out) {
  Candidates c;
  switch (s.type) {
    case ShapeType::Sphere: sphere_terrain(hf, s.p, s.r, margin, c); break;
    case ShapeType::Capsule: {
      // spheres along the axis: the caps, and between them no farther apart than a cell
      const Vec3 axis = s.R.col(2);
      const Scalar spacing = std::min(hf.dx(), hf.dy());
      const int n = std::clamp(static_cast<int>(std::ceil(2 * s.hl / spacing)), 1, 8);
      for (int k = 0; k <= n; ++k) sphere_terrain(hf, s.p + (-s.hl + 2 * s.hl * k / n) * axis, s.r, margin, c);
      const Vec3 half = s.hl * axis.cwiseAbs() + Vec3::Constant(s.r);
      vertices_in_shape(hf, s, half, margin, c);
      break;
    }
    case ShapeType::Box: {
      for (int k = 0; k < 8; ++k) {
        const Vec3 corner((k & 1 ? 1 : -1) * s.h.x(), (k & 2 ? 1 : -1) * s.h.y(), (k & 4 ? 1 : -1) * s.h.z());
        point_terrain(hf, s.R * corner + s.p, margin, c);
      }
      vertices_in_shape(hf, s, s.R.cwiseAbs() * s.h, margin, c);
      break;
    }
    case ShapeType::Cylinder: {
      // 8 rim points on each end disc and the disc centres
      for (int e = -1; e <= 1; e += 2) {
        point_terrain(hf, s.p + e * s.hl * s.R.col(2), margin, c);
        for (int k = 0; k < 8; ++k) {
          const Scalar a = k * (M_PI / 4);
          point_terrain(hf, s.R * Vec3(s.r * std::cos(a), s.r * std::sin(a), e * s.hl) + s.p, margin, c);
        }
      }
      const Vec3 axis = s.R.col(2);
      Vec3 half;
      for (int k = 0; k < 3; ++k) half[k] = s.hl * std::abs(axis[k]) + s.r * std::sqrt(std::max(0.0, 1 - axis[k] * axis[k]));
      vertices_in_shape(hf, s, half, margin, c);
      break;
    }
    case ShapeType::Mesh:
      for (int k = 0; k < s.vertex_count; ++k) point_terrain(hf, s.R * s.vertices[k] + s.p, margin, c);
      break;
  }
  const int n = reduce_manifold(c.pts, c.n);
  for (int k = 0; k < n; ++k) out[k] = c.pts[k];
  return n;
}

}  // namespace impulse
