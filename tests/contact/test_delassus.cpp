// Delassus assembler: G and c against a dense computation (M^-1 by Cholesky, Jacobians stacked
// by hand), the velocity update against the definition v+ = G lambda + c, two-system contacts,
// joint-limit rows and the targets folded into c.
#include <Eigen/Cholesky>
#include <memory>
#include <random>
#include <utility>

#include "impulse/contact/delassus.hpp"
#include "impulse/stepper/targets.hpp"
#include "impulse/solvers/bound_qp.hpp"
#include "impulse/solvers/contact_solver.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/free_body.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/ltdl.hpp"
#include "impulse/model/model_builder.hpp"
#include "support/matchers.hpp"
#include "support/random_model.hpp"
#include "support/draw.hpp"

using namespace impulse;

namespace {

// The constraint-rows stage and the targets stage, as a step runs them (the systems on Euler
// under PositionUpdate::Euler, as the stepper marks them).
void assemble_with_targets(DelassusAssembler& asmb, std::vector<SystemView> views, const std::vector<Index>& object_system,
                           const ContactSet& set, Scalar dt, const DelassusSettings& st) {
  if (st.position_update == PositionUpdate::Euler) {
    for (SystemView& v : views) v.euler = true;
  }
  asmb.assemble(views, object_system, set, dt, st);
  PositionUpdatePlan plan;
  plan.reserve(static_cast<Index>(views.size()));
  targets_stage(asmb, views, dt, st, plan);
}

Model free_box(Scalar m) {
  ModelBuilder b("box");
  b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "box",
             Inertia(m, Vec3::Zero(), Vec3(0.1, 0.2, 0.25).asDiagonal()));
  return b.finalize();
}

// One system's state prepared as the stepper does: Jacobians, M (+ diag), factor, u_free.
struct Sys {
  const Model* model;
  Data data;
  VecX q, u, u_free;
  MatX M;  // copy of M (with the diagonal addition), for the dense oracle
  Scalar diag_add;
  Sys(const Model& m, std::mt19937& rng, Scalar diag = 0.0) : model(&m), data(m), diag_add(diag) {
    std::normal_distribution<Scalar> n(0, 1);
    q = m.random_configuration(rng);
    if (m.floating_base) q[2] = 0.5;
    u = VecX::NullaryExpr(m.nv, [&]() { return n(rng); });
    u_free = u + 0.01 * VecX::NullaryExpr(m.nv, [&]() { return n(rng); });
    refresh();
  }
  // M (+ diag), its factor and the Jacobians at the current q
  void refresh() {
    crba(*model, data, q);
    data.M.diagonal().array() += diag_add;
    M = data.M;
    M.triangularView<Eigen::StrictlyLower>() = M.transpose();
    ltdl_factor(*model, data);
    compute_joint_jacobians(*model, data, q);
  }
  SystemView view() const { return SystemView{model, &data, &q, &u, &u_free}; }
  MatX point_rows(Index body, const Vec3& p_W, const Mat3& C) const {
    MatX J3 = MatX::Zero(3, model->nv);
    const SE3& X = data.oMi[body];
    point_jacobian(*model, data, body, X.R.transpose() * (p_W - X.p), J3);
    return C.transpose() * J3;
  }
};

}  // namespace

TEST_CASE("contact frame: z along the normal, right-handed, identity for the ground", "[contact]") {
  CHECK(contact_frame_from_normal(Vec3::UnitZ()).isApprox(Mat3::Identity()));
  std::mt19937 rng(2);
  std::normal_distribution<Scalar> n(0, 1);
  for (int t = 0; t < 50; ++t) {
    const Vec3 nrm = test::draw3(n, rng).normalized();
    const Mat3 C = contact_frame_from_normal(nrm);
    CHECK((C.transpose() * C).isApprox(Mat3::Identity(), 1e-12));
    CHECK(C.determinant() == Approx(1.0));
    CHECK_ALL_CLOSE(C.col(2), nrm, 1e-15, 0);
  }
}

TEST_CASE("Delassus G and c equal the dense J M^-1 J^T and J u_free", "[contact]") {
  std::mt19937 rng(42);
  const Model quad = test::quadruped();
  const Model box = free_box(3.0);
  Sys a(quad, rng, 0.05);  // the diagonal addition plays the implicit PD terms
  Sys b(box, rng);

  // four feet-like contacts of the quadruped with the ground (static, object 2), one contact
  // between the quadruped's base (A) and the box (B), object ids 0 and 1
  ContactSet set(16);
  const std::vector<Index> object_system = {0, 1, -1};
  std::normal_distribution<Scalar> n(0, 1);
  for (Index body : {3, 6, 9, 12}) {
    Contact* c = set.add();
    c->object_a = 0; c->body_a = body; c->object_b = 2; c->body_b = -1;
    c->position = a.data.oMi[body].act_point(Vec3(0.02, 0.0, -0.3));
    c->normal = Vec3::UnitZ();
    c->depth = 0.002;
    c->mu = 0.8;
  }
  Contact* c = set.add();
  c->object_a = 0; c->body_a = 0; c->object_b = 1; c->body_b = 0;
  c->position = Vec3(0.1, -0.2, 0.45);
  c->normal = test::draw3(n, rng).normalized();
  c->depth = 0.001;
  c->mu = 0.5;

  DelassusAssembler asmb;
  asmb.reserve({&quad, &box});
  DelassusSettings st;
  st.joint_limits = false;
  st.erp = 0;  // no position correction: resting contacts then have no target
  const std::vector<SystemView> views = {a.view(), b.view()};
  assemble_with_targets(asmb, views, object_system, set, 1e-3, st);
  REQUIRE(asmb.num_contacts() == 5);
  REQUIRE(asmb.num_limits() == 0);

  // dense oracle: J_A (15 x 18) and J_B (15 x 6)
  MatX JA = MatX::Zero(15, quad.nv), JB = MatX::Zero(15, box.nv);
  for (Index i = 0; i < 5; ++i) {
    const Mat3 C = asmb.contact_frame(i);
    JA.middleRows(3 * i, 3) = a.point_rows(set[i].body_a, set[i].position, C);
    if (i == 4) JB.middleRows(3 * i, 3) = -b.point_rows(0, set[i].position, C);
  }
  const MatX G = JA * a.M.llt().solve(JA.transpose()) + JB * b.M.llt().solve(JB.transpose());
  const ContactProblem p = asmb.problem();
  CHECK_ALL_CLOSE(MatX(p.G), G, 1e-12, 1e-10);
  CHECK((MatX(p.G) - MatX(p.G).transpose()).norm() < 1e-12);

  // c = J u_free - b: resting contacts (depth > 0, e = 0, erp = 0) have b = 0
  const VecX c_dense = JA * a.u_free + JB * b.u_free;
  CHECK_ALL_CLOSE(VecX(p.c), c_dense, 1e-12, 1e-12);
  CHECK(p.mu[0] == 0.8);
  CHECK(p.mu[4] == 0.5);

  // u+ = u_free + M^-1 J^T lambda, so J u+ = G lambda + c
  const VecX lambda = VecX::NullaryExpr(15, [&]() { return n(rng); });
  std::vector<VecX> u_next = {VecX::Zero(quad.nv), VecX::Zero(box.nv)};
  asmb.apply(views, lambda, u_next);
  CHECK_ALL_CLOSE(VecX(JA * u_next[0] + JB * u_next[1]), VecX(G * lambda + c_dense), 1e-10, 1e-10);
  CHECK_ALL_CLOSE(u_next[1], VecX(b.u_free + b.M.llt().solve(JB.transpose() * lambda)), 1e-12, 1e-10);
}

