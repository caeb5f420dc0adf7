// The legged locomotion task (LocomotionTask, module tasks/). Arrays are passed as numpy arrays
// without copies: they must be float64 (bool for flags), C-contiguous and of the documented shape;
// impulse.envs allocates them once. Stepping releases the GIL.
#include <chrono>

#include "bindings.hpp"
#include "impulse/tasks/locomotion.hpp"

namespace impulse::python {

using tasks::LocomotionSettings;
using tasks::LocomotionTask;
using tasks::RowMatX;

void bind_tasks(py::module_& m) {
  using Rref = Eigen::Ref<RowMatX>;
  using Rcref = Eigen::Ref<const RowMatX>;
  py::class_<tasks::Range>(m, "Range", "A closed interval [lo, hi] drawn uniformly; lo == hi is a constant.")
      .def(py::init<>())
      .def(py::init([](Scalar lo, Scalar hi) { return tasks::Range{lo, hi}; }), py::arg("lo"), py::arg("hi"))
      .def_readwrite("lo", &tasks::Range::lo)
      .def_readwrite("hi", &tasks::Range::hi)
      .def("__repr__", [](const tasks::Range& r) {
        return "Range(" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + ")";
      });
  py::class_<tasks::LocomotionRewards>(m, "LocomotionRewards", "Reward weights of LocomotionTask.")
      .def_readonly("tracking_lin_vel", &tasks::LocomotionRewards::tracking_lin_vel)
      .def_readonly("tracking_ang_vel", &tasks::LocomotionRewards::tracking_ang_vel)
      .def_readonly("tracking_sigma", &tasks::LocomotionRewards::tracking_sigma)
      .def_readonly("lin_vel_z", &tasks::LocomotionRewards::lin_vel_z)
      .def_readonly("ang_vel_xy", &tasks::LocomotionRewards::ang_vel_xy)
      .def_readonly("orientation", &tasks::LocomotionRewards::orientation)
      .def_readonly("torques", &tasks::LocomotionRewards::torques)
      .def_readonly("action_rate", &tasks::LocomotionRewards::action_rate)
      .def_readonly("base_height", &tasks::LocomotionRewards::base_height)
      .def_readonly("base_height_target", &tasks::LocomotionRewards::base_height_target)
      .def_readonly("feet_air_time", &tasks::LocomotionRewards::feet_air_time)
      .def_readonly("air_time_target", &tasks::LocomotionRewards::air_time_target)
      .def_readonly("collision", &tasks::LocomotionRewards::collision)
      .def_readonly("only_positive", &tasks::LocomotionRewards::only_positive);
  py::class_<LocomotionSettings>(m, "LocomotionSettings",
                                 "Settings of LocomotionTask (impulse/tasks/locomotion.hpp); made by "
                                 "parse_locomotion_config. Read-only here: change the config.")
      .def_readonly("urdf", &LocomotionSettings::urdf)
      .def_readonly("package_path", &LocomotionSettings::package_path)
      .def_readonly("joints", &LocomotionSettings::joints)
      .def_readonly("feet", &LocomotionSettings::feet)
      .def_readonly("nominal", &LocomotionSettings::nominal)
      .def_readonly("base_height", &LocomotionSettings::base_height)
      .def_readonly("kp", &LocomotionSettings::kp)
      .def_readonly("kd", &LocomotionSettings::kd)
      .def_readonly("action_scale", &LocomotionSettings::action_scale)
      .def_readonly("action_clip", &LocomotionSettings::action_clip)
      .def_readonly("physics_dt", &LocomotionSettings::physics_dt)
      .def_readonly("substeps", &LocomotionSettings::substeps)
      .def_readonly("solver", &LocomotionSettings::solver)
      .def_readonly("friction", &LocomotionSettings::friction)
      .def_readonly("max_episode_steps", &LocomotionSettings::max_episode_steps)
      .def_readonly("command_vx", &LocomotionSettings::command_vx)
      .def_readonly("command_vy", &LocomotionSettings::command_vy)
      .def_readonly("command_yaw", &LocomotionSettings::command_yaw)
      .def_readonly("min_base_height", &LocomotionSettings::min_base_height)
      .def_readonly("rewards", &LocomotionSettings::rewards);
  m.def("parse_locomotion_config", &tasks::parse_locomotion_config, py::arg("json_text"), py::arg("base_dir") = ".",
        py::arg("source") = "locomotion config",
        "LocomotionSettings from a config's JSON text; relative paths resolve against base_dir. Raises "
        "InvalidArgument naming the key for unknown keys, wrong types and missing required keys.");
  m.def("load_locomotion_config", &tasks::load_locomotion_config, py::arg("path"),
        "LocomotionSettings from a JSON config file (relative paths against its directory).");
  m.def("locomotion_config_keys", &tasks::locomotion_config_keys,
        "Every key a locomotion config may have ('rewards.x', 'terrain.x', 'randomization.x' for the nested ones).");

  using BoolRef = Eigen::Ref<LocomotionTask::BoolVec>;
  py::class_<LocomotionTask>(m, "LocomotionTask",
                             "C++ core of impulse.envs.Locomotion: N legged robots tracking a velocity command, in "
                             "parallel.")
      .def(py::init<const LocomotionSettings&, Index, int, Index>(), py::arg("settings"), py::arg("num_envs"),
           py::arg("num_threads") = 0, py::arg("first_env") = 0)
      .def_property_readonly("obs_size", &LocomotionTask::obs_size)
      .def_property_readonly("action_size", &LocomotionTask::action_size)
      .def_property_readonly("privileged_size", &LocomotionTask::privileged_size)
      .def_property_readonly("num_envs", &LocomotionTask::num_envs)
      .def_property_readonly("num_threads", &LocomotionTask::num_threads)
      .def_property("lanes", &LocomotionTask::lanes, &LocomotionTask::set_lanes,
                    "Environments stepped together in SIMD lanes (1: one by one; 2, 4, 8 as the CPU allows; "
                    "default IMPULSE_LANES or the widest). The same bits at every width.")
      .def_property_readonly("control_dt", &LocomotionTask::control_dt)
      .def_property_readonly("base_height_target", &LocomotionTask::base_height_target)
      .def_property_readonly("settings", &LocomotionTask::settings)
      .def(
          "reset",
          [](LocomotionTask& t, std::uint64_t seed, Rref obs) {
            without_gil(t, "LocomotionTask", "reset", [&] { t.reset(seed, obs); });
          },
          py::arg("seed"), py::arg("obs"))
      .def(
          "step",
          [](LocomotionTask& t, Rcref actions, Rref obs, Eigen::Ref<VecX> reward, BoolRef terminated,
             BoolRef truncated, Rref final_obs, Eigen::Ref<VecX> episode_return, Eigen::Ref<VecX> episode_length) {
            without_gil(t, "LocomotionTask", "step", [&] {
              t.step(actions, obs, reward, terminated, truncated, final_obs, episode_return, episode_length);
            });
          },
          py::arg("actions"), py::arg("obs"), py::arg("reward"), py::arg("terminated"), py::arg("truncated"),
          py::arg("final_obs"), py::arg("episode_return"), py::arg("episode_length"),
          "One control step of every environment into the given arrays.")
      .def("privileged", [](const LocomotionTask& t, Rref out, Rref final_out) { t.privileged(out, final_out); },
           py::arg("out"), py::arg("final_out"),
           "Privileged observation (N x privileged_size) of the current state into out, and of the last state of "
           "the environments that finished in the last step into final_out (other rows untouched).")
      .def("world", &LocomotionTask::world, py::arg("index"), py::return_value_policy::reference_internal)
      .def("command", &LocomotionTask::command, py::arg("index"))
      .def("terrain_row", &LocomotionTask::terrain_row, py::arg("index"))
      .def(
          "bench",
          [](LocomotionTask& t, int steps) {
            // the C++ loop alone (zero actions), for comparison with the Python loop
            const Index n = t.num_envs();
            RowMatX a = RowMatX::Zero(n, t.action_size()), o(n, t.obs_size()), fo(n, t.obs_size());
            VecX r(n), er(n), el(n);
            LocomotionTask::BoolVec te(n), tr(n);
            return without_gil(t, "LocomotionTask", "bench", [&] {
              const auto t0 = std::chrono::steady_clock::now();
              for (int k = 0; k < steps; ++k) t.step(a, o, r, te, tr, fo, er, el);
              return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            });
          },
          py::arg("steps"), "Seconds for `steps` control steps of the C++ loop alone (zero actions).");
}

}  // namespace impulse::python
