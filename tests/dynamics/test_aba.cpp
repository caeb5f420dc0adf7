// ABA (RBDA Table 7.1) against CRBA + tree-sparse LTDL (RBDA Tables 6.2-6.4) and RNEA; LTDL solves
// against a dense Cholesky; external forces against the Jacobian transpose.
#include <Eigen/Cholesky>
#include <catch2/catch.hpp>

#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "support/test_models.hpp"

using namespace impulse;
using namespace impulse::test;

TEST_CASE("aba: udot equals M^-1 (tau - h) from CRBA and the LTDL solve", "[dynamics]") {
  Scalar worst = 0;
  for (const NamedModel& nm : dynamics_test_models()) {
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 5; ++trial) {
      INFO(nm.name << ", trial " << trial);
      VecX q, u;
      random_state(model, rng, q, u, 2.0);
      const VecX tau = random_vector(model.nv, rng, 10.0);
      const VecX udot = aba(model, data, q, u, tau);
      const VecX h = nonlinear_effects(model, data, q, u);
      crba(model, data, q);
      ltdl_factor(model, data);
      VecX x = tau - h;
      ltdl_solve(model, data, x);
      const Scalar err = rel_err(udot, x);
      worst = std::max(worst, err);
      CHECK(err < 1e-10);
      // and RNEA inverts ABA
      CHECK(rel_err(rnea(model, data, q, u, udot), tau) < 1e-10);
    }
  }
  WARN("aba vs crba+ltdl: worst relative error " << worst);
}

TEST_CASE("ltdl: solves match a dense Cholesky; half solves give J M^-1 J^T", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(5);
    const VecX q = model.random_configuration(rng);
    const MatX M = crba(model, data, q);
    const Eigen::LLT<MatX> llt(M);
    REQUIRE(llt.info() == Eigen::Success);
    // a modified M (implicit PD: dt Kd + dt^2 Kp on the diagonal) is factored as given
    MatX Mmod = M;
    Mmod.diagonal().array() += 0.05;
    data.M = Mmod;
    ltdl_factor(model, data);
    // the upper triangle still holds M; L^T D L reproduces M
    CHECK((MatX(data.M.triangularView<Eigen::StrictlyUpper>()) - MatX(Mmod.triangularView<Eigen::StrictlyUpper>()))
              .cwiseAbs()
              .maxCoeff() == 0.0);
    MatX L = data.M.triangularView<Eigen::StrictlyLower>();
    L.diagonal().setOnes();
    CHECK(rel_err(MatX(L.transpose() * data.D.asDiagonal() * L), Mmod) < 1e-13);
    // the packed rows (Data::anc, Data::L_anc) are the ancestors of each dof, nearest first, and
    // hold exactly the lower triangle's L at them; every other entry of row k of L is zero
    for (Index k = 0; k < model.nv; ++k) {
      Index a = data.anc_begin[static_cast<std::size_t>(k)];
      for (Index i = model.dof_parent[k]; i >= 0; i = model.dof_parent[i], ++a) {
        REQUIRE(a < data.anc_begin[static_cast<std::size_t>(k) + 1]);
        CHECK(data.anc[static_cast<std::size_t>(a)] == i);
        CHECK(data.L_anc[a] == data.M(k, i));
      }
      CHECK(a == data.anc_begin[static_cast<std::size_t>(k) + 1]);
      for (Index i = 0; i < k; ++i) {
        const auto* b = data.anc.data() + data.anc_begin[static_cast<std::size_t>(k)];
        const auto* e = data.anc.data() + data.anc_begin[static_cast<std::size_t>(k) + 1];
        if (std::find(b, e, i) == e) CHECK(data.M(k, i) == 0.0);
      }
    }
    // vector and matrix solves
    const Eigen::LLT<MatX> llt_mod(Mmod);
    const VecX b = random_vector(model.nv, rng);
    VecX x = b;
    ltdl_solve(model, data, x);
    CHECK(rel_err(x, VecX(llt_mod.solve(b))) < 1e-11);
    const MatX B = MatX::Random(model.nv, 4);
    MatX X = B;
    ltdl_solve(model, data, X);
    CHECK(rel_err(X, MatX(llt_mod.solve(B))) < 1e-11);
    // refactoring after crba again gives the plain M
    crba(model, data, q);
    ltdl_factor(model, data);
    x = b;
    ltdl_solve(model, data, x);
    CHECK(rel_err(x, VecX(llt.solve(b))) < 1e-11);
    // G = J M^-1 J^T = Y^T D^-1 Y with Y = L^-T J^T, per point only on its branch
    compute_joint_jacobians(model, data, q);
    const Index nb = model.nb;
    const Index bodies[3] = {nb - 1, nb / 2, 0};
    MatX JT(model.nv, 9);
    for (int c = 0; c < 3; ++c) {
      Mat3X J3(3, model.nv);
      point_jacobian(model, data, bodies[c], Vec3(0.1, -0.2, 0.3), J3);
      JT.middleCols(3 * c, 3) = J3.transpose();
    }
    MatX Y = JT;
    ltdl_solve_LT(model, data, Y);
    for (int c = 0; c < 9; ++c) {
      VecX y = JT.col(c);
      ltdl_solve_LT_branch(model, data, y, bodies[c / 3]);
      CHECK(rel_err(y, VecX(Y.col(c))) < 1e-14);
    }
    const MatX G = Y.transpose() * data.Dinv.asDiagonal() * Y;
    const MatX G_ref = JT.transpose() * llt.solve(JT);
    CHECK(rel_err(G, G_ref) < 1e-11);
    // L^-1 half solve completes the solve
    MatX Z = Y;
    Z.array().colwise() *= data.Dinv.array();
    ltdl_solve_L(model, data, Z);
    CHECK(rel_err(Z, MatX(llt.solve(JT))) < 1e-11);
  }
}