TEST_CASE("Delassus targets: speculative gap, restitution, position correction", "[contact]") {
  std::mt19937 rng(5);
  const Model box = free_box(2.0);
  Sys s(box, rng);
  s.u.setZero();
  s.u[2] = -2.0;  // falling at 2 m/s
  s.u_free = s.u;
  const std::vector<Index> object_system = {0, -1};
  Scalar weight = 0, impact = 0;
  bool weighted = false;
  auto one_contact = [&](Scalar depth, Scalar e, const DelassusSettings& st) {
    ContactSet set(4);
    Contact* c = set.add();
    c->object_a = 0; c->body_a = 0; c->object_b = 1;
    c->position = s.data.oMi[0].p;  // at the centre of mass: no rotation coupling
    c->normal = Vec3::UnitZ();
    c->depth = depth;
    c->restitution = e;
    DelassusAssembler asmb;
    asmb.reserve({&box});
    assemble_with_targets(asmb, {s.view()}, object_system, set, 1e-3, st);
    weighted = asmb.row_arrays().weighted;
    weight = weighted ? asmb.row_arrays().position_weight[2] : Scalar(1);
    impact = asmb.row_arrays().impact_time[2];
    return Scalar(asmb.problem().c[2]);
  };
  DelassusSettings st;
  st.erp = 0;
  st.slop = 1e-4;
  st.position_update = PositionUpdate::Euler;
  // 5 mm apart, 2 mm reachable this step: the contact only forbids passing the gap (b = -d/dt)
  CHECK(one_contact(-0.005, 0.0, st) == Approx(-2.0 + 5.0));
  // 1 mm apart, reachable: lands exactly (b = -d/dt = -1 m/s)
  CHECK(one_contact(-0.001, 0.0, st) == Approx(-2.0 + 1.0));
  CHECK_FALSE(weighted);  // q moves with u+
  // Midpoint: reached at half the step (1 mm at 2 m/s, no smooth acceleration here); the target
  // is v+ >= 0 and the impulse moves q for the remaining half step (weight 1 - 1/2): q lands on
  // the surface, 1 mm in the first half, at rest in the second
  st.position_update = PositionUpdate::Midpoint;
  CHECK(one_contact(-0.001, 0.0, st) == Approx(-2.0));
  CHECK(impact == Approx(0.5));
  CHECK(weighted);
  CHECK(weight == Approx(0.5));
  CHECK(one_contact(-0.005, 0.0, st) == Approx(-2.0 + 5.0));  // not reached: as under Euler
  st.position_update = PositionUpdate::Euler;
  // touching with e = 0.5, Newton's law: bounce target 1 m/s
  st.restitution_law = RestitutionLaw::Newton;
  CHECK(one_contact(0.0, 0.5, st) == Approx(-2.0 - 1.0));
  // Poisson's law: no bounce target (the stepper adds the restitution impulse after the solve)
  st.restitution_law = RestitutionLaw::Poisson;
  CHECK(one_contact(0.0, 0.5, st) == Approx(-2.0));
  // penetrating 3 mm with erp 0.2, slop 0.1 mm: push-out target 0.2 * 2.9e-3 / 1e-3
  s.u.setZero();
  s.u_free.setZero();
  st.erp = 0.2;
  st.position_correction = PositionCorrection::Velocity;
  CHECK(one_contact(0.003, 0.0, st) == Approx(-0.58));
  // split correction: no push-out target in c (the stepper moves q by a separate solve)
  st.position_correction = PositionCorrection::Split;
  CHECK(one_contact(0.003, 0.0, st) == Approx(0.0).margin(1e-15));
  st.erp = 0.0;
  CHECK(one_contact(0.003, 0.0, st) == Approx(0.0).margin(1e-15));
}

