// VecWorld with its worlds' dynamics computed in SIMD lanes (World::integrate_lanes): every width
// the CPU runs gives the trajectories of width 1 (the worlds stepped one by one) bit for bit, with
// 1 and 2 threads, for worlds with different states and PD targets (some clamped at their effort
// limits), with external wrenches in some steps, and in groups the world count does not fill;
// integrate() then allocates nothing after the first steps; the G of a group's rows in lanes
// (DelassusLanes) equal each World's own, and so do their velocity updates.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "impulse/batch/bisection_lanes.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/batch/world_lanes.hpp"
#include "impulse/contact/delassus_lanes.hpp"
#include "impulse/core/error.hpp"
#include "impulse/dynamics/lanes.hpp"
#include "impulse/solvers/bisection.hpp"
#include "impulse/world/step_workspace.hpp"
#include "impulse/world/world_file.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;
using impulse::batch::RowMatX;
using impulse::batch::VecWorld;

namespace {

const std::string kStandWorld = std::string(IMPULSE_SOURCE_DIR) + "/models/worlds/anymal_stand.xml";

std::vector<int> widths() {
  std::vector<int> w;
  for (int x = 2; x <= lanes_max_width(); x *= 2) w.push_back(x);
  return w;
}

struct Trajectory {
  RowMatX q, u;
};

// n ANYmal worlds, each with its own initial velocity and PD targets (world 3's far off: its
// actuators saturate), stepped `steps` times; push: an external wrench on world 1's base in
// every third step.
// mixed: world 2 with another gravity, world 1 with a heavier base (a Model of its own), world 3
// with another time step
Trajectory run(int width, int threads, Index n, Index steps, bool push, bool mixed = false) {
  VecWorld vec(parse_world_file(kStandWorld), n, threads);
  vec.set_lanes(width);
  if (mixed) {
    RowMatX gravity = RowMatX::Zero(n, 3);
    gravity.col(2).setConstant(-9.81);
    gravity(2, 2) = -9.0;
    vec.set_gravity(gravity);
    VecX mass(n);
    RowMatX com = RowMatX::Zero(n, 3);
    for (Index i = 0; i < n; ++i) {
      const Inertia& base = vec.world(i).system(0).model().inertia[0];
      mass[i] = base.m;
      com.row(i) = base.c.transpose();
    }
    mass[1] += 2;
    vec.set_body_mass(0, 0, mass, com);
    vec.world(3 % n).set_time_step(0.5 * vec.world(3 % n).time_step());
  }
  const Index nq = 19, nv = 18;
  RowMatX q(n, nq), u = RowMatX::Zero(n, nv);
  vec.get_q(0, q);
  RowMatX q_target = q, u_target = RowMatX::Zero(n, nv);
  for (Index i = 0; i < n; ++i) {
    u(i, 0) = 0.1 * static_cast<Scalar>(i), u(i, 5) = -0.2 * static_cast<Scalar>(i);
    u(i, 6 + i % 12) = 0.5;
    for (Index k = 7; k < nq; ++k) q_target(i, k) += 0.02 * static_cast<Scalar>((i + k) % 5) - 0.04;
  }
  q_target.row(3 % n).tail(12).array() += 1.5;
  vec.set_state(0, q, u);
  vec.set_pd_targets(0, q_target, u_target);
  RowMatX wrench = RowMatX::Zero(n, 6);
  wrench(1 % n, 0) = 40, wrench(1 % n, 4) = 5;
  for (Index k = 0; k < steps; ++k) {
    if (push && k % 3 == 0) vec.set_external_wrenches(0, {0}, wrench);
    vec.integrate(1);
  }
  Trajectory t{RowMatX(n, nq), RowMatX(n, nv)};
  vec.get_q(0, t.q);
  vec.get_u(0, t.u);
  return t;
}

}  // namespace

