// StepLanes (lanes.hpp): the Model flattened for the lane kernels, the lane block's memory, the
// run-time choice of width, gather and scatter. Baseline code: the wide kernels are in
// lanes_w4.cpp and lanes_w8.cpp, called only when the CPU has their instruction set.
#include "impulse/dynamics/lanes.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <cstring>
#include <string>
#include <vector>

#include "impulse/core/check.hpp"
#include "impulse/core/error.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/step_dynamics.hpp"
#include "impulse/model/actuator.hpp"
#include "lanes_abi.hpp"

namespace impulse {

namespace {

using lanes_abi::LaneArrays;
using lanes_abi::ModelArrays;

struct AlignedFree {
  void operator()(double* p) const { std::free(p); }
};

// The kernel of the group's width: F is one of lanes_abi's entry points (lanes_abi.hpp)
template <class F>
F by_width(int width, F w2, F w4, F w8) {
  return width == 2 ? w2 : width == 4 ? w4 : w8;
}

}  // namespace

bool lanes_supported(const Model& model) {
  for (Index i = 0; i < model.nb; ++i) {
    switch (model.joint_type[i]) {
      case JointType::Fixed:
      case JointType::Revolute:
      case JointType::Prismatic:
      case JointType::Spherical:
      case JointType::Floating: break;
      default: return false;  // (a joint type added to JointType later, until the kernels have it)
    }
  }
  return true;
}

void check_lanes_width(int width, const char* caller) {
  if (width != 1 && width != 2 && width != 4 && width != 8)
    throw InvalidArgument(std::string(caller) + ": width must be 1, 2, 4 or 8, got " + std::to_string(width));
  if (width > lanes_max_width())
    throw InvalidArgument(std::string(caller) + ": width " + std::to_string(width) + " needs a CPU with " +
                          (width == 8 ? "AVX-512F" : "AVX2") + " (this one runs up to " +
                          std::to_string(lanes_max_width()) + ")");
}

int lanes_max_width() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // (GCC's and Clang's checks include the operating system's support for the wide registers)
  if (__builtin_cpu_supports("avx512f")) return 8;
  if (__builtin_cpu_supports("avx2")) return 4;
  return 2;
#else
  return 2;  // (the width-2 kernels are plain vector code: any target)
#endif
}

int lanes_default_width() {
  const char* env = std::getenv("IMPULSE_LANES");
  if (!env || !*env) return lanes_max_width();
  const std::string s(env);
  const int w = s == "1" ? 1 : s == "2" ? 2 : s == "4" ? 4 : s == "8" ? 8 : 0;
  if (w == 0) throw InvalidArgument("IMPULSE_LANES=" + s + ": expected 1, 2, 4 or 8");
  if (w > lanes_max_width()) {
    throw InvalidArgument("IMPULSE_LANES=" + s + ": this CPU runs at most " + std::to_string(lanes_max_width()) +
                          " lanes");
  }
  return w;
}