TEST_CASE("Delassus joint-limit rows appear near a limit with the right sign", "[contact]") {
  ModelBuilder mb("arm");
  JointLimits lim;
  lim.lower = -0.5;
  lim.upper = 0.5;
  mb.add_body(-1, "hinge", JointType::Revolute, SE3(), Vec3::UnitY(), lim, "link",
              Inertia(1.0, Vec3(0, 0, -0.5), Vec3(0.01, 0.01, 0.001).asDiagonal()));
  const Model m = mb.finalize();
  std::mt19937 rng(1);
  Sys s(m, rng);
  DelassusAssembler asmb;
  asmb.reserve({&m});
  const std::vector<Index> object_system = {0};
  ContactSet none(4);
  auto run = [&](Scalar q, Scalar u) {
    s.q[0] = q;
    s.u[0] = s.u_free[0] = u;
    crba(m, s.data, s.q);
    ltdl_factor(m, s.data);
    compute_joint_jacobians(m, s.data, s.q);
    assemble_with_targets(asmb, {s.view()}, object_system, none, 1e-3, DelassusSettings());
  };
  run(0.0, 0.1);
  CHECK(asmb.num_limits() == 0);
  run(0.495, 0.0);  // 5 mm from the upper limit, inside the 10 mm margin
  REQUIRE(asmb.num_limits() == 1);
  CHECK(asmb.rows()[0].sign == -1);
  const ContactProblem p = asmb.problem();
  // row = -u, G = 1/M, c = -u_free - b with b = -dist/dt (may approach by 5 mm this step)
  CHECK(p.G(0, 0) == Approx(1.0 / s.data.Dinv.cwiseInverse()[0]));
  CHECK(p.c[0] == Approx(0.005 / 1e-3));
  run(-0.3, -400.0);  // far from the limit but would cross it in this step
  REQUIRE(asmb.num_limits() == 1);
  CHECK(asmb.rows()[0].sign == 1);
}

namespace {

// Dense oracle for any problem the assembler built: J_s (rows x nv_s) of every system from the
// assembler's rows and frames (contacts: C^T (J_A - J_B), limits: +-e_k), then
// G = sum_s J_s M_s^-1 J_s^T and c = sum_s J_s u_free_s (targets are zero in the callers).
std::vector<MatX> dense_jacobians(const DelassusAssembler& asmb, const std::vector<const Sys*>& sys,
                                  const std::vector<Index>& object_system, const ContactSet& set) {
  const Index n = asmb.num_rows();
  std::vector<MatX> J;
  for (const Sys* s : sys) J.push_back(MatX::Zero(n, s->model->nv));
  for (const ConstraintRow& r : asmb.rows()) {
    if (r.kind == ConstraintRow::Kind::Limit) {
      J[static_cast<std::size_t>(r.system)](r.row, r.index) = r.sign;
      continue;
    }
    if (r.kind == ConstraintRow::Kind::Friction) {  // joint friction: J = e_k
      J[static_cast<std::size_t>(r.system)](r.row, r.index) = 1;
      continue;
    }
    const Contact& c = set[r.index];
    const Mat3 C = asmb.contact_frame(r.index);
    const Index objs[2] = {c.object_a, c.object_b}, bodies[2] = {c.body_a, c.body_b};
    for (int side = 0; side < 2; ++side) {
      const Index s = object_system[static_cast<std::size_t>(objs[side])];
      if (s < 0) continue;
      J[static_cast<std::size_t>(s)].middleRows(r.row, 3) +=
          (side == 0 ? 1.0 : -1.0) * sys[static_cast<std::size_t>(s)]->point_rows(bodies[side], c.position, C);
    }
  }
  return J;
}

// Checks G, c and apply() of the last assemble() against the dense oracle (1e-12 relative).
void check_against_dense(DelassusAssembler& asmb, const std::vector<const Sys*>& sys,
                         const std::vector<Index>& object_system, const ContactSet& set, std::mt19937& rng) {
  const std::vector<MatX> J = dense_jacobians(asmb, sys, object_system, set);
  const Index n = asmb.num_rows();
  MatX G = MatX::Zero(n, n);
  VecX c = VecX::Zero(n);
  std::vector<SystemView> views;
  for (std::size_t s = 0; s < sys.size(); ++s) {
    G += J[s] * sys[s]->M.llt().solve(J[s].transpose());
    c += J[s] * sys[s]->u_free;
    views.push_back(sys[s]->view());
  }
  const ContactProblem p = asmb.problem();
  REQUIRE(p.G.rows() == n);
  CHECK_ALL_CLOSE(MatX(p.G), G, 0, 1e-12);
  CHECK_ALL_CLOSE(VecX(p.c), c, 0, 1e-12);
  // u+ = u_free + M^-1 J^T lambda for every system
  std::normal_distribution<Scalar> nd(0, 1);
  const VecX lambda = VecX::NullaryExpr(n, [&]() { return nd(rng); });
  std::vector<VecX> u_next;
  for (const Sys* s : sys) u_next.push_back(VecX::Zero(s->model->nv));
  asmb.apply(views, lambda, u_next);
  for (std::size_t s = 0; s < sys.size(); ++s) {
    const VecX expected = sys[s]->u_free + sys[s]->M.llt().solve(J[s].transpose() * lambda);
    CHECK_ALL_CLOSE(u_next[s], expected, 1e-12, 1e-10);
  }
}

Contact* add_contact(ContactSet& set, Index obj_a, Index body_a, Index obj_b, Index body_b, const Vec3& p,
                     const Vec3& normal) {
  Contact* c = set.add();
  c->object_a = obj_a; c->body_a = body_a; c->object_b = obj_b; c->body_b = body_b;
  c->position = p;
  c->normal = normal.normalized();
  c->depth = 0.001;  // touching, e = 0, erp = 0 below: zero targets, so c = J u_free
  c->mu = 0.7;
  return c;
}

// The test quadruped with Coulomb friction on every third joint (joint-friction box rows).
Model quadruped_with_joint_friction() {
  Model m = test::quadruped();
  for (Index k = 6; k < m.nv; k += 3) m.friction[k] = 2.0;
  return m;
}

// A random scene of the island tests: the quadruped `quad` (random state), 8 free boxes `box` and
// the ground, joined by up to 14 random contacts (draws that touch only the ground are skipped);
// with `frictionless_even`, the contacts of even draws have mu = 0.
struct IslandTestScene {
  std::vector<std::unique_ptr<Sys>> sys;
  Index ns = 0;                      // systems; the ground is object ns
  std::vector<Index> object_system;  // object -> system (-1: the ground)
  ContactSet set;
  std::vector<SystemView> views;
  std::vector<const Model*> models;