TEST_CASE("VecWorld in SIMD lanes equals the worlds stepped one by one bit for bit", "[batch][lanes]") {
  const Index n = 5, steps = 200;  // (5: a group of 4 or 8 is not filled)
  const Trajectory scalar = run(1, 1, n, steps, false);
  // the worlds differ, and world 3 left its start (the comparisons below are not vacuous)
  CHECK(scalar.q(0, 0) != scalar.q(2, 0));
  CHECK(scalar.q(3, 10) != scalar.q(0, 10));
  for (int width : widths()) {
    for (int threads : {1, 2}) {
      INFO("width " << width << ", threads " << threads);
      const Trajectory lanes = run(width, threads, n, steps, false);
      CHECK(lanes.q == scalar.q);
      CHECK(lanes.u == scalar.u);
    }
  }
}

TEST_CASE("VecWorld in SIMD lanes: a world pushed in some steps equals the scalar run", "[batch][lanes]") {
  const Index n = 4, steps = 60;
  const Trajectory scalar = run(1, 1, n, steps, true);
  CHECK(scalar.u(1, 0) != run(1, 1, n, steps, false).u(1, 0));  // (the push acts)
  for (int width : widths()) {
    INFO("width " << width);
    const Trajectory lanes = run(width, 2, n, steps, true);
    CHECK(lanes.q == scalar.q);
    CHECK(lanes.u == scalar.u);
  }
}

TEST_CASE("VecWorld in SIMD lanes: worlds with their own gravity, Model or time step equal the scalar run", "[batch][lanes]") {
  const Index n = 4, steps = 60;
  const Trajectory scalar = run(1, 1, n, steps, false, true);
  const Trajectory plain = run(1, 1, n, steps, false);
  CHECK(scalar.q(2, 2) != plain.q(2, 2));  // (the gravity, the mass and the time step act)
  CHECK(scalar.q(1, 2) != plain.q(1, 2));
  CHECK(scalar.q(3, 2) != plain.q(3, 2));
  for (int width : widths()) {
    INFO("width " << width);
    const Trajectory lanes = run(width, 1, n, steps, false, true);
    CHECK(lanes.q == scalar.q);
    CHECK(lanes.u == scalar.u);
  }
}

TEST_CASE("VecWorld::set_lanes refuses widths other than 1, 2, 4, 8 and widths this CPU lacks", "[batch][lanes]") {
  VecWorld vec(parse_world_file(kStandWorld), 2, 1);
  CHECK_THROWS_WITH(vec.set_lanes(3), Catch::Contains("width must be 1, 2, 4 or 8, got 3"));
  CHECK_THROWS_AS(vec.set_lanes(0), InvalidArgument);
  if (lanes_max_width() < 8) CHECK_THROWS_WITH(vec.set_lanes(8), Catch::Contains("AVX-512F"));
  vec.set_lanes(2);
  CHECK(vec.lanes() == 2);
}

TEST_CASE("VecWorld::integrate in SIMD lanes allocates nothing after the first steps", "[batch][lanes]") {
  if (!test::alloc_counter_available()) return;
  VecWorld vec(parse_world_file(kStandWorld), 8, 2);
  vec.set_lanes(lanes_max_width());
  vec.integrate(20);
  test::alloc_counter_start();
  vec.integrate(20);
  CHECK(test::alloc_counter_stop() == 0);
}

namespace {

// The dense G of every island of the rows a World's begun step assembled (World::begin_step).
std::vector<MatX> lanes_rows_g(World& w) {
  std::vector<MatX> g;
  const DelassusAssembler& a = w.step_stepper().pending_rows();
  for (Index k = 0; k < a.num_islands(); ++k) g.emplace_back(a.island(k).problem.G);
  return g;
}

bool lanes_same_bits(const std::vector<MatX>& x, const std::vector<MatX>& y) {
  if (x.size() != y.size()) return false;
  for (std::size_t k = 0; k < x.size(); ++k) {
    if (x[k].rows() != y[k].rows() || x[k].cols() != y[k].cols()) return false;
    if (x[k].size() > 0 && std::memcmp(x[k].data(), y[k].data(), sizeof(Scalar) * static_cast<std::size_t>(x[k].size())) != 0) return false;
  }
  return true;
}

}  // namespace