struct StepLanes::Impl {
  Data consts;  // Data's constants of the Model (rev_axis, rev_*, anc, ...); also width 1's Data
  std::vector<int> ints;
  std::vector<double> doubles;
  ModelArrays m;
  std::unique_ptr<double[], AlignedFree> block;
  LaneArrays x;
  double* q = nullptr;  // (x.q, x.u, writable)
  double* u = nullptr;
  double *tau = nullptr, *kp = nullptr, *kd = nullptr, *q_target = nullptr, *u_target = nullptr;  // (x's, writable)
  void (*dynamics)(const ModelArrays&, const LaneArrays&) = nullptr;
  unsigned (*factor)(const ModelArrays&, const LaneArrays&) = nullptr;
  void (*solve)(const ModelArrays&, const LaneArrays&) = nullptr;
  void (*transpose)(const double*, int, double*, int) = nullptr;
  void (*pd)(const ModelArrays&, const LaneArrays&, double) = nullptr;
  void (*pd2)(const ModelArrays&, const LaneArrays&, double) = nullptr;
  // implicit_pd ran since compute() (its dt): solve() then runs the second-pass test
  bool pd_done = false;
  Scalar pd_dt = 0;
  // the results world by world (factor() and solve() write them, get_step and solution read
  // them): per lane `stride` doubles from lane * stride, oMi R (9 nb), oMi p (3 nb), J (6 nv),
  // h, D, Dinv (nv each), L_anc, the solved right-hand side (nv)
  std::unique_ptr<double[], AlignedFree> rec;
  int stride = 0, o_p = 0, o_J = 0, o_h = 0, o_D = 0, o_Dinv = 0, o_L = 0, o_rhs = 0;
  VecX rhs1;  // width 1: the right-hand side
  VecX q1, u1;  // width 1: the state
  VecX tau1, kp1, kd1, q_target1, u_target1;  // width 1: the drive
  VecX clamped1, tau_clamp1;                  // width 1: implicit_pd's clamps (1 or 0) and bounds
  VecX m_diagonal1;                           // width 1: M's diagonal before implicit_pd's terms
  bool limited1 = false, again1 = false;      // width 1: the flags

  explicit Impl(const Model& model) : consts(model) {}
};

