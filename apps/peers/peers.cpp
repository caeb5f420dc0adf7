// impulse_peers: ANYmal in Impulse and in MuJoCo 2.2.2 (Debian libmujoco-dev) in one process,
// interleaved, on the same robot description (models/anymal/anymal.urdf), with the same
// controllers. Optional target (cmake -DIMPULSE_BUILD_PEERS=ON), not built by default, not in CI.
//
// Scenes (1 ms steps, default 5000 steps each, repeated --reps times):
//   stand    on the ground in the nominal pose, joint PD to the nominal pose
//   trot     on the ground, joint PD to an open-loop diagonal trot pattern (period 0.36 s: the
//            swing pair flexes hip and knee to lift its feet), the same targets in both engines
//   landing  base 1 m up with 1 m/s forward velocity, joint PD to the nominal pose
//   air      base high enough to fall for the whole run without contact, random orientation, joint PD to random
//            targets (nominal + N(0, 1 rad^2)) drawn every 50 ms from one seed for both engines
//   solo12   Solo12 of example-robot-data (mesh collision; found through the package path, e.g.
//            IMPULSE_PACKAGE_PATH=../shared/models; skipped when absent) standing on the ground
//            under joint PD (kp 20, kd 0.5; scenarios/solo12_stand.hpp). Impulse collides the
//            meshes as convex hulls (its default), MuJoCo as convex hulls (its only mesh
//            collision). MuJoCo compiles the same URDF from a copy in /tmp whose mesh file names
//            point into a /tmp folder of links to the resolved mesh files (MuJoCo's URDF reader
//            keeps only a mesh's file name and looks for it in `meshdir`).
//
// Set-up of each engine, as its users would write it:
//   Impulse  World with the ground, the default bisection solver, erp 0.2 / slop 1e-5 (the
//            scenarios' setting), implicit joint PD (kp 200, kd 6) through set_pd_gains/targets.
//   MuJoCo   the URDF compiled by MuJoCo itself (mj_loadXML on the URDF with a <mujoco><compiler>
//            element added), saved as MJCF, then at run time: a free joint on the base, a ground
//            plane, position actuators kp 200 and joint damping 6 (MuJoCo's implicit damping),
//            friction 0.8 (Impulse's default material), timestep 1 ms, default solver (Newton,
//            pyramidal cone), robot geoms collide only with the ground (Impulse's default: no
//            self-collision). Nothing is copied from a hand-made model.
//
// Interleaving: the two engines advance the same scene in alternating blocks of 100 steps; each
// block is timed with steady_clock, so both see the same machine load. Reported per engine:
// mean time per step, contacts per step, mean and max foot penetration (sphere centre below its
// radius), slip (mean horizontal speed of feet within 1 mm of the ground), and whether the robot
// fell (base below 0.25 m or tilted more than 60 degrees at the end; not for `air`).
#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <filesystem>
#include <map>
#include <regex>

#include <unistd.h>

#include "bench/timing.hpp"
#include "impulse/world/world.hpp"
#include "impulse/io/urdf.hpp"
#include "scenarios/anymal_scenarios.hpp"
#include "scenarios/solo12_stand.hpp"

namespace {

using namespace impulse;

constexpr int kBlock = 100;
constexpr Scalar kDt = 0.001;
constexpr Scalar kKp = scenarios::kJointKp, kKd = scenarios::kJointKd;
constexpr Scalar kMu = 0.8;
constexpr Scalar kFootRadius = 0.03;

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + path);
}

void replace_once(std::string& s, const std::string& what, const std::string& with) {
  const auto at = s.find(what);
  if (at == std::string::npos) throw std::runtime_error("MJCF wrapper: '" + what + "' not found");
  s.replace(at, what.size(), with);
}