  IslandTestScene(const Model& quad, const Model& box, std::mt19937& rng, bool frictionless_even) {
    sys.push_back(std::make_unique<Sys>(quad, rng, 0.05));
    for (int i = 0; i < 8; ++i) sys.push_back(std::make_unique<Sys>(box, rng));
    ns = static_cast<Index>(sys.size());
    const Index ground = ns;
    for (Index s = 0; s < ns; ++s) object_system.push_back(s);
    object_system.push_back(-1);
    std::normal_distribution<Scalar> nd(0, 1);
    std::uniform_int_distribution<Index> pick(0, ns), qbody(0, quad.nb - 1);
    auto rand3 = [&]() { return test::draw3(nd, rng); };
    auto body_of = [&](Index o) -> Index { return o == ground ? -1 : (o == 0 ? qbody(rng) : 0); };
    for (int i = 0; i < 14; ++i) {
      Index oa = pick(rng), ob = pick(rng);
      if (oa == ground) std::swap(oa, ob);
      if (oa == ground) continue;
      const Vec3 n = rand3(), p = rand3();  // g++'s order of the arguments: the last first
      const Index bb = body_of(ob), ba = body_of(oa);
      Contact* c = add_contact(set, oa, ba, ob, bb, p, n);
      if (frictionless_even && i % 2 == 0) c->mu = 0;
    }
    for (const auto& sp : sys) {
      views.push_back(sp->view());
      models.push_back(sp->model);
    }
  }
};

}  // namespace

TEST_CASE("Delassus on the tree-sparse paths: branches, two systems, self-contact, limits", "[contact]") {
  // ANYmal-like quadruped with position limits on its 12 joints, a free box, the ground
  ModelBuilder mb("limited_quadruped");
  mb.add_body(-1, "root", JointType::Floating, SE3(), Vec3::UnitZ(), JointLimits(), "base",
              Inertia(19.2, Vec3(0.01, 0, 0.02), Vec3(0.2, 0.6, 0.7).asDiagonal()));
  JointLimits lim;
  lim.lower = -0.6;
  lim.upper = 0.7;
  std::vector<Index> shanks;
  for (int l = 0; l < 4; ++l) {
    const Scalar sx = (l % 2 == 0) ? 1 : -1, sy = (l < 2) ? 1 : -1;
    const std::string L = std::to_string(l);
    const Index hip = mb.add_body(0, "haa" + L, JointType::Revolute, SE3(Mat3::Identity(), Vec3(0.3 * sx, 0.1 * sy, 0)),
                                  Vec3::UnitX(), lim, "hip" + L, Inertia(2.0, Vec3(0.05 * sx, 0, 0), Vec3(0.01, 0.01, 0.01).asDiagonal()));
    const Index thigh = mb.add_body(hip, "hfe" + L, JointType::Revolute, SE3(Mat3::Identity(), Vec3(0.06 * sx, 0.08 * sy, 0)),
                                    Vec3::UnitY(), lim, "thigh" + L, Inertia(1.5, Vec3(0, 0, -0.12), Vec3(0.02, 0.02, 0.002).asDiagonal()));
    shanks.push_back(mb.add_body(thigh, "kfe" + L, l == 3 ? JointType::Prismatic : JointType::Revolute,
                                 SE3(Mat3::Identity(), Vec3(0, 0.1 * sy, -0.285)), l == 3 ? Vec3::UnitZ() : Vec3::UnitY(), lim,
                                 "shank" + L, Inertia(0.4, Vec3(0.03 * sx, 0, -0.15), Vec3(0.01, 0.01, 0.001).asDiagonal())));
  }
  const Model quad = mb.finalize();
  const Model box = free_box(3.0);
  std::mt19937 rng(7);
  Sys a(quad, rng, 0.05);
  Sys b(box, rng);
  // three joints beyond a limit (touching the stop: zero target), the others well inside them
  // and moving slowly: 3 limit rows
  for (Index j = 1; j < quad.nb; ++j) a.q[quad.idx_q[j]] = 0.1;
  a.q[quad.idx_q[1]] = -0.61;   // first hip (dof 6) at its lower limit
  a.q[quad.idx_q[6]] = 0.71;    // second knee (dof 11) at its upper limit
  a.q[quad.idx_q[12]] = 0.705;  // the prismatic knee of the last leg at its upper limit
  a.u_free = a.u = 0.1 * a.u;
  a.refresh();

  // objects: 0 = quadruped, 1 = box, 2 = ground
  const std::vector<Index> object_system = {0, 1, -1};
  ContactSet set(16);
  std::normal_distribution<Scalar> nd(0, 1);
  auto rand3 = [&]() { return test::draw3(nd, rng); };
  for (const Index s : shanks) add_contact(set, 0, s, 2, -1, a.data.oMi[s].act_point(Vec3(0, 0, -0.33)), Vec3::UnitZ());
  // a point near the origin and a normal, drawn normal first (g++'s order of the arguments)
  auto point_normal = [&]() {
    const Vec3 n = rand3();
    return std::make_pair(Vec3(0.5 * rand3()), n);
  };
  const std::pair<Index, Index> pairs[4][2] = {{{0, shanks[0]}, {0, shanks[2]}},  // self-contact, two legs
                                               {{0, shanks[1]}, {0, 0}},          // self-contact, leg and base
                                               {{0, 0}, {1, 0}},                  // base on the box
                                               {{1, 0}, {0, shanks[3]}}};         // box (A) on a leg (B)
  for (const auto& ab : pairs) {
    const auto pn = point_normal();
    add_contact(set, ab[0].first, ab[0].second, ab[1].first, ab[1].second, pn.first, pn.second);
  }
  add_contact(set, 1, 0, 2, -1, 0.5 * rand3(), Vec3::UnitZ());  // box on the ground

  DelassusAssembler asmb;
  asmb.reserve({&quad, &box});
  DelassusSettings st;
  st.erp = 0;
  const std::vector<SystemView> views = {a.view(), b.view()};
  assemble_with_targets(asmb, views, object_system, set, 1e-3, st);
  REQUIRE(asmb.num_contacts() == 9);
  REQUIRE(asmb.num_limits() == 3);
  check_against_dense(asmb, {&a, &b}, object_system, set, rng);

  // feet on different legs couple only through the base: the dense oracle agrees, and the
  // block of two feet is not zero (the 6 base dofs are shared)
  CHECK(asmb.problem().G.block(0, 3, 3, 3).norm() > 1e-6);
  // reuse: a second assemble with fewer rows gives the smaller problem exactly
  ContactSet two(4);
  add_contact(two, 0, shanks[1], 2, -1, a.data.oMi[shanks[1]].act_point(Vec3(0, 0, -0.33)), Vec3::UnitZ());
  const auto pn = point_normal();
  add_contact(two, 1, 0, 0, shanks[2], pn.first, pn.second);
  st.joint_limits = false;
  assemble_with_targets(asmb, views, object_system, two, 1e-3, st);
  REQUIRE(asmb.num_rows() == 6);
  check_against_dense(asmb, {&a, &b}, object_system, two, rng);
}