StepLanes::StepLanes(const Model& model, int width) : model_(model), width_(width) {
  if (width != 1 && width != 2 && width != 4 && width != 8) {
    throw InvalidArgument("StepLanes: width " + std::to_string(width) + ": expected 1, 2, 4 or 8");
  }
  if (width > lanes_max_width()) {
    throw InvalidArgument("StepLanes: width " + std::to_string(width) + ": this CPU runs at most " +
                          std::to_string(lanes_max_width()) + " lanes");
  }
  if (width > 1 && !lanes_supported(model)) {
    throw InvalidArgument("StepLanes: model '" + model.name + "' has a joint type the lane kernels do not handle");
  }
  impl_ = std::make_unique<Impl>(model);
  Impl& s = *impl_;
  if (width == 1) {
    s.q1 = model.neutral_configuration();
    s.u1 = VecX::Zero(model.nv);
    s.rhs1 = VecX::Zero(model.nv);
    s.tau1 = s.kp1 = s.kd1 = s.u_target1 = VecX::Zero(model.nv);
    s.q_target1 = s.q1;
    s.clamped1 = s.tau_clamp1 = VecX::Zero(model.nv);
    return;
  }
  const Data& d = s.consts;
  const int nb = static_cast<int>(model.nb), nv = static_cast<int>(model.nv);
  const int n_anc = static_cast<int>(d.anc.size());
  // the Model's constants, flattened: ints then doubles, pointers set once both are filled
  std::vector<int>& I = s.ints;
  const auto push_ints = [&](auto&& get, int n) {
    const std::size_t at = I.size();
    for (int e = 0; e < n; ++e) I.push_back(static_cast<int>(get(e)));
    return at;
  };
  const std::size_t o_parent = push_ints([&](int i) { return model.parent[i]; }, nb);
  const std::size_t o_type = push_ints(
      [&](int i) {
        switch (model.joint_type[i]) {
          case JointType::Fixed: return lanes_abi::kFixed;
          case JointType::Revolute: return lanes_abi::kRevolute;
          case JointType::Prismatic: return lanes_abi::kPrismatic;
          case JointType::Spherical: return lanes_abi::kSpherical;
          default: return lanes_abi::kFloating;
        }
      },
      nb);
  const std::size_t o_idx_q = push_ints([&](int i) { return model.idx_q[i]; }, nb);
  const std::size_t o_idx_v = push_ints([&](int i) { return model.idx_v[i]; }, nb);
  const std::size_t o_nv_joint = push_ints([&](int i) { return model.nv_joint[i]; }, nb);
  const std::size_t o_subtree_nv = push_ints(
      [&](int i) {
        const Index e = model.subtree_end[i];
        return (e < model.nb ? model.idx_v[e] : model.nv) - model.idx_v[i];
      },
      nb);
  const std::size_t o_rev = push_ints([&](int i) { return d.rev_axis[i]; }, nb);
  const std::size_t o_end = push_ints([&](int k) { return d.dof_subtree_end[k]; }, nv);
  const std::size_t o_anc_begin = push_ints([&](int k) { return d.anc_begin[k]; }, nv + 1);
  const std::size_t o_anc = push_ints([&](int a) { return d.anc[a]; }, n_anc);
  std::vector<double>& D = s.doubles;
  const auto push_mat = [&](const Mat3& R) {
    for (int e = 0; e < 9; ++e) D.push_back(R.data()[e]);
  };
  const auto push_vec = [&](const Vec3& p) {
    for (int e = 0; e < 3; ++e) D.push_back(p[e]);
  };
  const std::size_t o_XR = D.size();
  for (int i = 0; i < nb; ++i) push_mat(model.joint_placement[i].R);
  const std::size_t o_Xp = D.size();
  for (int i = 0; i < nb; ++i) push_vec(model.joint_placement[i].p);
  const std::size_t o_axis = D.size();
  for (int i = 0; i < nb; ++i) push_vec(model.joint_axis[i]);
  const bool rodrigues = !d.rev_A.empty();
  const std::size_t o_revA = D.size();
  for (int i = 0; i < nb && rodrigues; ++i) push_mat(d.rev_A[i]);
  const std::size_t o_revB = D.size();
  for (int i = 0; i < nb && rodrigues; ++i) push_mat(d.rev_B[i]);
  const std::size_t o_revC = D.size();
  for (int i = 0; i < nb && rodrigues; ++i) push_mat(d.rev_C[i]);
  const std::size_t o_mass = D.size();
  for (int i = 0; i < nb; ++i) D.push_back(model.inertia[i].m);
  const std::size_t o_com = D.size();
  for (int i = 0; i < nb; ++i) push_vec(model.inertia[i].c);
  const std::size_t o_Ic = D.size();
  for (int i = 0; i < nb; ++i) push_mat(model.inertia[i].Ic);
  const std::size_t o_arm = D.size();
  for (int k = 0; k < nv; ++k) D.push_back(model.armature[k]);
  const std::size_t o_damping = D.size();
  for (int k = 0; k < nv; ++k) D.push_back(model.damping[k]);
  const std::size_t o_effort = D.size();
  for (int k = 0; k < nv; ++k) D.push_back(model.effort_limit[k]);
  const std::size_t o_vlimit = D.size();
  for (int k = 0; k < nv; ++k) D.push_back(model.velocity_limit[k]);
  ModelArrays& m = s.m;
  m.nb = nb, m.nv = nv, m.nq = static_cast<int>(model.nq);
  // ltdl_factor runs a small dense chain (nv = 6, 7) by its general order, without the root block
  m.root6 = d.root_chain6 && !(d.dof_chain && (nv == 6 || nv == 7));
  m.parent = I.data() + o_parent, m.type = I.data() + o_type, m.idx_q = I.data() + o_idx_q;
  m.idx_v = I.data() + o_idx_v, m.nv_joint = I.data() + o_nv_joint, m.subtree_nv = I.data() + o_subtree_nv;
  m.rev_code = I.data() + o_rev, m.dof_subtree_end = I.data() + o_end, m.anc_begin = I.data() + o_anc_begin;
  m.anc = I.data() + o_anc;
  m.XR = D.data() + o_XR, m.Xp = D.data() + o_Xp, m.axis = D.data() + o_axis;
  m.revA = rodrigues ? D.data() + o_revA : nullptr;
  m.revB = rodrigues ? D.data() + o_revB : nullptr;
  m.revC = rodrigues ? D.data() + o_revC : nullptr;
  m.mass = D.data() + o_mass, m.com = D.data() + o_com, m.Ic = D.data() + o_Ic, m.armature = D.data() + o_arm;
  m.damping = D.data() + o_damping, m.effort_limit = D.data() + o_effort, m.velocity_limit = D.data() + o_vlimit;
  set_gravity(model.gravity);

  // the lane block: every array a multiple of 8 lanes long, so each starts 64-byte aligned
  const std::size_t W = static_cast<std::size_t>(width);
  const std::size_t sizes[] = {static_cast<std::size_t>(model.nq), static_cast<std::size_t>(nv),
                               9u * nb, 3u * nb, 6u * nv, 6u * nv, 13u * nb, 6u * nb, 6u * nb, 6u * nb,
                               static_cast<std::size_t>(nv), static_cast<std::size_t>(nv) * nv,
                               static_cast<std::size_t>(nv), static_cast<std::size_t>(nv),
                               static_cast<std::size_t>(n_anc), static_cast<std::size_t>(nv),
                               static_cast<std::size_t>(nv),
                               // the drive: tau, kp, kd, q_target, u_target
                               static_cast<std::size_t>(nv), static_cast<std::size_t>(nv),
                               static_cast<std::size_t>(nv), static_cast<std::size_t>(model.nq),
                               static_cast<std::size_t>(nv),
                               // implicit_pd's clamps, bounds and flags
                               static_cast<std::size_t>(nv), static_cast<std::size_t>(nv), 2u,
                               // M's diagonal before implicit_pd's terms
                               static_cast<std::size_t>(nv)};
  constexpr int kArrays = sizeof(sizes) / sizeof(sizes[0]);
  std::size_t total = 0, at[kArrays];
  for (int a = 0; a < kArrays; ++a) {
    at[a] = total;
    total += (sizes[a] * W + 7) / 8 * 8;
  }
  total = total > 0 ? total : 8;
  double* mem = static_cast<double*>(std::aligned_alloc(64, total * sizeof(double)));
  if (!mem) throw std::bad_alloc();
  s.block.reset(mem);
  std::memset(mem, 0, total * sizeof(double));
  LaneArrays& x = s.x;
  s.q = mem + at[0], s.u = mem + at[1];
  x.q = s.q, x.u = s.u, x.R = mem + at[2], x.p = mem + at[3], x.J = mem + at[4], x.F = mem + at[5];
  x.Y = mem + at[6], x.v = mem + at[7], x.a = mem + at[8], x.f = mem + at[9], x.h = mem + at[10];
  x.M = mem + at[11], x.D = mem + at[12], x.Dinv = mem + at[13], x.L_anc = mem + at[14], x.DL = mem + at[15];
  x.rhs = mem + at[16];
  s.tau = mem + at[17], s.kp = mem + at[18], s.kd = mem + at[19], s.q_target = mem + at[20], s.u_target = mem + at[21];
  x.tau = s.tau, x.kp = s.kp, x.kd = s.kd, x.q_target = s.q_target, x.u_target = s.u_target;
  x.clamped = mem + at[22], x.tau_clamp = mem + at[23], x.flags = mem + at[24], x.M_diagonal = mem + at[25];
  s.dynamics = by_width(width, &lanes_abi::step_dynamics_w2, &lanes_abi::step_dynamics_w4, &lanes_abi::step_dynamics_w8);
  s.factor = by_width(width, &lanes_abi::ltdl_factor_w2, &lanes_abi::ltdl_factor_w4, &lanes_abi::ltdl_factor_w8);
  s.solve = by_width(width, &lanes_abi::ltdl_solve_w2, &lanes_abi::ltdl_solve_w4, &lanes_abi::ltdl_solve_w8);
  s.pd = by_width(width, &lanes_abi::implicit_pd_w2, &lanes_abi::implicit_pd_w4, &lanes_abi::implicit_pd_w8);
  s.pd2 = by_width(width, &lanes_abi::pd_second_pass_w2, &lanes_abi::pd_second_pass_w4, &lanes_abi::pd_second_pass_w8);
  s.transpose = by_width(width, &lanes_abi::transpose_w2, &lanes_abi::transpose_w4, &lanes_abi::transpose_w8);
  s.o_p = 9 * nb, s.o_J = s.o_p + 3 * nb, s.o_h = s.o_J + 6 * nv, s.o_D = s.o_h + nv, s.o_Dinv = s.o_D + nv;
  s.o_L = s.o_Dinv + nv, s.o_rhs = s.o_L + n_anc;
  s.stride = (s.o_rhs + nv + 7) / 8 * 8;  // (each lane's record 64-byte aligned)
  double* rec = static_cast<double*>(std::aligned_alloc(64, W * static_cast<std::size_t>(s.stride) * sizeof(double)));
  if (!rec) throw std::bad_alloc();
  s.rec.reset(rec);
  std::memset(rec, 0, W * static_cast<std::size_t>(s.stride) * sizeof(double));
  // every lane starts at the neutral configuration (a valid quaternion)
  const VecX q0 = model.neutral_configuration();
  for (int w = 0; w < width; ++w) set_state(w, q0, VecX::Zero(model.nv));
}

