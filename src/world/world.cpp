#include "impulse/world/world.hpp"

#include <cmath>

#include "impulse/core/check.hpp"
#include "impulse/model/model_builder.hpp"

namespace impulse {

World::World() : collision_(0.005) { reserve(); }
World::~World() = default;

void World::set_time_step(Scalar dt) {
  IMPULSE_CHECK(std::isfinite(dt) && dt > 0 && dt <= 0.1, "time step must be in (0, 0.1] s, got ", dt);
  settings_.dt = dt;
  prepared_ = false;
}

void World::set_gravity(const Vec3& g) {
  IMPULSE_CHECK(g.allFinite(), "gravity (", g.transpose(), ") is not finite");
  gravity_ = g;
  // gravity lives in each system's Data (stepper and query workspaces); the Model stays untouched
  for (auto& s : systems_) s->data_.gravity = s->query_.gravity = g;
  prepared_ = false;
}

void World::set_contact_margin(Scalar margin) {
  IMPULSE_CHECK(std::isfinite(margin) && margin >= 0, "contact margin must be >= 0, got ", margin);
  collision_.set_margin(margin);
  prepared_ = false;
}

void World::set_contact_settings(const DelassusSettings& s) {
  IMPULSE_CHECK(std::isfinite(s.restitution_threshold) && s.restitution_threshold >= 0,
                "restitution threshold must be >= 0");
  IMPULSE_CHECK(std::isfinite(s.erp) && s.erp >= 0 && s.erp <= 1, "erp must be in [0, 1], got ", s.erp);
  IMPULSE_CHECK(std::isfinite(s.slop) && s.slop >= 0, "slop must be >= 0");
  IMPULSE_CHECK(std::isfinite(s.limit_margin) && s.limit_margin >= 0, "limit margin must be >= 0");
  settings_.contact = s;
  prepared_ = false;
}

void World::set_max_contacts(Index n) {
  IMPULSE_CHECK(n > 0 && n <= 100000, "max contacts must be in [1, 100000], got ", n);
  settings_.max_contacts = n;
  reserve();
}

void World::set_contact_solver(const std::string& name) { set_contact_solver(make_contact_solver(name)); }

void World::set_contact_solver(std::unique_ptr<ContactSolver> solver) {
  IMPULSE_CHECK(solver != nullptr, "set_contact_solver: null solver");
  stepper_.set_solver(std::move(solver));
  prepared_ = false;
}

void World::set_material_pair(const std::string& a, const std::string& b, Scalar mu, Scalar restitution) {
  collision_.materials().set_pair(a, b, MaterialPair{mu, restitution});
}

void World::set_default_material(Scalar mu, Scalar restitution) {
  collision_.materials().set_default(MaterialPair{mu, restitution});
}

Index World::add_ground(Scalar height, const std::string& material, const CollisionFilter& f) {
  IMPULSE_CHECK(std::isfinite(height), "ground height is not finite");
  const Index o = collision_.add_ground(height, material, f);
  object_system_.push_back(-1);
  reserve();
  return o;
}

Index World::add_static_box(const std::string& name, const SE3& pose, const Vec3& size, const std::string& material,
                            const CollisionFilter& f) {
  const Index o = collision_.add_static_box(unique_name(name), pose, size, material, f);
  object_system_.push_back(-1);
  reserve();
  return o;
}

Index World::add_wall(const std::string& name, const Vec3& normal, Scalar offset, const std::string& material,
                      const CollisionFilter& f) {
  const Index o = collision_.add_plane(unique_name(name), normal, offset, material, f);
  object_system_.push_back(-1);
  reserve();
  return o;
}

std::string World::unique_name(const std::string& base) const {
  auto taken = [&](const std::string& n) {
    for (const auto& s : systems_) {
      if (s->name() == n) return true;
    }
    for (Index o = 0; o < collision_.num_objects(); ++o) {
      if (collision_.object_name(o) == n) return true;
    }
    return false;
  };
  if (!taken(base)) return base;
  for (int k = 2;; ++k) {
    const std::string n = base + "_" + std::to_string(k);
    if (!taken(n)) return n;
  }
}

ArticulatedSystem& World::add_articulated_system(const std::string& urdf_path, const SystemOptions& options) {
  Model model = load_urdf(urdf_path, options.urdf);
  return add_articulated_system(model, options);
}

ArticulatedSystem& World::add_articulated_system(const Model& model, const SystemOptions& options) {
  const std::string name = unique_name(options.name.empty() ? model.name : options.name);
  auto sys = std::make_unique<ArticulatedSystem>(name, model);
  return add_system(std::move(sys), options);
}

ArticulatedSystem& World::add_system(std::unique_ptr<ArticulatedSystem> sys, const SystemOptions& options) {
  sys->data_.gravity = sys->query_.gravity = gravity_;
  // The collision stage may reject the object (missing mesh): nothing else has changed then.
  CollisionObjectOptions co;
  co.filter = options.filter;
  co.self_collision = options.self_collision;
  const Index object = collision_.add_object(sys->model_, co);
  sys->object_ = object;
  sys->world_ = this;
  if (static_cast<Index>(object_system_.size()) <= object) object_system_.resize(object + 1, -1);
  object_system_[object] = static_cast<Index>(systems_.size());
  system_ptrs_.push_back(sys.get());
  systems_.push_back(std::move(sys));
  reserve();
  return *systems_.back();
}

// A free rigid body of one collision shape (uniform density): a one-body Model with a floating
// root, added like any articulated system.
ArticulatedSystem& World::add_free_body(const std::string& name, ShapeType type, const Vec3& size,
                                        const std::string& material, const CollisionFilter& filter,
                                        const Inertia& inertia) {
  IMPULSE_CHECK(std::isfinite(inertia.m) && inertia.m > 0, "free body '", name, "': mass must be > 0, got ",
                inertia.m);
  ModelBuilder b(name);
  b.add_body(-1, "root", JointType::Floating, SE3(), Vec3::Zero(), {}, name, inertia);
  CollisionShape s;
  s.type = type;
  s.size = size;
  s.material = material;
  s.body = 0;
  s.name = name;
  s.link = name;
  b.add_collision(s);
  SystemOptions o;
  o.name = name;
  o.filter = filter;
  return add_articulated_system(b.finalize(), o);
}

namespace {
void check_size(const std::string& name, std::initializer_list<Scalar> sizes) {
  for (Scalar x : sizes) {
    IMPULSE_CHECK(std::isfinite(x) && x > 0, "free body '", name, "': sizes must be positive and finite, got ", x);
  }
}
Inertia diagonal_inertia(Scalar m, const Vec3& I) { return Inertia(m, Vec3::Zero(), I.asDiagonal()); }
}  // namespace

ArticulatedSystem& World::add_sphere(const std::string& name, Scalar r, Scalar mass, const std::string& material,
                                     const CollisionFilter& f) {
  check_size(name, {r});
  return add_free_body(name, ShapeType::Sphere, Vec3(r, 0, 0), material, f,
                       diagonal_inertia(mass, Vec3::Constant(0.4 * mass * r * r)));
}

ArticulatedSystem& World::add_box(const std::string& name, const Vec3& size, Scalar mass, const std::string& material,
                                  const CollisionFilter& f) {
  check_size(name, {size.x(), size.y(), size.z()});
  const Vec3 sq = size.cwiseAbs2();
  return add_free_body(name, ShapeType::Box, size, material, f,
                       diagonal_inertia(mass, mass / 12.0 * Vec3(sq.y() + sq.z(), sq.x() + sq.z(), sq.x() + sq.y())));
}

ArticulatedSystem& World::add_cylinder(const std::string& name, Scalar r, Scalar length, Scalar mass,
                                       const std::string& material, const CollisionFilter& f) {
  check_size(name, {r, length});
  const Scalar Ixx = mass * (3 * r * r + length * length) / 12.0;
  return add_free_body(name, ShapeType::Cylinder, Vec3(r, length, 0), material, f,
                       diagonal_inertia(mass, Vec3(Ixx, Ixx, 0.5 * mass * r * r)));
}

// Capsule of uniform density: a cylinder of length L and two hemispheres of radius r. Each
// hemisphere's centroid is 3r/8 from its flat face; its transverse moment about the capsule
// centre is m_h (83/320 r^2 + (L/2 + 3r/8)^2), which sums to m_s (2/5 r^2 + L^2/4 + 3Lr/8).
ArticulatedSystem& World::add_capsule(const std::string& name, Scalar r, Scalar L, Scalar mass,
                                      const std::string& material, const CollisionFilter& f) {
  check_size(name, {r, L});
  const Scalar vc = M_PI * r * r * L, vs = 4.0 / 3.0 * M_PI * r * r * r;
  const Scalar mc = mass * vc / (vc + vs), ms = mass * vs / (vc + vs);
  const Scalar Izz = 0.5 * mc * r * r + 0.4 * ms * r * r;
  const Scalar Ixx = mc * (3 * r * r + L * L) / 12.0 + ms * (0.4 * r * r + L * L / 4.0 + 3.0 * L * r / 8.0);
  return add_free_body(name, ShapeType::Capsule, Vec3(r, L, 0), material, f,
                       diagonal_inertia(mass, Vec3(Ixx, Ixx, Izz)));
}

ArticulatedSystem& World::system(Index i) {
  IMPULSE_CHECK(i >= 0 && i < num_systems(), "system index ", i, " out of range (", num_systems(), " systems)");
  return *systems_[static_cast<std::size_t>(i)];
}

ArticulatedSystem& World::system(const std::string& name) {
  for (auto& s : systems_) {
    if (s->name() == name) return *s;
  }
  std::string names;
  for (auto& s : systems_) names += (names.empty() ? "" : ", ") + s->name();
  throw InvalidArgument("world has no system named '" + name + "' (systems: " + names + ")");
}

void World::reserve() {
  stepper_.reserve(system_ptrs_, object_system_, settings_);
  prepared_ = false;
}

void World::integrate1() {
  stepper_.prepare(system_ptrs_, collision_, settings_);
  prepared_ = true;
}

StepStatus World::integrate2() {
  if (!prepared_) integrate1();
  const StepStatus s = stepper_.finish(system_ptrs_, settings_);
  prepared_ = false;
  time_ += settings_.dt;
  return s;
}

StepStatus World::integrate() {
  integrate1();
  return integrate2();
}

std::vector<ContactReport> World::contact_reports() const {
  std::vector<ContactReport> out;
  const ContactSet& cs = stepper_.contacts();
  for (Index i = 0; i < cs.size(); ++i) out.push_back({cs[i], stepper_.contact_impulse(i)});
  return out;
}

}  // namespace impulse
