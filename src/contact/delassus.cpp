#include "impulse/contact/delassus.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "impulse/core/check.hpp"
#include "impulse/core/prefetch.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "../core/isa_dispatch.hpp"
#include "../dynamics/floating_root_columns.hpp"

namespace impulse {

Mat3 contact_frame_from_normal(const Vec3& n) {
  const Vec3 e = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t = e - n * n.dot(e);
  // t.normalized() as Eigen computes it (t / sqrt(|t|^2), t itself when |t| = 0), with a unit t
  // (a level ground's normal against e_x) returned as it is: the same bits without the square root
  // and the divisions, whose latency was 2.4 % of a standing robot's step (perf)
  const Scalar z = t.squaredNorm();
  const Vec3 tx = z == 1 || !(z > 0) ? t : Vec3(t / std::sqrt(z));
  Mat3 C;
  C.col(0) = tx;
  C.col(1) = n.cross(tx);
  C.col(2) = n;
  return C;
}

namespace {

// y <- L^-T y for y supported on one root path (dofs[0..len), root first; nr of the 3 values per
// dof used): RBDA Table 6.4 first half restricted to the path, whose ancestors of dofs[t] are
// exactly dofs[0..t). A free body (SCATTER) runs the scatter form, which skips zero entries of
// L: within a free joint the translation dofs never couple (their mass block is m 1), nor do they
// couple with the rotation when the body's origin is its centre of mass, so a sphere's or a box's
// factor is (nearly) the identity; this loop was 7 % of a 216-sphere pile's step. Robot paths run
// the gather form: y_s -= L(t, s) y_t for t = len-1 .. s+1, with y_s in registers, one store per
// entry instead of one per product (the scatter form stored y_s after every product: 6.5 % of an
// ANYmal step), and no test for zeros (rare on a robot's path; y_s - 0 y_t is y_s). The
// subtractions into y_s come in the same order as in the scatter form, so the bits are the same.
// L(dofs[t], dofs[s]) = row[t][-s], row[t] = the packed row of dofs[t] (Data::L_anc: L(k,
// dofs[t-1]), L(k, dofs[t-2]), ...) shifted by t - 1; `row` has room for the path (the
// assembler's buffer of nv_max pointers; unused by the free body).
// (LEN > 0: the path's length at compile time, the loops unrolled: 6 for a free body, which runs
// the scatter form (SCATTER), 9 for a 3-dof leg on a floating base.)
template <int NR, int LEN = -1, bool SCATTER = false>
void solve_LT_path(const Data& d, const Index* dofs, Index len_, Scalar* Y, const Scalar** row) {
  const Index len = LEN > 0 ? LEN : len_;
  const Scalar* La = d.L_anc.data();
  const Index* begin = d.anc_begin.data();
  if (SCATTER) {  // a free body: L is (nearly) the identity, the scatter form skips whole rows
#pragma GCC unroll 6
    for (Index t = len - 1; t > 0; --t) {
      const Scalar* Lk = La + begin[dofs[t]];  // Lk[j] = L(dofs[t], dofs[t - 1 - j])
      Scalar yk[NR];
      for (int r = 0; r < NR; ++r) yk[r] = Y[3 * t + r];
#pragma GCC unroll 6
      for (Index j = 0; j < t; ++j) {
        const Scalar l = Lk[j];
        if (l == 0) continue;
        Scalar* ys = Y + 3 * (t - 1 - j);
        for (int r = 0; r < NR; ++r) ys[r] -= l * yk[r];
      }
    }
    return;
  }
  // (once per path; row[0] is never read, and a path of one dof may have no L at all: L_anc empty)
  for (Index t = 1; t < len; ++t) row[t] = La + (begin[dofs[t]] + t - 1);
#pragma GCC unroll 8
  for (Index s = len - 2; s >= 0; --s) {
    Scalar ys[NR];
    for (int r = 0; r < NR; ++r) ys[r] = Y[3 * s + r];
    const Scalar* yt = Y + 3 * (len - 1);
#pragma GCC unroll 8
    for (const Scalar* const* rt = row + (len - 1); rt > row + s; --rt, yt -= 3) {
      const Scalar l = (*rt)[-s];
      for (int r = 0; r < NR; ++r) ys[r] -= l * yt[r];
    }
    for (int r = 0; r < NR; ++r) Y[3 * s + r] = ys[r];
  }
}

// solve_LT_path's scatter form (SCATTER, LEN = 6) for a free body, whose path is dofs 0..5 and
// whose factor is one chain (L(t, t-1-j) = L_anc[t (t-1) / 2 + j]), over the entries of L that
// are not zero only: bit a of `mask` set when L_anc[a] != 0 (free_body_mask). The same
// subtractions in the same order (t down, j up; the scatter form skips exactly the zero
// entries): the same bits. A sphere's or a box's factor has 0-3 such entries of 15 (its mass
// block is m 1, and it couples with the rotation only through an offset centre of mass), so
// most of the scatter form's loads and tests are skipped (the scatter form on every contact
// side: 3.6 % of the instructions of a settled 216-sphere pile's step, callgrind).
template <int NR>
void solve_LT_free_body(const Scalar* La, unsigned mask, Scalar* Y) {
#pragma GCC unroll 5
  for (int t = 5; t > 0; --t) {
    const int begin = t * (t - 1) / 2;
    unsigned row = (mask >> begin) & ((1u << t) - 1);
    if (row == 0) continue;
    Scalar yk[NR];
    for (int r = 0; r < NR; ++r) yk[r] = Y[3 * t + r];
    for (; row != 0; row &= row - 1) {
      const int j = __builtin_ctz(row);
      const Scalar l = La[begin + j];
      Scalar* ys = Y + 3 * (t - 1 - j);
      for (int r = 0; r < NR; ++r) ys[r] -= l * yk[r];
    }
  }
}

// G(rp.., rq..) += B and, when `mirror`, G(rq.., rp..) += B^T for the RA x RB block
// B = sum_{t < len} Dinv[dofs[t]] Yp[:, t] Yq[:, t]^T (G column major, leading dimension ld),
// for the blocks of a one-row constraint (1x1, 1x3, 3x1; the 3x3 block of two contact sides is
// add_path_product_33 below). (SCALED: Yp is already D^-1 Yp, the factored storage's DY, whose
// entries di * Yp are the products a[i] * di below: the same bits without the multiplications.)
template <int RA, int RB, bool SCALED = false>
void add_path_product(const Scalar* Yp, const Scalar* Yq, const Index* dofs, Index len, const Scalar* Dinv,
                      Scalar* G, Index ld, Index rp, Index rq, bool mirror) {
  Scalar acc[RA][RB] = {};
  for (Index t = 0; t < len; ++t) {
    const Scalar di = SCALED ? Scalar(1) : Dinv[dofs[t]];
    const Scalar* a = Yp + 3 * t;
    const Scalar* b = Yq + 3 * t;
    for (int i = 0; i < RA; ++i) {
      const Scalar ai = SCALED ? a[i] : a[i] * di;
      for (int j = 0; j < RB; ++j) acc[i][j] += ai * b[j];
    }
  }
  for (int j = 0; j < RB; ++j) {
    for (int i = 0; i < RA; ++i) G[(rp + i) + (rq + j) * ld] += acc[i][j];
  }
  if (!mirror) return;
  for (int i = 0; i < RA; ++i) {
    for (int j = 0; j < RB; ++j) G[(rq + j) + (rp + i) * ld] += acc[i][j];
  }
}

// The 3x3 block of two contact sides (every pair of a robot's feet): the same B, with the path
// entries taken two at a time in the two lanes of a 16-byte vector (GCC/Clang vector extensions,
// lowered to the target's SIMD: SSE2 here), even t in one lane and odd t in the other, added at
// the end: 9 vector multiply-adds per two entries instead of 18 scalar ones (acc[i][j] over a
// 3-wide j does not vectorize as written above; the scalar kernel took 3 instructions per
// product); rows 0 and 1 of each column of the block are summed, added and stored as one vector
// too. Sums in another order than the scalar kernel, so both storages (dense and factored) take
// this one for every 3x3 block: they must compute the same products in the same order
// (assemble_factored).
using V2 = Scalar __attribute__((vector_size(16)));
template <int LEN = -1, bool SCALED = false>
void add_path_product_33(const Scalar* Yp, const Scalar* Yq, const Index* dofs, Index len_, const Scalar* Dinv,
                         Scalar* G, Index ld, Index rp, Index rq, bool mirror) {
  const Index len = LEN > 0 ? LEN : len_;
  V2 acc[3][3] = {};
  for (Index t = 0; t + 1 < len; t += 2) {
    const Scalar* a = Yp + 3 * t;
    const Scalar* b = Yq + 3 * t;
    V2 ai[3] = {V2{a[0], a[3]}, V2{a[1], a[4]}, V2{a[2], a[5]}};
    const V2 bj[3] = {V2{b[0], b[3]}, V2{b[1], b[4]}, V2{b[2], b[5]}};
    if (!SCALED) {
      const V2 d = {Dinv[dofs[t]], Dinv[dofs[t + 1]]};
      for (int i = 0; i < 3; ++i) ai[i] *= d;
    }
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) acc[i][j] += ai[i] * bj[j];
    }
  }
  // column j of the block, rows 0 and 1 as one vector: the lane sums of acc[0][j] and acc[1][j]
  V2 c01[3];
  Scalar c2[3];
  for (int j = 0; j < 3; ++j) {
    c01[j] = V2{acc[0][j][0], acc[1][j][0]} + V2{acc[0][j][1], acc[1][j][1]};
    c2[j] = acc[2][j][0] + acc[2][j][1];
  }
  if (len % 2 == 1) {  // the last entry of an odd path
    const Index t = len - 1;
    const Scalar di = SCALED ? Scalar(1) : Dinv[dofs[t]];
    const Scalar* a = Yp + 3 * t;
    const Scalar* b = Yq + 3 * t;
    const V2 a01 = SCALED ? V2{a[0], a[1]} : V2{a[0], a[1]} * di;
    const Scalar a2 = SCALED ? a[2] : a[2] * di;
    for (int j = 0; j < 3; ++j) {
      c01[j] += a01 * b[j];
      c2[j] += a2 * b[j];
    }
  }
  for (int j = 0; j < 3; ++j) {
    Scalar* g = G + rp + (rq + j) * ld;
    V2 g01;
    __builtin_memcpy(&g01, g, sizeof g01);
    g01 += c01[j];
    __builtin_memcpy(g, &g01, sizeof g01);
    g[2] += c2[j];
  }
  if (!mirror) return;
  for (int i = 0; i < 2; ++i) {
    Scalar* g = G + rq + (rp + i) * ld;
    g[0] += c01[0][i], g[1] += c01[1][i], g[2] += c01[2][i];
  }
  Scalar* g = G + rq + (rp + 2) * ld;
  g[0] += c2[0], g[1] += c2[1], g[2] += c2[2];
}

