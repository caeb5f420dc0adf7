// DelassusLanes (see the header).
#include "impulse/contact/delassus_lanes.hpp"

#include <algorithm>
#include <cstddef>

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
  std::size_t n = 1 + 4 * systems.size() + 2 * a.islands_.size() + 6 * a.pieces_.size();
  for (const DelassusAssembler::Piece& p : a.pieces_) n += static_cast<std::size_t>(p.len);
  for (std::size_t s = 0; s < systems.size(); ++s) n += a.sys_pieces_[s].size();
  if (out.capacity() < n) out.reserve(std::max(n, 2 * out.capacity()));
  out.resize(n);
  int* o = out.data();
  *o++ = static_cast<int>(a.nv_max_);
  for (std::size_t s = 0; s < systems.size(); ++s) {
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
      x.nv_max_ != y.nv_max_)
    return false;
  for (std::size_t s = 0; s < sx.size(); ++s) {
    if (sx[s].model->nv != sy[s].model->nv || sx[s].data->root_chain6 != sy[s].data->root_chain6 ||
        x.system_island_[s] != y.system_island_[s] || x.sys_pieces_[s] != y.sys_pieces_[s])
      return false;
  }
  for (std::size_t k = 0; k < x.islands_.size(); ++k) {
    const DelassusAssembler::Island &a = x.islands_[k], &b = y.islands_[k];
    if (a.dense != b.dense || a.nc != b.nc || a.nl != b.nl || a.nf != b.nf) return false;
  }
  for (std::size_t i = 0; i < x.pieces_.size(); ++i) {
    const DelassusAssembler::Piece &p = x.pieces_[i], &q = y.pieces_[i];
    if (p.system != q.system || p.nrows != q.nrows || p.len != q.len || p.lrow != q.lrow ||
        p.normal_only != q.normal_only || p.offset != q.offset)
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
  built_.swap(sig_);
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
  grow_to(spare_, static_cast<std::size_t>(ng_));
  const auto gather = pick_width(width, &lanes_abi::gather_w2, &lanes_abi::gather_w4, &lanes_abi::gather_w8);
  const auto scatter = pick_width(width, &lanes_abi::scatter_w2, &lanes_abi::scatter_w4, &lanes_abi::scatter_w8);
  const auto products =
      pick_width(width, &lanes_abi::dense_products_w2, &lanes_abi::dense_products_w4, &lanes_abi::dense_products_w8);
  // (a lane no World takes computes a copy of the first's: finite, not kept)
  const double* src[8];
  // (Y on the pieces' paths only: 3 len entries of each piece's 3 nv_max)
  for (std::size_t k = 0; k < pieces_.size(); k += 4) {
    const int y = pieces_[k], len = pieces_[k + 1];
    for (int l = 0; l < width; ++l) src[l] = a[worlds[l < n ? l : 0]]->Y_.data() + y;
    gather(src, 3 * len, y_.data() + W * static_cast<std::size_t>(y));
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

}  // namespace impulse
