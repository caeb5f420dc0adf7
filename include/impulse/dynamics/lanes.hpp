// Lanes: the fused dynamics of a time step for W worlds of one Model at once (module dynamics/).
//
// StepLanes computes, for W (q, u) pairs of the same Model, what compute_step_dynamics(q, u)
// (step_dynamics.hpp, without external forces) followed by ltdl_factor (ltdl.hpp) computes for
// each: the poses oMi, the world-frame joint subspaces J, the nonlinear effects h, the joint-space
// inertia M (with armature) and its tree-sparse L^T D L factor. The W worlds run in lockstep, one
// per lane of a SIMD register (the worlds' data in structure-of-arrays blocks: entry e of a
// quantity is W consecutive doubles, one per world), since every branch of these stages depends
// on the Model only. Widths: 2 (SSE2, the x86-64 baseline), 4 (AVX2), 8 (AVX-512F), chosen at
// run time by what the CPU supports; width 1 runs the scalar functions world by world.
//
// Lane w's results equal compute_step_dynamics + ltdl_factor on world w bit for bit (the kernels
// repeat the scalar code's operations in its order and are compiled without FMA contraction;
// tests/dynamics/test_lanes.cpp).
#pragma once

#include <memory>

#include "impulse/dynamics/data.hpp"

namespace impulse {

// Whether the lane kernels handle every joint type of `model` (Fixed, Revolute, Prismatic,
// Spherical, Floating: all of JointType today). A Model they do not handle steps its worlds one by
// one through the scalar functions.
bool lanes_supported(const Model& model);

// The widest lane count this CPU runs: 8 with AVX-512F, 4 with AVX2, else 2.
int lanes_max_width();

// The width to use: the environment variable IMPULSE_LANES (1 = the scalar path, 2, 4, 8) if
// set, else lanes_max_width(). Throws InvalidArgument naming IMPULSE_LANES for any other value or
// for a width this CPU lacks.
int lanes_default_width();

// Throws InvalidArgument, prefixed with `caller`, unless width is 1, 2, 4 or 8 and this CPU runs
// it (the check of the batched steppers' set_lanes).
void check_lanes_width(int width, const char* caller);

class StepLanes {
 public:
  // Throws InvalidArgument when width is not 1, 2, 4 or 8, is wider than lanes_max_width(), or
  // is above 1 for a Model that lanes_supported() refuses. The Model must outlive this object.
  StepLanes(const Model& model, int width);
  ~StepLanes();
  StepLanes(const StepLanes&) = delete;
  StepLanes& operator=(const StepLanes&) = delete;

  int width() const { return width_; }
  const Model& model() const { return model_; }

  // Gravity for every lane (the Model's default until set; as Data::gravity).
  void set_gravity(const Vec3& g);

  // Gathers world `lane`'s state into the lane block (q: nq, u: nv).
  void set_state(int lane, const VecXcref& q, const VecXcref& u);

  // compute_step_dynamics + ltdl_factor for all lanes: compute() then factor(). Returns a bit
  // mask: bit w is set when lane w's M is positive definite (ltdl_factor's result).
  unsigned run();
  // The two halves, for a caller that changes the diagonal of M in between (the stepper's
  // M + dt (damping + Kd) + dt^2 Kp, as in place on Data::M before ltdl_factor).
  void compute();
  // M_kk += x in lane `lane` (one rounding, as `data.M(k, k) += x`); between compute and factor.
  // (Indices checked by IMPULSE_ASSERT only: a per-dof call of the step.)
  void add_to_diagonal(int lane, Index k, Scalar x);
  unsigned factor();

  // Scatters lane `lane`'s results into data (a Data of this Model), as the scalar calls leave
  // them: oMi, J, h, M (upper triangle M, strictly lower triangle L, diagonal D), D, Dinv, L_anc.
  // Other fields of data are left as they are, and so are the entries of M off the tree's
  // ancestor pairs (zero in every Data: no scalar call writes them either).
  void get(int lane, Data& data) const;

