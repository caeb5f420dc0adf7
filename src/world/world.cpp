#include "impulse/world/world.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "impulse/core/check.hpp"
#include "impulse/core/finite.hpp"
#include "impulse/core/prefetch.hpp"
#include "impulse/model/model_builder.hpp"
#include "impulse/solvers/solver_registry.hpp"
#include "impulse/world/settings.hpp"

namespace impulse {

// The warm-start memory of contacts a World reserves in its state and its initial state (then it
// grows by doubling): a legged robot touches on 4-8, and each entry is 64 bytes per environment.
constexpr std::size_t kWarmStartContacts = 16;

World::World()
    : model_(std::make_shared<WorldModel>()), collision_(0.005), solver_(make_contact_solver("bisection")) {
  reserve();
  model_->solver_name = solver_->name();
}

WorldModel& World::edit_model() {
  // A model held by another World (a clone, an environment of a VecWorld) is read by its steps:
  // this World writes a copy of its own. (use_count() may be stale only upwards here: no other
  // thread can take a new reference to this World's model while this thread holds the World.)
  if (model_.use_count() > 1) model_ = std::make_shared<WorldModel>(*model_);
  return *model_;
}
World::~World() = default;

const char* to_string(WarningKind k) {
  switch (k) {
    case WarningKind::ContactOverflow: return "contact overflow";
    case WarningKind::SolverNotConverged: return "solver not converged";
    case WarningKind::SolverFailed: return "solver failed";
    case WarningKind::NonFinite: return "non-finite state";
    case WarningKind::MassMatrixNotPositiveDefinite: return "mass matrix not positive definite";
  }
  return "unknown";
}

void World::set_time_step(Scalar dt) {
  const auto in_use = use("set_time_step");
  validate_time_step(dt);
  edit_model().settings.dt = dt;
  prepared_ = false;
}

void World::set_time(Scalar t) {
  const auto in_use = use("set_time");
  validate_time(t);
  data_.time = t;
}

void World::set_gravity(const Vec3& g) {
  const auto in_use = use("set_gravity");
  validate_gravity(g);
  edit_model().gravity = g;
  // the Data of the steps and queries take the systems' gravity; the Model stays untouched
  for (auto& s : systems_) {
    s->gravity_ = g;
    if (s->data_) s->data_->gravity = g;
  }
  // (a free-flight history's acceleration has the old gravity in it: the next flight step is Heun's)
  for (SystemState& x : data_.systems) x.drop_flight_history();
  prepared_ = false;
}

void World::set_contact_margin(Scalar margin) {
  const auto in_use = use("set_contact_margin");
  validate_contact_margin(margin);
  collision_.set_margin(margin);
  prepared_ = false;
}

void World::set_contact_settings(const DelassusSettings& s) {
  const auto in_use = use("set_contact_settings");
  validate_contact_settings(s);
  edit_model().settings.contact = s;
  prepared_ = false;
}

void World::set_max_contacts(Index n) {
  const auto in_use = use("set_max_contacts");
  validate_max_contacts(n);
  const StepSettings old = model_->settings;
  edit_model().settings.max_contacts = n;
  try {
    reserve();  // replaces the stepper only on success (see reserve())
  } catch (...) {
    edit_model().settings = old;
    throw;
  }
}

void World::set_stage_timing(bool on) {
  const auto in_use = use("set_stage_timing");
  edit_model().settings.stage_timing = on;
}

void World::set_contact_solver(const std::string& name) { set_contact_solver(make_contact_solver(name)); }

void World::set_contact_solver(std::unique_ptr<ContactSolver> solver) {
  const auto in_use = use("set_contact_solver");
  IMPULSE_CHECK(solver != nullptr, "set_contact_solver: null solver");
  solver_ = std::move(solver);  // (its buffers grow to the problems of the next step)
  workspace_parts_ = WorkspaceParts();
  stepper_ = nullptr;
  prepared_ = false;
  // the clone rebuilds the solver from the registry with the settings it has at clone time
  edit_model().solver_name = is_registered_solver(*solver_) ? solver_->name() : "";
}

void World::set_material_pair(const std::string& a, const std::string& b, Scalar mu, Scalar restitution) {
  const auto in_use = use("set_material_pair");
  collision_.materials().set_pair(a, b, MaterialPair{mu, restitution});
}

void World::set_default_material(Scalar mu, Scalar restitution) {
  const auto in_use = use("set_default_material");
  collision_.materials().set_default(MaterialPair{mu, restitution});
}

// Any change of the objects: sizes of the stepper, and the initial state no longer applies.
void World::objects_changed() {
  reserve();
  prepare_initial_state();
}

Index World::add_ground(Scalar height, const std::string& material, const CollisionFilter& f) {
  const auto in_use = use("add_ground");
  IMPULSE_CHECK(std::isfinite(height), "ground height is not finite");
  const Index o = collision_.add_ground(height, material, f);
  edit_model().object_system.push_back(-1);
  objects_changed();
  return o;
}

Index World::add_static_box(const std::string& name, const SE3& pose, const Vec3& size, const std::string& material,
                            const CollisionFilter& f) {
  const auto in_use = use("add_static_box");
  // a rotation: orthonormal columns and det +1 (to 1e-6), else the box would be sheared or mirrored
  IMPULSE_CHECK(pose.R.allFinite() && pose.p.allFinite(), "static box '", name, "': pose is not finite");
  const Scalar ortho = (pose.R.transpose() * pose.R - Mat3::Identity()).cwiseAbs().maxCoeff();
  IMPULSE_CHECK(ortho <= 1e-6 && pose.R.determinant() > 0, "static box '", name,
                "': pose rotation is not a rotation matrix (|R^T R - I| = ", ortho, ", det ", pose.R.determinant(),
                ")");
  const std::string unique = unique_name(name);
  const Index o = collision_.add_static_box(unique, pose, size, material, f);
  edit_model().object_system.push_back(-1);
  objects_changed();
  return o;
}

Index World::add_heightfield(const std::string& name, std::shared_ptr<const Heightfield> terrain,
                             const std::string& material, const CollisionFilter& f) {
  const auto in_use = use("add_heightfield");
  const std::string unique = unique_name(name);
  const Index o = collision_.add_heightfield(unique, terrain, material, f);
  edit_model().object_system.push_back(-1);
  objects_changed();
  return o;
}

Index World::add_static_mesh(const std::string& name, const std::string& mesh_path, const Vec3& scale,
                             const SE3& pose, const std::string& material, const CollisionFilter& f) {
  const auto in_use = use("add_static_mesh");
  const std::string unique = unique_name(name);
  const Index o = collision_.add_static_mesh(unique, mesh_path, scale, pose, material, f);
  edit_model().object_system.push_back(-1);
  objects_changed();
  return o;
}

Index World::add_wall(const std::string& name, const Vec3& normal, Scalar offset, const std::string& material,
                      const CollisionFilter& f) {
  const auto in_use = use("add_wall");
  const std::string unique = unique_name(name);
  const Index o = collision_.add_plane(unique, normal, offset, material, f);
  edit_model().object_system.push_back(-1);
  objects_changed();
  return o;
}

std::string World::unique_name(const std::string& base) const {
  // Names are only ever added (systems and collision objects are never removed or renamed), so
  // a set of the names seen so far, brought up to date here, answers "taken?" in O(1), and the
  // first free suffix of a base only grows: adding n objects named alike costs O(n), not O(n^2)
  // string comparisons per object (1 000 boxes spent 1 s here).
  for (; names_.systems < systems_.size(); ++names_.systems) names_.taken.insert(systems_[names_.systems]->name());
  for (; names_.objects < collision_.num_objects(); ++names_.objects)
    names_.taken.insert(collision_.object_name(names_.objects));
  if (names_.taken.count(base) == 0) return base;
  int& k = names_.next_suffix[base];
  for (k = std::max(k, 2);; ++k) {
    std::string n = base + "_" + std::to_string(k);
    if (names_.taken.count(n) == 0) return n;
  }
}


// Many robots of one kind in a World hold one Model: a system whose description equals `model`
// lends its copy. The descriptions are immutable, so sharing changes no result; it keeps one
// set of Model arrays in the cache for all the robots (100 ANYmals: 0.89-0.90x the time per step
// of 100 copies, docs/benchmarks.md). The comparison stops at the first differing size or name,
// so a World of different robots pays little for it.
std::shared_ptr<const Model> World::shared_model_equal_to(const Model& model) const {
  for (const auto& s : systems_)
    if (*s->model_ == model) return s->model_;
  return nullptr;
}

ArticulatedSystem& World::add_articulated_system(const std::string& urdf_path, const SystemOptions& options) {
  // parsed every time, so the file's warnings and errors are reported as for any load
  Model model = load_urdf(urdf_path, options.urdf);
  std::shared_ptr<const Model> shared = shared_model_equal_to(model);
  if (!shared) shared = std::make_shared<const Model>(std::move(model));
  return add_articulated_system(std::move(shared), options);
}

ArticulatedSystem& World::add_articulated_system(const Model& model, const SystemOptions& options) {
  std::shared_ptr<const Model> shared = shared_model_equal_to(model);
  if (!shared) shared = std::make_shared<const Model>(model);
  return add_articulated_system(std::move(shared), options);
}

ArticulatedSystem& World::add_articulated_system(std::shared_ptr<const Model> model, const SystemOptions& options) {
  IMPULSE_CHECK(model != nullptr, "add_articulated_system: the Model is null");
  const std::string name = unique_name(options.name.empty() ? model->name : options.name);
  std::unique_ptr<ArticulatedSystem> sys(new ArticulatedSystem(name, std::move(model)));
  return add_system(std::move(sys), options);
}

ArticulatedSystem& World::add_system(std::unique_ptr<ArticulatedSystem> sys, const SystemOptions& options) {
  const auto in_use = use("add_system");
  sys->gravity_ = model_->gravity;
  // The collision stage may reject the object (missing mesh): nothing else has changed then.
  CollisionObjectOptions co;
  co.filter = options.filter;
  co.self_collision = options.self_collision;
  const Index object = collision_.add_object(*sys->model_, co);
  sys->object_ = object;
  data_.systems.emplace_back(sys->name_, *sys->model_);
  data_.outputs.emplace_back(*sys->model_);
  std::vector<Index>& object_system = edit_model().object_system;
  if (static_cast<Index>(object_system.size()) <= object) object_system.resize(object + 1, -1);
  object_system[object] = static_cast<Index>(systems_.size());
  system_ptrs_.push_back(sys.get());
  systems_.push_back(std::move(sys));
  objects_changed();
  return *systems_.back();
}

// A free rigid body of one collision shape (uniform density): a one-body Model with a floating
// root, added like any articulated system.
ArticulatedSystem& World::add_free_body(const std::string& name, ShapeType type, const Vec3& size,
                                        const std::string& material, const CollisionFilter& filter,
                                        const Inertia& inertia) {
  const auto in_use = use("add_free_body");
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
  // (through the shared-Model lookup: the balls of a pile hold one Model, whose arrays then stay
  // in the cache for all of them, as for robots of one kind; the Model is read per contact side
  // and per body, and one Model per ball would miss the cache at each read)
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

void World::set_body_inertia(Index system, Index body, const Inertia& inertia) {
  const auto in_use = use("set_body_inertia");
  IMPULSE_CHECK(system >= 0 && system < num_systems(), "set_body_inertia: system index ", system, " out of range (",
                num_systems(), " systems)");
  ArticulatedSystem& s = *systems_[static_cast<std::size_t>(system)];
  const Model& old = *s.model_;
  IMPULSE_CHECK(body >= 0 && body < old.nb, "set_body_inertia: body index ", body, " of system '", s.name(),
                "' out of range (", old.nb, " bodies)");
  try {
    check_inertia(inertia, "set_body_inertia: body '" + old.body_names[static_cast<std::size_t>(body)] +
                               "' of system '" + s.name() + "'");
  } catch (const ModelError& e) {
    throw InvalidArgument(e.what());
  }
  const Inertia& now = old.inertia[static_cast<std::size_t>(body)];
  if (now.m == inertia.m && now.c == inertia.c && now.Ic == inertia.Ic) return;  // nothing to replace
  Model copy = old;
  copy.inertia[static_cast<std::size_t>(body)] = inertia;
  replace_model(s, std::move(copy));
}

void World::set_joint_damping(Index system, const VecX& damping) {
  set_joint_values("set_joint_damping", system, damping, &Model::damping);
}

void World::set_joint_friction(Index system, const VecX& friction) {
  set_joint_values("set_joint_friction", system, friction, &Model::friction);
}

void World::set_joint_values(const char* call, Index system, const VecX& values, VecX Model::*member) {
  const auto in_use = use(call);
  IMPULSE_CHECK(system >= 0 && system < num_systems(), call, ": system index ", system, " out of range (",
                num_systems(), " systems)");
  ArticulatedSystem& s = *systems_[static_cast<std::size_t>(system)];
  const Model& old = *s.model_;
  IMPULSE_CHECK(values.size() == old.nv, call, ": system '", s.name(), "' has ", old.nv, " velocity dofs, got ",
                values.size(), " values");
  for (Index k = 0; k < old.nv; ++k)
    IMPULSE_CHECK(std::isfinite(values[k]) && values[k] >= 0, call, ": value ", values[k], " of dof ", k, " of system '",
                  s.name(), "' must be finite and >= 0");
  if (old.*member == values) return;  // nothing to replace
  Model copy = old;
  copy.*member = values;
  replace_model(s, std::move(copy));
}

void World::replace_model(ArticulatedSystem& s, Model model) {
  std::shared_ptr<const Model> shared = shared_model_equal_to(model);
  if (!shared) shared = std::make_shared<const Model>(std::move(model));
  s.model_ = std::move(shared);
  s.st_->drop_flight_history();  // (its free-flight history is of the old Model's dynamics)
  // the stepper's views, the layout and the shared-Model ranks follow the new Model
  reserve();
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

// The stepper's view of the current objects. The step scratch of the old layout is dropped (the
// World's own is made again on first use; a workspace finds or makes the one of the new layout),
// and so is what the last step left (warm start, contacts, statistics), which named the old
// objects. Nothing here allocates more than the systems' lists, so a failure leaves the World usable.
void World::reserve() {
  // A StepWorkspace holds one Data per (Model, rank) and counts Models equal but for their
  // parameters as one: the rank of a system is the number of earlier systems of its class (Models
  // equal but for inertia, joint damping and friction), or two of them would share a Data.
  // Classes: (a Model of the class, systems so far).
  std::vector<Index> rank;
  std::vector<std::shared_ptr<const Model>> layout;
  std::vector<std::pair<const Model*, Index>> classes;
  for (ArticulatedSystem* s : system_ptrs_) {
    const Model* m = s->model_.get();
    auto c = std::find_if(classes.begin(), classes.end(), [&](const auto& e) { return e.first == m; });
    if (c == classes.end())
      c = std::find_if(classes.begin(), classes.end(), [&](const auto& e) { return e.first->equal_except_parameters(*m); });
    if (c == classes.end()) c = classes.insert(classes.end(), {m, 0});
    rank.push_back(c->second++);
    layout.push_back(s->model_);
  }
  if (rank != model_->same_model_rank || layout != model_->layout) {
    WorldModel& m = edit_model();
    m.same_model_rank = std::move(rank);
    m.layout = std::move(layout);
  }
  refresh_step();
}

// The step's views of the systems, its scratch and what the last step left (warm start, contacts,
// statistics), which named the old objects, made anew for the current objects.
void World::refresh_step() {
  // (the systems' state and outputs live in data_, whose vectors an added system may have moved)
  for (std::size_t i = 0; i < systems_.size(); ++i) systems_[i]->bind(this, &data_.systems[i], &data_.outputs[i]);
  step_systems_.clear();
  for (ArticulatedSystem* s : system_ptrs_) step_systems_.push_back(s->stepper_system());
  workspace_data_.assign(step_systems_.size(), {0, nullptr});
  workspace_parts_ = WorkspaceParts();
  own_stepper_.reset();
  stepper_ = nullptr;
  prepared_ = false;
  data_.state.clear();
  data_.state.contacts.reserve(model_->settings.max_contacts);
  data_.state.cache.contacts.reserve(kWarmStartContacts);  // then they grow by doubling
  data_.state.cache.limits.reserve(32);
  // room for the warm-start memory of the new sizes in the initial state (see prepare_initial_state)
  Index limit_rows = 0;
  for (const auto& s : systems_) limit_rows += 3 * s->nv();  // two limit rows and one friction row per dof at most
  data_.initial.cache.contacts.reserve(kWarmStartContacts);  // grows with use like the stepper's (no max_contacts-sized block)
  data_.initial.cache.limits.reserve(static_cast<std::size_t>(limit_rows));
}

void World::integrate1() {
  const auto in_use = use("integrate1");
  collide_and_assemble();
}

Stepper& World::own_stepper() {
  if (!own_stepper_) {
    auto s = std::make_unique<Stepper>();
    s->reserve(step_systems_, model_->object_system);
    own_stepper_ = std::move(s);
  }
  return *own_stepper_;
}

const DelassusAssembler& World::assembler() const {
  // (no scratch made here: a const read must not write, threading.md; an empty one until a step)
  static const DelassusAssembler empty;
  return own_stepper_ ? own_stepper_->assembler() : empty;
}

// (stepper_: the scratch the caller chose, integrate(ws)'s; else the World's own)
void World::collide_and_assemble() {
  if (!data_.has_initial) mark_initial_state();
  if (stepper_ == nullptr) {  // the World's own scratch and Data (made on the first such step)
    stepper_ = &own_stepper();
    step_solver_ = solver_.get();
    for (std::size_t i = 0; i < step_systems_.size(); ++i) {
      if (step_systems_[i].data_ != nullptr) continue;
      ArticulatedSystem& s = *system_ptrs_[i];
      if (!s.data_) s.data_ = std::make_unique<Data>(*s.model_);
      s.data_->gravity = s.gravity_;
      step_systems_[i].data_ = s.data_.get();
    }
  }
  stepper_->prepare(step_systems_, collision_, model_->settings, *step_solver_, *solver_, data_.state);
  prepared_ = true;
}

void World::warn(WarningKind k, Index info) {
  WarningCounter& w = data_.warnings[static_cast<std::size_t>(k)];
  ++w.count;
  w.last_time = data_.time;
  w.last_info = info;
}

StepReport World::integrate2() {
  const auto in_use = use("integrate2");
  return solve_and_integrate();
}

StepReport World::solve_and_integrate() {
  StepReport r;
  if (!solve_part(r)) return r;
  return update_part(r);
}

bool World::solve_part(StepReport& r) {
  if (!prepared_) collide_and_assemble();
  prepared_ = false;
  if (!mass_matrix_ok(r)) return false;
  stepper_->finish_solve(model_->settings, *step_solver_, *solver_, data_.state);
  return true;
}

bool World::mass_matrix_ok(StepReport& r) {
  // A mass matrix (with the implicit PD and damping terms) that is not positive definite has an
  // LTDL pivot D_j <= 0 or NaN (RBDA Table 6.3): the step would be meaningless. Checked in every
  // build type; the step is skipped, state and time stay as they were. All pivots first, without
  // branches: finite (core/finite.hpp) and their least above 0; then the search for the first bad
  // one only when there is one (its two tests and exit per pivot took 12 instructions a dof).
  Scalar zero[4] = {0, 0, 0, 0};
  bool all_ok = true;
  for (const StepperSystem& s : step_systems_) {
    const VecX& D = s.data_->D;  // (the workspace's under integrate(ws))
    add_zero_times(D.data(), D.size(), 1, zero);
    if (D.size() > 0) all_ok = all_ok && D.minCoeff() > 0;  // (a NaN is the finiteness test's)
  }
  all_ok = all_ok && zero_times_finite(zero);
  for (std::size_t i = 0; i < step_systems_.size() && !all_ok && !r.mass_matrix_not_positive_definite; ++i) {
    const VecX& D = step_systems_[i].data_->D;  // (the workspace's under integrate(ws))
    for (Index k = 0; k < D.size(); ++k) {
      if (!(D[k] > 0) || !std::isfinite(D[k])) {
        r.mass_matrix_not_positive_definite = true;
        r.system = static_cast<Index>(i);
        r.dof = k;
        r.pivot = D[k];
        break;
      }
    }
  }
  if (r.mass_matrix_not_positive_definite) {
    r.stepped = false;
    r.status = StepStatus::NonFinite;
    warn(WarningKind::MassMatrixNotPositiveDefinite, r.system);
    data_.report = r;
    return false;
  }
  return true;
}

StepReport World::update_part(StepReport r) {
  const StepStatus status = stepper_->finish_update(step_systems_, model_->settings, data_.state);
  const StepStats& st = data_.state.stats;
  r.status = status;
  r.contacts = st.contacts;
  r.limits = st.limits;
  r.solver_iterations = st.solver.iterations;
  r.residual = st.solver.residual;
  r.restitution = st.restitution;
  r.contact_overflow = data_.state.contacts.overflow();
  r.solver_not_converged = st.solver.status == SolverStatus::MaxIterations;
  r.solver_failed = st.solver.status == SolverStatus::NumericalIssue;
  r.non_finite = status == StepStatus::NonFinite;
  if (r.non_finite) {
    // the stepper kept q and u; name the first system whose candidate state was not finite
    r.stepped = false;
    for (std::size_t i = 0; i < systems_.size(); ++i) {
      if (!systems_[i]->scratch_.q_next.allFinite() || !systems_[i]->scratch_.u_free.allFinite()) {
        r.system = static_cast<Index>(i);
        break;
      }
    }
  }
  if (r.contact_overflow) warn(WarningKind::ContactOverflow, r.contacts);
  if (r.solver_not_converged) warn(WarningKind::SolverNotConverged, r.solver_iterations);
  if (r.solver_failed) warn(WarningKind::SolverFailed, r.solver_iterations);
  if (r.non_finite) warn(WarningKind::NonFinite, r.system);
  if (r.stepped) data_.time += model_->settings.dt;
  data_.report = r;
  return r;
}

StepReport World::integrate() {
  const auto in_use = use("integrate");
  // (stepper_ is the World's own scratch after an integrate() or null: integrate(ws) resets it)
  collide_and_assemble();
  return solve_and_integrate();
}

void World::reserve_workspace(StepWorkspace& ws) const {
  use_.check("World", "reserve_workspace");
  for (std::size_t i = 0; i < step_systems_.size(); ++i) ws.data(system_ptrs_[i]->model_, model_->same_model_rank[i]);
  const bool made = ws.find_stepper(model_->layout, model_->object_system) == nullptr;
  ws.stepper(model_->layout, step_systems_, model_->object_system);
  if (!model_->solver_name.empty()) ws.solver(solver_->name());
  // A new stepper (and solver) takes the sizes of this World's next step now, by one step of a
  // copy (discarded): then a thread that steps Worlds of this layout for the first time allocates
  // nothing, whichever Worlds a thread pool hands it (batch/). A World that cannot be cloned
  // (custom solver) leaves them to grow on first use.
  if (made) {
    try {
      clone()->integrate(ws);
    } catch (const InvalidArgument&) {
    }
  }
}

void World::bind_workspace(StepWorkspace& ws) {
  // the step reads each system's Data through step_systems_: point them at the workspace's for
  // this step (gravity is the only entry of a Data that is the World's, not the step's), and back
  // at the systems' own on every exit (release_workspace); the same for the stepper's scratch
  if (workspace_parts_.id != ws.id()) {
    workspace_parts_.id = ws.id();
    workspace_parts_.stepper = &ws.stepper(model_->layout, step_systems_, model_->object_system);
    workspace_parts_.solver = model_->solver_name.empty() ? solver_.get() : &ws.solver(solver_->name());
  }
  stepper_ = workspace_parts_.stepper;
  step_solver_ = workspace_parts_.solver;
  for (std::size_t i = 0; i < step_systems_.size(); ++i) {
    ArticulatedSystem& s = *system_ptrs_[i];
    auto& cached = workspace_data_[i];
    if (cached.first != ws.id()) cached = {ws.id(), &ws.data(s.model_, model_->same_model_rank[i])};
    cached.second->gravity = s.gravity_;
    step_systems_[i].data_ = cached.second;
  }
}

void World::release_workspace() noexcept {
  for (std::size_t i = 0; i < step_systems_.size(); ++i) step_systems_[i].data_ = system_ptrs_[i]->data_.get();
  stepper_ = nullptr;
  prepared_ = false;  // (integrate2 must not solve what the workspace assembled)
  step_begun_ = false;
  step_solved_ = 0;
  solve_begun_ = false;
}

StepReport World::integrate(StepWorkspace& ws) {
  const auto in_use = use("integrate");
  IMPULSE_ASSERT(!step_begun_);
  struct Restore {
    World& w;
    ~Restore() { w.release_workspace(); }
  } restore{*this};
  bind_workspace(ws);
  collide_and_assemble();
  return solve_and_integrate();
}

void World::begin_step(StepWorkspace& ws, bool defer_paths) {
  const auto in_use = use("integrate");
  IMPULSE_ASSERT(!step_begun_);
  bind_workspace(ws);
  try {
    if (!data_.has_initial) mark_initial_state();
    stepper_->prepare_rows(step_systems_, collision_, model_->settings, *step_solver_, data_.state, defer_paths);
  } catch (...) {
    release_workspace();
    throw;
  }
  step_begun_ = true;
}

Stepper& World::step_stepper() {
  IMPULSE_ASSERT(step_begun_);
  return *stepper_;
}

bool World::begin_solve() {
  const auto in_use = use("integrate");
  IMPULSE_ASSERT(step_begun_ && step_solved_ == 0 && !solve_begun_);
  try {
    stepper_->prepare_targets(model_->settings, data_.state);
    step_report_ = StepReport();
    if (!mass_matrix_ok(step_report_)) {
      step_solved_ = 2;
      return false;
    }
    stepper_->begin_solve(model_->settings, *step_solver_, data_.state);
  } catch (...) {
    release_workspace();
    throw;
  }
  solve_begun_ = true;
  return true;
}

bool World::solve_step() {
  IMPULSE_ASSERT(step_begun_);
  if (step_solved_ == 2) return false;  // (begin_solve ended the step)
  IMPULSE_ASSERT(step_solved_ == 0);
  if (!solve_begun_ && !begin_solve()) return false;
  const auto in_use = use("integrate");
  solve_begun_ = false;
  try {
    stepper_->finish_solve(model_->settings, *step_solver_, *solver_, data_.state);
  } catch (...) {
    release_workspace();
    throw;
  }
  step_solved_ = 1;
  return true;
}

StepReport World::end_step() {
  if (step_solved_ == 0) solve_step();
  const auto in_use = use("integrate");
  IMPULSE_ASSERT(step_begun_);
  struct Restore {
    World& w;
    ~Restore() { w.release_workspace(); }
  } restore{*this};
  if (step_solved_ == 2) return step_report_;
  return update_part(step_report_);
}

void World::cancel_step() noexcept {
  if (step_begun_) release_workspace();
}

std::string World::describe(const StepReport& r) const {
  use_.check("World", "describe");
  std::string out;
  auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
  auto sys = [&](Index i) {
    return i >= 0 && i < num_systems() ? "system '" + systems_[static_cast<std::size_t>(i)]->name() + "'"
                                       : std::string("a system");
  };
  if (r.mass_matrix_not_positive_definite) {
    const Model& m = systems_[static_cast<std::size_t>(r.system)]->model();
    std::string joint;
    for (Index b = 0; b < m.nb; ++b) {
      if (r.dof >= m.idx_v[b] && r.dof < m.idx_v[b] + m.nv_joint[b]) joint = " (joint '" + m.joint_names[b] + "')";
    }
    std::ostringstream pivot;
    pivot << r.pivot;
    add("mass matrix of " + sys(r.system) + " is not positive definite: LTDL pivot D[" + std::to_string(r.dof) +
        "] = " + pivot.str() + joint + "; step skipped");
  }
  if (r.non_finite) add("non-finite state in " + sys(r.system) + "; step rejected, state and time unchanged");
  if (r.solver_failed) add("contact solver failed (numerical issue); no contact impulse applied");
  if (r.solver_not_converged) {
    std::ostringstream res;
    res << r.residual;
    add("contact solver not converged (" + std::to_string(r.solver_iterations) + " iterations, residual " +
        res.str() + ")");
  }
  if (r.contact_overflow) {
    add("contact overflow: kept " + std::to_string(r.contacts) + " contacts (max_contacts " +
        std::to_string(model_->settings.max_contacts) + "), dropped the rest");
  }
  return out.empty() ? "ok" : out;
}

// ---- state ----

WorldState World::save_state() const {
  use_.check("World", "save_state");
  WorldState st;
  save_state_into(st);
  return st;
}

// Copies the state into `st`, reusing its buffers: no allocation when `st` already has the sizes
// of this World (prepare_initial_state() sets data_.initial up so for the first step).
void World::save_state_into(WorldState& st) const {
  st.time = data_.time;
  st.num_objects = collision_.num_objects();
  st.systems = data_.systems;  // (element by element into buffers of the same sizes: no allocation)
  const StepperCache& c = data_.state.cache;
  st.cache.contacts.assign(c.contacts.begin(), c.contacts.end());
  st.cache.limits.assign(c.limits.begin(), c.limits.end());
}

// Sizes data_.initial for this World so that the first step captures it without allocating
// (World::integrate allocates nothing in steady state, the first step included).
void World::prepare_initial_state() {
  data_.has_initial = false;
  save_state_into(data_.initial);
  Index limit_rows = 0;
  for (const auto& s : systems_) limit_rows += 3 * s->nv();  // two limit rows and one friction row per dof at most
  data_.initial.cache.contacts.reserve(kWarmStartContacts);  // grows with use like the stepper's (no max_contacts-sized block)
  data_.initial.cache.limits.reserve(static_cast<std::size_t>(limit_rows));
}

void World::check_compatible(const WorldState& st) const {
  auto fail = [](const std::string& msg) { throw InvalidArgument("restore_state: " + msg); };
  if (st.num_objects != collision_.num_objects() || st.systems.size() != systems_.size()) {
    fail("the state is of a world with " + std::to_string(st.systems.size()) + " systems and " +
         std::to_string(st.num_objects) + " collision objects, this world has " + std::to_string(systems_.size()) +
         " and " + std::to_string(collision_.num_objects()) + "; restore into a World built from the same description");
  }
  if (!std::isfinite(st.time) || st.time < 0) fail("time is not finite or negative");
  for (std::size_t i = 0; i < systems_.size(); ++i) {
    const SystemState& x = st.systems[i];
    const ArticulatedSystem& s = *systems_[i];
    // built only on failure: restore_state/reset allocate nothing (reset per episode in RL loops)
    const auto who = [&] { return "system " + std::to_string(i) + " '" + s.name() + "'"; };
    if (x.name != s.name()) fail(who() + ": the state names it '" + x.name + "'");
    if (x.nq != s.nq() || x.nv != s.nv() || x.nb != s.model().nb) {
      fail(who() + ": the state has nq " + std::to_string(x.nq) + ", nv " + std::to_string(x.nv) + ", " +
           std::to_string(x.nb) + " bodies; the system has " + std::to_string(s.nq()) + ", " + std::to_string(s.nv()) +
           ", " + std::to_string(s.model().nb));
    }
    for (const SystemState::VectorField& f : SystemState::kVectorFields) {
      const VecX& v = x.*f.member;
      if (v.size() != x.length(f) || !v.allFinite()) fail(who() + ": " + f.name + " has the wrong size or is not finite");
    }
    if (!(x.flight_dt >= 0) || !std::isfinite(x.flight_dt)) fail(who() + ": free-flight dt is negative or not finite");
    if (static_cast<Index>(x.f_ext.size()) != x.nb) fail(who() + ": wrong number of external wrenches");
    for (const Vec6& f : x.f_ext) {
      if (!f.allFinite()) fail(who() + ": external wrench is not finite");
    }
  }
  for (const ContactMemory& m : st.cache.contacts) {
    for (Index o : {m.object_a, m.object_b}) {
      if (o < -1 || o >= collision_.num_objects()) fail("warm-start memory names collision object " + std::to_string(o));
    }
    if (!m.position.allFinite() || !m.impulse_W.allFinite()) fail("warm-start memory is not finite");
  }
  if (static_cast<Index>(st.cache.contacts.size()) > model_->settings.max_contacts) fail("warm-start memory exceeds max_contacts");
  for (const LimitMemory& m : st.cache.limits) {
    if (m.system < 0 || m.system >= num_systems() || m.dof < 0 || m.dof >= systems_[static_cast<std::size_t>(m.system)]->nv() ||
        !std::isfinite(m.lambda) || !std::isfinite(m.sign)) {
      fail("warm-start memory names an invalid limit row (system " + std::to_string(m.system) + ", dof " +
           std::to_string(m.dof) + ")");
    }
  }
}

void World::restore_state(const WorldState& st) {
  const auto in_use = use("restore_state");
  check_compatible(st);
  // Everything below only copies into buffers of the right size (no throwing path but a
  // bad_alloc of the cache vectors, which grow to the saved state's warm-start memory when it
  // holds more than they reserved).
  data_.state.cache = st.cache;
  data_.systems = st.systems;  // (same sizes, checked above: element by element, no allocation)
  for (SystemOutputs& o : data_.outputs) o.contact_impulses.clear();
  data_.time = st.time;
  prepared_ = false;
}

void World::mark_initial_state() {
  const auto in_use = use("mark_initial_state");
  save_state_into(data_.initial);
  data_.has_initial = true;
}

void World::reset() {
  const auto in_use = use("reset");
  if (data_.has_initial) restore_state(data_.initial);
  clear_warnings();
  data_.report = StepReport();
}

void World::prefetch(const StepWorkspace* ws) const {
  const bool own_data = ws == nullptr;
  prefetch_bytes(this, sizeof(World));
  prefetch_bytes(model_.get(), sizeof(WorldModel));  // (one for all the clones of a World)
  prefetch_data(system_ptrs_);
  prefetch_data(step_systems_);
  if (!own_data) {
    prefetch_data(model_->same_model_rank);
    prefetch_data(workspace_data_);
  }
  for (const ArticulatedSystem* s : system_ptrs_) s->prefetch_step(own_data);
  if (own_data && own_stepper_) own_stepper_->prefetch_step();
  prefetch_state(data_.state);
  collision_.prefetch_step();
}

std::unique_ptr<World> World::clone() const {
  use_.check("World", "clone");
  IMPULSE_CHECK(!model_->solver_name.empty(), "clone: the World's contact solver '", solver_->name(),
                "' is a custom instance; only solvers of the registry (", join_solver_names(), ") can be cloned");
  // Reads this World only (VecWorld clones one World on many threads): its model is shared, not
  // written; the collision objects, the systems and the data are copied.
  std::unique_ptr<World> w(new World(model_, collision_.clone(), make_contact_solver(solver_settings_of(*solver_))));
  for (const auto& s : systems_) {
    w->systems_.push_back(std::unique_ptr<ArticulatedSystem>(new ArticulatedSystem(*s)));
    w->system_ptrs_.push_back(w->systems_.back().get());
    w->data_.systems.emplace_back(s->name_, *s->model_);
    w->data_.outputs.emplace_back(*s->model_);
  }
  w->refresh_step();
  w->prepare_initial_state();  // (sizes the initial state's buffers as for a World built here)
  w->data_ = data_;            // (copies into those buffers: the clone's steps allocate no more than these)
  return w;
}

// A World of the given parts, without systems (clone() adds them).
World::World(std::shared_ptr<WorldModel> model, CollisionWorld collision, std::unique_ptr<ContactSolver> solver)
    : model_(std::move(model)), collision_(std::move(collision)), solver_(std::move(solver)) {}

std::vector<ContactReport> World::contact_reports() const {
  use_.check("World", "contact_reports");
  std::vector<ContactReport> out;
  const ContactSet& cs = data_.state.contacts;
  for (Index i = 0; i < cs.size(); ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    out.push_back({cs[i], k < data_.state.contact_impulses.size() ? data_.state.contact_impulses[k] : Vec3(Vec3::Zero())});
  }
  return out;
}

}  // namespace impulse