namespace {

// A group of `width` Worlds built from d, each with a clone (stepped alone: the reference) and a
// workspace of each; World i moves (base and one joint at its own speeds, a leg joint offset),
// then `setup(i, world, q, u)` shapes it before its state (q, u) is set.
struct LanesGroupFixture {
  std::vector<std::unique_ptr<World>> worlds, copies;
  std::vector<std::unique_ptr<StepWorkspace>> ws, ws_copies;
};
LanesGroupFixture lanes_group_fixture(const WorldDescription& d, int width,
                                      const std::function<void(int, World&, VecX&, VecX&)>& setup) {
  LanesGroupFixture g;
  for (int i = 0; i < width; ++i) {
    auto w = std::make_unique<World>();
    build_world(d, *w);
    ArticulatedSystem& s = w->system(0);
    VecX q = s.q(), u = VecX::Zero(s.nv());
    u[0] = 0.05 * i, u[4] = -0.1 * i, u[6 + i % 12] = 0.3;
    q[8 + i % 3] += 0.01 * i;
    setup(i, *w, q, u);
    s.set_state(q, u);
    g.copies.push_back(w->clone());
    g.worlds.push_back(std::move(w));
    g.ws.push_back(std::make_unique<StepWorkspace>());
    g.ws_copies.push_back(std::make_unique<StepWorkspace>());
  }
  return g;
}

}  // namespace

// The G of a group's rows in lanes (DelassusLanes, the phase between World::begin_step and
// end_step) equal each World's own assemble_products bit for bit: ANYmals on their four feet in
// different states (3x3 blocks of two contact sides), with a hip beyond its limit (one-row limit
// pieces: 1x1, 1x3, 3x1 blocks), on frictionless ground (normal rows alone); a World lifted off
// the ground (no rows: another layout) computes its own.
TEST_CASE("DelassusLanes: the G of a group's rows in lanes equal each World's own bit for bit", "[batch][lanes]") {
  const WorldDescription d = parse_world_file(kStandWorld);
  for (int width : widths()) {
    for (int variant = 0; variant < 3; ++variant) {
      INFO("width " << width << ", variant " << variant);
      LanesGroupFixture g = lanes_group_fixture(d, width, [&](int i, World& w, VecX& q, VecX&) {
        if (variant == 2) w.set_default_material(0, 0);
        if (variant == 1) q[7] = w.system(0).model().lower_position[7] - 0.01 * (i + 1);
        if (variant == 0 && i == 1) q[2] += 0.5;  // (lifted)
      });
      auto &worlds = g.worlds, &copies = g.copies;
      auto &ws = g.ws, &ws_copies = g.ws_copies;
      std::vector<std::vector<MatX>> expected;
      for (int i = 0; i < width; ++i) {
        copies[i]->begin_step(*ws_copies[i]);
        Stepper& st = copies[i]->step_stepper();
        st.pending_rows().assemble_products(st.system_views());
        expected.push_back(lanes_rows_g(*copies[i]));
        copies[i]->cancel_step();
      }
      std::vector<DelassusAssembler*> a;
      std::vector<const std::vector<SystemView>*> views;
      for (int i = 0; i < width; ++i) {
        worlds[i]->begin_step(*ws[i]);
        a.push_back(&worlds[i]->step_stepper().pending_rows());
        views.push_back(&worlds[i]->step_stepper().system_views());
      }
      if (variant == 1) CHECK(a[0]->num_limits() > 0);
      if (variant == 2) CHECK(a[0]->one_row(0));
      CHECK(a[0]->num_contacts() == 4);
      DelassusLanes lanes;
      const int in_lanes = lanes.assemble_products(a.data(), views.data(), width, width);
      CHECK(in_lanes == (variant == 0 ? (width > 2 ? width - 1 : 0) : width));
      for (int i = 0; i < width; ++i) {
        INFO("world " << i);
        CHECK(!a[i]->products_pending());
        const std::vector<MatX> g = lanes_rows_g(*worlds[i]);
        CHECK(!g.empty() == !(variant == 0 && i == 1));
        CHECK(lanes_same_bits(g, expected[static_cast<std::size_t>(i)]));
        worlds[i]->cancel_step();
      }
    }
  }
}

