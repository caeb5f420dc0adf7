// DelassusLanes: the dense G of the constraint rows of several Worlds at once, in SIMD lanes
// (module contact/; dynamics/lanes.hpp for the lanes; docs/dynamics.md, "Many worlds in SIMD
// lanes"). batch::WorldLanes steps a group of Worlds in phases: each World's dynamics, collision
// and rows without their G (Stepper::prepare_rows, DelassusAssembler::assemble_rows), then the
// G of all of them here, then each World's targets and solve, then the velocity updates of all
// of them here (update_velocities), then each World's position update.
//
// G = sum_s Y_s^T D_s^-1 Y_s is computed piece pair by piece pair (delassus.hpp). Assemblers whose
// rows have one layout (the same pieces: systems, rows, paths, local rows; the same dense
// islands; a robot standing on the same feet in every World) run the same sequence of path
// products on different numbers: one lane per World, the scalar kernels' operations in their
// order (lanes_kernels.inc, dense_products), so every World's G has the bits assemble_products()
// gives it. The pieces' Y and the systems' D^-1 are gathered into lane arrays and each G
// scattered back by W x W block transposes. An assembler with a factored island, or whose layout
// no other assembler of the group shares, computes its own (assemble_products()).
//
// The rows' path work too (DelassusAssembler::set_defer_paths: each contact side's point Jacobian
// in its contact frame, Y = L^-T J^T on its path, c = J u_free and v- = J u; the one-row pieces'
// L^-T solve) is computed here in lanes when every piece of the layout was deferred and the
// assemblers step the same Models (lanes_abi::contact_paths, the scalar code's operations in its
// order): the systems' J columns, u_free, u and L and the sides' points and frames are gathered,
// Y feeds the products in the lanes, and Y, c and v- are scattered back to each assembler (its
// solve and velocity update read them). Otherwise each assembler of the group computes its own
// (assemble_paths()) before its Y is gathered.
#pragma once

#include <vector>

#include "impulse/contact/delassus.hpp"

namespace impulse {

class DelassusLanes {
 public:
  // The pending G of the `count` assemblers a[i] (after assemble_rows on the views systems[i]),
  // those of one layout together in lanes of `width` (2, 4 or 8, a width the CPU runs; 1: each
  // alone), count <= width. Returns how many took a lane. No allocation once the largest
  // layout was seen.
  int assemble_products(DelassusAssembler* const* a, const std::vector<SystemView>* const* systems, int count,
                        int width);
  // Of the last assemble_products(): how many assemblers had their deferred path work computed
  // in the lanes (the others computed their own, assemble_paths()).
  int paths_in_lanes() const { return paths_in_lanes_; }

  // The velocity update u+ = u_free + M~^-1 J^T lambda (DelassusAssembler::apply) of the
  // assemblers a[i] whose bit i is set in `mask` (i < count <= width), lambda[i] their solution
  // (global rows), into (*u_next[i])[s] for each system s of the views systems[i]: those whose
  // rows have one layout and whose systems the same Models together in lanes of `width`
  // (lanes_abi::velocity_update: apply's operations in its order, the same bits). Returns the
  // mask of those it updated (the others are left to apply()). Called after assemble_products()
  // in the same step (their path work and solve between), it reads the Y, D^-1, L and u_free
  // its last group left in the lanes when that group is asked again; any other group gathers
  // them. No allocation once the largest layout was seen.
  unsigned update_velocities(const DelassusAssembler* const* a, const std::vector<SystemView>* const* systems,
                             const Scalar* const* lambda, std::vector<VecX>* const* u_next, unsigned mask, int count,
                             int width);

 private:
  static bool lanes_ready(const DelassusAssembler& a);
  static bool same_layout(const DelassusAssembler& x, const std::vector<SystemView>& sx, const DelassusAssembler& y,
                          const std::vector<SystemView>& sy);
  // the path products of assemble_dense for a's layout (ops_, dinv_index_, the lane arrays' sizes)
  void build(const DelassusAssembler& a, const std::vector<SystemView>& systems);
  void build_paths(const DelassusAssembler& a, const std::vector<SystemView>& systems);
  void run(DelassusAssembler* const* a, const std::vector<SystemView>* const* systems, const int* worlds, int n,
           int width);

  struct Op {  // lanes_abi::ProductOp (src/dynamics/lanes_abi.hpp), mirrored here
    int kind, len, yp, yq, g, gm, ld;
  };
  // the layout ops_ was built for (its pieces, paths, islands and systems, as numbers): built
  // again only when a group's layout differs
  static void signature(const DelassusAssembler& a, const std::vector<SystemView>& systems, std::vector<int>& out);
  std::vector<int> built_, sig_;
  std::vector<Op> ops_;
  std::vector<int> pieces_;       // per piece: first Y entry, path length, first dinv_index_, rows
  std::vector<int> dinv_index_;   // per piece, along its path: the entry of its dof's D^-1
  std::vector<int> dinv_offset_;  // per system: its first entry in the lane array of D^-1
  int ny_ = 0, nd_ = 0, ng_ = 0;  // entries of the lane arrays Y (and DY), D^-1, G
  std::vector<double> y_, dy_, dinv_, g_, spare_;
  // the path work in lanes (set when every piece of the layout is deferred): per piece
  // lanes_abi::kPathInts ints, per path entry 3 (lanes_abi.hpp, contact_paths), per system the
  // first entry of its J columns, u entries and L entries in their lane arrays (-1: no pieces)
  bool paths_ = false;
  int paths_in_lanes_ = 0;
  std::vector<int> path_pieces_, path_, j_offset_, u_offset_, l_offset_;
  int nj_ = 0, nu_ = 0, nl_ = 0, ncv_ = 0, npr_ = 0;
  std::vector<double> j_, uf_, u_, l_, pr_, cv_;
  // update_velocities: the pieces of one system (lanes_abi::kVelocityInts ints each), the dofs of
  // the layout's paths, one system's ancestor lists; lane arrays of lambda and one system's u+
  // (Y, D^-1, L and u_free: in y_, dinv_, l_ and uf_)
  static bool same_velocity_layout(const DelassusAssembler& x, const std::vector<SystemView>& sx,
                                   const DelassusAssembler& y, const std::vector<SystemView>& sy);
  void velocity_layout(const DelassusAssembler& a, const std::vector<SystemView>& systems);
  std::vector<int> vpieces_, vpiece_begin_, vdofs_, vanc_begin_, vanc_, vanc_at_;
  bool velocity_built_ = false;  // the v* layout is built_'s (kept while it is)
  std::vector<double> vlam_, vr_;
  // the last group of assemble_products() whose lane arrays (y_, dinv_, l_, uf_) are still there
  const DelassusAssembler* last_[8] = {};
  int last_n_ = 0;
};

}  // namespace impulse