// Entry (rp + 2, rq + 2) of add_path_product_33's block alone (and its mirror): two contact
// sides built as one row each (frictionless contacts, see the header), whose rows 0 and 1 are
// zero. The same lanes, products and sums as that entry there: the same bits.
template <int LEN = -1, bool SCALED = false>
void add_path_product_zz(const Scalar* Yp, const Scalar* Yq, const Index* dofs, Index len_, const Scalar* Dinv,
                         Scalar* G, Index ld, Index rp, Index rq, bool mirror) {
  const Index len = LEN > 0 ? LEN : len_;
  V2 acc = {};
  for (Index t = 0; t + 1 < len; t += 2) {
    const Scalar* a = Yp + 3 * t;
    const Scalar* b = Yq + 3 * t;
    V2 a2 = V2{a[2], a[5]};
    const V2 b2 = V2{b[2], b[5]};
    if (!SCALED) a2 *= V2{Dinv[dofs[t]], Dinv[dofs[t + 1]]};
    acc += a2 * b2;
  }
  Scalar c = acc[0] + acc[1];
  if (len % 2 == 1) {
    const Index t = len - 1;
    const Scalar a2 = SCALED ? Yp[3 * t + 2] : Yp[3 * t + 2] * Dinv[dofs[t]];
    c += a2 * Yq[3 * t + 2];
  }
  G[(rp + 2) + (rq + 2) * ld] += c;
  if (mirror) G[(rq + 2) + (rp + 2) * ld] += c;
}

using PathProduct = void (*)(const Scalar*, const Scalar*, const Index*, Index, const Scalar*, Scalar*, Index, Index,
                             Index, bool);
// indexed by 2 (rows of p == 3) + (rows of q == 3)
const PathProduct kPathProduct[4] = {add_path_product<1, 1>, add_path_product<1, 3>, add_path_product<3, 1>,
                                     add_path_product_33<>};

const PathProduct kPathProductScaled[4] = {add_path_product<1, 1, true>, add_path_product<1, 3, true>,
                                           add_path_product<3, 1, true>, add_path_product_33<-1, true>};

// The path product of two pieces: unrolled for two contact sides on a free body's 6 dofs (every
// contact of a pile of objects) and on a floating base's leg of 3 (9 dofs). path_product_scaled:
// from D^-1 Yp (DYp) instead of Yp and D^-1.
inline void path_product(Index nrows_p, Index nrows_q, const Scalar* Yp, const Scalar* Yq, const Index* dofs, Index len,
                         const Scalar* Dinv, Scalar* G, Index ld, Index rp, Index rq, bool mirror) {
  if (nrows_p == 3 && nrows_q == 3 && len == 6) return add_path_product_33<6>(Yp, Yq, dofs, len, Dinv, G, ld, rp, rq, mirror);
  if (nrows_p == 3 && nrows_q == 3 && len == 9) return add_path_product_33<9>(Yp, Yq, dofs, len, Dinv, G, ld, rp, rq, mirror);
  kPathProduct[2 * (nrows_p == 3) + (nrows_q == 3)](Yp, Yq, dofs, len, Dinv, G, ld, rp, rq, mirror);
}
inline void path_product_scaled(Index nrows_p, Index nrows_q, const Scalar* DYp, const Scalar* Yq, Index len, Scalar* G,
                                Index ld, Index rp, Index rq, bool mirror) {
  if (nrows_p == 3 && nrows_q == 3 && len == 6)
    return add_path_product_33<6, true>(DYp, Yq, nullptr, len, nullptr, G, ld, rp, rq, mirror);
  kPathProductScaled[2 * (nrows_p == 3) + (nrows_q == 3)](DYp, Yq, nullptr, len, nullptr, G, ld, rp, rq, mirror);
}

// c += Y^T a and v += Y^T b over a contact side's path (a = u_free, b = u at the path's dofs).
// (ROW2: the normal row alone, a one-row contact's)
template <int LEN = -1, bool ROW2 = false>
void accumulate_velocities(const Scalar* Y, const Index* dofs, Index len_, const Scalar* uf, const Scalar* u, Vec3& c,
                           Vec3& v) {
  const Index len = LEN > 0 ? LEN : len_;
  for (Index t = 0; t < len; ++t) {
    const Scalar a = uf[dofs[t]], b = u[dofs[t]];
    for (int r = ROW2 ? 2 : 0; r < 3; ++r) {
      c[r] += Y[3 * t + r] * a;
      v[r] += Y[3 * t + r] * b;
    }
  }
}

// DY = D^-1 Y of a free body's contact side (6 path entries; ROW2: a one-row side, its rows 0 and
// 1 zero), the products assemble_factored makes for the other pieces (the same bits), made while
// the body's Data is in cache: there, 216 bodies' D^-1 were loads that missed (perf).
template <bool ROW2>
void scale_piece(const Data& d, const Index* dofs, const Scalar* Y, Scalar* DY) {
  const Scalar* Dinv = d.Dinv.data();
  for (int t = 0; t < 6; ++t) {
    const Scalar di = Dinv[dofs[t]];
    if (ROW2) {
      DY[3 * t] = DY[3 * t + 1] = 0;
      DY[3 * t + 2] = di * Y[3 * t + 2];
    } else {
      for (int r = 0; r < 3; ++r) DY[3 * t + r] = di * Y[3 * t + r];
    }
  }
}

}  // namespace

namespace {
// Geometric growth from a small first size (a robot's few contacts fit the first allocation);
// never shrinks; values are not kept.
constexpr Index kFirstSize = 32;
template <class V>
void grow(V& v, Index n) {
  if (static_cast<Index>(v.size()) >= n) return;
  v.resize(std::max<Index>({n, 2 * static_cast<Index>(v.size()), kFirstSize}));
}
template <class T>
void grow_vec(std::vector<T>& v, Index n, const T& value = T()) {
  if (static_cast<Index>(v.size()) >= n) return;
  v.resize(static_cast<std::size_t>(std::max<Index>({n, 2 * static_cast<Index>(v.size()), kFirstSize})), value);
}
}  // namespace