namespace {

// What a begun step's rows give that their Y, c and v- make: the islands' G, c = J u_free and
// v- = J u of every row, and M~^-1 J^T lambda for a fixed lambda (apply(): Y of every piece).
struct LanesPathsResult {
  std::vector<MatX> g;
  VecX c, v;
  std::vector<VecX> u_next;
};
LanesPathsResult lanes_paths_result(World& w) {
  Stepper& st = w.step_stepper();
  DelassusAssembler& a = st.pending_rows();
  LanesPathsResult r;
  r.g = lanes_rows_g(w);
  const Index n = a.num_rows();
  r.c = a.row_arrays().c.head(n);
  r.v = a.row_arrays().v_before.head(n);
  VecX lambda(n);
  for (Index k = 0; k < n; ++k) lambda[k] = 0.5 + 0.25 * static_cast<Scalar>(k % 7) - 0.1 * static_cast<Scalar>(k);
  r.u_next.resize(st.system_views().size());
  a.apply(st.system_views(), lambda, r.u_next);
  return r;
}

bool lanes_same_vec(const VecX& x, const VecX& y) {
  // (memcmp takes no null pointer, even for 0 bytes: a lifted World has no rows)
  return x.size() == y.size() &&
         (x.size() == 0 || std::memcmp(x.data(), y.data(), sizeof(Scalar) * static_cast<std::size_t>(x.size())) == 0);
}

}  // namespace

