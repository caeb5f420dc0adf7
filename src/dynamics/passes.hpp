// Private: RNEA (which computes the poses in its forward loop) and the CRBA passes that start
// from poses already in Data, so that compute_step_dynamics runs the kinematics once for both
// (and for the joint Jacobians, which CRBA writes).
// Not installed; included only by src/dynamics/*.cpp.
#pragma once

#include "impulse/dynamics/data.hpp"

namespace impulse {
namespace detail {

// RNEA (RBDA Table 5.1) into tau, including the poses data.liMi, data.oMi (computed in its
// forward loop). u or udot may be null (treated as zero).
void rnea_impl(const Model& model, Data& data, const Scalar* q, const Scalar* u, const Scalar* udot,
               const Vec6Vector* f_ext, Scalar* tau);

// CRBA (RBDA Table 6.2) from data.oMi: data.J, data.oYcrb, data.F, data.M.
void crba_from_poses(const Model& model, Data& data);
// CRBA backward pass alone, from data.J and data.oYcrb = I_i (world frame).
void crba_backward(const Model& model, Data& data);

}  // namespace detail
}  // namespace impulse
