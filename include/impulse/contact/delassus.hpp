// Delassus assembler, the constraint-rows stage of a step: contacts, joint limits, joint friction
// and mimic joints -> the rows of one ContactProblem per island (G, c, mu), and the velocity
// update from the solved impulses (docs/architecture.md, "One step"; Hwangbo 2018 eq. 1-3).
//
// For every dynamic system s (an articulated system or a free body) with joint-space inertia
// M~_s (M + dt Kd + dt^2 Kp when implicit PD is on, factored as L^T D L by ltdl_factor) and free
// velocity u_free_s (the velocity after the step without constraint impulses):
//
//   v+ = J u+ = G lambda + c,    G = sum_s J_s M~_s^-1 J_s^T,    c = J u_free - b
//   u_s+ = u_free_s + M~_s^-1 J_s^T lambda                                   (Hwangbo eq. 3)
//
// Rows: contact i has 3 rows (t_x, t_y, n) in its contact frame C_i = [t_x t_y n], n from B into
// A; J_i = C_i^T (J_A(p) - J_B(p)) with J_X(p) the world point Jacobian of the contact point on
// side X (zero for static objects). A joint limit is one row +-e_k on the dof (lower: +, upper: -).
// The Delassus matrix is built through the tree-sparse factor M~_s = L_s^T D_s L_s
// (Featherstone RBDA sec. 6.5): J_s M~_s^-1 J_s^T = Y_s^T D_s^-1 Y_s with Y_s = L_s^-T J_s^T.
// Joint Coulomb friction (URDF <dynamics friction>, MJCF frictionloss; docs/fidelity.md item 6): every scalar
// joint with friction f_k > 0 has one box row J = e_k every step, target 0 (stick), bound
// |lambda| <= f_k dt (contact_problem.hpp), after all limit rows; built like a limit row (its
// piece is the path root..k). The row sees M~, so implicit PD and damping combine with it exactly.
// Mimic joints (URDF <mimic>, Model::mimic; docs/robots.md): q_j = m q_master + o is kept by one
// equality row per coupling, J = e_j - m e_master (box row with bound +inf, after the friction
// rows), as two one-row pieces of the same group (paths root..j and root..master, like the two
// sides of a contact within one system). Its target removes a coupling error
// e = q_j - m q_master - o at erp e / dt, at most max_push_velocity (rad/s or m/s) of the mimic
// joint; J is constant, so J u+ = 0 keeps e constant under the position update: no drift beyond
// the solver's tolerance.
// A point Jacobian of body b is nonzero only on the dofs of the path root..b, and L^-T keeps that
// support (L_ki != 0 only for ancestors i of k), so the rows are kept as "pieces": one side of
// one contact (3 rows) or one limit row (+-e_k: the path root..k), each with its path and its
// Y values on that path only. A contact between two bodies of one system has two pieces
// (J = J_A - J_B, so Y = Y_A - Y_B). Two pieces of one system overlap only on the common root
// part of their paths (e.g. the 6 base dofs for two feet of different legs), so
//   G(rows p, rows q) += sum over the common path of Y_p D^-1 Y_q^T,
// c = J u_free and v- = J u also run over the paths only, and apply() uses
// M~^-1 J^T lambda = L^-1 D^-1 (sum_p Y_p lambda_p), a sparse sum and one L solve per system.
//
// The assembler leaves c = J u_free: the targets b (folded into c so that solvers see v+ >= 0,
// see contact_problem.hpp: speculative, landing, push-out, restitution) are the next stage's,
// stepper/targets.hpp, which writes them into the per-row arrays (RowArrays) and calls
// gather_rows().
//
// Islands (after Box2D's and Jolt's island builders). The dynamic systems are joined by
// union-find through the contacts that touch two of them (static geometry, the ground and welded
// bodies join nothing); a system's limit rows belong to it. Each island with constraint rows is
// an independent problem: its contacts (in ContactSet order) then its limit rows, in local rows.
// G never couples two islands, so each island is assembled and solved on its own. An island of at
// most dense_limit rows stores its G dense (the single robot keeps today's dense kernels); a larger
// one stores it factored (contact_problem.hpp FactoredG): its pieces' Y, the systems' D^-1 and the
// diagonal blocks only, so its assembly is O(pieces) (a Kapla tower's block has ~35 contacts: a
// block-sparse G had ~35^2 coupling blocks per block, 4 ms of assembly per step) and a sweep reads
// and updates one contact in O(its path) through the systems' velocity change (DelassusProduct).
// Its contacts are ordered bottom-up (along set_up_direction: the stepper sets it against gravity)
// so that Gauss-Seidel sweeps carry a stack's weight down at once. Both storages give the same G
// (the same path products, tests/contact). The global rows (contact i at 3i, limits after all
// contacts) stay what lambda, apply(), contact_frame() and problem() use; each island maps its
// local rows to them (island(k).global_row).
//
// Frictionless contacts as one row (set_one_row_frictionless, for the solvers that read only the
// normal row of a contact with mu = 0: bisection). A frictionless contact's cone is the ray
// lambda_t = 0, so its tangent rows carry no impulse and the problem in the other rows does not
// depend on them; its normal row alone is built: Y = L^-T J_n^T on the path (rows 0 and 1 of the
// piece zero), c_n and v-_n, D^-1 Y and the diagonal entry G_nn, with the same operations in the
// same order as the three-row form (the same bits for these entries), and c, v- and every entry
// of G on its tangent rows are 0. The problem keeps its layout (3 rows a contact, the tangent
// impulses 0), so every consumer reads it unchanged; a frictionless pile's step skips two thirds
// of the Jacobian, path solve, velocity and product work of its contacts.
//
// Memory grows with use: every buffer is sized on the first step that needs it (geometrically)
// and reused, so steady-state stepping allocates nothing and nothing scales with a contact cap.
#pragma once

