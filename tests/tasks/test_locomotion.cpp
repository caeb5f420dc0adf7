// LocomotionTask: results independent of the thread count and of the split of the environments
// (first_env), seeded resets, auto reset with the final observation, shape errors, no allocation
// per step, and physics: standing still under zero action keeps ANYmal up.
#include <catch2/catch.hpp>
#include <vector>

#include "impulse/core/error.hpp"
#include "impulse/tasks/locomotion.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;
using impulse::tasks::LocomotionSettings;
using impulse::tasks::LocomotionTask;
using impulse::batch::RowMatX;
using BoolVec = LocomotionTask::BoolVec;

namespace {

// examples/configs/anymal.json, the ANYmal config
LocomotionSettings settings() {
  return impulse::tasks::load_locomotion_config(std::string(IMPULSE_SOURCE_DIR) + "/examples/configs/anymal.json");
}

struct Buffers {
  explicit Buffers(Index n)
      : obs(n, 49), final_obs(n, 49), reward(n), ret(n), len(n), term(n), trunc(n), actions(RowMatX::Zero(n, 12)) {}
  RowMatX obs, final_obs;
  VecX reward, ret, len;
  BoolVec term, trunc;
  RowMatX actions;
  void step(LocomotionTask& t) { t.step(actions, obs, reward, term, trunc, final_obs, ret, len); }
};

// pseudo-random but reproducible actions
void fill_actions(RowMatX& a, Index k, Index first_env) {
  for (Index i = 0; i < a.rows(); ++i)
    for (Index j = 0; j < a.cols(); ++j) a(i, j) = std::sin(0.37 * k + 1.3 * (i + first_env) + 0.7 * j);
}

}  // namespace

TEST_CASE("LocomotionTask: bit-identical with 1 and 2 threads and for any split of the environments", "[batch]") {
  const Index n = 6, steps = 30;
  LocomotionTask one(settings(), n, 1), two(settings(), n, 2);
  LocomotionTask lo(settings(), 2, 1, 0), hi(settings(), 4, 2, 2);  // environments 0-1 and 2-5
  Buffers b1(n), b2(n), bl(2), bh(4);
  one.reset(7, b1.obs);
  two.reset(7, b2.obs);
  lo.reset(7, bl.obs);
  hi.reset(7, bh.obs);
  CHECK(b1.obs == b2.obs);
  for (Index k = 0; k < steps; ++k) {
    fill_actions(b1.actions, k, 0);
    fill_actions(b2.actions, k, 0);
    fill_actions(bl.actions, k, 0);
    fill_actions(bh.actions, k, 2);
    b1.step(one);
    b2.step(two);
    bl.step(lo);
    bh.step(hi);
    REQUIRE(b1.obs == b2.obs);
    REQUIRE(b1.reward == b2.reward);
    REQUIRE(RowMatX(b1.obs.topRows(2)) == bl.obs);
    REQUIRE(RowMatX(b1.obs.bottomRows(4)) == bh.obs);
  }
  // seeds matter: another seed gives other commands and states
  Buffers b3(n);
  one.reset(8, b3.obs);
  CHECK(b3.obs != b1.obs);
}

TEST_CASE("LocomotionTask: an episode does not depend on the ones before it (reset replays bit for bit)", "[batch]") {
  // reset_env goes through World::reset (the state marked at construction: warm-start memory,
  // pending forces and time of the previous episode gone), so reset(seed) after other steps
  // replays the first run. (The old reset passed this too: the robot starts in the air, and
  // the contact memory empties on its first step.)
  const Index n = 3, steps = 20;
  LocomotionTask task(settings(), n, 2);
  Buffers b(n);
  std::vector<RowMatX> first;
  task.reset(5, b.obs);
  for (Index k = 0; k < steps; ++k) {
    fill_actions(b.actions, k, 0);
    b.step(task);
    first.push_back(b.obs);
  }
  for (Index k = 0; k < 20; ++k) {
    fill_actions(b.actions, k + 100, 0);  // other actions: other contacts and warm starts
    b.step(task);
  }
  task.reset(5, b.obs);
  for (Index k = 0; k < steps; ++k) {
    fill_actions(b.actions, k, 0);
    b.step(task);
    REQUIRE(b.obs == first[static_cast<std::size_t>(k)]);
  }
}

