// `impulse bench batch [--steps N] [--json]`: batched stepping on one thread.
//
// VecWorld copies of models/worlds/anymal_stand.xml (ANYmal standing on PD), 8 and 256
// environments, one thread, every environment stepped in turn at each step (as an RL loop steps
// them): the median over 5 rounds of N steps (default 200) of the time per environment step, and the memory one more environment costs (heap growth between 8 and 264
// environments after 50 steps of each, divided by 256). Every environment shares the Models and
// the thread's step scratch (StepWorkspace: Data, stepper, solver), so 256 environments step at
// nearly the speed of 8 and cost only their own state (docs/architecture.md, "What a World
// holds"). Then 256 environments with their dynamics in SIMD lanes (VecWorld::set_lanes: the
// default width, dynamics/lanes.hpp) and one by one (width 1, the scalar path), the two
// alternated round by round in one VecWorld, so that both see the same machine state: physics
// steps per second of each (median of 5 rounds) and their ratio.
//
// Then the locomotion task (tasks::LocomotionTask, Python's impulse.envs.AnymalLocomotion: the
// config examples/configs/anymal.json) with 256 environments on one thread and seeded random
// actions, uniform over the action range (+-action_clip): two tasks made alike, one stepping with
// the lanes and one with width 1, alternated round by round (5 rounds of N / 5 control steps,
// each round's action sequence given to both). The lanes give the bits of width 1, so both tasks
// step the same trajectories: the same physics, in two ways. Physics steps per second of each
// (median of the rounds) and their ratio.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "bench/timing.hpp"
#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/batch/limits.hpp"
#include "impulse/batch/vec_world.hpp"
#include "impulse/core/version.hpp"
#include "impulse/dynamics/lanes.hpp"
#include "impulse/tasks/locomotion.hpp"

namespace impulse::cli {

namespace {

// Median time per environment step (ns) of `envs` environments on one thread.
double ns_per_environment_step(const WorldDescription& d, Index envs, long steps) {
  batch::VecWorld vec(d, envs, 1);
  vec.integrate(20);  // the buffers take their sizes
  std::vector<double> rounds;
  for (int r = 0; r < 5; ++r) {
    const bench::Stopwatch<> watch;
    for (long k = 0; k < steps; ++k) vec.integrate(1);  // every environment in turn, step by step (as an RL loop)
    rounds.push_back(watch.seconds() * 1e9 / (static_cast<double>(steps) * static_cast<double>(envs)));
  }
  return bench::median(rounds);
}

// Environment steps per second of `envs` environments on one thread with the lanes of `width`
// and with width 1, alternated round by round in one VecWorld (medians of 5 rounds each).
struct LanesTiming {
  double lanes = 0, scalar = 0;
};
LanesTiming lanes_vs_scalar(const WorldDescription& d, Index envs, long steps, int width) {
  batch::VecWorld vec(d, envs, 1);
  for (int w : {width, 1}) {
    vec.set_lanes(w);
    vec.integrate(20);  // the buffers take their sizes
  }
  std::vector<double> lanes, scalar;
  for (int r = 0; r < 5; ++r) {
    for (int w : {width, 1}) {
      vec.set_lanes(w);
      const bench::Stopwatch<> watch;
      for (long k = 0; k < steps; ++k) vec.integrate(1);
      (w == 1 ? scalar : lanes).push_back(static_cast<double>(steps) * static_cast<double>(envs) / watch.seconds());
    }
  }
  return {bench::median(lanes), bench::median(scalar)};
}

// ANYmal locomotion (examples/configs/anymal.json with the models directory's URDF), `envs`
// environments on one thread, the lanes of `width` against width 1: physics steps per second,
// medians of 5 rounds of `control_steps` random-action control steps each.
LanesTiming locomotion_lanes_vs_scalar(Index envs, long control_steps, int width) {
  json config = json::parse(R"({
    "joints": ["LF_HAA", "LF_HFE", "LF_KFE", "RF_HAA", "RF_HFE", "RF_KFE",
               "LH_HAA", "LH_HFE", "LH_KFE", "RH_HAA", "RH_HFE", "RH_KFE"],
    "feet": ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"],
    "nominal": [0, 0.4, -0.8, 0, 0.4, -0.8, 0, -0.4, 0.8, 0, -0.4, 0.8],
    "base_height": 0.56, "kp": 80, "kd": 2, "action_scale": 0.3, "action_clip": 4,
    "physics_dt": 0.002, "substeps": 5, "solver": "bisection", "max_contacts": 16, "friction": 0.8,
    "max_episode_steps": 1000, "command_vx": [0.5, 1.0], "command_vy": [0, 0], "command_yaw": [0, 0],
    "init_joint_noise": 0.1, "init_velocity_noise": 0.1, "min_base_height": 0.3, "min_uprightness": 0.5,
    "rewards": {"base_height_target": 0.5}})");
  config["urdf"] = find_model("anymal/anymal.urdf");
  const tasks::LocomotionSettings settings = tasks::parse_locomotion_config(config.dump(), "", "bench batch");
  tasks::LocomotionTask lanes_task(settings, envs, 1), scalar_task(settings, envs, 1);
  lanes_task.set_lanes(width);
  scalar_task.set_lanes(1);
  const Index na = lanes_task.action_size(), no = lanes_task.obs_size();
  batch::RowMatX obs(envs, no), final_obs(envs, no);
  VecX reward(envs), ret(envs), len(envs);
  tasks::LocomotionTask::BoolVec term(envs), trunc(envs);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<Scalar> uniform(-settings.action_clip, settings.action_clip);
  const long steps = std::max(1L, control_steps);
  std::vector<batch::RowMatX> actions(static_cast<std::size_t>(steps), batch::RowMatX(envs, na));
  const auto draw = [&] {
    for (batch::RowMatX& a : actions)
      for (Index i = 0; i < a.size(); ++i) a.data()[i] = uniform(rng);
  };
  const auto run = [&](tasks::LocomotionTask& task) {
    for (const batch::RowMatX& a : actions) task.step(a, obs, reward, term, trunc, final_obs, ret, len);
  };
  const double physics_steps = static_cast<double>(steps) * static_cast<double>(envs) * static_cast<double>(settings.substeps);
  draw();  // (the buffers take their sizes)
  for (tasks::LocomotionTask* task : {&lanes_task, &scalar_task}) {
    task->reset(1, obs);
    run(*task);
  }
  std::vector<double> lanes, scalar;
  for (int r = 0; r < 5; ++r) {
    draw();
    for (tasks::LocomotionTask* task : {&lanes_task, &scalar_task}) {
      const bench::Stopwatch<> watch;
      run(*task);
      (task == &scalar_task ? scalar : lanes).push_back(physics_steps / watch.seconds());
    }
  }
  return {bench::median(lanes), bench::median(scalar)};
}

// Heap bytes held by a VecWorld of `envs` environments after 50 steps.
double heap_bytes(const WorldDescription& d, Index envs) {
  const std::size_t before = batch::heap_bytes_in_use();
  auto vec = std::make_unique<batch::VecWorld>(d, envs, 1);
  vec->integrate(50);
  return static_cast<double>(batch::heap_bytes_in_use()) - static_cast<double>(before);
}

}  // namespace