// The rows' path work in lanes (DelassusLanes with the paths deferred by World::begin_step: each
// contact side's point Jacobian in its frame, Y = L^-T J^T, c and v-; the one-row pieces' L^-T)
// equal each World's own (assemble_paths) bit for bit: ANYmals on four feet in different states
// (variant 0), a hip beyond its limit (1: a limit row's piece), frictionless ground (2: normal
// rows alone); in variant 3 one World has a limit row and one is lifted (other layouts: they
// compute their own) while the others share the lanes; at width 8 some Worlds stand on fewer feet.
TEST_CASE("DelassusLanes: the rows' Y, c and v- in lanes equal each World's own bit for bit", "[batch][lanes]") {
  const WorldDescription d = parse_world_file(kStandWorld);
  for (int width : widths()) {
    for (int variant = 0; variant < 4; ++variant) {
      INFO("width " << width << ", variant " << variant);
      std::vector<std::unique_ptr<World>> worlds, copies;
      std::vector<std::unique_ptr<StepWorkspace>> ws, ws_copies;
      auto limited = [&](int i) { return variant == 1 || (variant == 3 && i == 1); };
      auto lifted = [&](int i) { return variant == 3 && i == 3; };
      for (int i = 0; i < width; ++i) {
        auto w = std::make_unique<World>();
        build_world(d, *w);
        if (variant == 2) w->set_default_material(0, 0);
        ArticulatedSystem& s = w->system(0);
        VecX q = s.q(), u = VecX::Zero(s.nv());
        u[0] = 0.05 * i, u[4] = -0.1 * i, u[6 + i % 12] = 0.3, u[17 - i % 12] = -0.2;
        q[8 + i % 3] += 0.01 * i;
        q[4 + i % 3] += 0.002 * i;  // (a tilted base: every entry of the root columns)
        q.segment<4>(3).normalize();
        if (limited(i)) q[7] = s.model().lower_position[7] - 0.01 * (i + 1);
        if (lifted(i)) q[2] += 0.5;
        s.set_state(q, u);
        copies.push_back(w->clone());
        worlds.push_back(std::move(w));
        ws.push_back(std::make_unique<StepWorkspace>());
        ws_copies.push_back(std::make_unique<StepWorkspace>());
      }
      std::vector<LanesPathsResult> expected;
      for (int i = 0; i < width; ++i) {
        copies[i]->begin_step(*ws_copies[i]);
        Stepper& st = copies[i]->step_stepper();
        CHECK(st.pending_rows().paths_pending() == !lifted(i));
        st.pending_rows().assemble_products(st.system_views());
        expected.push_back(lanes_paths_result(*copies[i]));
        copies[i]->cancel_step();
      }
      std::vector<DelassusAssembler*> a;
      std::vector<const std::vector<SystemView>*> views;
      for (int i = 0; i < width; ++i) {
        worlds[i]->begin_step(*ws[i]);
        a.push_back(&worlds[i]->step_stepper().pending_rows());
        views.push_back(&worlds[i]->step_stepper().system_views());
      }
      if (variant == 1) CHECK(a[0]->num_limits() > 0);
      if (variant == 2) CHECK(a[0]->one_row(0));
      DelassusLanes lanes;
      lanes.assemble_products(a.data(), views.data(), width, width);
      // (worlds 1 and 3 of variant 3 have layouts of their own, a limit row and no rows; the base
      // tilted by 0.002 i lifts some feet of worlds 4 to 7: three or two contacts)
      if (width >= 4 || variant < 3) CHECK(lanes.paths_in_lanes() >= 2);
      CHECK(lanes.paths_in_lanes() <= width - (variant == 3 ? 2 : 0));
      if (width == 8) CHECK(a[7]->num_contacts() < a[0]->num_contacts());
      // the velocity update in lanes (update_velocities, the phase after each World's solve)
      // equals each World's apply() bit for bit, for a lambda of each World's own
      {
        std::vector<VecX> lambda(static_cast<std::size_t>(width));
        std::vector<std::vector<VecX>> u_own(static_cast<std::size_t>(width)), u_lanes(u_own);
        std::vector<const Scalar*> lambda_ptr;
        std::vector<std::vector<VecX>*> u_ptr;
        for (int i = 0; i < width; ++i) {
          const std::size_t k = static_cast<std::size_t>(i);
          const Index n = a[k]->num_rows();
          lambda[k].resize(n);
          for (Index r = 0; r < n; ++r)
            lambda[k][r] = 0.3 + 0.2 * static_cast<Scalar>((r + i) % 5) - 0.07 * static_cast<Scalar>(r * (i + 1));
          u_own[k].resize(views[k]->size());
          u_lanes[k].resize(views[k]->size());
          a[k]->apply(*views[k], lambda[k], u_own[k]);
          lambda_ptr.push_back(lambda[k].data());
          u_ptr.push_back(&u_lanes[k]);
        }
        // (at width 8 world 5 is not asked)
        const unsigned mask = ((1u << width) - 1) & ~(width == 8 ? 1u << 5 : 0u);
        const unsigned updated =
            lanes.update_velocities(a.data(), views.data(), lambda_ptr.data(), u_ptr.data(), mask, width, width);
        CHECK((updated & ~mask) == 0);
        if (width >= 4 || variant < 3) CHECK(__builtin_popcount(updated) >= 2);
        if (variant == 3) CHECK((updated & 0xau) == 0);  // (worlds 1 and 3: layouts of their own)
        for (int i = 0; i < width; ++i) {
          INFO("world " << i << ", velocity update");
          const std::size_t k = static_cast<std::size_t>(i);
          if (!(updated & (1u << i))) continue;
          for (std::size_t s = 0; s < u_own[k].size(); ++s) CHECK(lanes_same_vec(u_lanes[k][s], u_own[k][s]));
        }
      }
      for (int i = 0; i < width; ++i) {
        INFO("world " << i);
        CHECK(!a[i]->paths_pending());
        const LanesPathsResult r = lanes_paths_result(*worlds[i]);
        const LanesPathsResult& e = expected[static_cast<std::size_t>(i)];
        CHECK((r.c.size() == 0) == lifted(i));
        CHECK(a[i]->num_limits() == (limited(i) ? 1 : 0));
        CHECK(lanes_same_bits(r.g, e.g));
        CHECK(lanes_same_vec(r.c, e.c));
        CHECK(lanes_same_vec(r.v, e.v));
        REQUIRE(r.u_next.size() == e.u_next.size());
        for (std::size_t s = 0; s < r.u_next.size(); ++s) CHECK(lanes_same_vec(r.u_next[s], e.u_next[s]));
        worlds[i]->cancel_step();
      }
    }
  }
}