void DelassusAssembler::reserve(const std::vector<const Model*>& models) {
  Index nv_max = 1;
  limited_.assign(models.size(), {});
  frictional_.assign(models.size(), {});
  mimics_.assign(models.size(), {});
  for (std::size_t s = 0; s < models.size(); ++s) {
    const Model* m = models[s];
    nv_max = std::max(nv_max, m->nv);
    auto path_length = [&](Index k) {  // dofs on the path root..k
      Index len = 0;
      for (Index a = k; a >= 0; a = m->dof_parent[a]) ++len;
      return len;
    };
    for (Index i = 0; i < m->nb; ++i) {
      if (m->nq_joint[i] != 1 || m->nv_joint[i] != 1) continue;
      LimitedDof ld;
      ld.iq = m->idx_q[i];
      ld.k = m->idx_v[i];
      ld.len = path_length(ld.k);
      // every one-dof joint may carry friction: a Model equal to this one but for its joints'
      // friction (Model::equal_except_parameters) shares this assembler, so assemble() reads the
      // stepped Model's value and makes a row where it is positive
      frictional_[s].push_back(ld);
      ld.bound[0] = m->lower_position[ld.iq];
      ld.bound[1] = m->upper_position[ld.iq];
      if (!std::isfinite(ld.bound[0]) && !std::isfinite(ld.bound[1])) continue;
      for (const MimicJoint& mj : m->mimic) {  // range of m q_master + o within the master's limits
        if (mj.joint != i) continue;
        const Index iq_m = m->idx_q[mj.master];
        const Scalar a = mj.multiplier * m->lower_position[iq_m] + mj.offset;
        const Scalar b = mj.multiplier * m->upper_position[iq_m] + mj.offset;
        const Scalar lo = std::min(a, b), hi = std::max(a, b);  // (NaN when m = 0 and a limit is inf)
        ld.implied[0] = std::isfinite(ld.bound[0]) && lo >= ld.bound[0];
        ld.implied[1] = std::isfinite(ld.bound[1]) && hi <= ld.bound[1];
      }
      limited_[s].push_back(ld);
    }
    for (const MimicJoint& mj : m->mimic) {  // (ModelBuilder checked: two distinct 1-dof joints)
      MimicDof md;
      md.iq = m->idx_q[mj.joint];
      md.k = m->idx_v[mj.joint];
      md.len = path_length(md.k);
      md.iq_m = m->idx_q[mj.master];
      md.k_m = m->idx_v[mj.master];
      md.len_m = path_length(md.k_m);
      md.multiplier = mj.multiplier;
      md.offset = mj.offset;
      mimics_[s].push_back(md);
    }
  }
  if (nv_max != nv_max_) {  // piece storage is laid out by nv_max
    dofs_.clear();
    Y_.resize(0);
    DY_.resize(0);
  }
  nv_max_ = nv_max;
  r_.setZero(nv_max);
  path_rows_.assign(static_cast<std::size_t>(nv_max), nullptr);
  // small first capacities (push_back doubles them later): a robot's or a small scene's step
  // allocates nothing after the first
  lmask_.assign(models.size(), 0);
  lmask_stamp_.assign(models.size(), 0);
  stamp_ = 0;
  sys_pieces_.resize(models.size());
  for (auto& list : sys_pieces_) {
    list.clear();
    list.reserve(16);
  }
  parent_.resize(models.size());
  sys_island_.resize(models.size());
  sys_z_.resize(models.size());
  system_island_.assign(models.size(), -1);
  pieces_.clear();
  rows_.clear();
  islands_.clear();
  pieces_.reserve(32);
  rows_.reserve(32);
  islands_.reserve(8);
  cursor_.reserve(8);
  nc_ = nl_ = nf_ = nm_ = 0;
}

void RowArrays::grow(Index n) {
  for (VecX* v : {&c, &v_before, &depth, &restitution, &box, &target, &inelastic_target, &bounce, &position_target,
                  &position_weight, &impact_time})
    impulse::grow(*v, n);
  grow_vec(midpoint, n, static_cast<unsigned char>(0));
  grow_vec(speculative, n, static_cast<unsigned char>(0));
  grow_vec(at_start, n, static_cast<unsigned char>(0));
}

std::size_t RowArrays::memory_bytes() const {
  std::size_t b = 0;
  for (const VecX* v : {&c, &v_before, &depth, &restitution, &box, &target, &inelastic_target, &bounce,
                        &position_target, &position_weight, &impact_time})
    b += static_cast<std::size_t>(v->size()) * sizeof(Scalar);
  return b + midpoint.capacity() + speculative.capacity() + at_start.capacity();
}

void RowArrays::prefetch(Index n) const {
  for (const VecX* v : {&c, &v_before, &depth, &restitution, &box, &target, &inelastic_target, &bounce,
                        &position_target, &position_weight, &impact_time})
    prefetch_head(*v, n);
}

void DelassusAssembler::grow_rows(Index n) {
  arrays_.grow(n);
  for (VecX* v : {&lc_, &ltarget_, &lbounce_, &lposition_, &lbox_}) grow(*v, n);
  grow_vec(lrow_global_, n);
}

DelassusAssembler::Piece& DelassusAssembler::add_piece(Index system, Index row, Index nrows) {
  Piece p;
  p.system = system;
  p.row = row;
  p.nrows = nrows;
  p.offset = static_cast<Index>(pieces_.size()) * nv_max_;
  grow_vec(dofs_, std::max<Index>(p.offset + nv_max_, nv_max_ * kFirstSize), Index(0));
  if (Y_.size() < 3 * (p.offset + nv_max_)) {  // keeps the pieces already built
    Y_.conservativeResize(std::max<Index>({3 * (p.offset + nv_max_), 2 * static_cast<Index>(Y_.size()), 3 * nv_max_ * kFirstSize}));
    DY_.conservativeResize(Y_.size());
  }
  if (self_.size() < 9 * (static_cast<Index>(pieces_.size()) + 1))
    self_.conservativeResize(std::max<Index>({9 * (static_cast<Index>(pieces_.size()) + 1), 2 * static_cast<Index>(self_.size()), 9 * kFirstSize}));
  sys_pieces_[static_cast<std::size_t>(system)].push_back(static_cast<Index>(pieces_.size()));
  pieces_.push_back(p);
  return pieces_.back();
}

// Room in pr_ for the deferred pieces up to the last one added (kept: the earlier pieces' records;
// zero where no contact side writes, as DelassusLanes gathers every piece's record).
void DelassusAssembler::grow_pr() {
  const Index npr = 12 * static_cast<Index>(pieces_.size());
  if (pr_.size() >= npr) return;
  const Index old = pr_.size();
  pr_.conservativeResize(std::max<Index>({npr, 2 * old, 12 * kFirstSize}));
  pr_.tail(pr_.size() - old).setZero();
}

unsigned DelassusAssembler::free_body_mask(Index s, const Data& d) {
  const std::size_t k = static_cast<std::size_t>(s);
  if (lmask_stamp_[k] == stamp_) return lmask_[k];
  const Scalar* La = d.L_anc.data();
  unsigned mask = 0;
  for (int a = 0; a < 15; ++a) mask |= static_cast<unsigned>(!(La[a] == 0)) << a;
  lmask_stamp_[k] = stamp_;
  return lmask_[k] = mask;
}

// One-row piece J = sign e_k of group g (a limit or joint-friction row, or one side of a mimic
// row): Y = L^-T (sign e_k) on the path root..k (len dofs). Side 0 starts the group.
void DelassusAssembler::add_dof_row(const Model& m, const Data& d, Index system, Index k, Index len, Scalar sign,
                                    Index row, Index g, int side) {
  if (side == 0) group_pieces_[static_cast<std::size_t>(2 * g + 1)] = -1;
  group_pieces_[static_cast<std::size_t>(2 * g + side)] = static_cast<Index>(pieces_.size());
  Piece& p = add_piece(system, row, 1);
  p.group = g;
  p.len = len;
  Index* dofs = dofs_.data() + p.offset;
  Scalar* Y = Y_.data() + 3 * p.offset;
  for (Index a = k, t = len - 1; a >= 0; a = m.dof_parent[a], --t) {
    dofs[t] = a;
    Y[3 * t] = 0;
  }
  Y[3 * (len - 1)] = sign;
  if (defer_paths_) {
    p.deferred = paths_pending_ = true;
    grow_pr();
    return;
  }
  solve_LT_path<1>(d, dofs, len, Y, path_rows_.data());
}

