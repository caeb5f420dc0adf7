#include "impulse/dynamics/data.hpp"

#include "impulse/core/prefetch.hpp"

namespace impulse {

Data::Data(const Model& model) : nb(model.nb), nv(model.nv), nq(model.nq), gravity(model.gravity) {
  rev_axis.assign(nb, 0);
  bool rodrigues = false;
  for (Index i = 0; i < nb; ++i) {
    if (model.joint_type[i] != JointType::Revolute) continue;
    const Vec3& ax = model.joint_axis[i];
    for (int k = 0; k < 3; ++k) {
      const bool others_zero = ax[(k + 1) % 3] == 0 && ax[(k + 2) % 3] == 0;
      if (others_zero && (ax[k] == 1 || ax[k] == -1)) rev_axis[i] = static_cast<signed char>(ax[k] > 0 ? k + 1 : -(k + 1));
    }
    rodrigues = rodrigues || rev_axis[i] == 0;
  }
  if (rodrigues) {
    rev_A.assign(nb, Mat3::Zero());
    rev_B.assign(nb, Mat3::Zero());
    rev_C.assign(nb, Mat3::Zero());
  }
  for (Index i = 0; i < nb && rodrigues; ++i) {
    if (model.joint_type[i] != JointType::Revolute || rev_axis[i] != 0) continue;
    const Mat3& R_P = model.joint_placement[i].R;
    const Vec3& ax = model.joint_axis[i];
    rev_C[i] = R_P * ax * ax.transpose();
    rev_A[i] = R_P - rev_C[i];
    rev_B[i] = R_P * skew(ax);
  }
  liMi.assign(nb, SE3());
  oMi.assign(nb, SE3());
  v.assign(nb, Vec6::Zero());
  a.assign(nb, Vec6::Zero());
  f.assign(nb, Vec6::Zero());
  tau = VecX::Zero(nv);
  h = VecX::Zero(nv);

  J = Mat6X::Zero(6, nv);
  oinertia.assign(nb, WorldInertia());

  oYcrb.assign(nb, WorldInertia());
  F = Mat6X::Zero(6, nv);
  M = MatX::Zero(nv, nv);
  D = VecX::Zero(nv);
  Dinv = VecX::Zero(nv);
  ltdl_tmp = VecX::Zero(nv);
  // dof subtree ends: the dofs of body i are idx_v[i] .. idx_v[i] + nv_joint[i] - 1; its subtree's
  // dofs end where the first body after the subtree starts (depth-first numbering)
  dof_subtree_end.assign(nv, nv);
  for (Index i = 0; i < nb; ++i) {
    const Index e = model.subtree_end[i];
    const Index end = e < nb ? model.idx_v[e] : nv;
    for (Index k = model.idx_v[i]; k < model.idx_v[i] + model.nv_joint[i]; ++k) dof_subtree_end[k] = end;
  }
  anc_begin.assign(nv + 1, 0);
  anc.clear();
  for (Index k = 0; k < nv; ++k) {
    anc_begin[k] = static_cast<Index>(anc.size());
    for (Index a = model.dof_parent[k]; a >= 0; a = model.dof_parent[a]) anc.push_back(a);
  }
  anc_begin[nv] = static_cast<Index>(anc.size());
  dof_chain = true;
  for (Index k = 0; k < nv; ++k) dof_chain = dof_chain && model.dof_parent[k] == k - 1;
  root_chain6 = nv > 6;
  for (Index k = 0; k < 6 && root_chain6; ++k) {
    root_chain6 = model.dof_parent[k] == k - 1 && dof_subtree_end[static_cast<std::size_t>(k)] == nv;
  }
  L_anc = VecX::Zero(static_cast<Index>(anc.size()));

  ov.assign(nb, Vec6::Zero());
  oc.assign(nb, Vec6::Zero());
  oa.assign(nb, Vec6::Zero());
  opA.assign(nb, Vec6::Zero());
  oYaba.assign(nb, Mat6::Zero());
  U = Mat6X::Zero(6, nv);
  Dinv_joint.assign(nb, Mat6::Zero());
  u_aba = VecX::Zero(nv);
  udot = VecX::Zero(nv);

  oBcrb.assign(nb, Mat6::Zero());
  of.assign(nb, Vec6::Zero());
  dG = Mat6X::Zero(6, nv);

  Jframe = Mat6X::Zero(6, nv);
  Jpoint = Mat3X::Zero(3, nv);
}

void Data::prefetch_step() const {
  // (the Data object itself is its owner's: ArticulatedSystem::prefetch_step)
  prefetch_data(rev_axis);
  for (const auto* r : {&rev_A, &rev_B, &rev_C}) prefetch_data(*r);
  prefetch_data(liMi);
  prefetch_data(oMi);
  prefetch_data(v);
  prefetch_data(a);
  prefetch_data(f);
  prefetch_data(h);
  prefetch_data(J);
  prefetch_data(oYcrb);
  prefetch_data(F);
  prefetch_data(M);
  prefetch_data(D);
  prefetch_data(Dinv);
  prefetch_data(ltdl_tmp);
  prefetch_data(dof_subtree_end);
  prefetch_data(anc_begin);
  prefetch_data(anc);
  prefetch_data(L_anc);
}

}  // namespace impulse