// The contact solves of a group in lanes (BisectionLanes: the bisection solver's sweeps, one World
// per lane, between World::begin_solve and solve_step) give each World the step of its own
// integrate(ws) bit for bit (state, sweeps, residual): ANYmals on their feet in different states,
// which stop after different sweep counts, some landing (i % 3 = 2: a contact slips, solved in
// the middle of the lanes' sweep by Algorithm 1 as the World's own sweep solves it) (variant 0);
// the base tilted so that some Worlds stand on fewer feet (left to their own solvers: the lanes
// take the Worlds with the group's largest contact count, when at least three have it) and, of 8,
// one lifted (no rows) (variant 1); on frictionless ground, which the lanes leave to the
// Worlds (variant 2); with the active-set stage at sweep 2 (active_set_start 2: the lanes keep a
// World for its first sweep only) and one World lifted (variant 3); every World landing with its base sliding sideways,
// so that the feet of several Worlds slip at the same contact (variant 4); the same with the
// paper's energy minimum as the slip model (SlipModel::MinimumEnergy) (variant 5).
TEST_CASE("BisectionLanes: the solves in lanes equal each World's own bit for bit", "[batch][lanes]") {
  const WorldDescription d = parse_world_file(kStandWorld);
  for (int width : widths()) {
    for (int variant = 0; variant < 6; ++variant) {
      INFO("width " << width << ", variant " << variant);
      auto lifted = [&](int i) { return (variant == 1 && i == 6) || (variant == 3 && i == 2); };
      LanesGroupFixture g = lanes_group_fixture(d, width, [&](int i, World& w, VecX& q, VecX& u) {
        if (variant == 2) w.set_default_material(0, 0);
        if (variant == 3) dynamic_cast<BisectionSolver&>(w.contact_solver()).settings().active_set_start = 2;
        if (variant == 0 || variant == 3) u[2] = -0.05 * (i % 3);
        if (variant == 1) q[4 + i % 3] += (i % 4 == 3 ? 0.01 : 0.002 * i), q.segment<4>(3).normalize();
        if (variant >= 4) u[1] = 0.3 + 0.05 * i, u[2] = -0.08 - 0.01 * i;
        if (variant == 5) dynamic_cast<BisectionSolver&>(w.contact_solver()).settings().slip_model = SlipModel::MinimumEnergy;
        if (lifted(i)) q[2] += 0.5;
      });
      auto &worlds = g.worlds, &copies = g.copies;
      auto &ws = g.ws, &ws_copies = g.ws_copies;
      batch::BisectionLanes lanes;
      // steps 0 .. 5: the first from rest (no warm start), the others from the last step's impulses
      unsigned taken_later = 0;
      bool fewer_feet = false;
      for (int step = 0; step < 6; ++step) {
        INFO("step " << step);
        std::vector<StepReport> expected;
        for (int i = 0; i < width; ++i) expected.push_back(copies[i]->integrate(*ws_copies[i]));
        unsigned begun = 0;
        std::vector<World*> group;
        for (int i = 0; i < width; ++i) {
          worlds[i]->begin_step(*ws[i]);
          if (worlds[i]->begin_solve()) begun |= 1u << i;
          group.push_back(worlds[i].get());
        }
        CHECK(begun == (1u << width) - 1);
        const unsigned taken = lanes.solve(group.data(), begun, width, width);
        if (step > 0) taken_later |= taken;
        std::vector<Index> sweeps, contacts(static_cast<std::size_t>(width));
        for (int i = 0; i < width; ++i) {
          const DelassusAssembler& rows = worlds[i]->step_stepper().pending_rows();
          contacts[static_cast<std::size_t>(i)] = rows.num_islands() == 1 ? rows.island(0).problem.nc : 0;
        }
        const Index most = *std::max_element(contacts.begin(), contacts.end());
        const int at_most = static_cast<int>(std::count(contacts.begin(), contacts.end(), most));
        const bool lanes_run = at_most >= std::min(batch::BisectionLanes::kMinLanes, width);
        for (int i = 0; i < width; ++i) {
          INFO("world " << i << ", " << contacts[static_cast<std::size_t>(i)] << " contacts of the group's " << most);
          const bool in_lanes = (taken >> i & 1u) != 0;
          const bool fewer = contacts[static_cast<std::size_t>(i)] < most;
          if (in_lanes) CHECK(!fewer);
          if (step == 0 && (variant <= 1 || variant >= 4) && !lifted(i) && !fewer && lanes_run) CHECK(in_lanes);  // (slipping: in the lanes)
          if (variant == 2 || lifted(i)) CHECK(!in_lanes);
          CHECK(worlds[i]->solve_step());
          const StepReport r = worlds[i]->end_step();
          CHECK(r.solver_iterations == expected[i].solver_iterations);
          CHECK(r.residual == expected[i].residual);
          CHECK(r.status == expected[i].status);
          CHECK(worlds[i]->system(0).q() == copies[i]->system(0).q());
          CHECK(worlds[i]->system(0).u() == copies[i]->system(0).u());
          if (in_lanes) {
            sweeps.push_back(r.solver_iterations);
            if (variant == 3) CHECK(r.solver_iterations == 1);
          }
          if (variant == 3 && step == 0 && i == 1) CHECK(!in_lanes);  // (two sweeps: the second the stage's)
          fewer_feet = fewer_feet || (!lifted(i) && fewer);
        }
        if (step > 0) continue;
        if (variant == 1) CHECK(lanes_run);
        if (variant == 1) CHECK((taken & 1u) != 0);
        // (the lanes' Worlds stop after different sweep counts)
        if (variant == 0) CHECK(*std::min_element(sweeps.begin(), sweeps.end()) < *std::max_element(sweeps.begin(), sweeps.end()));
      }
      if (variant != 2) CHECK((taken_later & 1u) != 0);
      if (variant == 1 && width >= 4) CHECK(fewer_feet);  // (a World on fewer feet, left to its own solver)
    }
  }
}