TEST_CASE("Delassus on random trees with limits equals the dense J M^-1 J^T", "[contact]") {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    test::RandomTreeOptions opt;
    opt.num_bodies = 14;
    opt.floating_root = seed % 2 == 1;
    Model tree = test::random_tree(seed, opt);
    // limits on every scalar joint: with q outside them below, rows on arbitrary dofs
    for (Index j = 0; j < tree.nb; ++j) {
      if (tree.nq_joint[j] != 1) continue;
      tree.lower_position[tree.idx_q[j]] = -0.4;
      tree.upper_position[tree.idx_q[j]] = 0.4;
      if (j % 3 == 0) tree.friction[tree.idx_v[j]] = 0.25 * j;  // joint friction rows on some dofs
    }
    const Model box = free_box(1.5);
    std::mt19937 rng(100 + seed);
    Sys a(tree, rng, 0.02);
    Sys b(box, rng);
    // every other scalar joint beyond a limit (alternating sides), the others at 0: the rows are
    // decided by q alone and have zero targets
    int flip = 0;
    for (Index j = 0; j < tree.nb; ++j) {
      if (tree.nq_joint[j] != 1) continue;
      a.q[tree.idx_q[j]] = flip % 2 ? 0.0 : (flip % 4 ? -0.45 : 0.45);
      ++flip;
    }
    a.refresh();
    const std::vector<Index> object_system = {0, 1, -1};
    std::uniform_int_distribution<Index> body(0, tree.nb - 1);
    std::normal_distribution<Scalar> nd(0, 1);
    auto rand3 = [&]() { return test::draw3(nd, rng); };
    ContactSet set(16);
    // random arguments drawn in g++'s order (the last argument first)
    for (int i = 0; i < 4; ++i) {
      const Vec3 n = rand3(), p = rand3();
      add_contact(set, 0, body(rng), 2, -1, p, n);
    }
    for (int i = 0; i < 3; ++i) {
      const Vec3 n = rand3(), p = rand3();
      const Index bb = body(rng), ba = body(rng);
      add_contact(set, 0, ba, 0, bb, p, n);
    }
    const Vec3 n = rand3(), p = rand3();
    add_contact(set, 1, 0, 0, body(rng), p, n);
    DelassusAssembler asmb;
    asmb.reserve({&tree, &box});
    DelassusSettings st;
    st.erp = 0;
    st.limit_margin = -1;  // rows only where q is beyond a limit (zero targets)
    assemble_with_targets(asmb, {a.view(), b.view()}, object_system, set, 1e-3, st);
    INFO("seed " << seed << ", " << asmb.num_limits() << " limit rows, " << asmb.num_friction_rows() << " friction rows");
    CHECK(asmb.num_limits() > 0);
    Index nf = 0;
    for (const ConstraintRow& r : asmb.rows()) {
      if (r.kind != ConstraintRow::Kind::Friction) continue;
      ++nf;
      CHECK(r.row >= 3 * asmb.num_contacts() + asmb.num_limits());  // after all limit rows
      CHECK(asmb.box_bound(r.row) == Approx(tree.friction[r.index] * 1e-3));
      CHECK(asmb.row_arrays().target[r.row] == 0);
    }
    CHECK(nf == asmb.num_friction_rows());
    CHECK(nf > 0);
    check_against_dense(asmb, {&a, &b}, object_system, set, rng);
  }
}