StepLanes::~StepLanes() = default;

void StepLanes::set_gravity(const Vec3& g) {
  impl_->consts.gravity = g;
  for (int e = 0; e < 3; ++e) impl_->m.gravity[e] = g[e];
}

void StepLanes::set_state(int lane, const VecXcref& q, const VecXcref& u) {
  if (lane < 0 || lane >= width_) {
    throw InvalidArgument("StepLanes::set_state: lane " + std::to_string(lane) + " of " + std::to_string(width_));
  }
  if (q.size() != model_.nq || u.size() != model_.nv) {
    throw InvalidArgument("StepLanes::set_state: q has " + std::to_string(q.size()) + " entries (nq " +
                          std::to_string(model_.nq) + "), u " + std::to_string(u.size()) + " (nv " +
                          std::to_string(model_.nv) + ")");
  }
  Impl& s = *impl_;
  if (width_ == 1) {
    s.q1 = q, s.u1 = u;
    return;
  }
  const Index W = width_;
  for (Index e = 0; e < model_.nq; ++e) s.q[e * W + lane] = q[e];
  for (Index e = 0; e < model_.nv; ++e) s.u[e * W + lane] = u[e];
}

void StepLanes::set_drive(int lane, const VecXcref& tau, const VecXcref& kp, const VecXcref& kd,
                          const VecXcref& q_target, const VecXcref& u_target) {
  IMPULSE_ASSERT(lane >= 0 && lane < width_);
  IMPULSE_ASSERT(tau.size() == model_.nv && kp.size() == model_.nv && kd.size() == model_.nv &&
                 q_target.size() == model_.nq && u_target.size() == model_.nv);
  Impl& s = *impl_;
  if (width_ == 1) {
    s.tau1 = tau, s.kp1 = kp, s.kd1 = kd, s.q_target1 = q_target, s.u_target1 = u_target;
    return;
  }
  const Index W = width_, nv = model_.nv;
  double* const t = s.tau + lane;
  double* const p = s.kp + lane;
  double* const d = s.kd + lane;
  double* const ut = s.u_target + lane;
  for (Index e = 0; e < nv; ++e) t[e * W] = tau[e], p[e * W] = kp[e], d[e * W] = kd[e], ut[e * W] = u_target[e];
  double* const qt = s.q_target + lane;
  for (Index e = 0; e < model_.nq; ++e) qt[e * W] = q_target[e];
}
void StepLanes::implicit_pd(Scalar dt) {
  Impl& s = *impl_;
  s.pd_done = true, s.pd_dt = dt;
  if (width_ > 1) {
    s.pd(s.m, s.x, dt);
    return;
  }
  // width 1: the kernel's operations on the one world (lanes_kernels.inc, implicit_pd)
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  const Model& m = model_;
  Data& d = s.consts;
  const VecX &q = s.q1, &u = s.u1, &tau = s.tau1;
  VecX& rhs = s.rhs1;
  for (Index k = 0; k < m.nv; ++k) rhs[k] = (tau[k] - d.h[k]) - m.damping[k] * u[k];
  s.m_diagonal1 = d.M.diagonal();
  s.clamped1.setZero();
  s.limited1 = false;
  for_each_scalar_actuator(m, u.data(), [&](Index k, Index iq, Scalar lo, Scalar hi) {
    const Scalar vmax = m.velocity_limit[k];
    const bool limited = lo > -inf || hi < inf || (vmax > 0 && vmax < inf);
    const Scalar pd_p = s.kp1[k] * (s.q_target1[iq] - q[iq] - dt * u[k]);
    const Scalar pd_d = s.kd1[k] * (s.u_target1[k] - u[k]);
    const Scalar t = tau[k] + pd_p + pd_d;
    d.M(k, k) += dt * m.damping[k];
    s.limited1 = s.limited1 || limited;
    if (limited && (t < lo || t > hi)) {
      s.clamped1[k] = 1, s.tau_clamp1[k] = std::clamp(t, lo, hi);
      rhs[k] += s.tau_clamp1[k] - tau[k];
      return;
    }
    rhs[k] += pd_p + pd_d;
    d.M(k, k) += dt * s.kd1[k] + dt * dt * s.kp1[k];
  });
  rhs *= dt;
}
bool StepLanes::clamps(int lane, unsigned char* clamped, Scalar* tau_clamp) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && has_pd());
  const Impl& s = *impl_;
  if (width_ == 1) {
    for (Index k = 0; k < model_.nv; ++k) {
      clamped[k] = s.clamped1[k] != 0;
      if (clamped[k]) tau_clamp[k] = s.tau_clamp1[k];
    }
    return s.limited1;
  }
  const Index W = width_;
  for (Index k = 0; k < model_.nv; ++k) {
    clamped[k] = s.x.clamped[k * W + lane] != 0;
    if (clamped[k]) tau_clamp[k] = s.x.tau_clamp[k * W + lane];
  }
  return s.x.flags[lane] != 0;
}
bool StepLanes::second_pass(int lane) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && has_pd());
  return width_ == 1 ? impl_->again1 : impl_->x.flags[width_ + lane] != 0;
}
bool StepLanes::has_pd() const { return impl_->pd_done; }
void StepLanes::mass_matrix(int lane, Data& data) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && has_pd() && data.nv == model_.nv);
  const Impl& s = *impl_;
  const Index n = model_.nv;
  const Data& c = s.consts;
  // the entries ltdl_factor reads: the diagonal and M(i, k) for the ancestors i of k (i < k)
  for (Index k = 0; k < n; ++k) {
    if (width_ == 1) {
      data.M(k, k) = s.m_diagonal1[k];
      for (Index a = c.anc_begin[k]; a < c.anc_begin[k + 1]; ++a) data.M(c.anc[a], k) = c.M(c.anc[a], k);
      continue;
    }
    data.M(k, k) = s.x.M_diagonal[k * width_ + lane];
    for (Index a = c.anc_begin[k]; a < c.anc_begin[k + 1]; ++a) {
      const Index i = c.anc[a];
      data.M(i, k) = s.x.M[(i + k * n) * width_ + lane];
    }
  }
}
void StepLanes::compute() {
  Impl& s = *impl_;
  s.pd_done = false;
  if (width_ == 1) {
    compute_step_dynamics(model_, s.consts, s.q1, s.u1);
    return;
  }
  s.dynamics(s.m, s.x);
}

