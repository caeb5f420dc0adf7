// The ANYmal locomotion task (LocomotionTask, module tasks/). Arrays are passed as numpy arrays
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
  py::class_<LocomotionSettings>(m, "LocomotionSettings", "Settings of LocomotionTask (see impulse/tasks/locomotion.hpp).")
      .def(py::init<>())
      .def_readwrite("urdf", &LocomotionSettings::urdf)
      .def_readwrite("physics_dt", &LocomotionSettings::physics_dt)
      .def_readwrite("substeps", &LocomotionSettings::substeps)
      .def_readwrite("solver", &LocomotionSettings::solver)
      .def_readwrite("max_contacts", &LocomotionSettings::max_contacts)
      .def_readwrite("friction", &LocomotionSettings::friction)
      .def_readwrite("kp", &LocomotionSettings::kp)
      .def_readwrite("kd", &LocomotionSettings::kd)
      .def_readwrite("action_scale", &LocomotionSettings::action_scale)
      .def_readwrite("action_clip", &LocomotionSettings::action_clip)
      .def_readwrite("max_episode_steps", &LocomotionSettings::max_episode_steps)
      .def_readwrite("command_vx_min", &LocomotionSettings::command_vx_min)
      .def_readwrite("command_vx_max", &LocomotionSettings::command_vx_max)
      .def_readwrite("command_vy_max", &LocomotionSettings::command_vy_max)
      .def_readwrite("command_yaw_max", &LocomotionSettings::command_yaw_max)
      .def_readwrite("init_joint_noise", &LocomotionSettings::init_joint_noise)
      .def_readwrite("init_velocity_noise", &LocomotionSettings::init_velocity_noise)
      .def_readwrite("init_height", &LocomotionSettings::init_height)
      .def_readwrite("min_base_height", &LocomotionSettings::min_base_height)
      .def_readwrite("min_uprightness", &LocomotionSettings::min_uprightness)
      .def_readwrite("air_time_weight", &LocomotionSettings::air_time_weight)
      .def_readwrite("air_time_target", &LocomotionSettings::air_time_target)
      .def_readwrite("orientation_weight", &LocomotionSettings::orientation_weight)
      .def_readwrite("base_height_weight", &LocomotionSettings::base_height_weight)
      .def_readwrite("base_height_target", &LocomotionSettings::base_height_target)
      .def_readwrite("only_positive_rewards", &LocomotionSettings::only_positive_rewards);

  using BoolRef = Eigen::Ref<LocomotionTask::BoolVec>;
  py::class_<LocomotionTask>(m, "LocomotionTask",
                             "C++ core of impulse.envs.AnymalLocomotion: N ANYmal environments in parallel.")
      .def(py::init<const LocomotionSettings&, Index, int, Index>(), py::arg("settings"), py::arg("num_envs"),
           py::arg("num_threads") = 0, py::arg("first_env") = 0)
      .def_property_readonly_static("obs_size", [](py::object) { return LocomotionTask::kObs; })
      .def_property_readonly_static("action_size", [](py::object) { return LocomotionTask::kAct; })
      .def_property_readonly_static("privileged_size", [](py::object) { return LocomotionTask::kPriv; })
      .def_property_readonly("num_envs", &LocomotionTask::num_envs)
      .def_property_readonly("num_threads", &LocomotionTask::num_threads)
      .def_property_readonly("control_dt", &LocomotionTask::control_dt)
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
      .def(
          "bench",
          [](LocomotionTask& t, int steps) {
            // the C++ loop alone (zero actions), for comparison with the Python loop
            const Index n = t.num_envs();
            RowMatX a = RowMatX::Zero(n, LocomotionTask::kAct), o(n, LocomotionTask::kObs), fo(n, LocomotionTask::kObs);
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