IMPULSE_KERNEL_BODY inline void DelassusAssembler::contact_side(Piece& p, const Model& m, const Data& d, Index body,
                                                                 const Scalar* uf, const Scalar* u, const Vec3& point,
                                                                 const Mat3& R, Vec3& c, Vec3& v) {
  Index* dofs = dofs_.data() + p.offset;
  Scalar* Y = Y_.data() + 3 * p.offset;
  // a scaled piece's product with itself, with the kernel and operands assemble_factored used:
  // the same bits, added to its group's block there without reading Y and D^-1 Y again
  Scalar* S = self_.data() + 9 * (&p - pieces_.data());
  const bool free_body = m.is_free_body();
  if (p.normal_only) {  // the normal row (Y's row 2; rows 0 and 1 zero), the same operations as below
    // (a free body's path is its six root columns: point_jacobian_branch_row's code, inlined)
    if (free_body) {
      detail::floating_root_columns<true>(d.J.data(), point, R, dofs, Y);
      p.len = 6;
    } else {
      p.len = point_jacobian_branch_row(m, d, body, point, R, dofs, Y);
    }
    if (p.len == 6) {
      accumulate_velocities<6, true>(Y, dofs, p.len, uf, u, c, v);
      if (free_body) {
        solve_LT_free_body<1>(d.L_anc.data(), free_body_mask(p.system, d), Y + 2);
      } else {
        solve_LT_path<1, 6, true>(d, dofs, p.len, Y + 2, nullptr);
      }
      Scalar* DY = DY_.data() + 3 * p.offset;
      scale_piece<true>(d, dofs, Y, DY);
      S[8] = 0;
      add_path_product_zz<6, true>(DY, Y, nullptr, 6, nullptr, S, 3, 0, 0, false);
      p.scaled = true;
    } else {
      accumulate_velocities<-1, true>(Y, dofs, p.len, uf, u, c, v);
      solve_LT_path<1>(d, dofs, p.len, Y + 2, path_rows_.data());
    }
    return;
  }
  if (free_body) {
    detail::floating_root_columns<false>(d.J.data(), point, R, dofs, Y);
    p.len = 6;
  } else {
    p.len = point_jacobian_branch(m, d, body, point, R, dofs, Y);
  }
  if (p.len == 6) {  // a free body (unrolled)
    accumulate_velocities<6>(Y, dofs, p.len, uf, u, c, v);
    if (free_body) {
      solve_LT_free_body<3>(d.L_anc.data(), free_body_mask(p.system, d), Y);
    } else {
      solve_LT_path<3, 6, true>(d, dofs, p.len, Y, nullptr);
    }
    Scalar* DY = DY_.data() + 3 * p.offset;
    scale_piece<false>(d, dofs, Y, DY);
    for (int k = 0; k < 9; ++k) S[k] = 0;
    add_path_product_33<6, true>(DY, Y, nullptr, 6, nullptr, S, 3, 0, 0, false);
    p.scaled = true;
  } else if (p.len == 9) {  // a 3-dof leg on a floating base (unrolled)
    accumulate_velocities<9>(Y, dofs, p.len, uf, u, c, v);
    solve_LT_path<3, 9>(d, dofs, p.len, Y, path_rows_.data());
  } else {
    accumulate_velocities(Y, dofs, p.len, uf, u, c, v);
    solve_LT_path<3>(d, dofs, p.len, Y, path_rows_.data());
  }
}

void DelassusAssembler::assemble_paths(const std::vector<SystemView>& systems) {
  if (!paths_pending_) return;
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  paths_pending_ = false;
  for (Index i = 0; i < nc_; ++i) {
    const Index* gp = group_pieces_.data() + 2 * i;
    const Index first = gp[0] >= 0 ? gp[0] : gp[1];
    if (first < 0 || !pieces_[static_cast<std::size_t>(first)].deferred) continue;
    Vec3 c = Vec3::Zero(), v = Vec3::Zero();
    for (int side = 0; side < 2; ++side) {
      if (gp[side] < 0) continue;
      Piece& p = pieces_[static_cast<std::size_t>(gp[side])];
      const Scalar* pr = pr_.data() + 12 * gp[side];
      const SystemView& sv = systems[static_cast<std::size_t>(p.system)];
      contact_side(p, *sv.model, *sv.data, p.body, sv.u_free->data(), sv.u->data(), Vec3(pr[0], pr[1], pr[2]),
                   Mat3(Eigen::Map<const Mat3>(pr + 3)), c, v);
    }
    arrays_.c.segment<3>(3 * i) = c;
    arrays_.v_before.segment<3>(3 * i) = v;
  }
  for (const Piece& p : pieces_) {
    if (p.nrows != 1 || !p.deferred) continue;
    solve_LT_path<1>(*systems[static_cast<std::size_t>(p.system)].data, dofs_.data() + p.offset, p.len,
                     Y_.data() + 3 * p.offset, path_rows_.data());
  }
  };
  detail::run_kernel(kernel_body);
}

Index DelassusAssembler::find(Index s) {
  while (parent_[static_cast<std::size_t>(s)] != s) {
    Index& p = parent_[static_cast<std::size_t>(s)];
    p = parent_[static_cast<std::size_t>(p)];  // path halving
    s = p;
  }
  return s;
}

void DelassusAssembler::assemble(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                                 const ContactSet& contacts, Scalar dt, const DelassusSettings& settings) {
  assemble_rows(systems, object_system, contacts, dt, settings);
  assemble_products(systems);
}

void DelassusAssembler::assemble_products(const std::vector<SystemView>& systems) {
  assemble_paths(systems);
  if (!products_pending_) return;
  products_pending_ = false;
  assemble_dense(systems);
  assemble_factored(systems);
}

