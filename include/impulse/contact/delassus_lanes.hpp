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

 private:
  static bool lanes_ready(const DelassusAssembler& a);
  static bool same_layout(const DelassusAssembler& x, const std::vector<SystemView>& sx, const DelassusAssembler& y,
                          const std::vector<SystemView>& sy);
  // the path products of assemble_dense for a's layout (ops_, dinv_index_, the lane arrays' sizes)
  void build(const DelassusAssembler& a, const std::vector<SystemView>& systems);
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
};

}  // namespace impulse