  // The lane block of lane `lane` for a caller that writes M~'s diagonal terms and a right-hand
  // side itself (the stepper's first pass, stepper/lanes_step.hpp): entry k of h and rhs at
  // [k stride], M_rc at [(r + c nv) stride] (M valid between compute() and factor(), h after
  // compute(); rhs is solve()'s input).
  struct LaneBlock {
    Scalar* M;
    const Scalar* h;
    Scalar* rhs;
    Index stride;
  };
  LaneBlock lane_block(int lane);

  // The implicit PD step's first pass for every lane at once, between compute() and factor(), in
  // place of a caller's per-lane writes through lane_block: the first guess of the actuator
  // clamps (the torque tau + Kp (q* - q - dt u) + Kd (u* - u) against the Model's effort and
  // velocity limits), M_kk += dt damping_k + (unless clamped) dt Kd_k + dt^2 Kp_k on every scalar
  // dof, and the right-hand side dt (tau - h - damping u + the PD torque, or the clamped torque
  // minus tau), each lane with the operations and order of the stepper's dynamics stage
  // (stepper/lanes_step.hpp; docs/architecture.md, "One step"), so solve() then gives its
  // first pass's u_free - u bit for bit. set_drive gives each lane's generalized force tau (nv),
  // PD gains kp, kd (nv), targets q_target (nq) and u_target (nv). (Sizes checked by
  // IMPULSE_ASSERT only: a per-step call.)
  void set_drive(int lane, const VecXcref& tau, const VecXcref& kp, const VecXcref& kd, const VecXcref& q_target,
                 const VecXcref& u_target);
  void implicit_pd(Scalar dt);
  // After implicit_pd (has_pd() until the next compute()): lane `lane`'s first-guess clamps into
  // clamped (nv entries, 1 where the actuator torque is clamped) and tau_clamp (the bound, written
  // where clamped); returns whether some scalar dof has an actuator limit (both as the stepper's
  // first_clamps). After solve(), second_pass(lane): whether the implicit PD torque at
  // u_free = u + solution(lane) calls for another pass (a dof to clamp, or a clamped one whose
  // torque no longer presses on its bound: the dynamics stage's test after its first pass).
  bool has_pd() const;
  bool clamps(int lane, unsigned char* clamped, Scalar* tau_clamp) const;
  bool second_pass(int lane) const;
  // After implicit_pd: lane `lane`'s mass matrix as step_dynamics computed it, before
  // implicit_pd's terms, into data.M at the entries ltdl_factor reads (the diagonal and M(i, k)
  // for the ancestors i of k), for a second pass without the CRBA again.
  void mass_matrix(int lane, Data& data) const;
  // ltdl_solve (ltdl.hpp) of every lane's rhs with its factor (after factor()), in place: lane w
  // equals ltdl_solve(model, data_w, rhs_w) bit for bit. solution(lane) then points at lane
  // `lane`'s nv solved entries, contiguous.
  void solve();
  const Scalar* solution(int lane) const;

  // What the step's later stages read of lane `lane`'s results (valid after factor()): oMi, J, h,
  // D, Dinv, L_anc into data, as get writes them, but not M (the stepper reads only the factor's
  // D, Dinv and L_anc after ltdl_factor; a later pass of its dynamics stage recomputes M whole).
  // Contiguous copies: factor() lays the results out world by world. (Checked by IMPULSE_ASSERT
  // only: a per-step call.)
  void get_step(int lane, Data& data) const;

  // Single entries, without a Data: h_k, M_rc (as get writes it), D_k of lane `lane`.
  Scalar h(int lane, Index k) const;
  Scalar M(int lane, Index r, Index c) const;
  Scalar D(int lane, Index k) const;

 private:
  void second_pass1();
  struct Impl;
  const Model& model_;
  int width_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace impulse