TEST_CASE("aba and rnea: external body-frame wrenches act as J^T f", "[dynamics]") {
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data data(model);
    std::mt19937 rng(9);
    VecX q, u;
    random_state(model, rng, q, u);
    const VecX tau = random_vector(model.nv, rng, 5.0);
    Vec6Vector f_ext(model.nb);
    VecX tau_ext = VecX::Zero(model.nv);
    compute_joint_jacobians(model, data, q);
    Mat6X J6(6, model.nv);
    for (Index i = 0; i < model.nb; ++i) {
      f_ext[i] = random_vector(6, rng, 3.0);
      // body-frame wrench at the body origin -> world-frame [force; moment about the origin]
      frame_jacobian(model, data, i, Vec3::Zero(), J6);
      Vec6 fw;
      fw.head<3>() = data.oMi[i].R * f_ext[i].head<3>();
      fw.tail<3>() = data.oMi[i].R * f_ext[i].tail<3>();
      tau_ext += J6.transpose() * fw;
    }
    const VecX udot = aba(model, data, q, u, tau, &f_ext);
    const VecX udot_ref = aba(model, data, q, u, VecX(tau + tau_ext));
    CHECK(rel_err(udot, udot_ref) < 1e-10);
    CHECK(rel_err(rnea(model, data, q, u, udot, &f_ext), tau) < 1e-10);
  }
}

TEST_CASE("ltdl: the fixed-size kernels of a dof chain give the general kernels' bits", "[dynamics]") {
  // a free body (6 dofs), a floating body carrying one scalar joint and a 7-joint arm (7 dofs):
  // Data::dof_chain is set, and ltdl_factor / ltdl_solve take their fixed-size paths
  RandomTreeOptions free_body;
  free_body.num_bodies = 1;
  RandomTreeOptions floating_link = free_body;
  floating_link.num_bodies = 2;
  floating_link.max_children = 1;
  floating_link.spherical = floating_link.fixed = false;
  RandomTreeOptions arm;
  arm.num_bodies = 7;
  arm.max_depth = 7;
  arm.max_children = 1;
  arm.floating_root = arm.spherical = arm.fixed = false;
  const std::pair<const char*, Model> models[] = {{"free body", random_tree(21, free_body)},
                                                  {"floating link", random_tree(22, floating_link)},
                                                  {"arm", random_tree(23, arm)}};
  for (const auto& [name, model] : models) {
    INFO(name);
    Data chain(model), general(model);
    REQUIRE((model.nv == 6 || model.nv == 7));
    REQUIRE(chain.dof_chain);
    general.dof_chain = general.root_chain6 = false;  // the general loops
    std::mt19937 rng(3);
    for (int trial = 0; trial < 5; ++trial) {
      const VecX q = model.random_configuration(rng);
      crba(model, chain, q);
      chain.M.diagonal().array() += 0.01 * trial;  // as the implicit PD modifies it
      general.M = chain.M;
      CHECK(ltdl_factor(model, chain));
      CHECK(ltdl_factor(model, general));
      CHECK(chain.M == general.M);
      CHECK(chain.D == general.D);
      CHECK(chain.Dinv == general.Dinv);
      CHECK(chain.L_anc == general.L_anc);
      VecX x = random_vector(model.nv, rng), y = x;
      ltdl_solve(model, chain, x);
      ltdl_solve(model, general, y);
      CHECK(x == y);
    }
  }
  // a branched tree is not a chain
  CHECK_FALSE(Data(quadruped()).dof_chain);
}