TEST_CASE("LocomotionTask: zero action stands; truncation resets with the final observation", "[batch]") {
  LocomotionSettings s = settings();
  s.max_episode_steps = 50;  // 0.5 s
  const Index n = 3;
  LocomotionTask task(s, n, 2);
  // one Model for all environments (parsed once, shared, not copied per World)
  for (Index i = 1; i < n; ++i)
    CHECK(task.world(i).system(0).shared_model().get() == task.world(0).system(0).shared_model().get());
  Buffers b(n);
  task.reset(1, b.obs);
  const Vec3 cmd0 = task.command(0);
  CHECK(cmd0[0] >= s.command_vx.lo);
  CHECK(cmd0[0] <= s.command_vx.hi);
  for (Index k = 0; k < 49; ++k) {
    b.step(task);
    REQUIRE(b.term.count() == 0);  // standing: nothing falls
    REQUIRE(b.trunc.count() == 0);
  }
  const double height = task.world(0).system(0).q()[2];
  CHECK(height > 0.45);
  for (Index i = 0; i < n; ++i) CHECK(b.obs.row(i).segment<4>(45).sum() == 4);  // all feet on the ground
  b.step(task);  // step 50: time limit
  CHECK(b.trunc.count() == n);
  CHECK(b.term.count() == 0);
  CHECK(b.len == VecX::Constant(n, 50));
  // the final observation is the standing robot; obs is the fresh episode (previous action zero, new command)
  CHECK(b.final_obs(0, 2) < -0.95);
  CHECK(task.world(0).time() == Approx(0.0));
  CHECK(task.command(0) != cmd0);
  CHECK(b.ret.allFinite());
}

TEST_CASE("LocomotionTask: a foot within the contact margin but not touching is not in contact", "[batch]") {
  LocomotionSettings s = settings();
  s.substeps = 1;  // a control step of one 2 ms physics step
  LocomotionTask task(s, 1, 1);
  Buffers b(1);
  task.reset(2, b.obs);
  for (int k = 0; k < 500; ++k) b.step(task);  // settle on the ground
  REQUIRE(b.obs.row(0).segment<4>(45).sum() == 4);
  // lift the standing robot by 4 mm, at rest: within 2 ms it falls 0.02 mm and its unloaded legs
  // extend by less than the rest, so its feet stay within the 5 mm collision margin (contacts
  // are generated) but do not touch (zero impulses)
  ArticulatedSystem& r = task.world(0).system(0);
  VecX q = r.q();
  q[2] += 0.004;
  r.set_state(q, VecX::Zero(r.nv()));
  b.step(task);
  CHECK(task.world(0).contacts().size() == 4);
  for (const BodyContactImpulse& c : r.contact_impulses()) CHECK(c.impulse.norm() == 0);
  CHECK(b.obs.row(0).segment<4>(45).sum() == 0);
  CHECK(b.term[0] == false);
}

TEST_CASE("LocomotionTask: a robot thrown upside down terminates", "[batch]") {
  LocomotionSettings s = settings();
  s.base_height = 0.8;
  LocomotionTask task(s, 1, 1);
  Buffers b(1);
  task.reset(3, b.obs);
  // flip the robot: base upside down above the ground
  ArticulatedSystem& r = task.world(0).system(0);
  VecX q = r.q();
  q.segment<4>(3) << 0, 1, 0, 0;
  r.set_q(q);
  bool terminated = false;
  for (int k = 0; k < 100 && !terminated; ++k) {
    b.step(task);
    terminated = b.term[0];
  }
  CHECK(terminated);
  CHECK(b.final_obs(0, 2) > 0);  // gravity points up in the base frame: upside down
}

TEST_CASE("LocomotionTask: privileged observation of the current and of the final state", "[batch]") {
  // Two tasks on the same seed step the same trajectories; one ends its episodes after 3 control
  // steps, so its final privileged observation at step 3 is the other's current one.
  LocomotionSettings s = settings();
  const Index n = 3, kp = 8;
  LocomotionTask longer(s, n, 1);
  s.max_episode_steps = 3;
  LocomotionTask shorter(s, n, 2);
  Buffers a(n), b(n);
  longer.reset(4, a.obs);
  shorter.reset(4, b.obs);
  RowMatX pa(n, kp), pb(n, kp), fa(n, kp), fb = RowMatX::Constant(n, kp, -7.0);
  for (Index k = 0; k < 3; ++k) {
    fill_actions(a.actions, k, 0);
    fill_actions(b.actions, k, 0);
    a.step(longer);
    b.step(shorter);
    longer.privileged(pa, fa);
    shorter.privileged(pb, fb);
    if (k < 2) CHECK(fb == RowMatX::Constant(n, kp, -7.0));  // no episode ended: rows untouched
  }
  REQUIRE(b.trunc.count() == n);
  CHECK(fb == pa);  // bit for bit
  // the current state: base velocity in the base frame * 2, height, swing times in [0, 0.03]
  for (Index i = 0; i < n; ++i) {
    const ArticulatedSystem& r = longer.world(i).system(0);
    const VecX& q = r.q();
    const Mat3 R = Quat(q[3], q[4], q[5], q[6]).toRotationMatrix();
    CHECK((pa.row(i).head<3>().transpose() - 2 * R.transpose() * r.u().head<3>()).norm() < 1e-14);
    CHECK(pa(i, 3) == q[2]);
    CHECK(pa.row(i).tail<4>().minCoeff() >= 0);
    CHECK(pa.row(i).tail<4>().maxCoeff() <= 0.03 + 1e-12);
  }
  // shorter reset its episodes: its current state is a fresh start at the reset height
  for (Index i = 0; i < n; ++i) CHECK(pb(i, 3) == Approx(s.base_height));
  RowMatX wrong(n + 1, kp);
  CHECK_THROWS_WITH(longer.privileged(wrong, fa), Catch::Contains("must have shape (3, 8)"));
}