int run_bench_batch(const BenchOptions& o) {
  const WorldDescription d = parse_world_file(find_model("worlds/anymal_stand.xml"));
  const long steps = o.steps > 0 ? o.steps : 200;
  const double small = ns_per_environment_step(d, 8, steps), large = ns_per_environment_step(d, 256, steps);
  const double per_environment = (heap_bytes(d, 264) - heap_bytes(d, 8)) / 256;
  const int width = lanes_default_width() > 1 ? lanes_default_width() : lanes_max_width();
  const LanesTiming lt = lanes_vs_scalar(d, 256, steps, width);
  const long control_steps = std::max(1L, steps / 5);
  const LanesTiming loco = locomotion_lanes_vs_scalar(256, control_steps, width);
  if (o.json) {
    std::cout << json{{"ns_per_environment_step_8", number(small)},
                      {"ns_per_environment_step_256", number(large)},
                      {"bytes_per_environment", number(per_environment)},
                      {"lanes_width", width},
                      {"steps_per_second_256_lanes", number(lt.lanes)},
                      {"steps_per_second_256_scalar", number(lt.scalar)},
                      {"locomotion_steps_per_second_256_lanes", number(loco.lanes)},
                      {"locomotion_steps_per_second_256_scalar", number(loco.scalar)}}
                     .dump()
              << "\n";
    return 0;
  }
  std::printf("batched ANYmal standing (models/worlds/anymal_stand.xml), one thread, %ld steps a round\n", steps);
  std::printf("  8 environments     %8.0f ns an environment step (median of 5 rounds)\n", small);
  std::printf("  256 environments   %8.0f ns an environment step (%.2fx the time of 8)\n", large, large / small);
  std::printf("  one more environment costs %.1f KiB of heap\n", per_environment / 1024);
  std::printf("  256 environments, dynamics in %d SIMD lanes  %8.0f steps/s\n", width, lt.lanes);
  std::printf("  256 environments, one by one (width 1)       %8.0f steps/s  (lanes: %.2fx; alternated rounds)\n",
              lt.scalar, lt.lanes / lt.scalar);
  std::printf("ANYmal locomotion (LocomotionTask, examples/configs/anymal.json), 256 environments, one thread,\n"
              "random actions, %ld control steps (%ld physics steps) a round\n",
              control_steps, control_steps * 5);
  std::printf("  dynamics in %d SIMD lanes  %8.0f physics steps/s\n", width, loco.lanes);
  std::printf("  one by one (width 1)       %8.0f physics steps/s  (lanes: %.2fx; alternated rounds)\n", loco.scalar,
              loco.lanes / loco.scalar);
  return 0;
}

}  // namespace impulse::cli