TEST_CASE("islands: factored and dense assembly give the same G blocks and impulses", "[contact][islands][sparse]") {
  // Random scenes: a quadruped with position limits (limit rows, tree-coupled pieces), 8 free
  // boxes, the ground; random contacts join some systems into islands. One assembler stores every
  // island factored (dense limit 0), the other every island dense.
  // (with joint friction on two joints of each leg: box rows in the islands, tree-coupled)
  const Model quad = [] {
    Model m = test::quadruped();
    for (Index k = 6; k < m.nv; k += 3) m.friction[k] = m.friction[k + 1] = 2.0;
    return m;
  }();
  const Model box = free_box(2.0);
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    const IslandTestScene scene(quad, box, rng, false);
    const Index ns = scene.ns;
    const std::vector<Index>& object_system = scene.object_system;
    const ContactSet& set = scene.set;
    const std::vector<SystemView>& views = scene.views;
    const std::vector<const Model*>& models = scene.models;
    DelassusSettings st;
    st.erp = 0;
    st.limit_margin = 10;  // every finite limit gives a row
    std::vector<const Sys*> ptrs;
    for (const auto& sp : scene.sys) ptrs.push_back(sp.get());
    DelassusAssembler factored, dense;
    factored.reserve(models);
    dense.reserve(models);
    factored.set_dense_limit(0);
    dense.set_dense_limit(1 << 30);
    // factored islands order their contacts bottom-up; a zero up direction keeps the
    // ContactSet order (equal heights), so both assemblies have the same local rows and the
    // solvers take the same steps (the ordered variant is checked below, up to the permutation)
    factored.set_up_direction(Vec3::Zero());
    assemble_with_targets(factored, views, object_system, set, 1e-3, st);
    assemble_with_targets(dense, views, object_system, set, 1e-3, st);
    INFO("seed " << seed << ": " << factored.num_islands() << " islands, " << factored.num_rows() << " rows");
    // the factored path against the independent dense oracle J M^-1 J^T (global rows)
    check_against_dense(factored, ptrs, object_system, set, rng);
    REQUIRE(factored.num_islands() == dense.num_islands());
    // islands are the connected components of the contact graph over the systems
    Index with_rows = 0;
    for (Index k = 0; k < factored.num_islands(); ++k) with_rows += factored.island(k).num_systems;
    CHECK(with_rows <= ns);
    for (Index k = 0; k < factored.num_islands(); ++k) {
      const IslandView a = factored.island(k), b = dense.island(k);
      REQUIRE(a.problem.is_factored());
      REQUIRE_FALSE(b.problem.is_factored());
      REQUIRE(a.problem.size() == b.problem.size());
      CHECK_ALL_CLOSE(a.problem.dense(), MatX(b.problem.G), 1e-12, 1e-12);
      CHECK_ALL_CLOSE(VecX(a.problem.c), VecX(b.problem.c), 0, 1e-12);
      for (Index i = 0; i < a.problem.nc; ++i) CHECK_ALL_CLOSE(a.problem.contact_block(i), b.problem.contact_block(i), 1e-12, 1e-12);
      for (Index r = 0; r < a.problem.size(); ++r) CHECK(a.global_row[r] == b.global_row[r]);
      {
        // the exact frictionless QP reads G from the factors: the same answer as from the entries
        std::vector<unsigned char> var(static_cast<std::size_t>(a.problem.size()));
        for (Index r = 0; r < a.problem.size(); ++r)
          var[static_cast<std::size_t>(r)] = r < 3 * a.problem.nc ? r % 3 == 2 : r < a.problem.first_box_row();
        ActiveSetWorkspace w1, w2;
        VecX x1 = VecX::Zero(a.problem.size()), x2 = x1;
        const BoundQpResult e1 = solve_bound_qp_exact(a.problem, var.data(), x1, 1e-9, 1000, w1);
        const BoundQpResult e2 = solve_bound_qp_exact(b.problem, var.data(), x2, 1e-9, 1000, w2);
        CHECK(e1.converged == e2.converged);
        CHECK(e1.changes == e2.changes);
        CHECK_ALL_CLOSE(x1, x2, 1e-10, 1e-10);
      }
      for (const char* name : {"bisection", "pgs"}) {
        // (the sweeps alone: the active-set stage's early try on a crawl factors the two storages
        // differently, equal to its own round-off; tests/stepper/test_resting_stack.cpp compares
        // the stage in body and in contact space)
        SolverSettings ss;
        ss.name = name;
        ss.bisection.active_set_early = 0;
        auto s1 = make_contact_solver(ss), s2 = make_contact_solver(ss);
        VecX l1 = VecX::Zero(a.problem.size()), l2 = l1;
        const SolverResult r1 = s1->solve(a.problem, l1), r2 = s2->solve(b.problem, l2);
        INFO(name << " island " << k);
        CHECK(r1.iterations == r2.iterations);
        // (bisection: to its slip search's tolerance, 1e-10 |lambda|; a search that starts from
        // the contact's impulse may end a Newton step apart from one that falls back to the bracket)
        const Scalar tol = std::string(name) == "bisection" ? 1e-10 : 1e-12;
        CHECK_ALL_CLOSE(l1, l2, tol, tol);
      }
    }
    // bottom-up order: the same G up to the permutation of the local rows (global_row maps both)
    DelassusAssembler ordered;
    ordered.reserve(models);
    ordered.set_dense_limit(0);
    assemble_with_targets(ordered, views, object_system, set, 1e-3, st);
    for (Index k = 0; k < ordered.num_islands(); ++k) {
      const IslandView a = ordered.island(k), b = dense.island(k);
      const Index m = a.problem.size();
      REQUIRE(m == b.problem.size());
      std::vector<Index> local_of_global(static_cast<std::size_t>(dense.num_rows()), -1);
      for (Index r = 0; r < m; ++r) local_of_global[static_cast<std::size_t>(b.global_row[r])] = r;
      const MatX Ga = a.problem.dense();
      MatX Gb(m, m);
      VecX cb(m);
      for (Index r = 0; r < m; ++r) {
        const Index br = local_of_global[static_cast<std::size_t>(a.global_row[r])];
        REQUIRE(br >= 0);
        cb[r] = b.problem.c[br];
        for (Index t = 0; t < m; ++t) Gb(r, t) = b.problem.G(br, local_of_global[static_cast<std::size_t>(a.global_row[t])]);
      }
      CHECK_ALL_CLOSE(Ga, Gb, 1e-12, 1e-12);
      CHECK_ALL_CLOSE(VecX(a.problem.c), cb, 0, 1e-12);
    }
    // contacts between systems of different islands never share a block
    for (Index i = 0; i < set.size(); ++i) {
      for (Index j = 0; j < set.size(); ++j) {
        if (factored.contact_island(i) >= 0 && factored.contact_island(j) >= 0 &&
            factored.contact_island(i) != factored.contact_island(j)) {
          CHECK(dense.problem().G.block<3, 3>(3 * i, 3 * j).norm() == 0);
        }
      }
    }
  }
}