#include <cstddef>
#include <vector>

#include "impulse/collision/contact.hpp"
#include "impulse/contact/contact_problem.hpp"
#include "impulse/core/types.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/model/model.hpp"

namespace impulse {

// How an impact with restitution coefficient e > 0 is resolved (see stepper.hpp).
enum class RestitutionLaw {
  Newton,   // target v_n+ >= e v_approach in the one solve; with friction it can add energy
  Poisson,  // compression solve, then restitution impulse e lambda_n bounded by the energy the
            // compression absorbed, then an inelastic correction solve: never adds energy
};

// How the stepper moves q within a step (stepper.hpp, stepper/integrate.hpp); the targets stage's
// speculative targets and per-row position weights follow it (stepper/targets.hpp).
enum class PositionUpdate {
  Euler,     // semi-implicit (symplectic) Euler: q+ = q (+) dt u+. E = T + V of a free body drifts
             // by -m g^2 dt^2 / 2 per step of free fall (it conserves a shadow energy instead)
  Midpoint,  // in free flight and in islands with a single impact (the others stay on Euler):
             // q+ = q (+) dt [(u + u_free) / 2 + M~^-1 J^T (w o lambda)], exact for constant
             // acceleration (free flight keeps E = T + V); the impulse moves q from its time of
             // impact tau: w = 1 - tau/dt for a bounce (RowArrays::position_weight, docs/fidelity.md).
             // In free flight a system without implicit terms (no PD, no joint damping) also
             // takes Heun's velocity update, u+ = (u + u_free) / 2 + dt/2 a(q+, u_free)
             // (stepper.hpp): second order
  Bodies,    // (the default) Midpoint for the systems that are one free rigid body; for an
             // articulated system without implicit terms, Midpoint with Heun's velocity update
             // in free flight and Euler as soon as it has a row; Euler for the others (PD gains,
             // joint damping). The midpoint position update with the explicit velocity update
             // u+ = u_free is not symplectic (for q'' = a(q) its one-step map has determinant
             // 1 - dt^2 a'(q) / 2): a pendulum's energy drifted where symplectic Euler's only
             // oscillates; Heun's update makes the flight second order (docs/fidelity.md item 7)
};

// How the position-error correction (erp) acts (see stepper.hpp).
enum class PositionCorrection {
  Velocity,  // Baumgarte-like target in the velocity solve: the push-out velocity stays in u
             // (adds kinetic energy)
  Split,     // (the default) split impulse: a separate frictionless solve of the unilateral
             // rows whose velocity moves q only; u is left as the contact solve made it (no
             // kinetic energy added, no bias on sliding: docs/fidelity.md item 9)
};

struct DelassusSettings {
  RestitutionLaw restitution_law = RestitutionLaw::Poisson;
  PositionCorrection position_correction = PositionCorrection::Split;
  PositionUpdate position_update = PositionUpdate::Bodies;  // docs/fidelity.md item 7
  // Free flight on the midpoint rule (systems without implicit terms): the velocity update from
  // this step's and the last step's accelerations (two-step Adams-Bashforth, one dynamics
  // evaluation per step; stepper/integrate.hpp ab2_velocity) whenever the last step was a flight
  // step; false: Heun's update every step (a second evaluation, ABA at q+)
  bool flight_two_step = true;
  Scalar restitution_threshold = 1e-2;  // m/s: slower approaches do not bounce (resting contact)
  // Position-error correction, small and on by default: velocity-level contacts let penetration
  // drift at second order (a foot held while its leg rotates sinks ~2 cm in 8 s without it).
  Scalar erp = 0.2;                     // fraction of the penetration removed per step (0: off)
                                        // (the velocity-level correction is what the targets
                                        // below describe; Split moves it to the stepper)
  Scalar slop = 1e-5;                   // m: penetration left uncorrected
  // A row apart by a gap closes it down to gap_slop: its target is v_n+ >= -max(gap - gap_slop,
  // 0) / dt instead of -gap / dt (continuous in the gap), and a body may rest up to gap_slop above
  // its support. Bodies resting in closed loops (a brick on two bricks, blocks wedged in a bin)
  // have gaps of nanometres that no rigid motion closes at once: their -gap / dt targets are then
  // inconsistent at the solver's tolerance (1e-6 m/s is a gap of 1 nm at 1 ms), and the sweeps
  // level off just above it (docs/benchmarks.md, "Scenes at scale"). 0: every gap is closed
  // exactly, as the step's semi-implicit Euler update reaches it.
  Scalar gap_slop = 0;
  // Bound on the push-out velocity of the position-error correction (velocity-level target and
  // split correction alike), m/s on contacts and prismatic limits, rad/s on revolute limits:
  // whatever the depth or dt, an overlap resolves at most this fast (a sphere 0.5 m deep left
  // at 100 m/s, a joint 30 rad beyond its limit diverged). Deep overlaps (spawning, resets,
  // teleporting) then take depth / max_push_velocity seconds to resolve.
  Scalar max_push_velocity = 1.0;
  Scalar limit_margin = 1e-2;           // rad or m: limit rows appear this close to a limit
  bool joint_limits = true;             // unilateral rows for finite joint position limits
  bool joint_friction = true;           // box rows for joint Coulomb friction (Model::friction)
  bool mimic_joints = true;             // equality rows for the couplings in Model::mimic
};

// Per-row quantities of one step, one array per quantity indexed by global row, as MuJoCo's
// efc_* arrays. Global rows: contact i has rows 3i, 3i+1, 3i+2 (t_x, t_y, n of its frame), then
// come the limit rows, the joint friction rows and the mimic rows (DelassusAssembler::rows()). The
// arrays hold at least num_rows() entries; the entries past it are stale. "Normal and limit rows"
// below are row 3i+2 of each contact and every limit row; a column is 0 on the rows it does not
// name unless it says otherwise. The constraint-rows stage (DelassusAssembler::assemble) writes
// the first group, the targets stage (stepper/targets.hpp) the second; the solve and integrate
// stages read them, each island through its local rows (IslandView).
struct RowArrays {
  // -- constraint rows (DelassusAssembler::assemble)
  VecX c;            // every row: J u_free, the row's velocity after the step without impulses;
                     // the targets stage subtracts the target: c = J u_free - b (the solve's c)
  VecX v_before;     // every row: J u, the row's velocity at the start of the step
  VecX depth;        // normal and limit rows: penetration (-gap: negative while apart); mimic
                     // rows: the coupling error q_j - m q_master - o
  VecX restitution;  // normal rows: the contact's restitution coefficient e
  VecX box;          // box rows: bound f_k dt (joint friction), +inf (mimic)
  // -- targets (stepper/targets.hpp)
  VecX target;            // normal, limit and mimic rows: the target b folded into c
  VecX inelastic_target;  // the same without its restitution term (= target where none)
  VecX bounce;            // Poisson law: e on the normal rows that bounce this step
  VecX position_target;   // split correction: push-out velocity erp max(0, depth - slop) / dt,
                          // bounded (normal and limit rows, PositionCorrection::Split only)
  VecX position_weight;   // midpoint update: weight w of the row's impulse in q+ (rows of one
                          // contact share it); 1 elsewhere; written only when some system is off
                          // Euler, meaningful only when `weighted`
  VecX impact_time;       // normal and limit rows: time of impact tau / dt (0: touching or
                          // penetrating, 1: not reached this step; 1 on rows on Euler)
  std::vector<unsigned char> midpoint;     // normal and limit rows: the row's system moves q at
                                           // the midpoint this step
  std::vector<unsigned char> speculative;  // normal and limit rows: apart and not closed by the
                                           // velocities before the solve (target -gap / dt)
  std::vector<unsigned char> at_start;     // normal and limit rows with e > 0: impact placed at
                                           // the start of the step (an island on Euler of a
                                           // system not on Euler for good)
  // counts over the rows of the step (targets stage)
  Index n_bounce = 0;               // rows with bounce > 0
  Index n_position = 0;             // rows with position_target > 0
  Index n_newton = 0;               // Newton law: rows whose target e v_approach raised b
  Index n_speculative_elastic = 0;  // speculative rows with e > 0
  bool weighted = false;            // some position_weight differs from 1