void DelassusAssembler::assemble_rows(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                                      const ContactSet& contacts, Scalar dt, const DelassusSettings& st) {
  IMPULSE_ASSERT(systems.size() == sys_pieces_.size());
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  for (auto& list : sys_pieces_) list.clear();
  pieces_.clear();
  rows_.clear();
  if (++stamp_ == 0) {  // (wrapped around: no system's mask is of this step)
    std::fill(lmask_stamp_.begin(), lmask_stamp_.end(), 0u);
    stamp_ = 1;
  }
  nc_ = contacts.size();
  nl_ = nf_ = nm_ = 0;
  paths_pending_ = false;
  Index max_limits = 0;  // limit, friction and mimic rows at most
  for (const auto& list : limited_) max_limits += 2 * static_cast<Index>(list.size());
  for (const auto& list : frictional_) max_limits += static_cast<Index>(list.size());
  for (const auto& list : mimics_) max_limits += static_cast<Index>(list.size());
  grow_rows(3 * nc_ + max_limits);
  grow(mu_, nc_);
  grow_vec(frames_, nc_, Mat3(Mat3::Identity()));
  grow_vec(contact_island_, nc_, Index(-1));
  grow_vec(height_, nc_, Scalar(0));
  grow_vec(order_, nc_, Index(0));
  grow_vec(one_row_, nc_, static_cast<unsigned char>(0));
  grow_vec(group_pieces_, 2 * (nc_ + max_limits), Index(-1));

  // the contact frames first, in a loop of their own: each frame's square root and divisions are
  // independent of the others', so their latencies overlap here; inside the rows' loop below,
  // each contact waited for its own (a pile's step: 510 contacts, 4 % of its time, perf)
  for (Index i = 0; i < nc_; ++i) frames_[static_cast<std::size_t>(i)] = contact_frame_from_normal(contacts[i].normal);
  // contact rows: J_i = C_i^T (J_A(p) - J_B(p)), one piece per dynamic side; Y = L^-T J^T on the
  // side's path, c = J u_free and v- = J u accumulated on it
  for (Index i = 0; i < nc_; ++i) {
    const Contact& ct = contacts[i];
    const Mat3& C = frames_[static_cast<std::size_t>(i)];
    height_[static_cast<std::size_t>(i)] = ct.position.dot(gravity_up_);
    mu_[i] = ct.mu;
    arrays_.depth[3 * i + 2] = ct.depth;
    arrays_.restitution[3 * i + 2] = ct.restitution;
    rows_.push_back({ConstraintRow::Kind::Contact, i, -1, 1, 3 * i});
    Vec3 c = Vec3::Zero(), v = Vec3::Zero();
    // a frictionless contact as its normal row alone (see the header)
    const bool one = one_row_frictionless_ && !(ct.mu > 0);
    one_row_[static_cast<std::size_t>(i)] = one ? 1 : 0;
    group_pieces_[static_cast<std::size_t>(2 * i)] = group_pieces_[static_cast<std::size_t>(2 * i + 1)] = -1;
    const Index sides[2][2] = {{ct.object_a, ct.body_a}, {ct.object_b, ct.body_b}};
    // (deferred unless a side's path is a free body's or a floating base's 6 dofs, whose scatter
    // solve and D^-1 Y are made here: see set_defer_paths)
    bool defer = defer_paths_;
    for (int side = 0; side < 2 && defer; ++side) {
      const Index obj = sides[side][0], body = sides[side][1];
      if (obj < 0 || obj >= static_cast<Index>(object_system.size())) continue;
      const Index s = object_system[static_cast<std::size_t>(obj)];
      if (s < 0 || body < 0) continue;
      const Model& m = *systems[s].model;
      const Index last = branch_last_dof(m, body);
      if (last < 0) continue;
      const Data& d = *systems[s].data;
      const Index n = d.anc_begin[static_cast<std::size_t>(last) + 1] - d.anc_begin[static_cast<std::size_t>(last)] + 1;
      if (m.is_free_body() || n == 6) defer = false;
    }
    for (int side = 0; side < 2; ++side) {
      const Index obj = sides[side][0], body = sides[side][1];
      if (obj < 0 || obj >= static_cast<Index>(object_system.size())) continue;
      const Index s = object_system[static_cast<std::size_t>(obj)];
      if (s < 0 || body < 0) continue;
      const Model& m = *systems[s].model;
      const Data& d = *systems[s].data;
      if (!m.is_free_body() && branch_last_dof(m, body) < 0) continue;  // welded to the world: no dofs, zero rows
      group_pieces_[static_cast<std::size_t>(2 * i + side)] = static_cast<Index>(pieces_.size());
      Piece& p = add_piece(s, 3 * i, 3);
      p.group = i;
      p.normal_only = one;
      const Mat3 R = (side == 0 ? 1.0 : -1.0) * C.transpose();
      if (defer) {  // the layout only: the path's dofs (point_jacobian_branch's), point and R kept
        p.body = body;
        p.deferred = paths_pending_ = true;
        p.len = point_jacobian_branch_dofs(m, d, body, dofs_.data() + p.offset);
        grow_pr();
        Scalar* pr = pr_.data() + 12 * (static_cast<Index>(pieces_.size()) - 1);
        for (int k = 0; k < 3; ++k) pr[k] = ct.position[k];
        Eigen::Map<Mat3>(pr + 3) = R;
        continue;
      }
      contact_side(p, m, d, body, systems[s].u_free->data(), systems[s].u->data(), ct.position, R, c, v);
    }
    arrays_.c.segment<3>(3 * i) = c;
    arrays_.v_before.segment<3>(3 * i) = v;
  }

  // joint-limit rows: +e_k at a lower limit, -e_k at an upper one, when within the margin or
  // when the free motion would cross the limit in this step; Y = L^-T (+-e_k) on the path of k
  Index row = 3 * nc_;
  for (std::size_t s = 0; s < systems.size() && st.joint_limits; ++s) {
    if (limited_[s].empty()) continue;  // (a free body: none of its state is read)
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    const VecX& q = *systems[s].q;
    const VecX& uf = *systems[s].u_free;
    // (the settings and the data pointers read once: the rows' writes below may alias them for
    // the compiler, which re-read them for each of the 2 nv tests, most of which add no row)
    const Scalar* const qd = q.data();
    const Scalar* const ufd = uf.data();
    const Scalar margin = st.limit_margin;
    const bool mimic = st.mimic_joints;
    // One side of one limited dof (sign: +1 lower, -1 upper, a constant in each call below). The
    // distance test first: it rejects nearly every side, an infinite bound's too (its distance
    // is +inf for a finite state), so the bound's and the mimic's tests run only on a side that
    // is near (the same decision: every test only skips the side).
    auto limit_side = [&](const LimitedDof& ld, int side, Scalar sign) IMPULSE_KERNEL_BODY {
      const Index iq = ld.iq, k = ld.k;
      const Scalar bound = ld.bound[side];
      const Scalar dist = sign * (qd[iq] - bound);
      if (dist > margin && dist + dt * sign * ufd[k] > 0) return;
      if (!std::isfinite(bound) || (ld.implied[side] && mimic)) return;
      add_dof_row(m, d, static_cast<Index>(s), k, ld.len, sign, row, nc_ + nl_);
      arrays_.c[row] = sign * ufd[k];
      arrays_.v_before[row] = sign * (*systems[s].u)[k];
      rows_.push_back({ConstraintRow::Kind::Limit, k, static_cast<Index>(s), sign, row});
      arrays_.depth[row] = -dist;
      arrays_.restitution[row] = 0;
      ++row;
      ++nl_;
    };
    for (const LimitedDof& ld : limited_[s]) {
      limit_side(ld, 0, 1.0);
      limit_side(ld, 1, -1.0);
    }
  }

  // joint friction rows (box rows, after all limit rows): J = e_k, c = u_free_k, bound f_k dt,
  // target 0 (stick); the piece is built as a limit row's
  for (std::size_t s = 0; s < systems.size() && st.joint_friction; ++s) {
    const Data& d = *systems[s].data;
    const Model& m = *systems[s].model;
    for (const LimitedDof& fd : frictional_[s]) {
      const Index k = fd.k, g = nc_ + nl_ + nf_;
      const Scalar f = m.friction[k];
      if (!(f > 0)) continue;
      add_dof_row(m, d, static_cast<Index>(s), k, fd.len, 1, row, g);
      arrays_.c[row] = (*systems[s].u_free)[k];
      arrays_.v_before[row] = (*systems[s].u)[k];
      rows_.push_back({ConstraintRow::Kind::Friction, k, static_cast<Index>(s), 0, row});
      arrays_.depth[row] = 0;
      arrays_.restitution[row] = 0;
      arrays_.box[row] = f * dt;
      ++row;
      ++nf_;
    }
  }

  // mimic rows (equality rows, after the friction rows): J = e_j - m e_master as two pieces of
  // one group, c = J u_free, the coupling error e in depth_ (its target is set below), bound +inf
  for (std::size_t s = 0; s < systems.size() && st.mimic_joints; ++s) {
    const Data& d = *systems[s].data;
    const Model& m = *systems[s].model;
    const VecX& q = *systems[s].q;
    const VecX& u = *systems[s].u;
    const VecX& uf = *systems[s].u_free;
    for (const MimicDof& md : mimics_[s]) {
      const Index g = nc_ + nl_ + nf_;
      add_dof_row(m, d, static_cast<Index>(s), md.k, md.len, 1, row, g, 0);
      add_dof_row(m, d, static_cast<Index>(s), md.k_m, md.len_m, -md.multiplier, row, g, 1);
      arrays_.c[row] = uf[md.k] - md.multiplier * uf[md.k_m];
      arrays_.v_before[row] = u[md.k] - md.multiplier * u[md.k_m];
      rows_.push_back({ConstraintRow::Kind::Mimic, md.k, static_cast<Index>(s), 2, row});
      arrays_.depth[row] = q[md.iq] - md.multiplier * q[md.iq_m] - md.offset;
      arrays_.restitution[row] = 0;
      arrays_.box[row] = std::numeric_limits<Scalar>::infinity();
      ++row;
      ++nf_;
      ++nm_;
    }
  }
  // (box bounds only on the box rows)
  arrays_.box.head(3 * nc_ + nl_).setZero();
  link_systems(static_cast<Index>(systems.size()));
  build_islands(static_cast<Index>(systems.size()));
  products_pending_ = true;
  };
  return detail::run_kernel(kernel_body);
}

// Islands by union-find over the systems (see the header), then the local layout of each island:
// its contacts in ContactSet order, then its limit rows; c, mu and the row data gathered.
void DelassusAssembler::link_systems(Index nsys) {
  for (Index s = 0; s < nsys; ++s) {
    parent_[static_cast<std::size_t>(s)] = s;
    sys_island_[static_cast<std::size_t>(s)] = -1;
  }
  for (Index i = 0; i < nc_; ++i) {
    const Index pa = group_pieces_[static_cast<std::size_t>(2 * i)], pb = group_pieces_[static_cast<std::size_t>(2 * i + 1)];
    if (pa < 0 || pb < 0) continue;
    const Index ra = find(pieces_[static_cast<std::size_t>(pa)].system), rb = find(pieces_[static_cast<std::size_t>(pb)].system);
    if (ra != rb) parent_[static_cast<std::size_t>(std::max(ra, rb))] = std::min(ra, rb);
  }
}

Index DelassusAssembler::row_system(const ConstraintRow& cr) const {
  if (cr.kind != ConstraintRow::Kind::Contact) return cr.system;
  Index pi = group_pieces_[static_cast<std::size_t>(2 * cr.index)];
  if (pi < 0) pi = group_pieces_[static_cast<std::size_t>(2 * cr.index + 1)];
  return pi < 0 ? -1 : pieces_[static_cast<std::size_t>(pi)].system;
}