TEST_CASE("frictionless contacts as one row: the three-row form's normal rows and impulses", "[contact][islands]") {
  // Random scenes as above (a quadruped with limit rows and joint friction, 8 free boxes, the
  // ground), half of the contacts frictionless. Built as one row (set_one_row_frictionless), a
  // frictionless contact's tangent rows are zero in G and c, its normal row and column are the
  // three-row form's to the bit, the frictional contacts' rows are untouched, and bisection gives
  // the same impulses (to its tolerance) and the same velocity update; both storages.
  const Model quad = quadruped_with_joint_friction();
  const Model box = free_box(2.0);
  Index one_row_contacts = 0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    const IslandTestScene scene(quad, box, rng, true);
    const auto& sys = scene.sys;
    const std::vector<Index>& object_system = scene.object_system;
    const ContactSet& set = scene.set;
    const std::vector<SystemView>& views = scene.views;
    const std::vector<const Model*>& models = scene.models;
    std::normal_distribution<Scalar> nd(0, 1);
    DelassusSettings st;
    st.erp = 0;
    st.limit_margin = 10;
    for (const Index dense_limit : {Index(0), Index(1) << 30}) {
      DelassusAssembler three, one;
      three.reserve(models);
      one.reserve(models);
      three.set_dense_limit(dense_limit);
      one.set_dense_limit(dense_limit);
      one.set_one_row_frictionless(true);
      assemble_with_targets(three, views, object_system, set, 1e-3, st);
      assemble_with_targets(one, views, object_system, set, 1e-3, st);
      INFO("seed " << seed << ", dense limit " << dense_limit);
      const ContactProblem p3 = three.problem(), p1 = one.problem();
      const Index n = p3.size();
      REQUIRE(p1.size() == n);
      auto tangent = [&](Index r) { return r < 3 * set.size() && r % 3 != 2 && one.one_row(r / 3); };
      for (Index i = 0; i < set.size(); ++i) {
        CHECK(one.one_row(i) == (set[i].mu == 0));
        CHECK_FALSE(three.one_row(i));
        one_row_contacts += one.one_row(i);
      }
      for (Index r = 0; r < n; ++r) {
        CHECK(p1.c[r] == (tangent(r) ? 0 : p3.c[r]));
        for (Index t = 0; t < n; ++t) CHECK(p1.G(r, t) == (tangent(r) || tangent(t) ? 0 : p3.G(r, t)));
      }
      for (Index k = 0; k < one.num_islands(); ++k) {
        const IslandView a = one.island(k), b = three.island(k);
        REQUIRE(a.problem.size() == b.problem.size());
        auto s1 = make_contact_solver("bisection"), s3 = make_contact_solver("bisection");
        VecX l1 = VecX::Zero(a.problem.size()), l3 = l1;
        const SolverResult r1 = s1->solve(a.problem, l1), r3 = s3->solve(b.problem, l3);
        CHECK(r1.status == SolverStatus::Converged);
        CHECK(r3.status == SolverStatus::Converged);
        // both solve the same problem: impulses within the solver's tolerance (1e-6) of each other
        CHECK_ALL_CLOSE(l1, l3, 1e-5, 1e-5);
        for (Index i = 0; i < a.problem.nc; ++i) {
          if (a.problem.mu[i] > 0) continue;
          CHECK(l1[3 * i] == 0);
          CHECK(l1[3 * i + 1] == 0);
        }
      }
      // the velocity update of one impulse vector (zero on the one-row contacts' tangent rows)
      VecX lambda = VecX::NullaryExpr(n, [&]() { return nd(rng); });
      for (Index r = 0; r < n; ++r)
        if (tangent(r)) lambda[r] = 0;
      std::vector<VecX> u1, u3;
      for (const auto& s : sys) u1.push_back(VecX::Zero(s->model->nv)), u3.push_back(VecX::Zero(s->model->nv));
      one.apply(views, lambda, u1);
      three.apply(views, lambda, u3);
      for (std::size_t s = 0; s < sys.size(); ++s) CHECK_ALL_CLOSE(u1[s], u3[s], 1e-14, 1e-14);
    }
  }
  CHECK(one_row_contacts > 20);
}

TEST_CASE("DelassusProduct's normal rows of a frictionless problem: the bits of row() and add_row()",
          "[contact][islands]") {
  // Every contact frictionless (built as one row), impulses zero on the tangent rows: the normal
  // row reads of normal_row() (dense: the normal and one-row columns; factored: the pieces
  // gathered by bind_normal_rows() where they are a free body's) and the updates of add_normal()
  // give G lambda with the same bits as row() and add_row() through a Gauss-Seidel-like pass;
  // reset_normal() gives the same reads as reset().
  const Model quad = quadruped_with_joint_friction();
  const Model box = free_box(2.0);
  Index checked = 0;
  for (unsigned seed = 1; seed <= 6; ++seed) {
    std::mt19937 rng(seed);
    IslandTestScene scene(quad, box, rng, true);
    for (Index i = 0; i < scene.set.size(); ++i) scene.set[i].mu = 0;
    std::normal_distribution<Scalar> nd(0, 1);
    DelassusSettings st;
    st.erp = 0;
    st.limit_margin = 10;
    for (const Index dense_limit : {Index(0), Index(1) << 30}) {
      DelassusAssembler one;
      one.reserve(scene.models);
      one.set_dense_limit(dense_limit);
      one.set_one_row_frictionless(true);
      assemble_with_targets(one, scene.views, scene.object_system, scene.set, 1e-3, st);
      INFO("seed " << seed << ", dense limit " << dense_limit);
      for (Index k = 0; k < one.num_islands(); ++k) {
        const IslandView view = one.island(k);
        const ContactProblem& p = view.problem;
        VecX lambda = VecX::NullaryExpr(p.size(), [&]() { return nd(rng); });
        for (Index i = 0; i < p.nc; ++i) lambda[3 * i] = lambda[3 * i + 1] = 0;
        DelassusProduct a, b;
        a.reset(p, lambda);
        b.reset(p, lambda);
        b.bind_normal_rows();
        for (Index i = 0; i < p.nc; ++i) {
          const Index r = 3 * i + 2;
          REQUIRE(a.row(r, lambda) == b.normal_row(i, lambda));
          const Scalar delta = nd(rng);
          lambda[r] += delta;
          a.add_row(r, delta);
          b.add_normal(i, delta);
          ++checked;
        }
        b.reset_normal(lambda);
        a.reset(p, lambda);
        for (Index i = 0; i < p.nc; ++i) CHECK(a.row(3 * i + 2, lambda) == b.normal_row(i, lambda));
      }
    }
  }
  CHECK(checked > 40);
}