  // Room for n rows (geometric growth; values are not kept).
  void grow(Index n);
  std::size_t memory_bytes() const;
  void prefetch(Index n) const;  // the first n rows of every array (a hint)
};

// What the assembler reads of one dynamic system. The caller has run, at the current q:
// compute_joint_jacobians (data.J, data.oMi) and ltdl_factor on M~ (data.M, data.D, data.Dinv).
struct SystemView {
  const Model* model = nullptr;
  const Data* data = nullptr;
  const VecX* q = nullptr;       // configuration at the start of the step
  const VecX* u = nullptr;       // velocity at the start of the step (restitution)
  const VecX* u_free = nullptr;  // unconstrained velocity after the step
  // moves q with semi-implicit Euler whatever the PositionUpdate: a system with an implicit PD
  // stiffness (dt^2 Kp in M~: its torque is evaluated at q + dt u+) and, under
  // PositionUpdate::Bodies, a system that is not one free rigid body and has implicit damping
  // (PD or joint damping in M~)
  bool euler = false;
  // on the midpoint update only in free flight, on Euler as soon as its island has a row: under
  // PositionUpdate::Bodies, the articulated systems without implicit terms (their flight takes
  // Heun's second-order velocity update in the stepper, stepper.hpp)
  bool flight_only = false;
};

// Where the rows of one contact or limit came from, for reporting impulses.
struct ConstraintRow {
  enum class Kind { Contact, Limit, Friction, Mimic } kind = Kind::Contact;
  Index index = 0;   // contact index in the ContactSet, or dof for a limit or friction row, the
                     // mimicking joint's dof for a mimic row
  Index system = -1; // limit, friction and mimic rows: the system of the dof
  Scalar sign = 1;   // limit rows: +1 lower, -1 upper; friction rows: 0; mimic rows: 2 (a key
                     // for the warm start only)
  Index row = 0;     // first row in the problem
};

// One island's problem and the per-row data the stepper needs with it (views into the assembler).
struct IslandView {
  ContactProblem problem;              // local rows: contacts (3 each), limit rows, friction rows
  const Index* global_row = nullptr;   // local row -> row of the global problem
  Eigen::Ref<const VecX> target;       // per local row: RowArrays::target
  Eigen::Ref<const VecX> bounce;       // RowArrays::bounce
  Eigen::Ref<const VecX> position_target;  // RowArrays::position_target
  Index num_bouncing = 0, num_position_rows = 0;
  Index num_systems = 0;               // dynamic systems in the island
};

class DelassusAssembler {
 public:
  DelassusAssembler() = default;

