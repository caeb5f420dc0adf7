// DelassusLanes: the dense G of the constraint rows of several Worlds at once, in SIMD lanes
// (module contact/; dynamics/lanes.hpp for the lanes; docs/dynamics.md, "Many worlds in SIMD
// lanes"). batch::WorldLanes steps a group of Worlds in phases: each World's dynamics, collision
// and rows without their G (Stepper::prepare_rows, DelassusAssembler::assemble_rows), then the
// G of all of them here, then each World's targets, solve and update.
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
};

}  // namespace impulse