TEST_CASE("free bodies' contact sides and velocity update equal the dense J M^-1 J^T", "[contact][islands]") {
  // The assembler's free-body paths (a contact side's six root columns inline, L^-T over the
  // factor's nonzero entries only, its product with itself made with D^-1 Y, the fixed-size
  // velocity update) against the dense oracle: free bodies whose factor L is full (an offset
  // centre of mass, a full rotational inertia) and balls (centre of mass at the origin, L zero
  // outside the rotation block), their Data as the stepper makes it (the closed-form dynamics),
  // in random contacts with each other and the ground; three-row and one-row contacts, factored
  // and dense storage.
  Mat3 I_full;
  I_full << 0.30, 0.02, -0.04, 0.02, 0.25, 0.03, -0.04, 0.03, 0.20;
  ModelBuilder bb("lumpy");
  bb.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "lumpy",
              Inertia(1.5, Vec3(0.03, -0.02, 0.05), I_full));
  const Model lumpy = bb.finalize();
  ModelBuilder bs("ball");
  bs.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, "ball",
              Inertia(1.0, Vec3::Zero(), 0.004 * Mat3::Identity()));
  const Model ball = bs.finalize();
  Index checked = 0;
  for (unsigned seed = 1; seed <= 4; ++seed) {
    std::mt19937 rng(seed);
    std::vector<std::unique_ptr<Sys>> sys;
    for (int i = 0; i < 6; ++i) sys.push_back(std::make_unique<Sys>(i % 2 == 0 ? lumpy : ball, rng));
    for (auto& sp : sys) {  // the stepper's Data of a free body: closed-form M, J, then the factor
      compute_free_body_dynamics(*sp->model, sp->data, sp->q, sp->u);
      sp->M = sp->data.M;
      REQUIRE(ltdl_factor(*sp->model, sp->data));
    }
    // (the lumpy body's factor is nearly full, the ball's zero outside its rotation block: both
    // kinds of L^-T solve run)
    Index lumpy_nonzero = 0, ball_nonzero = 0;
    for (Index a = 0; a < 15; ++a) {
      lumpy_nonzero += sys[0]->data.L_anc[a] != 0;
      ball_nonzero += sys[1]->data.L_anc[a] != 0;
    }
    CHECK(lumpy_nonzero >= 12);
    CHECK(ball_nonzero <= 3);
    const Index ns = static_cast<Index>(sys.size()), ground = ns;
    std::vector<Index> object_system;
    for (Index s = 0; s < ns; ++s) object_system.push_back(s);
    object_system.push_back(-1);
    ContactSet set(32);
    std::normal_distribution<Scalar> nd(0, 1);
    std::uniform_int_distribution<Index> pick(0, ns);
    for (int i = 0; i < 16; ++i) {
      Index oa = pick(rng), ob = pick(rng);
      if (oa == ground) std::swap(oa, ob);
      if (oa == ground || oa == ob) continue;
      const Vec3 n = test::draw3(nd, rng);
      const Vec3 p = test::draw3(nd, rng);
      Contact* c = add_contact(set, oa, 0, ob, ob == ground ? -1 : 0, p, n);
      if (i % 2 == 0) c->mu = 0;
    }
    std::vector<SystemView> views;
    std::vector<const Model*> models;
    std::vector<const Sys*> ptrs;
    for (const auto& sp : sys) views.push_back(sp->view()), models.push_back(sp->model), ptrs.push_back(sp.get());
    DelassusSettings st;
    st.erp = 0;
    for (const bool one_row : {false, true}) {
      for (const Index dense_limit : {Index(0), Index(1) << 30}) {
        DelassusAssembler asmb;
        asmb.reserve(models);
        asmb.set_dense_limit(dense_limit);
        asmb.set_one_row_frictionless(one_row);
        assemble_with_targets(asmb, views, object_system, set, 1e-3, st);
        INFO("seed " << seed << ", one row " << one_row << ", dense limit " << dense_limit);
        std::vector<MatX> J = dense_jacobians(asmb, ptrs, object_system, set);
        const Index n = asmb.num_rows();
        auto tangent = [&](Index r) { return r < 3 * set.size() && r % 3 != 2 && asmb.one_row(r / 3); };
        for (MatX& Js : J) {  // a one-row contact's tangent rows are zero (contact/delassus.hpp)
          for (Index r = 0; r < n; ++r)
            if (tangent(r)) Js.row(r).setZero();
        }
        MatX G = MatX::Zero(n, n);
        VecX c = VecX::Zero(n);
        for (std::size_t s = 0; s < sys.size(); ++s) {
          G += J[s] * sys[s]->M.llt().solve(J[s].transpose());
          c += J[s] * sys[s]->u_free;
        }
        const ContactProblem prob = asmb.problem();
        CHECK_ALL_CLOSE(MatX(prob.G), G, 1e-12, 1e-12);
        CHECK_ALL_CLOSE(VecX(prob.c), c, 1e-12, 1e-12);
        // the diagonal blocks the solvers invert (a factored island's are assembled on their own)
        for (Index k = 0; k < asmb.num_islands(); ++k) {
          const IslandView isl = asmb.island(k);
          for (Index i = 0; i < isl.problem.nc; ++i) {
            Mat3 expected;
            for (int a = 0; a < 3; ++a)
              for (int b = 0; b < 3; ++b) expected(a, b) = G(isl.global_row[3 * i + a], isl.global_row[3 * i + b]);
            CHECK_ALL_CLOSE(isl.problem.contact_block(i), expected, 1e-12, 1e-12);
          }
        }
        VecX lambda = VecX::NullaryExpr(n, [&]() { return nd(rng); });
        for (Index r = 0; r < n; ++r)
          if (tangent(r)) lambda[r] = 0;
        std::vector<VecX> u_next(sys.size(), VecX::Zero(6));
        asmb.apply(views, lambda, u_next);
        for (std::size_t s = 0; s < sys.size(); ++s) {
          const VecX expected = sys[s]->u_free + sys[s]->M.llt().solve(J[s].transpose() * lambda);
          CHECK_ALL_CLOSE(u_next[s], expected, 1e-12, 1e-12);
        }
        checked += asmb.num_contacts();
      }
    }
  }
  CHECK(checked > 100);
}