void StepLanes::add_to_diagonal(int lane, Index k, Scalar x) {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && k >= 0 && k < model_.nv);
  if (width_ == 1) {
    impl_->consts.M(k, k) += x;
    return;
  }
  impl_->x.M[(k + k * model_.nv) * width_ + lane] += x;
}

unsigned StepLanes::factor() {
  Impl& s = *impl_;
  if (width_ == 1) return ltdl_factor(model_, s.consts) ? 1u : 0u;
  const unsigned pd = s.factor(s.m, s.x);
  // the lane block world by world, while it is in the cache: get_step then copies contiguous
  // runs (read lane by lane from the block, one cache line per entry, the scatter cost more than
  // the kernels)
  const LaneArrays& x = s.x;
  const int nb = s.m.nb, nv = s.m.nv, n_anc = s.m.anc_begin[nv];
  s.transpose(x.R, 9 * nb, s.rec.get(), s.stride);
  s.transpose(x.p, 3 * nb, s.rec.get() + s.o_p, s.stride);
  s.transpose(x.J, 6 * nv, s.rec.get() + s.o_J, s.stride);
  s.transpose(x.h, nv, s.rec.get() + s.o_h, s.stride);
  s.transpose(x.D, nv, s.rec.get() + s.o_D, s.stride);
  s.transpose(x.Dinv, nv, s.rec.get() + s.o_Dinv, s.stride);
  s.transpose(x.L_anc, n_anc, s.rec.get() + s.o_L, s.stride);
  return pd;
}

