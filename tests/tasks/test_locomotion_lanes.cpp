// LocomotionTask with its environments' dynamics in SIMD lanes (batch::WorldLanes): every width
// the CPU runs gives the observations and rewards of width 1 (one by one) bit for bit.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "impulse/dynamics/lanes.hpp"
#include "impulse/tasks/locomotion.hpp"

using namespace impulse;
using impulse::batch::RowMatX;
using impulse::tasks::LocomotionTask;
using BoolVec = LocomotionTask::BoolVec;

namespace {

// obs and rewards of n ANYmal environments (examples/configs/anymal.json) over `steps` control
// steps of pseudo-random actions, with the dynamics in lanes of `width`
RowMatX run(int width, Index n, Index steps) {
  LocomotionTask task(tasks::load_locomotion_config(std::string(IMPULSE_SOURCE_DIR) + "/examples/configs/anymal.json"),
                      n, 2);
  task.set_lanes(width);
  RowMatX obs(n, task.obs_size()), final_obs(n, task.obs_size()), actions(n, task.action_size());
  VecX reward(n), ret(n), len(n);
  BoolVec term(n), trunc(n);
  RowMatX out(n, steps * (task.obs_size() + 1));
  task.reset(3, obs);
  for (Index k = 0; k < steps; ++k) {
    for (Index i = 0; i < n; ++i)
      for (Index j = 0; j < actions.cols(); ++j) actions(i, j) = std::sin(0.37 * k + 1.3 * i + 0.7 * j);
    task.step(actions, obs, reward, term, trunc, final_obs, ret, len);
    out.block(0, k * (task.obs_size() + 1), n, task.obs_size()) = obs;
    out.col(k * (task.obs_size() + 1) + task.obs_size()) = reward;
  }
  return out;
}

}  // namespace

TEST_CASE("LocomotionTask in SIMD lanes equals the environments stepped one by one bit for bit", "[batch][lanes]") {
  const Index n = 5, steps = 20;
  const RowMatX scalar = run(1, n, steps);
  CHECK(scalar.row(0) != scalar.row(1));  // (the environments differ)
  for (int width = 2; width <= lanes_max_width(); width *= 2) {
    INFO("width " << width);
    CHECK(run(width, n, steps) == scalar);
  }
}

// Random actions over the whole action range (+-action_clip, as an untrained policy's): the
// robots stumble, land and fall, so a group's environments have different contact counts and
// layouts, slipping feet and joints at their limits in the same step; the lanes give width 1's
// observations and rewards bit for bit.
TEST_CASE("LocomotionTask in SIMD lanes with random actions equals the environments stepped one by one", "[batch][lanes]") {
  const Index n = 8, steps = 25;
  const auto loco_random_run = [&](int width) {
    LocomotionTask task(
        tasks::load_locomotion_config(std::string(IMPULSE_SOURCE_DIR) + "/examples/configs/anymal.json"), n, 1);
    task.set_lanes(width);
    RowMatX obs(n, task.obs_size()), final_obs(n, task.obs_size()), actions(n, task.action_size());
    VecX reward(n), ret(n), len(n);
    BoolVec term(n), trunc(n);
    RowMatX out(n, steps * (task.obs_size() + 1));
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<Scalar> uniform(-task.settings().action_clip, task.settings().action_clip);
    task.reset(5, obs);
    for (Index k = 0; k < steps; ++k) {
      for (Index i = 0; i < actions.size(); ++i) actions.data()[i] = uniform(rng);
      task.step(actions, obs, reward, term, trunc, final_obs, ret, len);
      out.block(0, k * (task.obs_size() + 1), n, task.obs_size()) = obs;
      out.col(k * (task.obs_size() + 1) + task.obs_size()) = reward;
    }
    return out;
  };
  const RowMatX scalar = loco_random_run(1);
  for (int width = 2; width <= lanes_max_width(); width *= 2) {
    INFO("width " << width);
    CHECK(loco_random_run(width) == scalar);
  }
}