void DelassusAssembler::build_islands(Index nsys) {
  auto piece_system = [&](Index pi) { return pieces_[static_cast<std::size_t>(pi)].system; };
  // the pieces of group g (one per dynamic side) learn their local row and local group
  auto place_pieces = [&](Index g, Index lrow, Index lgroup) {
    for (int side = 0; side < 2; ++side) {
      const Index p = group_pieces_[static_cast<std::size_t>(2 * g + side)];
      if (p < 0) continue;
      pieces_[static_cast<std::size_t>(p)].lrow = lrow;
      pieces_[static_cast<std::size_t>(p)].lgroup = lgroup;
    }
  };
  islands_.clear();
  identity_layout_ = false;
  const Index ng = nc_ + nl_ + nf_;
  auto island_of_group = [&](Index g) -> Index {
    Index pi = group_pieces_[static_cast<std::size_t>(2 * g)];
    if (pi < 0) pi = group_pieces_[static_cast<std::size_t>(2 * g + 1)];
    if (pi < 0) return -1;
    Index& k = sys_island_[static_cast<std::size_t>(find(piece_system(pi)))];
    if (k < 0) {
      k = static_cast<Index>(islands_.size());
      islands_.push_back(Island());
    }
    return k;
  };
  for (Index g = 0; g < ng; ++g) {
    const Index k = island_of_group(g);
    if (g < nc_) contact_island_[static_cast<std::size_t>(g)] = k;
    if (k < 0) continue;
    if (g < nc_) {
      ++islands_[static_cast<std::size_t>(k)].nc;
    } else if (g < nc_ + nl_) {
      ++islands_[static_cast<std::size_t>(k)].nl;
    } else {
      ++islands_[static_cast<std::size_t>(k)].nf;
    }
  }
  for (Index s = 0; s < nsys; ++s) {
    Index& k = system_island_[static_cast<std::size_t>(s)];
    k = sys_pieces_[static_cast<std::size_t>(s)].empty() ? -1 : sys_island_[static_cast<std::size_t>(find(s))];
    if (k >= 0) ++islands_[static_cast<std::size_t>(k)].systems;
  }
  // offsets
  Index row = 0, contact = 0, group = 0, diag = 0, dense = 0;
  for (Island& isl : islands_) {
    const Index n = 3 * isl.nc + isl.nl + isl.nf, ngi = isl.nc + isl.nl + isl.nf;
    isl.row = row;
    isl.contact = contact;
    isl.group = group;
    isl.diag = diag;
    isl.dense = -1;
    if (n <= dense_limit_) {
      isl.dense = dense;
      dense += n * n;
    }
    row += n;
    contact += isl.nc;
    group += ngi + 1;
    diag += ngi;
  }
  grow(Gd_, std::max<Index>(dense, 48 * 48));  // a robot with its limit rows fits the first size
  grow(lmu_, contact);
  grow_vec(begin_, group);
  grow_vec(gglobal_, diag);
  if (islands_.size() == 1 && islands_[0].dense >= 0 && islands_[0].nc == nc_ && islands_[0].nl == nl_ &&
      islands_[0].nf == nf_) {
    // One dense island holding every group (a robot on the ground, a few bodies in contact): the
    // placement below keeps ContactSet order and puts the limit and friction rows after the
    // contacts, as the global rows are laid out, so local row L is global row L and group j is
    // group j: the same result, by block copies instead of row by row.
    const Index n = row;
    identity_layout_ = true;  // (island() reads mu and the rows' arrays in place)
    for (Index L = 0; L < n; ++L) lrow_global_[static_cast<std::size_t>(L)] = L;
    for (Index g = 0; g < ng; ++g) {
      gglobal_[static_cast<std::size_t>(g)] = g;
      place_pieces(g, g < nc_ ? 3 * g : 2 * nc_ + g, g);  // row 3 nc + (g - nc) after the contacts
    }
    return;
  }
  cursor_.assign(islands_.size(), 0);  // capacity kept: no allocation once the count was seen
  // local placement: contacts first (in order), then limit rows, then friction rows (the global
  // groups list all limits before all friction rows, so each island keeps that order)
  // Contact order within an island: ContactSet order in dense islands (a robot's rows as before);
  // in factored islands (piles, stacks) bottom-up along gravity, so that one Gauss-Seidel
  // sweep carries the weight of a stack down to the ground instead of one contact per sweep.
  // (a counting sort by island, then a sort by height within each factored island only)
  Index tail = contact;  // contacts without rows go last (they are skipped below)
  for (std::size_t k = 0; k < islands_.size(); ++k) cursor_[k] = islands_[k].contact;
  for (Index i = 0; i < nc_; ++i) {
    const Index k = contact_island_[static_cast<std::size_t>(i)];
    order_[static_cast<std::size_t>(k < 0 ? tail++ : cursor_[static_cast<std::size_t>(k)]++)] = i;
  }
  for (const Island& isl : islands_) {
    if (isl.dense >= 0) continue;
    std::sort(order_.begin() + isl.contact, order_.begin() + isl.contact + isl.nc, [&](Index x, Index y) {
      const Scalar hx = height_[static_cast<std::size_t>(x)], hy = height_[static_cast<std::size_t>(y)];
      return hx != hy ? hx < hy : x < y;
    });
  }
  cursor_.assign(islands_.size(), 0);
  for (Index pass = 0; pass < 2; ++pass) {
    for (Index t = pass == 0 ? 0 : nc_; t < (pass == 0 ? nc_ : ng); ++t) {
      const Index g = pass == 0 ? order_[static_cast<std::size_t>(t)] : t;
      Index pi = group_pieces_[static_cast<std::size_t>(2 * g)];
      if (pi < 0) pi = group_pieces_[static_cast<std::size_t>(2 * g + 1)];
      if (pi < 0) continue;
      // (a contact's island is known from the count above: no union-find walk for it)
      const Index k = g < nc_ ? contact_island_[static_cast<std::size_t>(g)]
                              : sys_island_[static_cast<std::size_t>(find(piece_system(pi)))];
      Island& isl = islands_[static_cast<std::size_t>(k)];
      const Index j = cursor_[static_cast<std::size_t>(k)]++;  // local group
      const Index lrow = g < nc_ ? 3 * j : 3 * isl.nc + (j - isl.nc);
      const Index grow0 = g < nc_ ? 3 * g : pieces_[static_cast<std::size_t>(pi)].row;
      const Index nr = g < nc_ ? 3 : 1;
      for (Index r = 0; r < nr; ++r) {
        const Index L = isl.row + lrow + r, R = grow0 + r;
        lrow_global_[static_cast<std::size_t>(L)] = R;
      }
      if (g < nc_) lmu_[isl.contact + j] = mu_[g];
      gglobal_[static_cast<std::size_t>(isl.diag + j)] = g;
      place_pieces(g, lrow, j);
    }
  }
}

void DelassusAssembler::gather_rows() {
  const RowArrays& a = arrays_;
  if (identity_layout_) {  // one island, local row L = global row L: island() views the global
                           // arrays (no copy), nothing written to them after this stage
    Island& isl = islands_[0];
    const Index n = num_rows();
    // (the targets stage counted the rows with bounce > 0, every row here; none has a
    // position target unless it counted one)
    isl.n_bounce = a.n_bounce;
    isl.n_position = a.n_position == 0 ? 0 : static_cast<Index>((a.position_target.head(n).array() > 0).count());
    return;
  }
  for (Island& isl : islands_) {
    isl.n_bounce = isl.n_position = 0;
    const Index n = 3 * isl.nc + isl.nl + isl.nf;
    for (Index L = isl.row; L < isl.row + n; ++L) {
      const Index R = lrow_global_[static_cast<std::size_t>(L)];
      lc_[L] = a.c[R];
      ltarget_[L] = a.target[R];
      lbounce_[L] = a.bounce[R];
      lposition_[L] = a.position_target[R];
      lbox_[L] = a.box[R];
      isl.n_bounce += a.bounce[R] > 0;
      isl.n_position += a.position_target[R] > 0;
    }
  }
}

