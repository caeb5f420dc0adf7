// Fused RNEA (RBDA Table 5.1) + CRBA (RBDA Table 6.2) + joint Jacobians. See step_dynamics.hpp.
#include "impulse/dynamics/step_dynamics.hpp"

#include "impulse/core/check.hpp"
#include "passes.hpp"

namespace impulse {

const VecX& compute_step_dynamics(const Model& model, Data& data, const VecXcref& q, const VecXcref& u,
                                  const Vec6Vector* f_ext) {
  IMPULSE_ASSERT(q.size() == model.nq && u.size() == model.nv);
  IMPULSE_ASSERT(!f_ext || static_cast<Index>(f_ext->size()) == model.nb);
  // RNEA with udot = 0; its forward loop also computes the poses data.liMi, data.oMi
  detail::rnea_impl(model, data, q.data(), u.data(), nullptr, f_ext, data.h.data());
  // CRBA from those poses; its forward loop writes the joint Jacobians data.J
  detail::crba_from_poses(model, data);
  return data.h;
}

const MatX& recompute_step_mass_matrix(const Model& model, Data& data) {
  detail::crba_from_poses(model, data);
  return data.M;
}

}  // namespace impulse