  // Reads the systems' limited joints. Allocates only per-system data; the per-contact buffers
  // grow in assemble() when a step first needs them and are kept.
  void reserve(const std::vector<const Model*>& models);

  // Islands of at most this many rows get a dense G, larger ones a factored G. A solver that
  // needs dense G (LM, no-slip) is given dense_limit = max (documented limit: dense per island).
  void set_dense_limit(Index rows) { dense_limit_ = rows; }
  Index dense_limit() const { return dense_limit_; }
  static constexpr Index kDefaultDenseLimit = 64;
  // Direction opposite to gravity: factored islands order their contacts bottom-up along it.
  void set_up_direction(const Vec3& up) { gravity_up_ = up; }
  // Frictionless contacts (mu = 0) as one row: their normal row alone is built (Y, c, v-, G),
  // their tangent rows are zero in Y, G and c (see "Frictionless contacts as one row" above).
  // Off by default; the stepper turns it on for the solvers that read a frictionless contact's
  // normal row only (ContactSolver::one_row_frictionless).
  void set_one_row_frictionless(bool on) { one_row_frictionless_ = on; }
  bool one_row_frictionless() const { return one_row_frictionless_; }
  // Contact i of the last assemble() was built as one row.
  bool one_row(Index i) const { return one_row_[static_cast<std::size_t>(i)] != 0; }