// Dense islands: G_k = sum_s Y_s^T D_s^-1 Y_s over the systems of island k, piece by piece: pieces
// p, q of one system overlap on the common root part of their paths (the same leading dofs, as
// both lists are root first). Every piece of a system lies in the system's island.
void DelassusAssembler::assemble_dense(const std::vector<SystemView>& systems) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  for (const Island& isl : islands_) {
    if (isl.dense < 0) continue;
    const Index n = 3 * isl.nc + isl.nl + isl.nf;
    Eigen::Map<MatX>(Gd_.data() + isl.dense, n, n).setZero();
  }
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const std::vector<Index>& list = sys_pieces_[s];
    if (list.empty()) continue;
    const Island& isl = islands_[static_cast<std::size_t>(sys_island_[static_cast<std::size_t>(find(static_cast<Index>(s)))])];
    if (isl.dense < 0) continue;
    Scalar* G = Gd_.data() + isl.dense;
    const Index ld = 3 * isl.nc + isl.nl + isl.nf;
    const Scalar* Dinv = systems[s].data->Dinv.data();
    // a floating base whose six dofs carry every other dof (Data::root_chain6): every path
    // starts with dofs 0..5, so two paths share at least their first min(6, lengths) entries
    const Index shared_root = systems[s].data->root_chain6 ? 6 : 0;
    for (std::size_t a = 0; a < list.size(); ++a) {
      const Piece& p = pieces_[static_cast<std::size_t>(list[a])];
      const Index* dp = dofs_.data() + p.offset;
      const Scalar* Yp = Y_.data() + 3 * p.offset;
      for (std::size_t b = a; b < list.size(); ++b) {
        const Piece& q = pieces_[static_cast<std::size_t>(list[b])];
        const Index* dq = dofs_.data() + q.offset;
        Index len = p.len;  // a piece with itself: its whole path
        if (a != b) {
          const Index lmax = std::min(p.len, q.len);
          len = std::min(shared_root, lmax);
          while (len < lmax && dp[len] == dq[len]) ++len;
          if (len == 0) continue;
        }
        const Scalar* Yq = Y_.data() + 3 * q.offset;
        if (p.normal_only && q.normal_only) {  // two one-row contact sides: their (n, n) entry
          if (len == 6) {
            add_path_product_zz<6>(Yp, Yq, dp, len, Dinv, G, ld, p.lrow, q.lrow, a != b);
          } else {
            add_path_product_zz<>(Yp, Yq, dp, len, Dinv, G, ld, p.lrow, q.lrow, a != b);
          }
          continue;
        }
        path_product(p.nrows, q.nrows, Yp, Yq, dp, len, Dinv, G, ld, p.lrow, q.lrow, a != b);
      }
    }
  }
  };
  return detail::run_kernel(kernel_body);
}

// Factored islands (contact_problem.hpp FactoredG): the systems' velocity slots and D^-1, the
// pieces in local group order, and each group's diagonal block G_gg = sum over pairs of its
// pieces in one system of the path products (two pieces when a contact joins two bodies of one
// system, or for a mimic row): the same products as the dense path computes, in the same order
// (so a degenerate contact cancels as it does there: for a contact of a body with itself, J = 0,
// both storages give the same nearly-zero block and the solvers take the same steps; a fixed-size
// kernel for the self products changed that block's round-off and the solvers' paths).
void DelassusAssembler::assemble_factored(const std::vector<SystemView>& systems) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  bool any = false;
  for (Island& isl : islands_) {
    isl.nz = 0;
    any = any || isl.dense < 0;
  }
  if (!any) return;
  for (std::size_t s = 0; s < systems.size(); ++s) {
    if (sys_pieces_[s].empty()) continue;
    Island& isl = islands_[static_cast<std::size_t>(sys_island_[static_cast<std::size_t>(find(static_cast<Index>(s)))])];
    if (isl.dense >= 0) continue;
    sys_z_[s] = isl.nz;
    isl.nz += systems[s].model->nv;
  }
  Index ngroups = 0;
  for (const Island& isl : islands_) {
    if (isl.dense < 0) ngroups = std::max(ngroups, isl.diag + isl.nc + isl.nl + isl.nf);
  }
  grow_vec(fpiece_, static_cast<Index>(pieces_.size()));
  grow_vec(fdiag_, ngroups, Mat3(Mat3::Zero()));
  Index k = 0;
  for (Island& isl : islands_) {
    if (isl.dense >= 0) continue;
    const Index ngi = isl.nc + isl.nl + isl.nf;
    for (Index j = 0; j < ngi; ++j) {
      const Index g = gglobal_[static_cast<std::size_t>(isl.diag + j)];
      begin_[static_cast<std::size_t>(isl.group + j)] = k;
      Mat3& D = fdiag_[static_cast<std::size_t>(isl.diag + j)];
      D.setZero();
      for (int a = 0; a < 2; ++a) {
        const Index pa = group_pieces_[static_cast<std::size_t>(2 * g + a)];
        if (pa < 0) continue;
        const Piece& p = pieces_[static_cast<std::size_t>(pa)];
        FactoredPiece& fp = fpiece_[static_cast<std::size_t>(k++)];
        fp.nrows = p.nrows;
        fp.len = p.len;
        fp.y = p.offset;
        fp.z = sys_z_[static_cast<std::size_t>(p.system)];
        const Index* dp = dofs_.data() + p.offset;
        const Scalar* Yp = Y_.data() + 3 * p.offset;
        Scalar* DYp = DY_.data() + 3 * p.offset;
        // (the system's D^-1 only for the pieces not scaled at assembly: scale_piece)
        const Scalar* Dinv = p.scaled ? nullptr : systems[static_cast<std::size_t>(p.system)].data->Dinv.data();
        if (p.scaled) {
        } else if (p.normal_only) {  // (a one-row contact side: its row 2)
          for (Index t = 0; t < p.len; ++t) {
            DYp[3 * t] = DYp[3 * t + 1] = 0;
            DYp[3 * t + 2] = Dinv[dp[t]] * Yp[3 * t + 2];
          }
        } else if (p.nrows == 3) {  // (a contact side: 3 contiguous values per path entry)
          for (Index t = 0; t < p.len; ++t) {
            const Scalar di = Dinv[dp[t]];
            for (int r = 0; r < 3; ++r) DYp[3 * t + r] = di * Yp[3 * t + r];
          }
        } else {
          for (Index t = 0; t < p.len; ++t) DYp[3 * t] = Dinv[dp[t]] * Yp[3 * t];
        }
        if (p.scaled) {  // its product with itself, made by contact_side (self_)
          const Scalar* S = self_.data() + 9 * pa;
          if (p.normal_only) {
            D(2, 2) += S[8];
          } else {
            for (int e = 0; e < 9; ++e) D.data()[e] += S[e];
          }
        }
        for (int b = p.scaled ? a + 1 : a; b < 2; ++b) {
          const Index pb = group_pieces_[static_cast<std::size_t>(2 * g + b)];
          if (pb < 0) continue;
          const Piece& q = pieces_[static_cast<std::size_t>(pb)];
          if (q.system != p.system) continue;
          const Index* dq = dofs_.data() + q.offset;
          const Index lmax = std::min(p.len, q.len);
          Index len = 0;
          while (len < lmax && dp[len] == dq[len]) ++len;
          if (len == 0) continue;
          if (p.normal_only && q.normal_only) {
            if (len == 6) {
              add_path_product_zz<6, true>(DYp, Y_.data() + 3 * q.offset, nullptr, len, nullptr, D.data(), 3, 0, 0, a != b);
            } else {
              add_path_product_zz<-1, true>(DYp, Y_.data() + 3 * q.offset, nullptr, len, nullptr, D.data(), 3, 0, 0,
                                            a != b);
            }
            continue;
          }
          path_product_scaled(p.nrows, q.nrows, DYp, Y_.data() + 3 * q.offset, len, D.data(), 3, 0, 0, a != b);
        }
      }
    }
    begin_[static_cast<std::size_t>(isl.group + ngi)] = k;
  }
  for (Island& isl : islands_) {
    isl.factored = FactoredG();
    if (isl.dense >= 0) continue;
    isl.factored.begin = begin_.data() + isl.group;
    isl.factored.piece = fpiece_.data();
    isl.factored.dofs = dofs_.data();
    isl.factored.Y = Y_.data();
    isl.factored.DY = DY_.data();
    isl.factored.diag = fdiag_.data() + isl.diag;
    isl.factored.nz = isl.nz;
  }
  };
  return detail::run_kernel(kernel_body);
}