// A group's memory (WorldLanes::GroupMemory): after a step whose layouts at least three Worlds
// (both of 2) share, the next step leaves the rows' path work to the lanes; after one whose
// Worlds each have their own layout (lifted off the ground by different heights: their feet
// touch in turn, or none), the Worlds compute it with their rows. Either way each World steps as
// integrate(ws) alone, bit for bit, over steps in which the memory changes.
TEST_CASE("WorldLanes: the group's memory chooses where the rows' path work is made, the same bits", "[batch][lanes]") {
  const WorldDescription d = parse_world_file(kStandWorld);
  for (int width : widths()) {
    for (int variant = 0; variant < 2; ++variant) {
      INFO("width " << width << (variant == 0 ? ", standing" : ", each World its own layout"));
      LanesGroupFixture g = lanes_group_fixture(d, width, [&](int i, World&, VecX& q, VecX&) {
        if (variant == 1) q[2] += 0.01 * i;  // (World 0 on its feet, the others falling onto them)
      });
      batch::WorldLanes lanes;
      batch::WorldLanes::GroupMemory memory;
      std::vector<World*> worlds;
      for (auto& w : g.worlds) worlds.push_back(w.get());
      std::vector<StepReport> report(static_cast<std::size_t>(width));
      int deferred = 0, fused = 0;
      for (int step = 0; step < 40; ++step) {
        INFO("step " << step);
        (memory.defer_paths ? deferred : fused) += 1;
        lanes.integrate(worlds.data(), width, width, *g.ws[0], report.data(), &memory);
        for (int i = 0; i < width; ++i) {
          const StepReport expected = g.copies[static_cast<std::size_t>(i)]->integrate(*g.ws_copies[static_cast<std::size_t>(i)]);
          CHECK(report[static_cast<std::size_t>(i)].solver_iterations == expected.solver_iterations);
          CHECK(worlds[static_cast<std::size_t>(i)]->system(0).q() == g.copies[static_cast<std::size_t>(i)]->system(0).q());
          CHECK(worlds[static_cast<std::size_t>(i)]->system(0).u() == g.copies[static_cast<std::size_t>(i)]->system(0).u());
        }
      }
      INFO(deferred << " steps deferred, " << fused << " fused");
      if (variant == 0) CHECK(fused == 0);
      if (variant == 1) CHECK(fused > 0);
    }
  }
}