// The MJCF of the ANYmal URDF as compiled by MuJoCo, wrapped for the benchmark (see the header).
std::string mujoco_xml(const std::string& urdf_path, const std::string& tmp) {
  std::string urdf = read_text(urdf_path);
  const auto robot = urdf.find("<robot");
  const auto open_end = urdf.find('>', robot);
  if (robot == std::string::npos || open_end == std::string::npos) throw std::runtime_error("no <robot> in " + urdf_path);
  urdf.insert(open_end + 1,
              "<mujoco><compiler discardvisual=\"true\" fusestatic=\"false\" balanceinertia=\"false\"/></mujoco>");
  write_text(tmp + ".urdf", urdf);
  char err[1000] = "";
  mjModel* m = mj_loadXML((tmp + ".urdf").c_str(), nullptr, err, sizeof(err));
  if (!m) throw std::runtime_error(std::string("MuJoCo cannot compile the URDF: ") + err);
  if (!mj_saveLastXML((tmp + ".xml").c_str(), m, err, sizeof(err))) {
    mj_deleteModel(m);
    throw std::runtime_error(std::string("MuJoCo cannot save the MJCF: ") + err);
  }
  std::string joints;
  for (int j = 0; j < m->njnt; ++j) {
    joints += "<position joint=\"" + std::string(mj_id2name(m, mjOBJ_JOINT, j)) + "\" kp=\"" + std::to_string(kKp) + "\"/>";
  }
  mj_deleteModel(m);
  std::string xml = read_text(tmp + ".xml");
  replace_once(xml, "<default/>", "<option timestep=\"0.001\"/><default><joint damping=\"" + std::to_string(kKd) +
                                       "\"/><geom friction=\"" + std::to_string(kMu) + " 0.005 0.0001\"/></default>");
  const auto base = xml.find("<body name=\"base\"");
  if (base == std::string::npos) throw std::runtime_error("MJCF wrapper: no base body");
  xml.insert(xml.find('>', base) + 1, "<freejoint name=\"root\"/>");
  replace_once(xml, "</worldbody>", "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\"/></worldbody>");
  replace_once(xml, "</mujoco>", "<actuator>" + joints + "</actuator></mujoco>");
  return xml;
}

// Per-engine figures of one scene.
struct Figures {
  double seconds = 0;
  long steps = 0;
  double contacts = 0;
  double pen_sum = 0, pen_max = 0;
  long pen_n = 0;
  double slip_sum = 0;
  long slip_n = 0;
  bool fell = false;
  std::array<Vec3, 4> last_feet{};
  bool have_last = false;

  void feet(const std::array<Vec3, 4>& p) {
    double pen = 0;
    for (int k = 0; k < 4; ++k) {
      const double d = kFootRadius - p[k].z();
      pen = std::max(pen, d);
      if (have_last && d > -1e-3) {
        slip_sum += (p[k] - last_feet[k]).head<2>().norm() / kDt;
        ++slip_n;
      }
    }
    if (pen > 0) {
      pen_sum += pen;
      pen_max = std::max(pen_max, pen);
      ++pen_n;
    }
    last_feet = p;
    have_last = true;
  }
  double us() const { return 1e6 * seconds / std::max(1L, steps); }
};

bool fallen(const Vec3& base, const Mat3& R) { return base.z() < 0.25 || R(2, 2) < 0.5; }

// One engine's interface for the scenes.
struct Engine {
  virtual ~Engine() = default;
  virtual void place(const Vec3& p, const Quat& R, const VecX& joints, const Vec3& v) = 0;
  virtual void targets(const VecX& joints) = 0;
  virtual void step() = 0;
  virtual std::array<Vec3, 4> feet() = 0;
  virtual int contacts() = 0;
  virtual void base(Vec3& p, Mat3& R) = 0;
};

struct ImpulseEngine final : Engine {
  World world;
  ArticulatedSystem* robot = nullptr;
  std::array<Index, 4> foot_body{};
  std::array<Vec3, 4> foot_offset{};