TEST_CASE("ltdl: a floating base's root block (Schur complement) agrees with the general loop", "[dynamics]") {
  // Data::root_chain6 groups the root block's sums differently from the general loop: the same
  // factor to round-off, on every model of the dynamics tests whose first six dofs carry the rest
  int floating = 0;
  for (const NamedModel& nm : dynamics_test_models()) {
    INFO(nm.name);
    const Model& model = nm.model;
    Data grouped(model), general(model);
    // expected: dofs 0..5 a chain, and every later dof reaches dof 5 through its ancestors
    bool root6 = model.nv > 6;
    for (Index k = 0; k < model.nv && root6; ++k) {
      if (k < 6) {
        root6 = model.dof_parent[k] == k - 1;
        continue;
      }
      Index a = k;
      while (a > 5) a = model.dof_parent[a];
      root6 = a == 5;
    }
    CHECK(grouped.root_chain6 == root6);
    if (!grouped.root_chain6) continue;
    ++floating;
    general.root_chain6 = false;
    std::mt19937 rng(5);
    for (int trial = 0; trial < 5; ++trial) {
      const VecX q = model.random_configuration(rng);
      crba(model, grouped, q);
      const MatX M = grouped.M;
      general.M = M;
      REQUIRE(ltdl_factor(model, grouped));
      REQUIRE(ltdl_factor(model, general));
      const Scalar scale = M.diagonal().maxCoeff();
      CHECK((grouped.M - general.M).cwiseAbs().maxCoeff() < 1e-12 * scale);
      CHECK(((grouped.D - general.D).array() / general.D.array()).abs().maxCoeff() < 1e-12);
      CHECK((grouped.L_anc - general.L_anc).cwiseAbs().maxCoeff() < 1e-12 * scale);
      // and the factor is M's: L^T D L = M (upper triangle and diagonal of M kept by the factor)
      MatX L = MatX::Identity(model.nv, model.nv);
      L.triangularView<Eigen::StrictlyLower>() = grouped.M.triangularView<Eigen::StrictlyLower>();
      const MatX LtDL = L.transpose() * grouped.D.asDiagonal() * L;
      CHECK((LtDL - M).cwiseAbs().maxCoeff() < 1e-12 * scale);
      // the branch rows (dofs >= 6) run the same operations in both (known root indices): same bits
      const Index first_branch = grouped.anc_begin[6];
      CHECK(grouped.L_anc.tail(grouped.L_anc.size() - first_branch) == general.L_anc.tail(general.L_anc.size() - first_branch));
      CHECK(grouped.D.tail(model.nv - 6) == general.D.tail(model.nv - 6));
      VecX x = random_vector(model.nv, rng), y = x;
      ltdl_solve(model, grouped, x);
      ltdl_solve(model, general, y);
      CHECK((x - y).norm() < 1e-10 * y.norm());
      // the solves' known root indices against the packed lists, on one factor: the same bits
      Data lists = grouped;
      lists.root_chain6 = false;
      VecX z = random_vector(model.nv, rng), w = z;
      ltdl_solve(model, grouped, z);
      ltdl_solve(model, lists, w);
      CHECK(z == w);
    }
  }
  CHECK(floating >= 5);  // the random floating trees, the quadruped (and ANYmal when it loads)
}
