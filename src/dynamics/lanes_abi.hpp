// Private: the plain-array interface between src/dynamics/lanes.cpp (baseline code: Model, Data,
// Eigen) and the lane kernels (src/dynamics/lanes_kernels.inc, compiled once per width in
// lanes_w2.cpp, lanes_w4.cpp, lanes_w8.cpp). Nothing here has a function body: the kernel
// files include only this header, so no inline code (Eigen, the standard library) is compiled
// with their wider instruction sets (see lanes_kernels.inc). Not installed.
#pragma once

namespace impulse {
namespace lanes_abi {

// Joint types as the kernels see them (JointType, mapped in lanes.cpp).
enum : int { kFixed = 0, kRevolute = 1, kPrismatic = 2, kSpherical = 3, kFloating = 4 };

// One Model's constants, flattened (every matrix column-major, as Eigen's Mat3).
struct ModelArrays {
  int nb = 0, nv = 0, nq = 0;
  // the root block of ltdl_factor (Data::root_chain6, and not the small chain ltdl_factor runs
  // on its own for nv = 6, 7)
  bool root6 = false;
  const int* parent = nullptr;      // nb
  const int* type = nullptr;        // nb (the k* codes above)
  const int* idx_q = nullptr;       // nb
  const int* idx_v = nullptr;       // nb
  const int* nv_joint = nullptr;    // nb
  const int* subtree_nv = nullptr;  // nb: dofs in the subtree of body i
  const int* rev_code = nullptr;    // nb: Data::rev_axis
  const double* XR = nullptr;       // nb x 9: joint_placement R
  const double* Xp = nullptr;       // nb x 3: joint_placement p
  const double* axis = nullptr;     // nb x 3
  const double* revA = nullptr;     // nb x 9 (Data::rev_A, rev_B, rev_C; null if Data has none)
  const double* revB = nullptr;
  const double* revC = nullptr;
  const double* mass = nullptr;     // nb
  const double* com = nullptr;      // nb x 3
  const double* Ic = nullptr;       // nb x 9: rotational inertia about the centre of mass
  const double* armature = nullptr;      // nv
  const int* dof_subtree_end = nullptr;  // nv
  const int* anc_begin = nullptr;        // nv + 1
  const int* anc = nullptr;              // anc_begin[nv]
  const double* damping = nullptr;         // nv (implicit_pd)
  const double* effort_limit = nullptr;    // nv
  const double* velocity_limit = nullptr;  // nv
  double gravity[3] = {0, 0, 0};
};

// The W worlds' arrays, structure of arrays: entry e of a quantity is the W doubles
// [e W, e W + W), one per world (lane). Every pointer is 64-byte aligned.
struct LaneArrays {
  const double* q = nullptr;  // nq entries
  const double* u = nullptr;  // nv
  double* R = nullptr;        // nb x 9: oMi R
  double* p = nullptr;        // nb x 3: oMi p
  double* J = nullptr;        // nv x 6: world subspace columns
  double* F = nullptr;        // nv x 6
  double* Y = nullptr;        // nb x 13: oYcrb (m, h, I_O)
  double* v = nullptr;        // nb x 6 (scratch)
  double* a = nullptr;        // nb x 6 (scratch)
  double* f = nullptr;        // nb x 6 (scratch)
  double* h = nullptr;        // nv
  double* M = nullptr;        // nv x nv (column-major; upper triangle M, lower L, diagonal D)
  double* D = nullptr;        // nv
  double* Dinv = nullptr;     // nv
  double* L_anc = nullptr;    // anc_begin[nv]
  double* DL = nullptr;       // nv (scratch)
  double* rhs = nullptr;      // nv: a right-hand side, solved in place (ltdl_solve)
  // the drive (implicit_pd's input): generalized force, PD gains and targets
  const double* tau = nullptr;  // nv
  const double* kp = nullptr;   // nv
  const double* kd = nullptr;   // nv
  const double* q_target = nullptr;  // nq
  const double* u_target = nullptr;  // nv
  // implicit_pd's outputs: the first-guess clamps (1 or 0) and bounds, and two flags per lane:
  // [0] some scalar dof has an actuator limit, [1] (pd_second_pass) another pass is due
  double* clamped = nullptr;    // nv
  double* tau_clamp = nullptr;  // nv (where clamped)
  double* flags = nullptr;      // 2
  double* M_diagonal = nullptr;  // nv: M's diagonal before implicit_pd's terms (a second pass
                                 // starts again from it and M's upper triangle)
};

// compute_step_dynamics (without external forces), for W = 2, 4, 8 worlds
void step_dynamics_w2(const ModelArrays& m, const LaneArrays& x);
void step_dynamics_w4(const ModelArrays& m, const LaneArrays& x);
void step_dynamics_w8(const ModelArrays& m, const LaneArrays& x);
// ltdl_factor of x.M (its upper triangle and diagonal). Returns a bit mask: bit w set when world
// w's M is positive definite (ltdl_factor's result).
unsigned ltdl_factor_w2(const ModelArrays& m, const LaneArrays& x);
unsigned ltdl_factor_w4(const ModelArrays& m, const LaneArrays& x);
unsigned ltdl_factor_w8(const ModelArrays& m, const LaneArrays& x);
// ltdl_solve of x.rhs in place (x.M's factor: D, Dinv, L_anc)
void ltdl_solve_w2(const ModelArrays& m, const LaneArrays& x);
void ltdl_solve_w4(const ModelArrays& m, const LaneArrays& x);
void ltdl_solve_w8(const ModelArrays& m, const LaneArrays& x);
// The implicit PD step's first pass on x.M (between step_dynamics and ltdl_factor) and into x.rhs:
// the actuators' first-guess clamps, M_kk += dt damping_k (+ dt Kd_k + dt^2 Kp_k unless clamped),
// rhs = dt (tau - h - damping u + the PD torque or the clamped one's difference), as the stepper's
// dynamics stage computes them (src/stepper/stepper.cpp, first_clamps and dynamics_stage)
void implicit_pd_w2(const ModelArrays& m, const LaneArrays& x, double dt);
void implicit_pd_w4(const ModelArrays& m, const LaneArrays& x, double dt);
void implicit_pd_w8(const ModelArrays& m, const LaneArrays& x, double dt);
// The stepper's test for a second pass after the first (x.rhs solved: u_free = u + rhs): flags[1]
// set where an implicit PD torque at u_free leaves the interval on a dof the first guess did not
// clamp, or a clamped dof's no longer presses on its bound (stepper.cpp, dynamics_stage)
void pd_second_pass_w2(const ModelArrays& m, const LaneArrays& x, double dt);
void pd_second_pass_w4(const ModelArrays& m, const LaneArrays& x, double dt);
void pd_second_pass_w8(const ModelArrays& m, const LaneArrays& x, double dt);
// dst[l stride + e] = src[e W + l] for e < n and every lane l < W: a lane array laid out world
// by world (dst 64-byte aligned is not required)
void transpose_w2(const double* src, int n, double* dst, int stride);
void transpose_w4(const double* src, int n, double* dst, int stride);
void transpose_w8(const double* src, int n, double* dst, int stride);


// One path product of the contact rows' dense G (src/contact/delassus.cpp, assemble_dense): the
// block B = sum_{t < len} Dinv[k_t] Yp[:, t] Yq[:, t]^T of two pieces added into G at entry g
// (G(rp + i, rq + j) at g + i + j ld) and, when gm >= 0, B^T at gm (G(rq + j, rp + i) at
// gm + j + i ld). Entries are lane-array entries: Yp's value r at path position t is entry
// yp + 3 t + r of the lane array Y (and Dinv[k_t] Yp's the same entry of DY). kind: the scalar
// kernel it repeats (rows of p x rows of q).
enum : int { kProduct11 = 0, kProduct13 = 1, kProduct31 = 2, kProduct33 = 3, kProductNN = 4 };
struct ProductOp {
  int kind = 0, len = 0, yp = 0, yq = 0, g = 0, gm = -1, ld = 0;
};
// DY = D^-1 Y on the pieces' paths (pieces: 4 ints each, its first Y entry, its path length, the
// first of its path's entries of the lane array Dinv in dinv_index, its rows 1 or 3), then every
// op added into G, which is zero on entry (add_path_product, add_path_product_33 and
// add_path_product_zz of delassus.cpp after G = 0: their operations in their order, lane by lane)
void dense_products_w2(const int* pieces, int npieces, const ProductOp* ops, int nops, const int* dinv_index,
                       const double* Y, const double* Dinv, double* DY, double* G);
void dense_products_w4(const int* pieces, int npieces, const ProductOp* ops, int nops, const int* dinv_index,
                       const double* Y, const double* Dinv, double* DY, double* G);
void dense_products_w8(const int* pieces, int npieces, const ProductOp* ops, int nops, const int* dinv_index,
                       const double* Y, const double* Dinv, double* DY, double* G);
// The contact rows' Y = L^-T J^T on their paths, with c = J u_free and v- = J u of the contacts
// (src/contact/delassus.cpp, assemble_paths: point_jacobian_branch in the contact frame,
// accumulate_velocities, solve_LT_path's gather form; their operations in their order, lane by
// lane). pieces: kPathInts ints each, in the assembler's piece order: [0] kind (kPathContact: a
// contact side's 3 rows; kPathNormal: its normal row alone, rows 0 and 1 zero; kPathDof: a
// one-row piece +-e_k whose Y is in the lane array on entry), [1] path length, [2] first Y entry,
// [3] first entry in `path`, [4] 1: the path starts with a floating root's 6 dofs (the closed-form
// columns of floating_root_columns), [5] contact sides: first entry of its record in PR (the
// contact point p, 3 entries, then R = +-C^T column-major, 9), [6] contact sides: the entry of
// its contact's c in CV (its v- at the same entry + nv3). path: 3 ints per path entry t (root
// first): the dof's entry in UF and U, its J column's first entry in J (6 entries: linear,
// angular), and an entry e of L such that L(dofs[t], dofs[s]) is entry e - s (Data::L_anc's row
// of dofs[t] shifted by t - 1). CV (2 nv3 entries) is zeroed, then every contact side adds into
// its contact's c and v-.
enum : int { kPathContact = 0, kPathNormal = 1, kPathDof = 2, kPathInts = 7 };
void contact_paths_w2(const int* pieces, int npieces, const int* path, const double* J, const double* UF,
                      const double* U, const double* L, const double* PR, double* Y, double* CV, int nv3);
void contact_paths_w4(const int* pieces, int npieces, const int* path, const double* J, const double* UF,
                      const double* U, const double* L, const double* PR, double* Y, double* CV, int nv3);
void contact_paths_w8(const int* pieces, int npieces, const int* path, const double* J, const double* UF,
                      const double* U, const double* L, const double* PR, double* Y, double* CV, int nv3);
// The velocity update u+ = u_free + M~^-1 J^T lambda of one system (src/contact/delassus.cpp,
// DelassusAssembler::apply: its operations in their order, lane by lane): R = sum over the
// system's pieces of Y lambda on their paths, R *= D^-1, L's solve (ltdl_solve_L), R = UF + R.
// pieces: kVelocityInts ints each, in the assembler's order: [0] kind (kPathContact, kPathNormal
// or kPathDof, as contact_paths), [1] path length, [2] first Y entry, [3] the entry of its first
// row in LAM, [4] its first entry in dofs (the path's dofs, the system's numbering). Dinv, UF
// and R: nv entries; L: Data::L_anc's anc_begin[nv] entries, anc_begin and anc the Model's
// ancestor lists (Data::anc_begin, anc).
enum : int { kVelocityInts = 5 };
void velocity_update_w2(const int* pieces, int npieces, const int* dofs, const double* Y, const double* LAM,
                        const double* Dinv, const double* L, const int* anc_begin, const int* anc, int nv,
                        const double* UF, double* R);
void velocity_update_w4(const int* pieces, int npieces, const int* dofs, const double* Y, const double* LAM,
                        const double* Dinv, const double* L, const int* anc_begin, const int* anc, int nv,
                        const double* UF, double* R);
void velocity_update_w8(const int* pieces, int npieces, const int* dofs, const double* Y, const double* LAM,
                        const double* Dinv, const double* L, const int* anc_begin, const int* anc, int nv,
                        const double* UF, double* R);
// One sweep of the bisection solver over nc contacts with friction of W dense problems, from
// contact `from` up to the first contact at which a lane of `care` slips (lanes_kernels.inc,
// bisection_sweep): returns that contact (its lanes in *slip, their c~ in SLIP) or nc, ERR the
// sweep's error per lane; resumed at that contact with the slipping lanes' lambda* in SLIP and
// their bits in `given`.
int bisection_sweep_w2(int nc, int from, const double* G, const double* C, const double* MU, const double* MI,
                       double alpha, double* LAM, double* ERR, unsigned care, unsigned given, double* SLIP,
                       unsigned* slip);
int bisection_sweep_w4(int nc, int from, const double* G, const double* C, const double* MU, const double* MI,
                       double alpha, double* LAM, double* ERR, unsigned care, unsigned given, double* SLIP,
                       unsigned* slip);
int bisection_sweep_w8(int nc, int from, const double* G, const double* C, const double* MU, const double* MI,
                       double alpha, double* LAM, double* ERR, unsigned care, unsigned given, double* SLIP,
                       unsigned* slip);
// dst[e W + l] = src[l][e] for e < n and every lane l < W (W arrays into one lane array)
void gather_w2(const double* const* src, int n, double* dst);
void gather_w4(const double* const* src, int n, double* dst);
void gather_w8(const double* const* src, int n, double* dst);
// dst[l][e] = src[e W + l] for e < n and every lane l < W (a lane array into W arrays), leaving
// src[0 .. n W) zero
void scatter_w2(double* src, int n, double* const* dst);
void scatter_w4(double* src, int n, double* const* dst);
void scatter_w8(double* src, int n, double* const* dst);

// dst[l][e] = src[e W + l] for e < n and every lane l < W, src unchanged
void copy_out_w2(const double* src, int n, double* const* dst);
void copy_out_w4(const double* src, int n, double* const* dst);
void copy_out_w8(const double* src, int n, double* const* dst);
}  // namespace lanes_abi
}  // namespace impulse
