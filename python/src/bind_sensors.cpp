// Terrain (Heightfield, World.add_heightfield, World.add_static_mesh) and sensors (Imu,
// JointSensor, ContactSensor, ForceTorqueSensor, HeightScan). Readings are read-only numpy views
// of the sensor's own memory (no copy, nothing allocated by the engine per read): read them after
// update(), which the control loop calls once after every World.step(). A sensor keeps its World
// and system alive.
#include "bindings.hpp"
#include "impulse/collision/heightfield.hpp"
#include "impulse/sensors/sensors.hpp"

namespace impulse::python {

namespace {

// Read-only numpy view of `n` doubles at `data` (shape (n,) or (rows, cols) row-major).
py::array view_of(const double* data, std::vector<py::ssize_t> shape, py::handle owner) {
  std::vector<py::ssize_t> strides(shape.size(), sizeof(double));
  for (std::size_t k = shape.size() - 1; k-- > 0;) strides[k] = strides[k + 1] * shape[k + 1];
  py::array a(py::dtype::of<double>(), shape, strides, data, owner);
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

py::array vec3_view(const Vec3& v, py::handle owner) { return view_of(v.data(), {3}, owner); }

using RowMatX2 = Eigen::Matrix<Scalar, Eigen::Dynamic, 2, Eigen::RowMajor>;

std::vector<Vec2> to_pattern(const RowMatX2& p) {
  std::vector<Vec2> out(static_cast<std::size_t>(p.rows()));
  for (Index k = 0; k < p.rows(); ++k) out[static_cast<std::size_t>(k)] = p.row(k).transpose();
  return out;
}

}  // namespace

void bind_sensors(py::module_& m) {
  // --- terrain ---
  py::class_<Heightfield, std::shared_ptr<Heightfield>>(
      m, "Heightfield",
      "Heightfield terrain: heights[i, j] at x = x0 + i dx, y = y0 + j dy, solid below; piecewise linear\n"
      "(two triangles per cell). Centred on the origin unless x0, y0 are given. docs/terrain.md.")
      .def(py::init([](const MatX& heights, Scalar dx, Scalar dy, py::object x0, py::object y0) {
             const Scalar nan = std::numeric_limits<Scalar>::quiet_NaN();
             return std::make_shared<Heightfield>(heights, dx, dy, x0.is_none() ? nan : x0.cast<Scalar>(),
                                                  y0.is_none() ? nan : y0.cast<Scalar>());
           }),
           py::arg("heights"), py::arg("dx"), py::arg("dy"), py::arg("x0") = py::none(), py::arg("y0") = py::none(),
           "From an (nx, ny) array of heights (every entry finite, nx, ny >= 2) and the cell sizes.")
      .def_static(
          "random_rough",
          [](Scalar sx, Scalar sy, Scalar cell, Scalar amplitude, std::uint64_t seed, int smoothing) {
            return std::make_shared<Heightfield>(Heightfield::random_rough(sx, sy, cell, amplitude, seed, smoothing));
          },
          py::arg("size_x"), py::arg("size_y"), py::arg("cell"), py::arg("amplitude"), py::arg("seed"),
          py::arg("smoothing") = 1, "Random rough ground spanning [0, amplitude] (seeded).")
      .def_static(
          "stairs",
          [](Scalar sx, Scalar sy, Scalar cell, Scalar run, Scalar rise, Scalar x_start) {
            return std::make_shared<Heightfield>(Heightfield::stairs(sx, sy, cell, run, rise, x_start));
          },
          py::arg("size_x"), py::arg("size_y"), py::arg("cell"), py::arg("run"), py::arg("rise"), py::arg("x_start") = 0.0,
          "Stairs rising along +x from x_start.")
      .def_static(
          "slope",
          [](Scalar sx, Scalar sy, Scalar cell, Scalar gradient, Scalar x_start) {
            return std::make_shared<Heightfield>(Heightfield::slope(sx, sy, cell, gradient, x_start));
          },
          py::arg("size_x"), py::arg("size_y"), py::arg("cell"), py::arg("gradient"), py::arg("x_start") = 0.0,
          "A ramp rising along +x with the given gradient from x_start.")
      .def_static(
          "stepping_stones",
          [](Scalar sx, Scalar sy, Scalar cell, Scalar stone, Scalar pitch, Scalar depth, Scalar jitter,
             std::uint64_t seed) {
            return std::make_shared<Heightfield>(
                Heightfield::stepping_stones(sx, sy, cell, stone, pitch, depth, jitter, seed));
          },
          py::arg("size_x"), py::arg("size_y"), py::arg("cell"), py::arg("stone"), py::arg("pitch"), py::arg("depth"),
          py::arg("jitter"), py::arg("seed"), "Square stones with gaps `depth` deep, heights jittered (seeded).")
      .def_static(
          "from_pgm",
          [](const std::string& path, Scalar sx, Scalar sy, Scalar max_height) {
            return std::make_shared<Heightfield>(Heightfield::from_pgm(path, sx, sy, max_height));
          },
          py::arg("path"), py::arg("size_x"), py::arg("size_y"), py::arg("max_height"),
          "A grey-scale PGM image (P2/P5): black 0, white max_height.")
      .def_property_readonly("nx", &Heightfield::nx)
      .def_property_readonly("ny", &Heightfield::ny)
      .def_property_readonly("dx", &Heightfield::dx)
      .def_property_readonly("dy", &Heightfield::dy)
      .def_property_readonly("x0", &Heightfield::x0)
      .def_property_readonly("y0", &Heightfield::y0)
      .def_property_readonly("min_height", &Heightfield::min_height)
      .def_property_readonly("max_height", &Heightfield::max_height)
      .def_property_readonly(
          "heights",
          [](py::object self) {
            const MatX& h = self.cast<Heightfield&>().heights();  // column major: element (i, j) at i + j nx
            py::array a(py::dtype::of<double>(), {h.rows(), h.cols()},
                        {static_cast<py::ssize_t>(sizeof(double)), static_cast<py::ssize_t>(sizeof(double) * h.rows())},
                        h.data(), self);
            py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
            return a;
          },
          "(nx, ny) heights (read-only view).")
      .def(
          "height",
          [](const Heightfield& h, Scalar x, Scalar y) -> py::object {
            Scalar z;
            if (!h.height(x, y, z)) return py::none();
            return py::float_(z);
          },
          py::arg("x"), py::arg("y"), "Surface height at (x, y), None outside the grid.");

  // --- sensors ---
  py::class_<SensorNoise>(m, "SensorNoise", "value + bias + stddev * N(0, 1) per reading component.")
      .def(py::init([](Scalar stddev, Scalar bias) { return SensorNoise{stddev, bias}; }), py::arg("stddev") = 0.0,
           py::arg("bias") = 0.0)
      .def_readwrite("stddev", &SensorNoise::stddev)
      .def_readwrite("bias", &SensorNoise::bias);

  py::class_<Imu>(m, "Imu",
                  "IMU at a frame of a system: specific force (m/s^2, +9.81 up at rest) and angular velocity\n"
                  "(rad/s), both in the frame. Call update() once after every World.step().")
      .def(py::init<const World&, const ArticulatedSystem&, const std::string&, SensorNoise, SensorNoise,
                    std::uint64_t>(),
           py::arg("world"), py::arg("system"), py::arg("frame"), py::arg("accelerometer") = SensorNoise(),
           py::arg("gyroscope") = SensorNoise(), py::arg("seed") = 0, py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("update", py::overload_cast<>(&Imu::update))
      .def("reset", &Imu::reset)
      .def_property_readonly("linear_acceleration",
                             [](py::object self) { return vec3_view(self.cast<Imu&>().linear_acceleration(), self); })
      .def_property_readonly("angular_velocity",
                             [](py::object self) { return vec3_view(self.cast<Imu&>().angular_velocity(), self); })
      .def_property_readonly("orientation", [](const Imu& s) { return Mat3(s.orientation()); },
                             "True frame orientation in the world (3x3 copy).");

  py::class_<JointSensor>(m, "JointSensor",
                          "Position, velocity and actuation torque of every 1-dof joint, in model order.")
      .def(py::init<const ArticulatedSystem&, SensorNoise, SensorNoise, SensorNoise, std::uint64_t>(),
           py::arg("system"), py::arg("position") = SensorNoise(), py::arg("velocity") = SensorNoise(),
           py::arg("torque") = SensorNoise(), py::arg("seed") = 0, py::keep_alive<1, 2>())
      .def("update", &JointSensor::update)
      .def_property_readonly("names", &JointSensor::names)
      .def_property_readonly("position", [](py::object self) { return view(self.cast<JointSensor&>().position(), self); })
      .def_property_readonly("velocity", [](py::object self) { return view(self.cast<JointSensor&>().velocity(), self); })
      .def_property_readonly("torque", [](py::object self) { return view(self.cast<JointSensor&>().torque(), self); });

  py::class_<ContactSensor>(m, "ContactSensor",
                            "Contacts of one body in the last step: total force (N, world frame), force-weighted\n"
                            "mean normal, number of points.")
      .def(py::init<const World&, const ArticulatedSystem&, const std::string&>(), py::arg("world"), py::arg("system"),
           py::arg("body"), py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("update", &ContactSensor::update)
      .def_property_readonly("in_contact", &ContactSensor::in_contact)
      .def_property_readonly("count", &ContactSensor::count)
      .def_property_readonly("force", [](py::object self) { return vec3_view(self.cast<ContactSensor&>().force(), self); })
      .def_property_readonly("normal",
                             [](py::object self) { return vec3_view(self.cast<ContactSensor&>().normal(), self); });

  py::class_<ForceTorqueSensor>(m, "ForceTorqueSensor",
                                "Wrench a joint transmits from its parent to its child: force (N) and torque (N m)\n"
                                "about the joint frame origin, in the joint frame.")
      .def(py::init<const World&, const ArticulatedSystem&, const std::string&, SensorNoise, std::uint64_t>(),
           py::arg("world"), py::arg("system"), py::arg("joint"), py::arg("noise") = SensorNoise(), py::arg("seed") = 0,
           py::keep_alive<1, 2>(), py::keep_alive<1, 3>())
      .def("update", py::overload_cast<>(&ForceTorqueSensor::update))
      .def("reset", &ForceTorqueSensor::reset)
      .def_property_readonly("force",
                             [](py::object self) { return vec3_view(self.cast<ForceTorqueSensor&>().force(), self); })
      .def_property_readonly("torque",
                             [](py::object self) { return vec3_view(self.cast<ForceTorqueSensor&>().torque(), self); });

  py::class_<HeightScan>(m, "HeightScan",
                         "Vertical rays onto the static terrain from a pattern of (x, y) points around a frame\n"
                         "(yaw-aligned): terrain height under each point, NaN where none.")
      .def(py::init([](const World& w, const ArticulatedSystem& s, const std::string& frame, const RowMatX2& pattern,
                       SensorNoise noise, std::uint64_t seed, Scalar ray_start, Scalar max_distance) {
             return std::make_unique<HeightScan>(w, s, frame, to_pattern(pattern), noise, seed, ray_start,
                                                 max_distance);
           }),
           py::arg("world"), py::arg("system"), py::arg("frame"), py::arg("pattern"), py::arg("noise") = SensorNoise(),
           py::arg("seed") = 0, py::arg("ray_start") = 1.0, py::arg("max_distance") = 10.0, py::keep_alive<1, 2>(),
           py::keep_alive<1, 3>())
      .def_static(
          "grid",
          [](Scalar length, Scalar width, Scalar spacing) {
            const std::vector<Vec2> g = HeightScan::grid(length, width, spacing);
            RowMatX2 out(static_cast<Index>(g.size()), 2);
            for (std::size_t k = 0; k < g.size(); ++k) out.row(static_cast<Index>(k)) = g[k].transpose();
            return out;
          },
          py::arg("length"), py::arg("width"), py::arg("spacing"), "A centred grid of (x, y) points, shape (n, 2).")
      .def("update", &HeightScan::update)
      .def_property_readonly("size", &HeightScan::size)
      .def_property_readonly("heights", [](py::object self) { return view(self.cast<HeightScan&>().heights(), self); })
      .def_property_readonly(
          "points",
          [](py::object self) {
            const std::vector<Vec3>& p = self.cast<HeightScan&>().points();
            return view_of(p.empty() ? nullptr : p.front().data(), {static_cast<py::ssize_t>(p.size()), 3}, self);
          },
          "(n, 3) hit points in the world (read-only view; NaN rows where no terrain).");
}

}  // namespace impulse::python
