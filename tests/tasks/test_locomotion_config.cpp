// Locomotion configs and the generic task: JSON parsing and its errors, joint order as
// configured (a permuted config steps the same robot), other robots than ANYmal, domain
// randomization (per environment, thread-count independent, in the privileged observation) and
// the rough-terrain curriculum.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "impulse/core/error.hpp"
#include "impulse/tasks/locomotion.hpp"
#include "impulse/world/step_workspace.hpp"
#include "support/alloc_counter.hpp"

using namespace impulse;
using impulse::batch::RowMatX;
using impulse::tasks::LocomotionSettings;
using impulse::tasks::LocomotionTask;
using impulse::tasks::load_locomotion_config;
using impulse::tasks::parse_locomotion_config;
using BoolVec = LocomotionTask::BoolVec;

namespace {

const std::string kConfigDir = std::string(IMPULSE_SOURCE_DIR) + "/examples/configs";

LocomotionSettings anymal() { return load_locomotion_config(kConfigDir + "/anymal.json"); }

struct Run {
  Run(LocomotionTask& t)
      : task(t), n(t.num_envs()), obs(n, t.obs_size()), final_obs(n, t.obs_size()), reward(n), ret(n), len(n),
        term(n), trunc(n), actions(RowMatX::Zero(n, t.action_size())) {}
  LocomotionTask& task;
  Index n;
  RowMatX obs, final_obs;
  VecX reward, ret, len;
  BoolVec term, trunc;
  RowMatX actions;
  void step() { task.step(actions, obs, reward, term, trunc, final_obs, ret, len); }
};

std::string minimal_config(const std::string& extra) {
  return R"({"urdf": "../../models/anymal/anymal.urdf",
    "joints": ["LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
               "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"],
    "feet": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
    "nominal": [0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8],
    "base_height": 0.56)" +
         extra + "}";
}

}  // namespace

TEST_CASE("Locomotion config: keys, defaults, relative paths and ranges", "[batch]") {
  const LocomotionSettings s = parse_locomotion_config(
      minimal_config(R"(, "kp": [1,2,3,4,5,6,7,8,9,10,11,12], "command_vy": [-0.2, 0.3], "command_yaw": 0.5,
                       "rewards": {"orientation": -2, "only_positive": false},
                       "terrain": {"type": "rough", "rows": 4},
                       "randomization": {"friction": [0.4, 1.2], "push_interval": 3})"),
      kConfigDir);
  CHECK(s.urdf == std::filesystem::path(std::string(IMPULSE_SOURCE_DIR) + "/models/anymal/anymal.urdf").lexically_normal().string());
  CHECK(s.joints.size() == 12);
  CHECK(s.kp.size() == 12);
  CHECK(s.kp[11] == 12);
  CHECK(s.kd == std::vector<Scalar>{2});  // default
  CHECK(s.command_vy.lo == -0.2);
  CHECK(s.command_vy.hi == 0.3);
  CHECK(s.command_yaw.lo == 0.5);  // one number: a constant
  CHECK(s.command_yaw.hi == 0.5);
  CHECK(s.rewards.orientation == -2);
  CHECK(s.rewards.lin_vel_z == -2);  // default
  CHECK_FALSE(s.rewards.only_positive);
  CHECK(s.terrain.rough());
  CHECK(s.terrain.rows == 4);
  CHECK(s.randomization.friction.hi == 1.2);
  CHECK(s.randomization.push_interval == 3);
  // the keys the docs list are the parser's
  const auto keys = tasks::locomotion_config_keys();
  CHECK(std::find(keys.begin(), keys.end(), "randomization.added_mass") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "rewards.feet_air_time") != keys.end());
}