void StepLanes::solve() {
  Impl& s = *impl_;
  if (width_ == 1) {
    ltdl_solve(model_, s.consts, s.rhs1);
    if (s.pd_done) second_pass1();
    return;
  }
  s.solve(s.m, s.x);
  if (s.pd_done) s.pd2(s.m, s.x, s.pd_dt);
  s.transpose(s.x.rhs, s.m.nv, s.rec.get() + s.o_rhs, s.stride);
}

StepLanes::LaneBlock StepLanes::lane_block(int lane) {
  IMPULSE_ASSERT(lane >= 0 && lane < width_);
  Impl& s = *impl_;
  if (width_ == 1) return {s.consts.M.data(), s.consts.h.data(), s.rhs1.data(), 1};
  return {s.x.M + lane, s.x.h + lane, s.x.rhs + lane, width_};
}

const Scalar* StepLanes::solution(int lane) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_);
  const Impl& s = *impl_;
  if (width_ == 1) return s.rhs1.data();
  return s.rec.get() + static_cast<std::size_t>(lane) * static_cast<std::size_t>(s.stride) + s.o_rhs;
}

void StepLanes::second_pass1() {
  // width 1: pd_second_pass's operations (lanes_kernels.inc) on the one world
  Impl& s = *impl_;
  constexpr Scalar inf = std::numeric_limits<Scalar>::infinity();
  const Model& m = model_;
  const Scalar dt = s.pd_dt;
  const VecX &q = s.q1, &u = s.u1;
  s.again1 = false;
  for_each_scalar_actuator(m, u.data(), [&](Index k, Index iq, Scalar lo, Scalar hi) {
    if (!(lo > -inf) && !(hi < inf)) return;
    const Scalar uf = u[k] + s.rhs1[k];
    const Scalar t = s.tau1[k] + s.kp1[k] * (s.q_target1[iq] - q[iq] - dt * uf) + s.kd1[k] * (s.u_target1[k] - uf);
    if (clamp_changes(s.clamped1[k] != 0, s.tau_clamp1[k], t, lo, hi)) s.again1 = true;
  });
}
unsigned StepLanes::run() {
  compute();
  return factor();
}

