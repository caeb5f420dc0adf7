// DelassusLanes (see the header).
#include "impulse/contact/delassus_lanes.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../dynamics/lanes_abi.hpp"
#include "impulse/core/check.hpp"

namespace impulse {

namespace {

using lanes_abi::ProductOp;

template <class F>
F pick_width(int width, F w2, F w4, F w8) {
  return width == 2 ? w2 : width == 4 ? w4 : w8;
}

template <class T>
void grow_to(std::vector<T>& v, std::size_t n) {
  if (v.size() < n) v.resize(std::max(n, 2 * v.size()));
}

}  // namespace

// (DelassusLanes::Op is lanes_abi::ProductOp, which the public header cannot name)
static_assert(sizeof(ProductOp) == 7 * sizeof(int) && offsetof(ProductOp, kind) == 0 &&
                  offsetof(ProductOp, len) == sizeof(int) && offsetof(ProductOp, yp) == 2 * sizeof(int) &&
                  offsetof(ProductOp, yq) == 3 * sizeof(int) && offsetof(ProductOp, g) == 4 * sizeof(int) &&
                  offsetof(ProductOp, gm) == 5 * sizeof(int) && offsetof(ProductOp, ld) == 6 * sizeof(int),
              "DelassusLanes::Op mirrors lanes_abi::ProductOp");

void DelassusLanes::signature(const DelassusAssembler& a, const std::vector<SystemView>& systems,
                              std::vector<int>& out) {
  std::size_t n = 3 + 6 * systems.size() + 2 * a.islands_.size() + 9 * a.pieces_.size();
  for (const DelassusAssembler::Piece& p : a.pieces_) n += static_cast<std::size_t>(p.len);
  for (std::size_t s = 0; s < systems.size(); ++s) n += a.sys_pieces_[s].size();
  if (out.capacity() < n) {
    // (room for the largest layout the assembler holds without growing: a layout that needs no
    // allocation there needs none here, whichever thread meets it first)
    std::size_t room = 3 + 6 * systems.size() + 2 * a.islands_.capacity() + 9 * a.pieces_.capacity() + a.dofs_.capacity();
    for (std::size_t s = 0; s < systems.size(); ++s) room += a.sys_pieces_[s].capacity();
    out.reserve(std::max({n, 2 * out.capacity(), room}));
  }
  out.resize(n);
  int* o = out.data();
  *o++ = static_cast<int>(a.nv_max_);
  *o++ = static_cast<int>(a.nc_);
  *o++ = a.paths_pending_ ? 1 : 0;
  for (std::size_t s = 0; s < systems.size(); ++s) {
    // (the Model itself: the paths' L entries and root columns are its; a Model's address
    // identifies it while the group's Worlds hold it)
    const auto model = reinterpret_cast<std::uintptr_t>(systems[s].model);
    *o++ = static_cast<int>(model & 0xffffffffu);
    *o++ = static_cast<int>(model >> 32);
    *o++ = static_cast<int>(systems[s].model->nv);
    *o++ = systems[s].data->root_chain6 ? 1 : 0;
    *o++ = static_cast<int>(a.system_island_[s]);
    *o++ = static_cast<int>(a.sys_pieces_[s].size());
    for (Index p : a.sys_pieces_[s]) *o++ = static_cast<int>(p);
  }
  for (const DelassusAssembler::Island& isl : a.islands_) {
    *o++ = static_cast<int>(isl.dense);
    *o++ = static_cast<int>(3 * isl.nc + isl.nl + isl.nf);
  }
  for (const DelassusAssembler::Piece& p : a.pieces_) {
    *o++ = static_cast<int>(p.system);
    *o++ = static_cast<int>(p.nrows);
    *o++ = static_cast<int>(p.lrow);
    *o++ = p.normal_only ? 1 : 0;
    *o++ = static_cast<int>(p.offset);
    *o++ = static_cast<int>(p.len);
    *o++ = static_cast<int>(p.group);
    *o++ = static_cast<int>(p.row);
    *o++ = p.deferred ? 1 : 0;
    const Index* d = a.dofs_.data() + p.offset;
    for (Index t = 0; t < p.len; ++t) *o++ = static_cast<int>(d[t]);
  }
}

bool DelassusLanes::lanes_ready(const DelassusAssembler& a) {
  if (!a.products_pending_ || a.islands_.empty()) return false;
  for (const DelassusAssembler::Island& isl : a.islands_)
    if (isl.dense < 0) return false;
  return true;
}

// The same sequence of path products on the same entries: the same pieces (system, rows, path,
// local rows), islands and systems' sizes (the G of `x` and `y` differ in their numbers only).
bool DelassusLanes::same_layout(const DelassusAssembler& x, const std::vector<SystemView>& sx,
                                const DelassusAssembler& y, const std::vector<SystemView>& sy) {
  if (x.pieces_.size() != y.pieces_.size() || x.islands_.size() != y.islands_.size() || sx.size() != sy.size() ||
      x.nv_max_ != y.nv_max_ || x.nc_ != y.nc_ || x.paths_pending_ != y.paths_pending_)
    return false;
  for (std::size_t s = 0; s < sx.size(); ++s) {
    if (sx[s].model->nv != sy[s].model->nv || sx[s].data->root_chain6 != sy[s].data->root_chain6 ||
        x.system_island_[s] != y.system_island_[s] || x.sys_pieces_[s] != y.sys_pieces_[s])
      return false;
    if (x.paths_pending_ && sx[s].model != sy[s].model) return false;
  }
  for (std::size_t k = 0; k < x.islands_.size(); ++k) {
    const DelassusAssembler::Island &a = x.islands_[k], &b = y.islands_[k];
    if (a.dense != b.dense || a.nc != b.nc || a.nl != b.nl || a.nf != b.nf) return false;
  }
  for (std::size_t i = 0; i < x.pieces_.size(); ++i) {
    const DelassusAssembler::Piece &p = x.pieces_[i], &q = y.pieces_[i];
    if (p.system != q.system || p.nrows != q.nrows || p.len != q.len || p.lrow != q.lrow ||
        p.normal_only != q.normal_only || p.offset != q.offset || p.group != q.group || p.row != q.row ||
        p.deferred != q.deferred)
      return false;
    if (!std::equal(x.dofs_.begin() + p.offset, x.dofs_.begin() + p.offset + p.len, y.dofs_.begin() + q.offset))
      return false;
  }
  return true;
}

// assemble_dense's loops (delassus.cpp), recording each path product instead of computing it
void DelassusLanes::build(const DelassusAssembler& a, const std::vector<SystemView>& systems) {
  signature(a, systems, sig_);
  if (sig_ == built_) return;
  // (the two trade buffers: each keeps the other's room)
  if (built_.capacity() < sig_.capacity()) built_.reserve(sig_.capacity());
  built_.swap(sig_);
  velocity_built_ = false;
  ops_.clear();
  pieces_.clear();
  dinv_index_.clear();
  dinv_offset_.clear();
  nd_ = 0;
  for (const SystemView& v : systems) {
    dinv_offset_.push_back(nd_);
    nd_ += v.model->nv;
  }
  ny_ = 3 * a.nv_max_ * static_cast<int>(a.pieces_.size());
  ng_ = 0;
  for (const DelassusAssembler::Island& isl : a.islands_) {
    const Index n = 3 * isl.nc + isl.nl + isl.nf;
    ng_ = std::max<int>(ng_, isl.dense + n * n);
  }
  build_paths(a, systems);
  for (std::size_t s = 0; s < systems.size(); ++s) {
    const std::vector<Index>& list = a.sys_pieces_[s];
    if (list.empty()) continue;
    const DelassusAssembler::Island& isl = a.islands_[static_cast<std::size_t>(a.system_island_[s])];
    const Index ld = 3 * isl.nc + isl.nl + isl.nf;
    const Index shared_root = systems[s].data->root_chain6 ? 6 : 0;
    for (Index pi : list) {
      const DelassusAssembler::Piece& p = a.pieces_[static_cast<std::size_t>(pi)];
      pieces_.insert(pieces_.end(), {static_cast<int>(3 * p.offset), static_cast<int>(p.len),
                                     static_cast<int>(dinv_index_.size()), static_cast<int>(p.nrows)});
      for (Index t = 0; t < p.len; ++t)
        dinv_index_.push_back(dinv_offset_[s] + static_cast<int>(a.dofs_[static_cast<std::size_t>(p.offset + t)]));
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const DelassusAssembler::Piece& p = a.pieces_[static_cast<std::size_t>(list[i])];
      const Index* dp = a.dofs_.data() + p.offset;
      for (std::size_t j = i; j < list.size(); ++j) {
        const DelassusAssembler::Piece& q = a.pieces_[static_cast<std::size_t>(list[j])];
        const Index* dq = a.dofs_.data() + q.offset;
        Index len = p.len;
        if (i != j) {
          const Index lmax = std::min(p.len, q.len);
          len = std::min(shared_root, lmax);
          while (len < lmax && dp[len] == dq[len]) ++len;
          if (len == 0) continue;
        }
        Op op;
        op.kind = p.normal_only && q.normal_only ? lanes_abi::kProductNN
                                                 : 2 * (p.nrows == 3 ? 1 : 0) + (q.nrows == 3 ? 1 : 0);
        op.len = len;
        op.yp = 3 * p.offset;
        op.yq = 3 * q.offset;
        op.g = isl.dense + p.lrow + q.lrow * ld;
        op.gm = i != j ? isl.dense + q.lrow + p.lrow * ld : -1;
        op.ld = ld;
        ops_.push_back(op);
      }
    }
  }
}

// contact_paths' tables for a's layout when every piece is deferred (lanes_abi.hpp)
void DelassusLanes::build_paths(const DelassusAssembler& a, const std::vector<SystemView>& systems) {
  path_pieces_.clear();
  path_.clear();
  j_offset_.assign(systems.size(), -1);
  u_offset_.assign(systems.size(), -1);
  l_offset_.assign(systems.size(), -1);
  nj_ = nu_ = nl_ = 0;
  ncv_ = 3 * static_cast<int>(a.nc_);
  npr_ = 12 * static_cast<int>(a.pieces_.size());
  paths_ = a.paths_pending_ && !a.pieces_.empty();
  for (const DelassusAssembler::Piece& p : a.pieces_) paths_ = paths_ && p.deferred;
  if (!paths_) return;
  for (std::size_t s = 0; s < systems.size(); ++s) {
    if (a.sys_pieces_[s].empty()) continue;
    const Model& m = *systems[s].model;
    j_offset_[s] = nj_;
    u_offset_[s] = nu_;
    l_offset_[s] = nl_;
    nj_ += 6 * static_cast<int>(m.nv);
    nu_ += static_cast<int>(m.nv);
    nl_ += static_cast<int>(systems[s].data->anc_begin[static_cast<std::size_t>(m.nv)]);
  }
  for (std::size_t k = 0; k < a.pieces_.size(); ++k) {
    const DelassusAssembler::Piece& p = a.pieces_[k];
    const std::size_t s = static_cast<std::size_t>(p.system);
    const Model& m = *systems[s].model;
    const Data& d = *systems[s].data;
    const Index* dofs = a.dofs_.data() + p.offset;
    const int kind = p.nrows == 1 ? lanes_abi::kPathDof : p.normal_only ? lanes_abi::kPathNormal : lanes_abi::kPathContact;
    // (point_jacobian_branch's closed-form root columns: a floating root's 6 dofs first)
    const bool root6 = kind != lanes_abi::kPathDof && p.len > 6 && dofs[0] == 0 && m.parent[0] < 0 &&
                       m.joint_type[0] == JointType::Floating;
    path_pieces_.insert(path_pieces_.end(), {kind, static_cast<int>(p.len), static_cast<int>(3 * p.offset),
                                             static_cast<int>(path_.size()), root6 ? 1 : 0, static_cast<int>(12 * k),
                                             static_cast<int>(3 * p.group)});
    for (Index t = 0; t < p.len; ++t) {
      const Index dof = dofs[t];
      path_.push_back(u_offset_[s] + static_cast<int>(dof));
      path_.push_back(j_offset_[s] + 6 * static_cast<int>(dof));
      path_.push_back(l_offset_[s] + static_cast<int>(d.anc_begin[static_cast<std::size_t>(dof)] + t - 1));
    }
  }
}

void DelassusLanes::run(DelassusAssembler* const* a, const std::vector<SystemView>* const* systems, const int* worlds,
                        int n, int width) {
  const DelassusAssembler& ref = *a[worlds[0]];
  const std::vector<SystemView>& sys = *systems[worlds[0]];
  build(ref, sys);
  const std::size_t W = static_cast<std::size_t>(width);
  grow_to(y_, W * static_cast<std::size_t>(ny_));
  grow_to(dy_, W * static_cast<std::size_t>(ny_));
  grow_to(dinv_, W * static_cast<std::size_t>(nd_));
  grow_to(g_, W * static_cast<std::size_t>(ng_));  // (zero where scatter left it, new entries zero)
  grow_to(spare_, static_cast<std::size_t>(std::max({ng_, ny_, ncv_})));
  const auto gather = pick_width(width, &lanes_abi::gather_w2, &lanes_abi::gather_w4, &lanes_abi::gather_w8);
  const auto scatter = pick_width(width, &lanes_abi::scatter_w2, &lanes_abi::scatter_w4, &lanes_abi::scatter_w8);
  const auto copy_out = pick_width(width, &lanes_abi::copy_out_w2, &lanes_abi::copy_out_w4, &lanes_abi::copy_out_w8);
  const auto products =
      pick_width(width, &lanes_abi::dense_products_w2, &lanes_abi::dense_products_w4, &lanes_abi::dense_products_w8);
  // (a lane no World takes computes a copy of the first's: finite, not kept)
  const double* src[8];
  if (paths_) {
    // the systems' J columns, u_free, u and L, the sides' points and frames, the one-row pieces'
    // +-e_k; then Y, c and v- in the lanes
    grow_to(j_, W * static_cast<std::size_t>(nj_));
    grow_to(uf_, W * static_cast<std::size_t>(nu_));
    grow_to(u_, W * static_cast<std::size_t>(nu_));
    grow_to(l_, W * static_cast<std::size_t>(nl_));
    grow_to(pr_, W * static_cast<std::size_t>(npr_));
    grow_to(cv_, W * 2 * static_cast<std::size_t>(ncv_));
    for (std::size_t s = 0; s < sys.size(); ++s) {
      if (j_offset_[s] < 0) continue;
      const int nv = static_cast<int>(sys[s].model->nv);
      const std::size_t js = W * static_cast<std::size_t>(j_offset_[s]), us = W * static_cast<std::size_t>(u_offset_[s]);
      for (int l = 0; l < width; ++l) src[l] = (*systems[worlds[l < n ? l : 0]])[s].data->J.data();
      gather(src, 6 * nv, j_.data() + js);
      for (int l = 0; l < width; ++l) src[l] = (*systems[worlds[l < n ? l : 0]])[s].u_free->data();
      gather(src, nv, uf_.data() + us);
      for (int l = 0; l < width; ++l) src[l] = (*systems[worlds[l < n ? l : 0]])[s].u->data();
      gather(src, nv, u_.data() + us);
      for (int l = 0; l < width; ++l) src[l] = (*systems[worlds[l < n ? l : 0]])[s].data->L_anc.data();
      gather(src, static_cast<int>(sys[s].data->anc_begin[static_cast<std::size_t>(nv)]),
             l_.data() + W * static_cast<std::size_t>(l_offset_[s]));
    }
    for (int l = 0; l < width; ++l) src[l] = a[worlds[l < n ? l : 0]]->pr_.data();
    gather(src, npr_, pr_.data());
    for (std::size_t k = 0; k < path_pieces_.size(); k += lanes_abi::kPathInts) {
      if (path_pieces_[k] != lanes_abi::kPathDof) continue;
      const int y = path_pieces_[k + 2], len = path_pieces_[k + 1];
      for (int l = 0; l < width; ++l) src[l] = a[worlds[l < n ? l : 0]]->Y_.data() + y;
      gather(src, 3 * len, y_.data() + W * static_cast<std::size_t>(y));
    }
    const auto paths =
        pick_width(width, &lanes_abi::contact_paths_w2, &lanes_abi::contact_paths_w4, &lanes_abi::contact_paths_w8);
    paths(path_pieces_.data(), static_cast<int>(path_pieces_.size() / lanes_abi::kPathInts), path_.data(), j_.data(),
          uf_.data(), u_.data(), l_.data(), pr_.data(), y_.data(), cv_.data(), ncv_);
  } else {
    for (int l = 0; l < n; ++l) a[worlds[l]]->assemble_paths(*systems[worlds[l]]);
    // (Y on the pieces' paths only: 3 len entries of each piece's 3 nv_max)
    for (std::size_t k = 0; k < pieces_.size(); k += 4) {
      const int y = pieces_[k], len = pieces_[k + 1];
      for (int l = 0; l < width; ++l) src[l] = a[worlds[l < n ? l : 0]]->Y_.data() + y;
      gather(src, 3 * len, y_.data() + W * static_cast<std::size_t>(y));
    }
  }
  for (std::size_t s = 0; s < sys.size(); ++s) {
    for (int l = 0; l < width; ++l) src[l] = (*systems[worlds[l < n ? l : 0]])[s].data->Dinv.data();
    gather(src, sys[s].model->nv, dinv_.data() + W * static_cast<std::size_t>(dinv_offset_[s]));
  }
  products(pieces_.data(), static_cast<int>(pieces_.size() / 4), reinterpret_cast<const ProductOp*>(ops_.data()),
           static_cast<int>(ops_.size()), dinv_index_.data(), y_.data(), dinv_.data(), dy_.data(), g_.data());
  double* dst[8];
  for (int l = 0; l < width; ++l) dst[l] = l < n ? a[worlds[l]]->Gd_.data() : spare_.data();
  scatter(g_.data(), ng_, dst);
  if (paths_) {  // each assembler's Y, c and v- (the lane arrays left zero: not read again)
    for (std::size_t k = 0; k < path_pieces_.size(); k += lanes_abi::kPathInts) {
      const int y = path_pieces_[k + 2], len = path_pieces_[k + 1];
      for (int l = 0; l < width; ++l) dst[l] = l < n ? a[worlds[l]]->Y_.data() + y : spare_.data();
      copy_out(y_.data() + W * static_cast<std::size_t>(y), 3 * len, dst);  // (kept: update_velocities)
    }
    for (int l = 0; l < width; ++l) dst[l] = l < n ? a[worlds[l]]->arrays_.c.data() : spare_.data();
    scatter(cv_.data(), ncv_, dst);
    for (int l = 0; l < width; ++l) dst[l] = l < n ? a[worlds[l]]->arrays_.v_before.data() : spare_.data();
    scatter(cv_.data() + W * static_cast<std::size_t>(ncv_), ncv_, dst);
    for (int l = 0; l < n; ++l) a[worlds[l]]->paths_pending_ = false;
    paths_in_lanes_ += n;
    // the lane arrays of Y, D^-1, L and u_free stay until the next group's run
    last_n_ = n;
    for (int l = 0; l < n; ++l) last_[l] = a[worlds[l]];
  }
  for (int l = 0; l < n; ++l) {
    DelassusAssembler& x = *a[worlds[l]];
    x.products_pending_ = false;
    x.assemble_factored(*systems[worlds[l]]);  // (no factored island: sets what it sets for none)
  }
}

int DelassusLanes::assemble_products(DelassusAssembler* const* a, const std::vector<SystemView>* const* systems,
                                     int count, int width) {
  IMPULSE_ASSERT(count >= 0 && count <= std::max(width, 1) && width <= 8);
  unsigned pending = 0;
  for (int i = 0; i < count; ++i)
    if (a[i]->products_pending()) pending |= 1u << i;
  int in_lanes = 0;
  paths_in_lanes_ = 0;
  last_n_ = 0;
  while (pending != 0) {
    const int r = __builtin_ctz(pending);
    pending &= pending - 1;
    int worlds[8] = {r};
    int n = 1;
    if (width > 1 && lanes_ready(*a[r])) {
      for (int i = r + 1; i < count; ++i) {
        if ((pending & (1u << i)) && lanes_ready(*a[i]) && same_layout(*a[r], *systems[r], *a[i], *systems[i])) {
          worlds[n++] = i;
          pending &= ~(1u << i);
        }
      }
    }
    if (n < 2) {
      a[r]->assemble_products(*systems[r]);
      continue;
    }
    run(a, systems, worlds, n, width);
    in_lanes += n;
  }
  return in_lanes;
}

// The pieces apply() reads (system, rows, path, normal row alone) and the systems' Models
// (the L solve's ancestor lists) and sizes.
bool DelassusLanes::same_velocity_layout(const DelassusAssembler& x, const std::vector<SystemView>& sx,
                                         const DelassusAssembler& y, const std::vector<SystemView>& sy) {
  if (x.pieces_.size() != y.pieces_.size() || sx.size() != sy.size() || x.num_rows() != y.num_rows()) return false;
  for (std::size_t s = 0; s < sx.size(); ++s) {
    if (sx[s].model != sy[s].model || x.sys_pieces_[s] != y.sys_pieces_[s]) return false;
  }
  for (std::size_t i = 0; i < x.pieces_.size(); ++i) {
    const DelassusAssembler::Piece &p = x.pieces_[i], &q = y.pieces_[i];
    if (p.system != q.system || p.nrows != q.nrows || p.len != q.len || p.normal_only != q.normal_only ||
        p.offset != q.offset || p.row != q.row)
      return false;
    if (!std::equal(x.dofs_.begin() + p.offset, x.dofs_.begin() + p.offset + p.len, y.dofs_.begin() + q.offset))
      return false;
  }
  return true;
}

void DelassusLanes::velocity_layout(const DelassusAssembler& a, const std::vector<SystemView>& systems) {
  vpieces_.clear();
  vpiece_begin_.clear();
  vanc_begin_.clear();
  vanc_.clear();
  vanc_at_.clear();
  vdofs_.assign(a.dofs_.begin(), a.dofs_.end());
  for (std::size_t s = 0; s < systems.size(); ++s) {
    vpiece_begin_.push_back(static_cast<int>(vpieces_.size()));
    for (const Index pi : a.sys_pieces_[s]) {
      const DelassusAssembler::Piece& p = a.pieces_[static_cast<std::size_t>(pi)];
      const int kind = p.normal_only ? lanes_abi::kPathNormal : p.nrows == 3 ? lanes_abi::kPathContact : lanes_abi::kPathDof;
      vpieces_.insert(vpieces_.end(), {kind, static_cast<int>(p.len), static_cast<int>(3 * p.offset),
                                       static_cast<int>(p.row), static_cast<int>(p.offset)});
    }
    const Data& d = *systems[s].data;
    vanc_at_.push_back(static_cast<int>(vanc_begin_.size()));
    vanc_at_.push_back(static_cast<int>(vanc_.size()));
    vanc_begin_.insert(vanc_begin_.end(), d.anc_begin.begin(), d.anc_begin.end());
    vanc_.insert(vanc_.end(), d.anc.begin(), d.anc.end());
  }
  vpiece_begin_.push_back(static_cast<int>(vpieces_.size()));
}

unsigned DelassusLanes::update_velocities(const DelassusAssembler* const* a,
                                          const std::vector<SystemView>* const* systems, const Scalar* const* lambda,
                                          std::vector<VecX>* const* u_next, unsigned mask, int count, int width) {
  IMPULSE_ASSERT(count >= 0 && count <= std::max(width, 1) && width <= 8);
  if (width <= 1) return 0;
  const auto gather = pick_width(width, &lanes_abi::gather_w2, &lanes_abi::gather_w4, &lanes_abi::gather_w8);
  const auto scatter = pick_width(width, &lanes_abi::scatter_w2, &lanes_abi::scatter_w4, &lanes_abi::scatter_w8);
  const auto kernel = pick_width(width, &lanes_abi::velocity_update_w2, &lanes_abi::velocity_update_w4,
                                 &lanes_abi::velocity_update_w8);
  const std::size_t W = static_cast<std::size_t>(width);
  unsigned pending = mask & ((1u << count) - 1), done = 0;
  // First the last group of assemble_products, if its path work was in lanes and all of it is
  // asked: its lane arrays hold its Y, D^-1, L and u_free (which the solve does not change), in
  // the same lanes, and its layout (built_, one by same_layout, which implies the checks of
  // same_velocity_layout) is theirs
  int last[8];
  bool reuse = paths_ && last_n_ >= 2;
  for (int l = 0, i = 0; l < last_n_ && reuse; ++l) {
    while (i < count && a[i] != last_[l]) ++i;
    reuse = i < count && (pending & (1u << i)) != 0;
    last[l] = i;
  }
  while (pending != 0) {
    int worlds[8] = {};  // (filled below on every path that reads it)
    int n = 0;
    if (reuse) {
      for (int l = 0; l < last_n_; ++l) worlds[n++] = last[l], pending &= ~(1u << last[l]);
    } else {
      const int r = __builtin_ctz(pending);
      pending &= pending - 1;
      worlds[n++] = r;
      for (int i = r + 1; i < count; ++i) {
        if ((pending & (1u << i)) && same_velocity_layout(*a[r], *systems[r], *a[i], *systems[i])) {
          worlds[n++] = i;
          pending &= ~(1u << i);
        }
      }
      if (n < 2) continue;  // (apply() updates it)
    }
    const DelassusAssembler& ref = *a[worlds[0]];
    const std::vector<SystemView>& sys = *systems[worlds[0]];
    if (!reuse || !velocity_built_) velocity_layout(ref, sys);
    velocity_built_ = reuse;
    const double* src[8];
    double* dst[8];
    // (a lane no World takes computes a copy of the first's: not kept)
    const auto world = [&](int l) { return worlds[l < n ? l : 0]; };
    const int rows = static_cast<int>(ref.num_rows());
    grow_to(vlam_, W * static_cast<std::size_t>(rows));
    for (int l = 0; l < width; ++l) src[l] = lambda[world(l)];
    gather(src, rows, vlam_.data());
    // (another group gathers into the same lane arrays, which the last group of the G phase grew:
    // after it, they are scratch)
    if (!reuse) grow_to(y_, W * 3 * ref.dofs_.size());
    for (std::size_t s = 0; s < sys.size(); ++s) {
      const int nv = static_cast<int>(sys[s].model->nv);
      if (ref.sys_pieces_[s].empty()) {
        for (int l = 0; l < n; ++l) (*u_next[worlds[l]])[s] = *(*systems[worlds[l]])[s].u_free;
        continue;
      }
      const int* pieces = vpieces_.data() + vpiece_begin_[s];
      const int npieces = (vpiece_begin_[s + 1] - vpiece_begin_[s]) / lanes_abi::kVelocityInts;
      const int* anc_begin = vanc_begin_.data() + vanc_at_[2 * s];
      const int* anc = vanc_.data() + vanc_at_[2 * s + 1];
      const int n_anc = anc_begin[nv];
      const double *Y, *Dinv, *L, *UF;
      if (reuse) {
        Y = y_.data();
        Dinv = dinv_.data() + W * static_cast<std::size_t>(dinv_offset_[s]);
        L = l_.data() + W * static_cast<std::size_t>(l_offset_[s]);
        UF = uf_.data() + W * static_cast<std::size_t>(u_offset_[s]);
      } else {
        for (int k = 0; k < npieces; ++k) {
          const int y = pieces[k * lanes_abi::kVelocityInts + 2], len = pieces[k * lanes_abi::kVelocityInts + 1];
          for (int l = 0; l < width; ++l) src[l] = a[world(l)]->Y_.data() + y;
          gather(src, 3 * len, y_.data() + W * static_cast<std::size_t>(y));
        }
        grow_to(dinv_, W * static_cast<std::size_t>(nv));
        grow_to(uf_, W * static_cast<std::size_t>(nv));
        grow_to(l_, W * static_cast<std::size_t>(n_anc));
        for (int l = 0; l < width; ++l) src[l] = (*systems[world(l)])[s].data->Dinv.data();
        gather(src, nv, dinv_.data());
        for (int l = 0; l < width; ++l) src[l] = (*systems[world(l)])[s].data->L_anc.data();
        gather(src, n_anc, l_.data());
        for (int l = 0; l < width; ++l) src[l] = (*systems[world(l)])[s].u_free->data();
        gather(src, nv, uf_.data());
        Y = y_.data(), Dinv = dinv_.data(), L = l_.data(), UF = uf_.data();
      }
      grow_to(vr_, W * static_cast<std::size_t>(nv));
      kernel(pieces, npieces, vdofs_.data(), Y, vlam_.data(), Dinv, L, anc_begin, anc, nv, UF, vr_.data());
      grow_to(spare_, static_cast<std::size_t>(nv));
      for (int l = 0; l < width; ++l) {
        if (l < n) {
          VecX& u = (*u_next[worlds[l]])[s];
          if (u.size() != nv) u.resize(nv);
          dst[l] = u.data();
        } else {
          dst[l] = spare_.data();
        }
      }
      scatter(vr_.data(), nv, dst);
    }
    for (int l = 0; l < n; ++l) done |= 1u << worlds[l];
    reuse = false;
  }
  last_n_ = 0;  // (its lane arrays are this step's only)
  return done;
}

}  // namespace impulse