  ImpulseEngine() {
    world.add_ground();
    robot = &world.add_articulated_system(scenarios::anymal_urdf_path());
    DelassusSettings c = world.settings().contact;
    c.erp = 0.2;
    c.slop = 1e-5;
    world.set_contact_settings(c);
    scenarios::set_joint_pd_gains(*robot, kKp, kKd);
    int k = 0;
    for (const CollisionShape& s : robot->model().collision) {
      if (s.type != ShapeType::Sphere || k == 4) continue;
      foot_body[k] = s.body;
      foot_offset[k] = s.X_BS.p;
      ++k;
    }
  }
  void place(const Vec3& p, const Quat& R, const VecX& joints, const Vec3& v) override {
    VecX q = robot->model().neutral_configuration();
    q.head<3>() = p;
    q[3] = R.w(), q[4] = R.x(), q[5] = R.y(), q[6] = R.z();
    q.tail(12) = joints;
    VecX u = VecX::Zero(robot->nv());
    u.head<3>() = v;
    robot->set_state(q, u);
  }
  void targets(const VecX& joints) override { scenarios::set_joint_targets(*robot, joints); }
  void step() override { world.integrate(); }
  std::array<Vec3, 4> feet() override {
    std::array<Vec3, 4> p;
    for (int k = 0; k < 4; ++k) p[k] = robot->body_pose(foot_body[k]).act_point(foot_offset[k]);
    return p;
  }
  int contacts() override { return static_cast<int>(world.contacts().size()); }
  void base(Vec3& p, Mat3& R) override {
    const SE3 X = robot->body_pose(0);
    p = X.p;
    R = X.R;
  }
};

struct MujocoEngine final : Engine {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  std::array<int, 4> foot_geom{};
  int base_body = -1;

  explicit MujocoEngine(const std::string& xml_path) {
    char err[1000] = "";
    m = mj_loadXML(xml_path.c_str(), nullptr, err, sizeof(err));
    if (!m) throw std::runtime_error(std::string("MuJoCo cannot load the wrapped MJCF: ") + err);
    d = mj_makeData(m);
    const int floor = mj_name2id(m, mjOBJ_GEOM, "floor");
    int k = 0;
    for (int g = 0; g < m->ngeom; ++g) {
      // robot geoms collide with the ground only (contype 1 / conaffinity 2, ground 2 / 1)
      m->geom_contype[g] = g == floor ? 2 : 1;
      m->geom_conaffinity[g] = g == floor ? 1 : 2;
      if (m->geom_type[g] == mjGEOM_SPHERE && k < 4) foot_geom[k++] = g;
    }
    base_body = mj_name2id(m, mjOBJ_BODY, "base");
    if (k != 4 || base_body < 0) throw std::runtime_error("MuJoCo model: expected 4 foot spheres and a base");
  }
  ~MujocoEngine() override {
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  void place(const Vec3& p, const Quat& R, const VecX& joints, const Vec3& v) override {
    mj_resetData(m, d);
    for (int i = 0; i < 3; ++i) d->qpos[i] = p[i];
    d->qpos[3] = R.w(), d->qpos[4] = R.x(), d->qpos[5] = R.y(), d->qpos[6] = R.z();
    for (int j = 0; j < 12; ++j) d->qpos[7 + j] = joints[j];
    for (int i = 0; i < 3; ++i) d->qvel[i] = v[i];  // free joint: world-frame linear velocity
    targets(joints);
    mj_forward(m, d);
  }
  void targets(const VecX& joints) override {
    for (int j = 0; j < 12; ++j) d->ctrl[j] = joints[j];
  }
  void step() override { mj_step(m, d); }
  std::array<Vec3, 4> feet() override {
    std::array<Vec3, 4> p;
    for (int k = 0; k < 4; ++k) p[k] = Eigen::Map<const Vec3>(d->geom_xpos + 3 * foot_geom[k]);
    return p;
  }
  int contacts() override { return d->ncon; }
  void base(Vec3& p, Mat3& R) override {
    p = Eigen::Map<const Vec3>(d->xpos + 3 * base_body);
    R = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(d->xmat + 9 * base_body);
  }
};

struct Scene {
  std::string name;
  Vec3 p;
  Quat R;
  Vec3 v;
  bool ground;  // fell is meaningful
};

// Joint targets of the scene at step k (the same for both engines).
class Targets {
 public:
  Targets(const std::string& scene, unsigned seed) : scene_(scene), rng_(seed), t_(scenarios::anymal_nominal_joints()) {}
  const VecX& at(long k) {
    const VecX nominal = scenarios::anymal_nominal_joints();
    if (scene_ == "trot") {
      // diagonal pairs (LF, RH) and (RF, LH): the swing pair flexes HFE and KFE by a half sine
      const double T = 0.36, phase = 2 * M_PI * (k * kDt) / T;
      const int pair[4] = {0, 1, 1, 0};
      t_ = nominal;
      for (int leg = 0; leg < 4; ++leg) {
        const double s = std::max(0.0, std::sin(phase + M_PI * pair[leg]));
        const double front = leg < 2 ? 1.0 : -1.0;  // front knees bend back, hind knees forward
        t_[3 * leg + 1] += front * 0.4 * s;
        t_[3 * leg + 2] -= front * 0.8 * s;
      }
    } else if (scene_ == "air" && k % 50 == 0) {
      std::normal_distribution<double> n(0.0, 1.0);
      t_ = nominal;
      for (int j = 0; j < 12; ++j) t_[j] += n(rng_);
    } else if (scene_ != "air") {
      t_ = nominal;
    }
    return t_;
  }