void StepLanes::get(int lane, Data& data) const {
  if (lane < 0 || lane >= width_) {
    throw InvalidArgument("StepLanes::get: lane " + std::to_string(lane) + " of " + std::to_string(width_));
  }
  if (data.nb != model_.nb || data.nv != model_.nv || data.nq != model_.nq) {
    throw InvalidArgument("StepLanes::get: the Data is not of this StepLanes' model");
  }
  const Impl& s = *impl_;
  if (width_ == 1) {
    const Data& d = s.consts;
    data.oMi = d.oMi, data.J = d.J, data.h = d.h, data.M = d.M, data.D = d.D, data.Dinv = d.Dinv;
    data.L_anc = d.L_anc;
    return;
  }
  const Index W = width_;
  const LaneArrays& x = s.x;
  const auto at = [&](const double* a, Index e) { return a[e * W + lane]; };
  for (Index i = 0; i < model_.nb; ++i) {
    SE3& X = data.oMi[i];
    for (int e = 0; e < 9; ++e) X.R.data()[e] = at(x.R, 9 * i + e);
    for (int e = 0; e < 3; ++e) X.p[e] = at(x.p, 3 * i + e);
  }
  for (Index e = 0; e < 6 * model_.nv; ++e) data.J.data()[e] = at(x.J, e);
  for (Index e = 0; e < model_.nv; ++e) data.h[e] = at(x.h, e);
  // M at the diagonal and the ancestor pairs only (216 of ANYmal's 324 entries): every other
  // entry is zero in both (no scalar call writes it)
  const Index n = model_.nv;
  const Data& c = s.consts;
  for (Index k = 0; k < n; ++k) {
    data.M(k, k) = at(x.M, k + k * n);
    for (Index a = c.anc_begin[k]; a < c.anc_begin[k + 1]; ++a) {
      const Index i = c.anc[a];
      data.M(i, k) = at(x.M, i + k * n);
      data.M(k, i) = at(x.M, k + i * n);
    }
  }
  for (Index e = 0; e < model_.nv; ++e) data.D[e] = at(x.D, e), data.Dinv[e] = at(x.Dinv, e);
  for (Index e = 0; e < data.L_anc.size(); ++e) data.L_anc[e] = at(x.L_anc, e);
}