IslandView DelassusAssembler::island(Index k) const {
  const Island& isl = islands_[static_cast<std::size_t>(k)];
  const Index n = 3 * isl.nc + isl.nl + isl.nf;
  // the island's local rows: the global arrays themselves in the identity layout (one island
  // whose row L is global row L, isl.row = isl.contact = 0), else the gathered copies
  const bool id = identity_layout_;
  const VecX& lc = id ? arrays_.c : lc_;
  const VecX& lmu = id ? mu_ : lmu_;
  const VecX& lbox = id ? arrays_.box : lbox_;
  const VecX& ltarget = id ? arrays_.target : ltarget_;
  const VecX& lbounce = id ? arrays_.bounce : lbounce_;
  const VecX& lposition = id ? arrays_.position_target : lposition_;
  const auto c = lc.segment(isl.row, n);
  const auto mu = lmu.segment(isl.contact, isl.nc);
  const auto box = lbox.segment(isl.row + 3 * isl.nc + isl.nl, isl.nf);
  // (a Ref to the dense block binds to its memory: no copy)
  IslandView v{isl.dense >= 0 ? ContactProblem(Eigen::Map<const MatX>(Gd_.data() + isl.dense, n, n), c, mu, isl.nc,
                                               isl.nl, isl.nf, box)
                              : ContactProblem(isl.factored, c, mu, isl.nc, isl.nl, isl.nf, box),
               lrow_global_.data() + isl.row, ltarget.segment(isl.row, n), lbounce.segment(isl.row, n),
               lposition.segment(isl.row, n), isl.n_bounce, isl.n_position, isl.systems};
  v.problem.diagonal_covers = true;  // (every entry of G a path product: ContactProblem::diagonal_covers)
  return v;
}

std::size_t DelassusAssembler::memory_bytes() const {
  const std::size_t S = sizeof(Scalar), I = sizeof(Index);
  std::size_t b = 0;
  for (const VecX* v : {&mu_, &Y_, &self_, &r_, &lc_, &lmu_, &ltarget_, &lbounce_, &lposition_, &lbox_, &Gd_, &DY_})
    b += static_cast<std::size_t>(v->size()) * S;
  b += arrays_.memory_bytes();
  for (const std::vector<Index>* v : {&dofs_, &parent_, &sys_island_, &contact_island_, &group_pieces_, &lrow_global_,
                                      &begin_, &sys_z_, &cursor_, &gglobal_})
    b += v->capacity() * I;
  b += (frames_.capacity() + fdiag_.capacity()) * sizeof(Mat3) + fpiece_.capacity() * sizeof(FactoredPiece) +
       rows_.capacity() * sizeof(ConstraintRow) +
       pieces_.capacity() * sizeof(Piece) + islands_.capacity() * sizeof(Island) +
       path_rows_.capacity() * sizeof(const Scalar*);
  b += static_cast<std::size_t>(G_full_.size()) * S + one_row_.capacity();
  b += (lmask_.capacity() + lmask_stamp_.capacity()) * sizeof(unsigned);
  return b;
}

void DelassusAssembler::prefetch_step() const {
  const Index n = 3 * nc_ + nl_ + nf_;
  // (the assembler object itself is its owner's: World::prefetch)
  arrays_.prefetch(n);
  prefetch_head(mu_, nc_);
  if (!identity_layout_) {  // (the islands' gathered copies; one island of the global layout, the
                            // last step's, is read in place by island())
    for (const VecX* v : {&lc_, &ltarget_, &lbounce_, &lposition_, &lbox_}) prefetch_head(*v, n);
    prefetch_head(lmu_, nc_);
  }
  prefetch_head(frames_, nc_);
  prefetch_head(height_, nc_);
  prefetch_head(order_, nc_);
  prefetch_head(contact_island_, nc_);
  prefetch_head(group_pieces_, 2 * (nc_ + nl_ + nf_));  // 2 per group
  prefetch_head(rows_, n);
  prefetch_head(lrow_global_, n);
  prefetch_data(pieces_);
  prefetch_data(islands_);
  prefetch_data(parent_);
  prefetch_data(sys_island_);
  for (const auto& list : sys_pieces_) prefetch_data(list);
  const Index slots = static_cast<Index>(pieces_.size()) * nv_max_;
  prefetch_head(dofs_, slots);
  prefetch_head(Y_, 3 * slots);
  Index dense = 0;
  for (const Island& isl : islands_) {
    const Index m = 3 * isl.nc + isl.nl + isl.nf;
    if (isl.dense >= 0) dense = std::max(dense, isl.dense + m * m);
  }
  prefetch_head(Gd_, dense);
}

ContactProblem DelassusAssembler::problem() const {
  const Index n = 3 * nc_ + nl_ + nf_;
  G_full_.setZero(n, n);
  for (Index k = 0; k < num_islands(); ++k) {
    const IslandView v = island(k);
    const MatX Gk = v.problem.dense();
    const Index m = v.problem.size();
    for (Index b = 0; b < m; ++b) {
      for (Index a = 0; a < m; ++a) G_full_(v.global_row[a], v.global_row[b]) = Gk(a, b);
    }
  }
  return ContactProblem(G_full_, arrays_.c.head(n), mu_.head(nc_), nc_, nl_, nf_, arrays_.box.segment(3 * nc_ + nl_, nf_));
}

void DelassusAssembler::apply(const std::vector<SystemView>& systems, const VecXcref& lambda,
                              std::vector<VecX>& u_next) {
  auto kernel_body = [&]() IMPULSE_KERNEL_BODY {
  // M~^-1 J^T lambda = L^-1 D^-1 (Y lambda), Y lambda summed over the pieces' paths
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    if (sys_pieces_[s].empty()) {
      u_next[s] = *systems[s].u_free;
      continue;
    }
    if (m.is_free_body()) {
      // A free body (a pile's or a stack's): its path is dofs 0..5 on every piece and its factor
      // a chain of 6 (Data::dof_chain), so the sums below, D^-1 and the L solve are the general
      // ones on fixed sizes: the same operations in the same order (the same bits), without
      // the path's index loads and the general solve's ancestor lists (216 bodies a step)
      Scalar x[6] = {0, 0, 0, 0, 0, 0};
      for (const Index pi : sys_pieces_[s]) {
        const Piece& p = pieces_[static_cast<std::size_t>(pi)];
        const Scalar* Y = Y_.data() + 3 * p.offset;
        if (p.normal_only) {
          const Scalar l2 = lambda[p.row + 2];
          for (int t = 0; t < 6; ++t) x[t] += Y[3 * t + 2] * l2;
        } else if (p.nrows == 3) {
          const Scalar l0 = lambda[p.row], l1 = lambda[p.row + 1], l2 = lambda[p.row + 2];
          for (int t = 0; t < 6; ++t) x[t] += (Y[3 * t] * l0 + Y[3 * t + 1] * l1) + Y[3 * t + 2] * l2;
        } else {  // (a free body has no one-row pieces: no scalar joint)
          const Index* dofs = dofs_.data() + p.offset;
          const Scalar l0 = lambda[p.row];
          for (Index t = 0; t < p.len; ++t) x[dofs[t]] += Y[3 * t] * l0;
        }
      }
      const Scalar* Dinv = d.Dinv.data();
      for (int k = 0; k < 6; ++k) x[k] *= Dinv[k];
      ltdl_solve_L_chain6(d, x);
      const Scalar* uf = systems[s].u_free->data();
      VecX& un = u_next[s];
      un.resize(6);
      for (int k = 0; k < 6; ++k) un[k] = uf[k] + x[k];
      continue;
    }
    auto r = r_.head(m.nv);
    r.setZero();
    for (const Index pi : sys_pieces_[s]) {
      const Piece& p = pieces_[static_cast<std::size_t>(pi)];
      const Index* dofs = dofs_.data() + p.offset;
      const Scalar* Y = Y_.data() + 3 * p.offset;
      if (p.normal_only) {  // a one-row contact side (its tangent impulses are 0)
        const Scalar l2 = lambda[p.row + 2];
        for (Index t = 0; t < p.len; ++t) r[dofs[t]] += Y[3 * t + 2] * l2;
      } else if (p.nrows == 3) {  // a contact side
        const Scalar l0 = lambda[p.row], l1 = lambda[p.row + 1], l2 = lambda[p.row + 2];
        for (Index t = 0; t < p.len; ++t) r[dofs[t]] += (Y[3 * t] * l0 + Y[3 * t + 1] * l1) + Y[3 * t + 2] * l2;
      } else {
        const Scalar l0 = lambda[p.row];
        for (Index t = 0; t < p.len; ++t) r[dofs[t]] += Y[3 * t] * l0;
      }
    }
    r.array() *= d.Dinv.array();
    ltdl_solve_L(m, d, r);
    u_next[s] = *systems[s].u_free + r;
  }
  };
  return detail::run_kernel(kernel_body);
}

}  // namespace impulse
