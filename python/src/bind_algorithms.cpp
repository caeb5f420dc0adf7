// Model-level dynamics algorithms (Pinocchio style): impulse.Data(model), a workspace built for one
// Model, and free functions f(model, data, q, ...) over numpy arrays: kinematics, RNEA, CRBA, ABA,
// Jacobians, energy, centre of mass, and the analytic derivatives of RNEA and ABA
// (include/impulse/dynamics/rnea_derivatives.hpp), of frame velocities and accelerations, frame
// Jacobians, centre of mass and energies (kinematics_derivatives.hpp). Model.integrate / Model.difference are added to
// the Model class here.
//
// Every argument is checked before the engine sees it (InvalidArgument, one line naming the
// argument): vector sizes against the model, and the Data against the model it was built for (a
// Data holds constants of its Model, so using it with another Model would read out of bounds).
#include <memory>
#include <optional>

#include "bindings.hpp"
#include "impulse/core/check.hpp"
#include "impulse/dynamics/aba.hpp"
#include "impulse/dynamics/crba.hpp"
#include "impulse/dynamics/data.hpp"
#include "impulse/dynamics/energy.hpp"
#include "impulse/dynamics/jacobian.hpp"
#include "impulse/dynamics/kinematics.hpp"
#include "impulse/dynamics/kinematics_derivatives.hpp"
#include "impulse/dynamics/rnea.hpp"
#include "impulse/dynamics/rnea_derivatives.hpp"
#include "impulse/model/model.hpp"