TEST_CASE("Locomotion config: each bad config names its key", "[batch]") {
  const auto error = [](const std::string& text) {
    try {
      parse_locomotion_config(text, kConfigDir, "robot.json");
    } catch (const InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(error(minimal_config(R"(, "kpp": 3)")), Catch::Contains("robot.json: unknown key 'kpp' (known: "));
  CHECK_THAT(error(minimal_config(R"(, "rewards": {"speed": 1})")), Catch::Contains("unknown key 'rewards.speed'"));
  CHECK_THAT(error(minimal_config(R"(, "terrain": {"type": "stairs"})")),
             Catch::Contains("key 'terrain.type' must be \"flat\" or \"rough\""));
  CHECK_THAT(error(minimal_config(R"(, "kp": "high")")), Catch::Contains("key 'kp' must be a number or a list"));
  CHECK_THAT(error(minimal_config(R"(, "substeps": 2.5)")), Catch::Contains("key 'substeps' must be an integer"));
  CHECK_THAT(error(minimal_config(R"(, "command_vx": [1, 0.5])")), Catch::Contains("key 'command_vx' must have lo <= hi"));
  CHECK_THAT(error(minimal_config(R"(, "command_vx": [1, 2, 3])")), Catch::Contains("key 'command_vx' must be [lo, hi]"));
  CHECK_THAT(error(minimal_config(R"(, "joints": "LF_HAA")")), Catch::Contains("key 'joints' must be a list of strings"));
  CHECK_THAT(error(R"({"urdf": "a.urdf", "joints": [], "feet": [], "nominal": []})"),
             Catch::Contains("robot.json: missing key 'base_height'"));
  CHECK_THAT(error("{\"urdf\": "), Catch::Contains("robot.json: not valid JSON"));
  CHECK_THAT(error("[1, 2]"), Catch::Contains("must be an object"));
  CHECK_THROWS_WITH(load_locomotion_config(kConfigDir + "/no_such_config.json"),
                    Catch::Contains("no_such_config.json"));
}

TEST_CASE("Locomotion: the joints' order is the config's (a permuted config steps the same robot)", "[batch]") {
  // Reversing `joints` (and nominal, kp) reverses the action and the joint blocks of the
  // observation; with the actions reversed too, the robots move bit for bit alike.
  LocomotionSettings a = anymal();
  a.init_joint_noise = 0;  // the noise is drawn joint by joint in config order
  LocomotionSettings b = a;
  std::reverse(b.joints.begin(), b.joints.end());
  std::reverse(b.nominal.begin(), b.nominal.end());
  LocomotionTask ta(a, 2, 1), tb(b, 2, 2);
  Run ra(ta), rb(tb);
  ta.reset(3, ra.obs);
  tb.reset(3, rb.obs);
  for (int k = 0; k < 40; ++k) {
    for (Index i = 0; i < 2; ++i)
      for (Index j = 0; j < 12; ++j) ra.actions(i, j) = std::sin(0.3 * k + 0.7 * j + i);
    rb.actions = ra.actions.rowwise().reverse();
    ra.step();
    rb.step();
    REQUIRE(ta.world(0).system(0).q() == tb.world(0).system(0).q());
    REQUIRE(ta.world(1).system(0).u() == tb.world(1).system(0).u());
    REQUIRE(RowMatX(ra.obs.middleCols(6, 12)) == RowMatX(rb.obs.middleCols(6, 12).rowwise().reverse()));
  }
}

TEST_CASE("Locomotion: randomized parameters per environment, independent of the thread count", "[batch]") {
  LocomotionSettings s = anymal();
  s.randomization.friction = {0.4, 1.2};
  s.randomization.motor_strength = {0.8, 1.2};
  s.randomization.added_mass = {-2, 4};
  s.randomization.com_shift = {-0.03, 0.03};
  s.randomization.joint_damping = {0, 2};
  s.randomization.joint_friction = {0.5, 1};
  s.randomization.push_interval = 0.1;
  s.randomization.push_velocity = 0.5;
  s.max_episode_steps = 30;
  const Index n = 5;
  LocomotionTask one(s, n, 1), two(s, n, 2);
  REQUIRE(one.privileged_size() == 4 + 4 + 1 + 1 + 1 + 3 + 1 + 1);
  Run r1(one), r2(two);
  one.reset(11, r1.obs);
  two.reset(11, r2.obs);
  RowMatX p1(n, one.privileged_size()), f1 = p1, p2 = p1, f2 = p1;
  for (int k = 0; k < 45; ++k) {  // across one reset
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < 12; ++j) r1.actions(i, j) = 0.5 * std::sin(0.3 * k + 0.7 * j + i);
    r2.actions = r1.actions;
    r1.step();
    r2.step();
    REQUIRE(r1.obs == r2.obs);
    REQUIRE(r1.reward == r2.reward);
  }
  one.privileged(p1, f1);
  two.privileged(p2, f2);
  CHECK(p1 == p2);
  // the environments differ in friction, mass and centre of mass, within the ranges
  for (Index i = 0; i < n; ++i) {
    const Scalar friction = p1(i, 8), strength = p1(i, 9), added = p1(i, 10);
    CHECK(friction >= 0.4);
    CHECK(friction <= 1.2);
    CHECK(strength >= 0.8);
    CHECK(strength <= 1.2);
    CHECK(added >= -2);
    CHECK(added <= 4);
    CHECK(one.world(i).materials().default_pair().mu == friction);
    for (Index j = 0; j < n; ++j)
      if (j != i) CHECK(p1(j, 8) != friction);
    // the environment's Model carries its added mass: total mass differs by it from the shared URDF's
    const Model& m = one.world(i).system(0).model();
    const Model& m0 = two.world(i).system(0).model();
    CHECK(m.total_mass() == Approx(m0.total_mass()));
    CHECK(m.equal_except_parameters(m0));
    CHECK(one.world(i).system(0).kp()[6] == Approx(80 * strength));
    // this episode's joint damping and friction are on every action joint, over the URDF's (0)
    const Scalar damping = p1(i, 14), joint_friction = p1(i, 15);
    CHECK(damping >= 0);
    CHECK(damping <= 2);
    CHECK(joint_friction >= 0.5);
    CHECK(joint_friction <= 1);
    CHECK(m.damping.head(6).isZero());
    CHECK(m.friction.head(6).isZero());
    CHECK(m.damping.tail(12) == VecX::Constant(12, damping));
    CHECK(m.friction.tail(12) == VecX::Constant(12, joint_friction));
    CHECK(one.world(i).stats().friction_rows == 12);
  }
  CHECK(one.world(0).system(0).model().total_mass() != Approx(one.world(1).system(0).model().total_mass()));
  // the environments' Models differ in inertia only: one Data and one Stepper per workspace
  StepWorkspace ws;
  for (Index i = 0; i < n; ++i) one.world(i).integrate(ws);
  CHECK(ws.size() == 1);
}

TEST_CASE("Locomotion: rough terrain rows and the curriculum", "[batch]") {
  LocomotionSettings s = anymal();
  s.terrain.type = "rough";
  s.terrain.rows = 5;
  s.terrain.row_length = 6;
  s.terrain.max_amplitude = 0.05;
  s.terrain.max_start_row = 2;
  s.max_episode_steps = 20;
  const Index n = 6;
  LocomotionTask task(s, n, 2);
  Run r(task);
  task.reset(1, r.obs);
  RowMatX p(n, task.privileged_size()), f = p;
  task.privileged(p, f);
  bool row_above_0 = false;
  for (Index i = 0; i < n; ++i) {
    const Index row = task.terrain_row(i);
    CHECK(row >= 0);
    CHECK(row <= 2);
    row_above_0 = row_above_0 || row > 0;
    const VecX& q = task.world(i).system(0).q();
    CHECK(q[0] == Approx((row + 0.5) * 6));  // the centre of its row
    CHECK(p(i, 3) == Approx(s.base_height));  // base_height above the terrain under it
  }
  CHECK(row_above_0);
  // standing still under zero action walks less than half the commanded distance: rows go down
  std::vector<Index> before(n);
  for (Index i = 0; i < n; ++i) before[static_cast<std::size_t>(i)] = task.terrain_row(i);
  for (int k = 0; k < 20; ++k) r.step();
  REQUIRE(r.trunc.count() + r.term.count() == n);
  for (Index i = 0; i < n; ++i)
    CHECK(task.terrain_row(i) == std::max<Index>(0, before[static_cast<std::size_t>(i)] - 1));
}

TEST_CASE("Locomotion: other robots from their configs stand under zero action", "[batch]") {
  const std::string shared = std::string(IMPULSE_SOURCE_DIR) + "/../shared/models";
  if (!std::filesystem::exists(shared + "/example-robot-data")) {
    WARN("skipped: ../shared/models (example-robot-data) not present");
    return;
  }
  // 8 robots with their start noise for 5 s: gains too weak for the robot's weight (HyQ at
  // kp 200) let one of them sag and tip over after about 3 s
  constexpr Index n = 8;
  for (const char* name : {"hyq.json", "anymal_c.json", "solo12.json"}) {
    INFO(name);
    LocomotionTask task(load_locomotion_config(kConfigDir + "/" + name), n, 2);
    Run r(task);
    task.reset(0, r.obs);
    for (int k = 0; k < 250; ++k) {
      r.step();
      REQUIRE(r.term.count() == 0);
    }
    CHECK(r.obs.rightCols(4).sum() == 4 * n);  // feet on the ground
    RowMatX p(n, task.privileged_size()), f = p;
    task.privileged(p, f);
    for (Index i = 0; i < n; ++i) CHECK(std::abs(p(i, 3) - task.base_height_target()) < 0.03);
  }
}

TEST_CASE("Locomotion: steps with randomization, pushes and rough terrain allocate nothing", "[batch]") {
  if (!test::alloc_counter_available()) return;
  LocomotionSettings s = anymal();
  s.randomization.friction = {0.4, 1.2};
  s.randomization.kp_scale = {0.9, 1.1};
  s.randomization.motor_strength = {0.8, 1.2};
  s.randomization.added_mass = {-1, 2};
  s.randomization.push_interval = 0.05;
  s.randomization.push_velocity = 0.3;
  s.terrain.type = "rough";
  s.terrain.rows = 3;
  s.max_episode_steps = 5;  // resets inside the counted steps
  LocomotionTask task(s, 4, 2);
  Run r(task);
  task.reset(0, r.obs);
  for (int k = 0; k < 100; ++k) r.step();  // the contact buffers grow to their use first
  test::alloc_counter_start();
  for (int k = 0; k < 12; ++k) r.step();
  CHECK(test::alloc_counter_stop() == 0);
}