  // The constraint-rows stage: contact, limit, joint friction and mimic rows of the step (their
  // Jacobians as pieces, RowArrays' first group), the islands and each island's G, with c = J
  // u_free. The targets stage (stepper/targets.hpp) then folds the targets into c and calls
  // gather_rows(); only then is an island's problem complete.
  // object_system[o]: the system index of collision object o, -1 for static objects.
  void assemble(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                const ContactSet& contacts, Scalar dt, const DelassusSettings& settings);
  // assemble() in two halves: the rows (their pieces' Y, c, v-, the islands), then the islands'
  // G (dense and factored). Between them only the G are missing; products() is pending until
  // assemble_products() (or DelassusLanes, contact/delassus_lanes.hpp) computed them, and a second
  // assemble_products() does nothing.
  void assemble_rows(const std::vector<SystemView>& systems, const std::vector<Index>& object_system,
                     const ContactSet& contacts, Scalar dt, const DelassusSettings& settings);
  void assemble_products(const std::vector<SystemView>& systems);
  bool products_pending() const { return products_pending_; }
  // Rows whose Y (L^-T J^T on the path) and, for contacts, c and v- are left to a later stage:
  // with set_defer_paths(true), assemble_rows() builds the rows' layout (pieces, paths, islands,
  // frames) and leaves the path work of the contacts on articulated paths and of the one-row
  // pieces pending, for DelassusLanes to compute several assemblers' at once in lanes;
  // assemble_paths() (called by assemble_products()) computes whatever is still pending, with
  // the same operations as assemble_rows() without deferral. Off by default.
  void set_defer_paths(bool on) { defer_paths_ = on; }
  void assemble_paths(const std::vector<SystemView>& systems);
  bool paths_pending() const { return paths_pending_; }

  // The whole problem of the last assemble() with a dense G in the global rows (built on demand
  // from the islands; allocates: for tests, tools and small scenes, not for the step).
  ContactProblem problem() const;

  // Islands of the last assemble() (only those with constraint rows).
  Index num_islands() const { return static_cast<Index>(islands_.size()); }
  IslandView island(Index k) const;
  bool island_is_factored(Index k) const { return islands_[static_cast<std::size_t>(k)].dense < 0; }
  // Island of contact i (-1: no dynamic side, no rows: its impulse is zero).
  Index contact_island(Index i) const { return contact_island_[static_cast<std::size_t>(i)]; }

  // u_next[s] = u_free_s + M~_s^-1 J_s^T lambda for every system (lambda in global rows).
  void apply(const std::vector<SystemView>& systems, const VecXcref& lambda, std::vector<VecX>& u_next);