namespace impulse::python {

namespace {

// A Data and a copy of the Model it was built for (to check each call's model against).
struct PyData {
  explicit PyData(const Model& m) : model(std::make_shared<const Model>(m)), data(m) {}
  std::shared_ptr<const Model> model;
  Data data;
};

using RowMatX = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Data& data_for(const Model& model, PyData& d) {
  IMPULSE_CHECK(d.model.get() == &model || *d.model == model,
                "data was built for model '", d.model->name, "', not for model '", model.name, "'");
  return d.data;
}

void check_size(const VecXcref& x, Index n, const char* name, const char* what) {
  IMPULSE_CHECK(x.size() == n, name, " has size ", x.size(), ", the model needs ", what, " = ", n);
}
void check_q(const Model& m, const VecXcref& q, const char* name = "q") { check_size(q, m.nq, name, "nq"); }
void check_v(const Model& m, const VecXcref& x, const char* name) { check_size(x, m.nv, name, "nv"); }

// f_ext: None or an (nb, 6) array of body-frame wrenches [force; moment about the body origin].
const Vec6Vector* wrenches(const Model& m, const std::optional<RowMatX>& f, Vec6Vector& out) {
  if (!f) return nullptr;
  IMPULSE_CHECK(f->rows() == m.nb && f->cols() == 6, "f_ext has shape (", f->rows(), ", ", f->cols(),
                "), the model needs (nb, 6) = (", m.nb, ", 6): one body-frame wrench [force, moment] per body");
  out.resize(static_cast<std::size_t>(m.nb));
  for (Index i = 0; i < m.nb; ++i) out[static_cast<std::size_t>(i)] = f->row(i).transpose();
  return &out;
}

Index frame_index(const Model& m, const py::object& frame) {
  if (py::isinstance<py::str>(frame)) return m.frame_id(frame.cast<std::string>());
  const Index f = frame.cast<Index>();
  IMPULSE_CHECK(f >= 0 && f < static_cast<Index>(m.frames.size()), "frame index ", f, " out of range [0, ",
                m.frames.size(), ")");
  return f;
}

}  // namespace

void bind_algorithms(py::module_& m) {
  auto model_cls = py::reinterpret_borrow<py::class_<Model, std::shared_ptr<Model>>>(m.attr("Model"));
  model_cls
      .def(
          "integrate",
          [](const Model& mo, const VecXcref& q, const VecXcref& u, double dt) {
            check_q(mo, q);
            check_v(mo, u, "u");
            VecX out(mo.nq);
            mo.integrate(q, u, dt, out);
            return out;
          },
          py::arg("q"), py::arg("u"), py::arg("dt") = 1.0,
          "q (+) u dt: joints advanced by u dt, quaternions by the exponential map (the floating base's "
          "angular velocity in the world frame, a spherical joint's in the child frame).")
      .def(
          "difference",
          [](const Model& mo, const VecXcref& q0, const VecXcref& q1) {
            VecX u(mo.nv);
            mo.difference(q0, q1, u);
            return u;
          },
          py::arg("q0"), py::arg("q1"), "u = q1 (-) q0, so that integrate(q0, u) == q1 (the inverse of integrate).");

  py::class_<PyData>(m, "Data",
                     "Workspace of the dynamics algorithms for one Model (impulse.rnea(model, data, ...) and the "
                     "other functions of this family). Allocated once; the algorithms do not allocate.")
      .def(py::init<const Model&>(), py::arg("model"))
      .def_property(
          "gravity", [](const PyData& d) { return Vec3(d.data.gravity); },
          [](PyData& d, const Vec3& g) {
            IMPULSE_CHECK(g.allFinite(), "gravity must be finite");
            d.data.gravity = g;
          },
          "Gravity acceleration (world frame) used by rnea, aba, their derivatives and potential_energy; "
          "starts as the model's.")
      .def_property_readonly("nq", [](const PyData& d) { return d.data.nq; })
      .def_property_readonly("nv", [](const PyData& d) { return d.data.nv; })
      .def("__repr__", [](const PyData& d) {
        return "<impulse.Data for '" + d.model->name + "' nq=" + std::to_string(d.data.nq) +
               " nv=" + std::to_string(d.data.nv) + ">";
      });

  m.def(
      "forward_kinematics",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        forward_kinematics(mo, d, q);
        py::list poses;
        for (const SE3& X : d.oMi) poses.append(to_matrix(X));
        return poses;
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "World poses (4x4) of every body.");
  m.def(
      "rnea",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
         const std::optional<RowMatX>& f_ext) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        check_v(mo, udot, "udot");
        Vec6Vector fe;
        return VecX(rnea(mo, d, q, u, udot, wrenches(mo, f_ext, fe)));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("udot"), py::arg("f_ext") = py::none(),
      "Inverse dynamics tau = M udot + h - sum J^T f_ext (f_ext: None or (nb, 6) body-frame wrenches).");
  m.def(
      "nonlinear_effects",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        return VecX(nonlinear_effects(mo, d, q, u));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), "h(q, u) = C(q, u) u + g(q).");
  m.def(
      "crba",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        return MatX(crba(mo, d, q));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "Joint-space inertia M(q) (nv x nv, armature included).");
  m.def(
      "aba",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
         const std::optional<RowMatX>& f_ext) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        check_v(mo, tau, "tau");
        Vec6Vector fe;
        return VecX(aba(mo, d, q, u, tau, wrenches(mo, f_ext, fe)));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("tau"), py::arg("f_ext") = py::none(),
      "Forward dynamics udot = M^-1 (tau - h + sum J^T f_ext) (articulated-body algorithm).");
  m.def(
      "frame_placement",
      [](const Model& mo, PyData& pd, const VecXcref& q, const py::object& frame) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        const Index f = frame_index(mo, frame);
        forward_kinematics(mo, d, q);
        return to_matrix(frame_placement(mo, d, f));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("frame"),
      "World pose (4x4) of a frame given by name or index.");
  m.def(
      "frame_placements",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        forward_kinematics(mo, d, q);
        py::array_t<double> out({static_cast<py::ssize_t>(mo.frames.size()), py::ssize_t(4), py::ssize_t(4)});
        auto o = out.mutable_unchecked<3>();
        for (std::size_t f = 0; f < mo.frames.size(); ++f) {
          const Eigen::Matrix4d T = to_matrix(frame_placement(mo, d, static_cast<Index>(f)));
          for (int r = 0; r < 4; ++r)
            for (int c = 0; c < 4; ++c) o(static_cast<py::ssize_t>(f), r, c) = T(r, c);
        }
        return out;
      },
      py::arg("model"), py::arg("data"), py::arg("q"),
      "World poses of every frame (in the order of model.frame_names), shape (nframes, 4, 4).");
  m.def(
      "frame_jacobian",
      [](const Model& mo, PyData& pd, const VecXcref& q, const py::object& frame) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        const Index f = frame_index(mo, frame);
        MatX J = MatX::Zero(6, mo.nv);
        if (mo.frames[static_cast<std::size_t>(f)].body < 0) return J;
        compute_joint_jacobians(mo, d, q);
        frame_jacobian(mo, d, f, J);
        return J;
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("frame"),
      "6 x nv Jacobian of a frame (name or index): [velocity of its origin; angular velocity], world frame.");
  m.def(
      "center_of_mass",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        return Vec3(center_of_mass(mo, d, q));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "Centre of mass, world frame.");
  m.def(
      "kinetic_energy",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        return kinetic_energy(mo, d, q, u);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"),
      "1/2 u^T M u (body inertias; the armature is not included).");
  m.def(
      "potential_energy",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        return potential_energy(mo, d, q);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "-sum m_i g . c_i with data.gravity (zero at the origin).");
  m.def(
      "rnea_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
         const std::optional<RowMatX>& f_ext) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        check_v(mo, udot, "udot");
        Vec6Vector fe;
        MatX dq(mo.nv, mo.nv), du(mo.nv, mo.nv);
        rnea_derivatives(mo, d, q, u, udot, dq, du, wrenches(mo, f_ext, fe));
        return py::make_tuple(dq, du, MatX(d.M));
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("udot"), py::arg("f_ext") = py::none(),
      "(dtau_dq, dtau_du, dtau_dudot = M) of rnea; dq in the tangent space (model.integrate).");
  m.def(
      "aba_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const VecXcref& tau,
         const std::optional<RowMatX>& f_ext) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        check_v(mo, tau, "tau");
        Vec6Vector fe;
        MatX dq(mo.nv, mo.nv), du(mo.nv, mo.nv), dtau(mo.nv, mo.nv);
        aba_derivatives(mo, d, q, u, tau, dq, du, dtau, wrenches(mo, f_ext, fe));
        return py::make_tuple(dq, du, dtau);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("tau"), py::arg("f_ext") = py::none(),
      "(dudot_dq, dudot_du, dudot_dtau = M^-1) of aba; dq in the tangent space (model.integrate).");
  m.def(
      "frame_velocity_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const py::object& frame) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        const Index f = frame_index(mo, frame);
        compute_kinematics_derivatives(mo, d, q, u, VecX::Zero(mo.nv));
        MatX dq(6, mo.nv), du(6, mo.nv);
        frame_velocity_derivatives(mo, d, f, dq, du);
        return py::make_tuple(dq, du);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("frame"),
      "(dv_dq, dv_du = J) of a frame's velocity [v of its origin; angular velocity], world frame, 6 x nv each.");
  m.def(
      "frame_acceleration_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const VecXcref& udot,
         const py::object& frame) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        check_v(mo, udot, "udot");
        const Index f = frame_index(mo, frame);
        compute_kinematics_derivatives(mo, d, q, u, udot);
        MatX dq(6, mo.nv), du(6, mo.nv), da(6, mo.nv);
        frame_acceleration_derivatives(mo, d, f, dq, du, da);
        return py::make_tuple(dq, du, da);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("udot"), py::arg("frame"),
      "(da_dq, da_du, da_dudot = J) of a frame's classical acceleration [a of its origin; angular acceleration], "
      "world frame, 6 x nv each.");
  m.def(
      "frame_jacobian_time_variation",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u, const py::object& frame) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        const Index f = frame_index(mo, frame);
        compute_kinematics_derivatives(mo, d, q, u, VecX::Zero(mo.nv));
        MatX dJ(6, mo.nv);
        frame_jacobian_time_variation(mo, d, f, dJ);
        return dJ;
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"), py::arg("frame"),
      "dJ/dt of frame_jacobian (6 x nv): the frame's classical acceleration is J udot + dJ u.");
  m.def(
      "center_of_mass_jacobian",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        MatX J(3, mo.nv);
        center_of_mass_jacobian(mo, d, q, J);
        return J;
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "d com / dq (3 x nv, tangent space).");
  m.def(
      "center_of_mass_velocity_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        MatX dq(3, mo.nv), du(3, mo.nv), Jdot(3, mo.nv);
        center_of_mass_velocity_derivatives(mo, d, q, u, dq, du, Jdot);
        return py::make_tuple(dq, du, Jdot);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"),
      "(dvcom_dq, dvcom_du = Jcom, Jcom_dot), 3 x nv each.");
  m.def(
      "kinetic_energy_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q, const VecXcref& u) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        check_v(mo, u, "u");
        VecX dq(mo.nv), du(mo.nv);
        kinetic_energy_derivatives(mo, d, q, u, dq, du);
        return py::make_tuple(dq, du);
      },
      py::arg("model"), py::arg("data"), py::arg("q"), py::arg("u"),
      "(dT_dq, dT_du = M u) of kinetic_energy (body inertias, no armature).");
  m.def(
      "potential_energy_derivatives",
      [](const Model& mo, PyData& pd, const VecXcref& q) {
        Data& d = data_for(mo, pd);
        check_q(mo, q);
        VecX dq(mo.nv);
        potential_energy_derivatives(mo, d, q, dq);
        return dq;
      },
      py::arg("model"), py::arg("data"), py::arg("q"), "dV/dq of potential_energy: the gravity torque g(q).");
}

}  // namespace impulse::python
