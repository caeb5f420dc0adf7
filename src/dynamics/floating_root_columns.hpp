// The point Jacobian's columns of a floating root in a contact frame (dynamics/jacobian.cpp's
// point_jacobian_branch, and the Delassus assembler's free-body contact sides, which inline it).
// Private to the library's sources (include it from a .cpp only).
#pragma once

#include "impulse/core/types.hpp"

namespace impulse::detail {

// The six columns of a floating root (dofs 0-5): its columns of J are [[1, [p_O]], [0, 1]]
// (world_subspace), so the point's columns are e_k for the linear dofs and e_j x (p - p_O) for
// the angular ones. Written out, these are the products the general loop of
// point_jacobian_branch forms minus its terms with a zero factor (the same bits, up to the sign of
// a zero); p_O comes from J itself, as there. Every body of a pile or a stack, and the first six
// entries of every contact path on a legged robot (ANYmal: 6 of 9). out[3 t + i] = (R J_p)(i, t),
// dofs[t] = t.
// (ROW2: row 2 of R alone, rows 0 and 1 of `out` set to 0: point_jacobian_branch_row)
template <bool ROW2 = false>
inline void floating_root_columns(const Scalar* J, const Vec3& p, const Mat3& R, Index* dofs, Scalar* out) {
  // p_O = (J(2, 4), J(0, 5), J(1, 3))
  const Scalar rx = p[0] - J[2 + 6 * 4], ry = p[1] - J[0 + 6 * 5], rz = p[2] - J[1 + 6 * 3];
  for (int k = 0; k < 6; ++k) dofs[k] = k;
  for (int i = ROW2 ? 2 : 0; i < 3; ++i) {
    out[i] = R(i, 0);
    out[3 + i] = R(i, 1);
    out[6 + i] = R(i, 2);
    out[9 + i] = R(i, 1) * -rz + R(i, 2) * ry;   // e_x x r = (0, -r_z, r_y)
    out[12 + i] = R(i, 0) * rz + R(i, 2) * -rx;  // e_y x r = (r_z, 0, -r_x)
    out[15 + i] = R(i, 0) * -ry + R(i, 1) * rx;  // e_z x r = (-r_y, r_x, 0)
  }
  if (ROW2) {
    for (int t = 0; t < 6; ++t) out[3 * t] = out[3 * t + 1] = 0;
  }
}

}  // namespace impulse::detail