TEST_CASE("LocomotionTask: rewards.only_positive clips each step's reward at 0", "[batch]") {
  // Rewards do not act on the physics, so both tasks step the same trajectories; large random
  // actions make the action-rate penalty exceed the tracking terms on some steps.
  LocomotionSettings s = settings();
  s.rewards.only_positive = false;
  const Index n = 4;
  LocomotionTask raw(s, n, 1);
  s.rewards.only_positive = true;
  LocomotionTask clipped(s, n, 2);
  Buffers a(n), b(n);
  raw.reset(5, a.obs);
  clipped.reset(5, b.obs);
  Index negative = 0;
  for (Index k = 0; k < 20; ++k) {
    fill_actions(a.actions, k, 0);
    a.actions *= 4;
    b.actions = a.actions;
    a.step(raw);
    b.step(clipped);
    REQUIRE(a.obs == b.obs);
    for (Index i = 0; i < n; ++i) {
      CHECK(b.reward[i] == std::max(a.reward[i], 0.0));
      negative += a.reward[i] < 0 ? 1 : 0;
    }
  }
  CHECK(negative > 0);  // the clip was exercised
}

TEST_CASE("LocomotionTask: bad settings and shapes raise InvalidArgument", "[batch]") {
  LocomotionSettings s = settings();
  CHECK_THROWS_WITH(LocomotionTask(s, 0, 1), Catch::Contains("num_envs must be >= 1"));
  s.substeps = 0;
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("substeps must be >= 1"));
  s = settings();
  s.rewards.orientation = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("reward weights must be finite"));
  s = settings();
  s.joints[4] = "LF_KNEE";
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("joints: no joint 'LF_KNEE' in"));
  s = settings();
  s.feet[2] = "LH_TOE";
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("feet: no frame or link 'LH_TOE' in"));
  s = settings();
  s.nominal.pop_back();
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("nominal has 11 values for 12 joints"));
  s = settings();
  s.joints[5] = s.joints[0];
  CHECK_THROWS_WITH(LocomotionTask(s, 1, 1), Catch::Contains("joints: 'LF_HAA' is listed twice"));
  s = settings();
  s.urdf = std::string(IMPULSE_SOURCE_DIR) + "/models/pendulum.urdf";
  CHECK_THROWS_AS(LocomotionTask(s, 1, 1), Error);
  s.urdf = std::string(IMPULSE_SOURCE_DIR) + "/models/no_such_robot.urdf";
  CHECK_THROWS_AS(LocomotionTask(s, 1, 1), Error);
  LocomotionTask task(settings(), 2, 1);
  Buffers b(2), wrong(3);
  task.reset(0, b.obs);
  CHECK_THROWS_WITH(task.reset(0, wrong.obs), Catch::Contains("obs must have shape (2, 49)"));
  CHECK_THROWS_WITH(task.step(wrong.actions, b.obs, b.reward, b.term, b.trunc, b.final_obs, b.ret, b.len),
                    Catch::Contains("actions must have shape (2, 12), got (3, 12)"));
  b.actions(1, 3) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(b.step(task), Catch::Contains("actions must be finite"));
}

TEST_CASE("LocomotionTask::step allocates nothing", "[batch]") {
  if (!test::alloc_counter_available()) return;
  LocomotionSettings s = settings();
  s.max_episode_steps = 5;  // include resets
  LocomotionTask task(s, 4, 2);
  Buffers b(4);
  task.reset(0, b.obs);
  // the contact buffers grow the first time a step needs more rows (memory grows with use:
  // docs/architecture.md), so warm up over many episodes first; then steps and resets allocate nothing
  for (int k = 0; k < 100; ++k) b.step(task);
  test::alloc_counter_start();
  for (int k = 0; k < 12; ++k) b.step(task);
  CHECK(test::alloc_counter_stop() == 0);
}