void StepLanes::get_step(int lane, Data& data) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && data.nb == model_.nb && data.nv == model_.nv);
  const Impl& s = *impl_;
  if (width_ == 1) {
    const Data& d = s.consts;
    data.oMi = d.oMi, data.J = d.J, data.h = d.h, data.D = d.D, data.Dinv = d.Dinv, data.L_anc = d.L_anc;
    return;
  }
  const double* r = s.rec.get() + static_cast<std::size_t>(lane) * static_cast<std::size_t>(s.stride);
  const Index nb = model_.nb, nv = model_.nv;
  for (Index i = 0; i < nb; ++i) {
    SE3& X = data.oMi[i];
    std::memcpy(X.R.data(), r + 9 * i, 9 * sizeof(double));
    std::memcpy(X.p.data(), r + s.o_p + 3 * i, 3 * sizeof(double));
  }
  std::memcpy(data.J.data(), r + s.o_J, static_cast<std::size_t>(6 * nv) * sizeof(double));
  std::memcpy(data.h.data(), r + s.o_h, static_cast<std::size_t>(nv) * sizeof(double));
  std::memcpy(data.D.data(), r + s.o_D, static_cast<std::size_t>(nv) * sizeof(double));
  std::memcpy(data.Dinv.data(), r + s.o_Dinv, static_cast<std::size_t>(nv) * sizeof(double));
  // (a chain of one joint has no ancestor entries: no copy, memcpy takes no null pointer)
  if (data.L_anc.size() > 0)
    std::memcpy(data.L_anc.data(), r + s.o_L, static_cast<std::size_t>(data.L_anc.size()) * sizeof(double));
}

Scalar StepLanes::h(int lane, Index k) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && k >= 0 && k < model_.nv);
  if (width_ == 1) return impl_->consts.h[k];
  return impl_->x.h[k * width_ + lane];
}

Scalar StepLanes::M(int lane, Index r, Index c) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && r >= 0 && r < model_.nv && c >= 0 && c < model_.nv);
  if (width_ == 1) return impl_->consts.M(r, c);
  return impl_->x.M[(r + c * model_.nv) * width_ + lane];
}

Scalar StepLanes::D(int lane, Index k) const {
  IMPULSE_ASSERT(lane >= 0 && lane < width_ && k >= 0 && k < model_.nv);
  if (width_ == 1) return impl_->consts.D[k];
  return impl_->x.D[k * width_ + lane];
}

}  // namespace impulse