 private:
  std::string scene_;
  std::mt19937 rng_;
  VecX t_;
};

void run_scene(const Scene& sc, long steps, Engine& imp, Engine& mjc, Figures& fi, Figures& fm) {
  Engine* engines[2] = {&imp, &mjc};
  Figures* figs[2] = {&fi, &fm};
  for (int e = 0; e < 2; ++e) engines[e]->place(sc.p, sc.R, scenarios::anymal_nominal_joints(), sc.v);
  Targets targets[2] = {Targets(sc.name, 7), Targets(sc.name, 7)};
  for (long k0 = 0; k0 < steps; k0 += kBlock) {
    const long n = std::min<long>(kBlock, steps - k0);
    // alternate which engine goes first, so neither always runs right after the other's cache use
    for (int o = 0; o < 2; ++o) {
      const int e = ((k0 / kBlock) % 2 == 0) ? o : 1 - o;
      Engine& eng = *engines[e];
      Figures& f = *figs[e];
      double t = 0;
      for (long k = k0; k < k0 + n; ++k) {
        eng.targets(targets[e].at(k));
        const bench::Stopwatch<> watch;
        eng.step();
        t += watch.seconds();
        f.contacts += eng.contacts();
        if (sc.ground) f.feet(eng.feet());
      }
      f.seconds += t;
      f.steps += n;
    }
  }
  for (int e = 0; e < 2; ++e) {
    Vec3 p;
    Mat3 R;
    engines[e]->base(p, R);
    figs[e]->fell = sc.ground && fallen(p, R);
  }
}

using bench::median;

// ---- Solo12 standing (mesh robot) ----

// The MJCF of solo12.urdf as compiled by MuJoCo (meshes through a folder of links in /tmp), with
// a free joint on the base, the ground, position actuators kp and joint damping kd.
std::string mujoco_solo12_xml(const std::string& urdf_path, const std::string& tmp) {
  namespace fs = std::filesystem;
  std::string urdf = read_text(urdf_path);
  const std::string mesh_dir = tmp + "_meshes";
  fs::create_directories(mesh_dir);
  std::map<std::string, std::string> linked;  // file name -> resolved path
  const std::regex mesh_re("filename\\s*=\\s*\"([^\"]+)\"");
  std::string out;
  auto it = std::sregex_iterator(urdf.begin(), urdf.end(), mesh_re);
  std::size_t last = 0;
  for (; it != std::sregex_iterator(); ++it) {
    const std::string uri = (*it)[1];
    const std::string path = resolve_resource_uri(uri, fs::path(urdf_path).parent_path().string(), package_search_path());
    const std::string name = fs::path(path).filename().string();
    auto [at, fresh] = linked.emplace(name, path);
    if (!fresh && at->second != path) throw std::runtime_error("two meshes named '" + name + "' in " + urdf_path);
    if (fresh) fs::create_symlink(fs::absolute(path), mesh_dir + "/" + name);
    out += urdf.substr(last, static_cast<std::size_t>(it->position(1)) - last) + name;
    last = static_cast<std::size_t>(it->position(1) + it->length(1));
  }
  out += urdf.substr(last);
  const auto robot = out.find("<robot");
  const auto open_end = out.find('>', robot);
  if (robot == std::string::npos || open_end == std::string::npos) throw std::runtime_error("no <robot> in " + urdf_path);
  out.insert(open_end + 1, "<mujoco><compiler meshdir=\"" + mesh_dir +
                               "\" discardvisual=\"true\" fusestatic=\"false\" balanceinertia=\"false\"/></mujoco>");
  write_text(tmp + ".urdf", out);
  char err[1000] = "";
  mjModel* m = mj_loadXML((tmp + ".urdf").c_str(), nullptr, err, sizeof(err));
  if (!m) throw std::runtime_error(std::string("MuJoCo cannot compile the URDF: ") + err);
  if (!mj_saveLastXML((tmp + ".xml").c_str(), m, err, sizeof(err))) {
    mj_deleteModel(m);
    throw std::runtime_error(std::string("MuJoCo cannot save the MJCF: ") + err);
  }
  std::string actuators;
  for (int j = 0; j < m->njnt; ++j) {
    actuators += "<position joint=\"" + std::string(mj_id2name(m, mjOBJ_JOINT, j)) + "\" kp=\"" +
                 std::to_string(scenarios::kSolo12Kp) + "\"/>";
  }
  mj_deleteModel(m);
  std::string xml = read_text(tmp + ".xml");
  // the saved MJCF names the meshes relative to meshdir: keep it
  replace_once(xml, "<default/>", "<option timestep=\"0.001\"/><default><joint damping=\"" +
                                       std::to_string(scenarios::kSolo12Kd) + "\"/><geom friction=\"" +
                                       std::to_string(kMu) + " 0.005 0.0001\"/></default>");
  const auto base = xml.find("<body name=\"base_link\"");
  if (base == std::string::npos) throw std::runtime_error("MJCF wrapper: no base_link body");
  xml.insert(xml.find('>', base) + 1, "<freejoint name=\"root\"/>");
  replace_once(xml, "</worldbody>", "<geom name=\"floor\" type=\"plane\" size=\"0 0 1\"/></worldbody>");
  replace_once(xml, "</mujoco>", "<actuator>" + actuators + "</actuator></mujoco>");
  return xml;
}

// Solo12 standing in both engines, interleaved in blocks of kBlock steps; `reps` runs. Prints the
// median over runs of the mean us per step, the ratio, contacts per step and the most contacts of
// one touching pair (Impulse: body and ground; MuJoCo: geom pairs summed per body and ground).
int run_solo12(long steps, int reps, const std::string& tmp) {
  std::string urdf;
  try {
    urdf = scenarios::solo12_urdf_path();
  } catch (const Error& e) {
    std::cout << "solo12: skipped: " << e.what() << "\n";
    return 0;
  }
  write_text(tmp + "_solo12.xml", mujoco_solo12_xml(urdf, tmp));
  std::vector<double> ti, tm, ratio, ti_med, tm_med, ratio_med;
  double con_i = 0, con_m = 0, pair_i = 0, pair_m = 0;
  bool fell_i = false, fell_m = false;
  for (int r = 0; r < reps; ++r) {
    World world;
    world.set_time_step(kDt);
    ArticulatedSystem& robot = scenarios::add_solo12_standing(world);
    const Model& model = robot.model();
    char err[1000] = "";
    mjModel* m = mj_loadXML((tmp + "_solo12.xml").c_str(), nullptr, err, sizeof(err));
    if (!m) throw std::runtime_error(std::string("MuJoCo cannot load the wrapped MJCF: ") + err);
    mjData* d = mj_makeData(m);
    const int floor = mj_name2id(m, mjOBJ_GEOM, "floor");
    for (int g = 0; g < m->ngeom; ++g) {
      m->geom_contype[g] = g == floor ? 2 : 1;
      m->geom_conaffinity[g] = g == floor ? 1 : 2;
    }
    // the same initial state and targets: base pose and joints by name
    const VecX& q0 = robot.q();
    for (int k = 0; k < 7; ++k) d->qpos[k] = q0[k];
    for (Index i = 1; i < model.nb; ++i) {
      if (model.nq_joint[i] != 1) continue;
      const std::string& jn = model.joint_names[static_cast<std::size_t>(i)];
      const int j = mj_name2id(m, mjOBJ_JOINT, jn.c_str());
      const int a = mj_name2id(m, mjOBJ_ACTUATOR, jn.c_str());
      if (j < 0) throw std::runtime_error("MuJoCo model: no joint " + jn);
      d->qpos[m->jnt_qposadr[j]] = q0[model.idx_q[i]];
      for (int k = 0; k < m->nu; ++k) {
        if (m->actuator_trnid[2 * k] == j) d->ctrl[k] = q0[model.idx_q[i]];
      }
      (void)a;
    }
    mj_forward(m, d);
    const int base = mj_name2id(m, mjOBJ_BODY, "base_link");
    double si = 0, sm = 0;
    long ci = 0, cm = 0;
    std::vector<double> bi, bm;  // us per step
    bi.reserve(static_cast<std::size_t>(steps));
    bm.reserve(static_cast<std::size_t>(steps));
    for (long k0 = 0; k0 < steps; k0 += kBlock) {
      const long n = std::min<long>(kBlock, steps - k0);
      for (int o = 0; o < 2; ++o) {
        const bool impulse_turn = ((k0 / kBlock) % 2 == 0) == (o == 0);
        double t = 0;
        for (long k = 0; k < n; ++k) {
          const bench::Stopwatch<> watch;
          if (impulse_turn) {
            world.integrate();
          } else {
            mj_step(m, d);
          }
          const double dt_step = watch.seconds();
          t += dt_step;
          (impulse_turn ? bi : bm).push_back(1e6 * dt_step);
          if (impulse_turn) {
            ci += world.contacts().size();
            std::map<std::array<Index, 4>, int> pairs;
            for (const Contact& c : world.contacts()) ++pairs[{c.object_a, c.body_a, c.object_b, c.body_b}];
            for (const auto& pc : pairs) pair_i = std::max<double>(pair_i, pc.second);
          } else {
            cm += d->ncon;
            std::map<std::pair<int, int>, int> pairs;
            for (int c = 0; c < d->ncon; ++c) {
              ++pairs[{m->geom_bodyid[d->contact[c].geom1], m->geom_bodyid[d->contact[c].geom2]}];
            }
            for (const auto& pc : pairs) pair_m = std::max<double>(pair_m, pc.second);
          }
        }
        (impulse_turn ? si : sm) += t;
      }
    }
    ti.push_back(1e6 * si / static_cast<double>(steps));
    tm.push_back(1e6 * sm / static_cast<double>(steps));
    ti_med.push_back(median(bi));
    tm_med.push_back(median(bm));
    ratio.push_back(tm.back() / ti.back());
    ratio_med.push_back(tm_med.back() / ti_med.back());
    con_i = static_cast<double>(ci) / static_cast<double>(steps);
    con_m = static_cast<double>(cm) / static_cast<double>(steps);
    fell_i = robot.q()[2] < 0.1;
    fell_m = d->xpos[3 * base + 2] < 0.1;
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  std::cout << std::fixed << std::setprecision(2) << "solo12 stand (meshes as convex hulls in both), " << steps
            << " steps, interleaved blocks of " << kBlock << ", median of " << reps << " runs:\n"
            << "  us/step mean     Impulse " << median(ti) << "  MuJoCo " << median(tm) << "  ratio "
            << median(ratio) << "\n"
            << "  us/step median   Impulse " << median(ti_med) << "  MuJoCo " << median(tm_med) << "  ratio "
            << median(ratio_med) << "  (median over the steps of a run; on a loaded machine the means carry\n"
            << "                   the preemptions of either engine, the medians do not)\n"
            << "  contacts/step    Impulse " << con_i << "  MuJoCo " << con_m << "\n"
            << "  most contacts of one body-ground pair: Impulse " << pair_i << "  MuJoCo " << pair_m << "\n"
            << "  fell             Impulse " << (fell_i ? "yes" : "no") << "  MuJoCo " << (fell_m ? "yes" : "no")
            << "\n";
  std::filesystem::remove_all(tmp + "_meshes");
  std::remove((tmp + "_solo12.xml").c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  long steps = 5000;
  int reps = 3;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--steps" && i + 1 < argc) {
      steps = std::stol(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::cerr << "usage: impulse_peers [--steps N (5000)] [--reps R (3)] [--only stand|trot|landing|air|solo12]\n";
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (steps < kBlock || reps < 1) {
    std::cerr << "error: --steps must be >= " << kBlock << " and --reps >= 1\n";
    return 2;
  }
  try {
    const std::string tmp = "/tmp/impulse_peers_" + std::to_string(::getpid());
    write_text(tmp + "_wrapped.xml", mujoco_xml(scenarios::anymal_urdf_path(), tmp));
    const Scalar h = scenarios::anymal_nominal_height();
    std::mt19937 rng(11);
    std::normal_distribution<double> n(0.0, 1.0);
    const double qz = n(rng), qy = n(rng), qx = n(rng), qw = n(rng);  // a fixed order (g++'s)
    const Quat R_air = Quat(qw, qx, qy, qz).normalized();
    const std::vector<Scene> scenes = {
        {"stand", Vec3(0, 0, h), Quat::Identity(), Vec3::Zero(), true},
        {"trot", Vec3(0, 0, h), Quat::Identity(), Vec3::Zero(), true},
        {"landing", Vec3(0, 0, 1.0), Quat::Identity(), Vec3(1, 0, 0), true},
        {"air", Vec3(0, 0, 20.0 + 0.5 * 9.81 * std::pow(steps * kDt, 2)), R_air, Vec3::Zero(), false},
    };
    std::cout << "ANYmal, Impulse vs MuJoCo " << mj_versionString() << ", 1 ms steps, " << steps
              << " steps per scene, interleaved blocks of " << kBlock << ", median of " << reps << " runs\n";
    std::cout << std::left << std::setw(9) << "scene" << std::right << std::setw(10) << "Impulse" << std::setw(10)
              << "MuJoCo" << std::setw(8) << "ratio" << std::setw(9) << "con I" << std::setw(9) << "con M"
              << std::setw(11) << "pen I um" << std::setw(11) << "pen M um" << std::setw(12) << "maxpen I"
              << std::setw(12) << "maxpen M" << std::setw(10) << "slip I" << std::setw(10) << "slip M"
              << std::setw(8) << "fell I" << std::setw(8) << "fell M" << "\n";
    for (const Scene& sc : scenes) {
      if (!only.empty() && only != sc.name) continue;
      std::vector<double> ti, tm, ratio;
      Figures fi, fm;
      for (int r = 0; r < reps; ++r) {
        ImpulseEngine imp;
        MujocoEngine mjc(tmp + "_wrapped.xml");
        fi = Figures();
        fm = Figures();
        run_scene(sc, steps, imp, mjc, fi, fm);
        ti.push_back(fi.us());
        tm.push_back(fm.us());
        ratio.push_back(fm.us() / fi.us());
      }
      auto mm = [](const Figures& f) { return f.pen_n ? 1e6 * f.pen_sum / f.pen_n : 0.0; };
      auto slip = [](const Figures& f) { return f.slip_n ? f.slip_sum / f.slip_n : 0.0; };
      std::cout << std::left << std::setw(9) << sc.name << std::right << std::fixed << std::setprecision(2)
                << std::setw(10) << median(ti) << std::setw(10) << median(tm) << std::setw(8) << median(ratio)
                << std::setprecision(2) << std::setw(9) << fi.contacts / fi.steps << std::setw(9)
                << fm.contacts / fm.steps << std::setprecision(1) << std::setw(11) << mm(fi) << std::setw(11) << mm(fm)
                << std::setw(12) << 1e6 * fi.pen_max << std::setw(12) << 1e6 * fm.pen_max << std::setprecision(3)
                << std::setw(10) << slip(fi) << std::setw(10) << slip(fm) << std::setw(8)
                << (sc.ground ? (fi.fell ? "yes" : "no") : "-") << std::setw(8)
                << (sc.ground ? (fm.fell ? "yes" : "no") : "-") << "\n";
    }
    std::cout << "times in us per step; ratio = MuJoCo / Impulse (median of the per-run ratios); con = contacts per "
                 "step; pen = mean foot penetration over steps with penetration, maxpen its max (um); slip = mean "
                 "horizontal speed of feet within 1 mm of the ground (m/s)\n";
    if (only.empty() || only == "solo12") run_solo12(steps, reps, tmp);
    std::remove((tmp + ".urdf").c_str());
    std::remove((tmp + ".xml").c_str());
    std::remove((tmp + "_wrapped.xml").c_str());
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