  Index num_contacts() const { return nc_; }
  Index num_limits() const { return nl_; }
  Index num_friction_rows() const { return nf_ - nm_; }  // joint friction rows, after the limits
  Index num_mimic_rows() const { return nm_; }          // mimic rows, after the friction rows
  Index num_box_rows() const { return nf_; }            // both (the problem's nb)
  Index num_rows() const { return 3 * nc_ + nl_ + nf_; }
  // Bound f_k dt of box row r (joint friction rows; +inf on mimic rows, 0 elsewhere).
  Scalar box_bound(Index r) const { return arrays_.box[r]; }
  const std::vector<ConstraintRow>& rows() const { return rows_; }
  // Contact frame C_i = [t_x t_y n] (world frame) of contact i.
  const Mat3& contact_frame(Index i) const { return frames_[static_cast<std::size_t>(i)]; }
  // The per-row quantities of the step (RowArrays): the constraint rows write their geometric
  // part, the targets stage (stepper/targets.hpp) the rest through the mutable reference, then
  // gather_rows() hands them to the islands.
  const RowArrays& row_arrays() const { return arrays_; }
  RowArrays& row_arrays() { return arrays_; }
  // Copies c and the targets' arrays into the islands' local rows (IslandView; in place under one
  // island of the global layout) and counts each island's bouncing and push-out rows.
  void gather_rows();
  // A dynamic system of a row (-1: none; a contact between two systems gives its side A's), and
  // the island of dynamic system s (-1: no rows this step).
  Index row_system(const ConstraintRow& cr) const;
  Index system_island(Index s) const { return system_island_[static_cast<std::size_t>(s)]; }
  // Bytes held by the growable buffers (for the memory budget tests and benchmarks).
  std::size_t memory_bytes() const;
  // Prefetches the parts of the buffers the last step used (core/prefetch.hpp; a hint): the next
  // step of a batched World is likely to use as much.
  void prefetch_step() const;

 private:
  // Rows of one system on one root path: `nrows` rows from `row` (3: a contact side, 1: a limit),
  // Y = L^-T J^T on the path dofs_[offset .. offset+len) (root first), 3 values per dof at
  // Y_[3 (offset + t)] (one used for a limit row). `group`: the contact or limit it belongs to
  // (global group: contact i -> i, limit j -> nc + j); `lrow`: its first row in the island.
  // (normal_only: a contact side of a one-row frictionless contact, Y_ zero on its rows 0 and 1;
  // scaled: its D^-1 Y in DY_ already, made with Y while the system's Data was in cache: a free
  // body's contact side; its product with itself in self_ too)
  // (deferred: its path work left to assemble_paths() or DelassusLanes; a contact side's point
  // and R = +-C^T in pr_, body its body)
  struct Piece {
    Index system = 0, row = 0, nrows = 0, len = 0, offset = 0, group = 0, lrow = 0, lgroup = 0, body = -1;
    bool normal_only = false, scaled = false, deferred = false;
  };
  Piece& add_piece(Index system, Index row, Index nrows);
  void add_dof_row(const Model& m, const Data& d, Index system, Index k, Index len, Scalar sign, Index row, Index g,
                   int side = 0);
  // a contact side's Y (its point Jacobian in the frame R, then L^-T), its terms of c and v-
  void grow_pr();
  // the nonzero entries of free body s's factor L this step (bit a: L_anc[a] != 0), read once per
  // body and step for the L^-T solves of its contact sides
  unsigned free_body_mask(Index s, const Data& d);
  void contact_side(Piece& p, const Model& m, const Data& d, Index body, const Scalar* uf, const Scalar* u,
                    const Vec3& point, const Mat3& R, Vec3& c, Vec3& v);
  // A scalar joint with a finite position limit (from the Model, in reserve()).
  struct LimitedDof {
    Index iq = 0, k = 0, len = 0;  // coordinate, dof, dofs on the path root..k
    Scalar bound[2] = {0, 0};      // lower, upper (one may be infinite)
    // a mimic joint's bound that its master's limits already imply through the coupling: no row
    // while the mimic rows are on (it would be a dependent row, which slows the iterative solvers)
    bool implied[2] = {false, false};
  };
  // A mimic coupling q_j = m q_master + o between two scalar joints (from Model::mimic).
  struct MimicDof {
    Index iq = 0, k = 0, len = 0;     // the mimicking joint: coordinate, dof, path length
    Index iq_m = 0, k_m = 0, len_m = 0;  // the master joint
    Scalar multiplier = 1, offset = 0;
  };
  struct Island {
    Index nc = 0, nl = 0, nf = 0;  // contacts, limit rows, box rows (joint friction and mimic)
    Index row = 0;              // first local row (in lrow_global_, lc_, ...)
    Index contact = 0;          // first contact (in lmu_)
    Index dense = -1;           // offset of its dense G in Gd_, -1 when factored
    Index group = 0;            // first entry in begin_ (ngroups + 1 entries)
    Index diag = 0;             // first entry in diag_ (ngroups entries)
    Index systems = 0;          // dynamic systems in the island
    Index n_bounce = 0, n_position = 0;
    Index nz = 0;               // factored: velocity slots of its systems
    FactoredG factored;         // pointers set at the end of assemble()
  };
  void grow_rows(Index n);
  void build_islands(Index nsys);
  void assemble_dense(const std::vector<SystemView>& systems);
  void assemble_factored(const std::vector<SystemView>& systems);
  Index find(Index s);
  void link_systems(Index nsys);                       // union-find of the systems over the contacts

