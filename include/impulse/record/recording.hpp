// Recordings of a run: the scene description once, then one frame per recorded step (poses of
// every body, contacts with impulses, joint states, energies, solver figures, and the readings
// of the sensors given to the Recorder). The binary layout
// (version 2, little-endian) is documented in docs/recording.md; python/impulse_viz/recording.py
// and the viewer's page (viewer/src/recording.js) read the same bytes.
//
//   World world; ...
//   Recorder rec("run.imprec", world);       // writes the header and the scene
//   for (...) { world.integrate(); rec.record(world); }
//   rec.close();                              // or let the destructor close it
//
// The module sits above world/ and only reads the World through its public API. Recording is
// outside World::integrate(): it allocates (contact reports) and does I/O, so it is not part of
// the allocation-free step.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "impulse/dynamics/data.hpp"
#include "impulse/world/world.hpp"

namespace impulse {

// Constants of the binary layout (docs/recording.md).
namespace record {
constexpr char kMagic[8] = {'I', 'M', 'P', 'R', 'E', 'C', '\r', '\n'};
constexpr std::uint32_t kVersion = 2;  // 2: sensor readings (1 is still read)
constexpr std::uint32_t kHeaderBytes = 40;    // before the system sizes and the scene JSON
constexpr std::uint32_t kFramePrefixBytes = 48;
constexpr std::uint32_t kContactBytes = 56;
}  // namespace record

class Imu;
class JointSensor;
class ContactSensor;
class ForceTorqueSensor;
class HeightScan;

// One recorded sensor: a name unique in the recording, a type, one label per value, and `read`,
// which writes fields.size() values (called once per frame; must not allocate).
struct SensorChannel {
  std::string name, type;
  std::vector<std::string> fields;
  std::function<void(float*)> read;
};

// The sensors a recording carries (docs/recording.md, "Scene"). Each frame holds their readings
// as they are when record() runs: update the sensors after the step and before record(). The
// sensors must outlive the Recorder. add() throws InvalidArgument for a name already used.
class RecordedSensors {
 public:
  void add(const std::string& name, const Imu& imu);               // acc_x, acc_y, acc_z, gyro_x, gyro_y, gyro_z
  void add(const std::string& name, const JointSensor& joints);    // q:<joint>..., u:<joint>..., tau:<joint>...
  void add(const std::string& name, const ContactSensor& contact); // count, force_x..z, normal_x..z
  void add(const std::string& name, const ForceTorqueSensor& ft);  // force_x..z, torque_x..z
  void add(const std::string& name, const HeightScan& scan);       // x<k>, y<k>, z<k> per ray (NaN: no hit)
  void add(SensorChannel channel);                                  // any other reading
  const std::vector<SensorChannel>& channels() const { return channels_; }
  std::uint32_t floats() const;  // values per frame, all channels

 private:
  std::vector<SensorChannel> channels_;
};

// The scene of a World as one JSON object (docs/recording.md, "Scene"): time step, gravity, the
// systems with their bodies, joints and collision shapes (meshes inlined as triangles), and the
// static objects (planes, boxes). Meshes that cannot be read are listed without triangles.
std::string scene_json(World& world);
// The same with the recorded sensors listed ("sensors": name, type, fields).
std::string scene_json(World& world, const RecordedSensors& sensors);

// Encodes the current state of a World as one frame (docs/recording.md, "Frame"). One encoder
// per World: it keeps a kinematics workspace per system, sized once.
class FrameEncoder {
 public:
  explicit FrameEncoder(const World& world, RecordedSensors sensors = {});
  // Size of the part of every frame before its contacts.
  std::uint32_t fixed_bytes() const { return fixed_bytes_; }
  // Encodes the World's current state; `step` is the number of steps taken so far.
  const std::vector<char>& encode(const World& world, std::uint64_t step);

 private:
  std::uint32_t fixed_bytes_ = 0;
  std::vector<Data> data_;
  std::vector<Index> object_system_;  // collision object -> system index, -1 for static objects
  RecordedSensors sensors_;
  std::vector<float> sensor_values_;  // scratch, the largest channel
  std::vector<char> buffer_;
};

class Recorder {
 public:
  // Opens `path` for writing and writes the header and the scene. `every` >= 1: record(world)
  // keeps calls every, 2 every, ... (like `impulse run --csv --every`). Throws Error naming the file when
  // it cannot be written. Turns the World's stage timers on: each frame carries the step's wall time.
  Recorder(const std::string& path, World& world, long every = 1, RecordedSensors sensors = {});
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Appends a frame of the World's current state (subject to `every`).
  void record(const World& world);
  // Flushes and closes the file; throws Error when a write failed. Idempotent.
  void close();