  friend class DelassusLanes;  // contact/delassus_lanes.hpp: the dense G of many assemblers in lanes
  Index nv_max_ = 1, dense_limit_ = kDefaultDenseLimit;
  bool products_pending_ = false;  // assemble_rows() ran, the islands' G not yet
  bool defer_paths_ = false, paths_pending_ = false;
  VecX pr_;                              // 12 per piece: a deferred contact side's point and R
  bool one_row_frictionless_ = false;
  std::vector<unsigned char> one_row_;   // per contact: built as one row
  Index nc_ = 0, nl_ = 0, nf_ = 0, nm_ = 0;  // nf_: box rows (joint friction, then nm_ mimic rows)
  VecX mu_;                              // per contact
  RowArrays arrays_;                     // per global row
  std::vector<Mat3> frames_;
  std::vector<ConstraintRow> rows_;
  std::vector<std::vector<LimitedDof>> limited_; // per system
  std::vector<std::vector<LimitedDof>> frictional_;  // per system: the one-dof joints (rows where the Model's friction > 0)
  std::vector<std::vector<MimicDof>> mimics_;        // per system: mimic couplings
  std::vector<Piece> pieces_;
  std::vector<std::vector<Index>> sys_pieces_;  // per system: its pieces
  std::vector<Index> dofs_;                     // nv_max per piece: path of each piece
  VecX Y_;                                      // 3 nv_max per piece: Y of each piece
  VecX self_;                                   // 9 per piece: a scaled piece's product with
                                                // itself (its term of its group's diagonal block)
  std::vector<unsigned> lmask_, lmask_stamp_;   // per system: free_body_mask, the step it is of
  unsigned stamp_ = 0;                          // assemble_rows() calls (wraps around)
  std::vector<const Scalar*> path_rows_;        // nv_max: the path solve's rows of L (scratch)
  VecX r_;                                      // nv_max

  // islands
  std::vector<Index> parent_, sys_island_;      // per system: union-find parent, island (of a root)
  std::vector<Index> system_island_;            // per system: its island (-1: no rows)
  std::vector<Index> contact_island_;           // per contact
  std::vector<Index> group_pieces_;             // per global group: 2 piece indices (-1: none)
  std::vector<Island> islands_;
  std::vector<Index> lrow_global_;              // local row -> global row
  bool identity_layout_ = false;                // one island whose local rows are the global rows
  VecX lc_, lmu_, ltarget_, lbounce_, lposition_, lbox_;  // local rows (mu: local contacts)
  VecX Gd_;                                     // dense island G's, one after the other
  std::vector<Index> begin_;                    // factored: per island group (+1 per island), pieces
  std::vector<FactoredPiece> fpiece_;           // factored: pieces in island group order
  std::vector<Mat3> fdiag_;                     // factored: diagonal block per island group
  std::vector<Index> sys_z_;                    // per system: first velocity slot in its island
  VecX DY_;                                     // D^-1 Y (Y_'s layout, sized with it): factored
                                                // islands' pieces and the scaled ones
  std::vector<Index> cursor_;                   // per island: fill position while building
  std::vector<Index> gglobal_;                  // per island local group: its global group
  std::vector<Scalar> height_;                  // per contact: height along -gravity (ordering)
  std::vector<Index> order_;                    // contacts in placement order
  Vec3 gravity_up_ = Vec3::UnitZ();

  mutable MatX G_full_;                         // problem(): dense global G, on demand
};

// Orthonormal contact frame [t_x t_y n] for a unit normal n. Deterministic: for n = +z it is the
// identity, so ground-contact impulses read as (fx, fy, fz) in the world frame.
Mat3 contact_frame_from_normal(const Vec3& n);

}  // namespace impulse