  long frames() const { return frames_; }
  std::uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

 private:
  void write(const void* p, std::size_t n);

  std::string path_;
  std::FILE* file_ = nullptr;
  FrameEncoder encoder_;
  long every_ = 1;
  std::uint64_t calls_ = 0;
  long frames_ = 0;
  std::uint64_t bytes_ = 0;
  bool failed_ = false;
};

// A recording read back (C++ side, used by `impulse view` and the tests): the scene JSON and the
// byte offset of every frame; frames are decoded on demand.
struct RecordedContact {
  Vec3 position, normal, impulse;
  Scalar depth = 0;
  int system_a = -1, body_a = -1, system_b = -1, body_b = -1;
};

struct RecordedFrame {
  std::uint64_t step = 0;
  double time = 0;
  std::uint32_t status = 0, iterations = 0, limits = 0;
  float residual = 0, max_penetration = 0, step_us = 0;
  // per system
  std::vector<float> kinetic, potential;
  std::vector<Vec3> com;
  std::vector<std::vector<SE3>> poses;  // [system][body]
  std::vector<VecX> q, u, tau;
  std::vector<float> sensors;  // the recorded sensors' values, in the order of the scene's "sensors"
  std::vector<RecordedContact> contacts;
};

// Figures of every frame of a recording, for plots (impulse view's /api/series): read from each
// frame's fixed part and contacts without decoding the frame.
struct RecordingSeries {
  std::vector<double> time;
  std::vector<float> kinetic, potential;  // J, summed over the systems
  std::vector<float> contacts;            // number of contacts
  std::vector<float> normal_force;        // N: sum over the contacts of impulse . normal / dt
  std::vector<float> iterations, residual, max_penetration;  // solver figures of the step
};

// Position, velocity and effort of one degree of freedom of one system in every frame.
struct DofSeries {
  std::vector<float> q, u, tau;
};

// Whether `path` is a regular file that starts with the recording magic (never blocks: a FIFO or a
// device is not a recording). For choosing between a recording and a world file.
bool is_recording_file(const std::string& path);

class RecordingReader {
 public:
  // Maps the file read-only and checks it against the rules of docs/recording.md ("Validation"):
  // throws Error naming the file, the byte offset and the rule for anything else than a valid
  // recording. A truncated last frame (a run that was killed) is dropped: dropped_bytes() says
  // how many bytes.
  explicit RecordingReader(const std::string& path);

  const std::string& scene() const { return scene_; }
  double dt() const { return dt_; }
  std::size_t num_frames() const { return offsets_.size(); }
  std::string_view bytes() const { return {bytes_.get(), size_}; }
  // Raw bytes of frame k (for streaming to the viewer).
  const char* frame_data(std::size_t k) const { return bytes_.get() + offsets_.at(k); }
  std::uint32_t frame_size(std::size_t k) const;
  // Frames [first, first + count) are one contiguous piece of the file: its start and length.
  // Throws Error if the range is not inside [0, num_frames()).
  std::pair<const char*, std::size_t> frames_bytes(std::size_t first, std::size_t count) const;
  RecordedFrame frame(std::size_t k) const;
  RecordingSeries series() const;
  // Coordinate iq and dof iv of system `system`; throws Error naming the index that is out of range.
  DofSeries dof_series(int system, int iq, int iv) const;
  // Sizes of each system (nb, nq, nv), from the header (the scene agrees: rule 8).
  struct SystemSize {
    int nb = 0, nq = 0, nv = 0;
  };
  const std::vector<SystemSize>& systems() const { return systems_; }
  std::uint32_t version() const { return version_; }
  std::uint32_t sensor_floats() const { return sensor_floats_; }  // sensor values per frame
  std::uint32_t every() const { return every_; }
  // Bytes after the last whole frame (a partial last frame, rule 12), 0 for a complete file.
  std::uint64_t dropped_bytes() const { return dropped_bytes_; }
  // The warning to print when dropped_bytes() > 0 (one line naming the file and the offset).
  std::string dropped_warning() const;

 private:
  std::string path_, scene_;
  double dt_ = 0;
  // the file, mapped read-only (shared by copies of the reader; unmapped with the last one)
  std::shared_ptr<const char> bytes_;
  std::size_t size_ = 0;
  std::uint32_t every_ = 1;
  std::uint64_t dropped_bytes_ = 0;
  std::vector<std::size_t> offsets_;
  std::vector<SystemSize> systems_;
  std::uint32_t version_ = 0, sensor_floats_ = 0;
  std::uint32_t fixed_bytes_ = 0;  // of every frame, before its contacts (from the header)

  // Byte offset of system `system` inside a frame.
  std::size_t system_offset(std::size_t system) const;
};

}  // namespace impulse
