// `impulse view WORLD.xml | RECORDING [--port N] [--speed S] [--mp4 OUT.mp4]`: a local web server
// (cpp-httplib, 127.0.0.1 only) serving the viewer page (viewer/, bundled at build time) and
// the data it draws. docs/viewer.md describes the page and the HTTP interface:
//   live mode (a world file): the simulation runs in a thread at `speed` x real time; the page
//     polls the latest frame (the recording's frame layout, docs/recording.md) and sends
//     pause / run / step / reset / speed and mouse pushes (an external force on a body);
//   replay mode (a recording): the page fetches the plot series and the frames it shows, in
//     pieces, and scrubs them itself;
//   --mp4: replay rendered by headless Chromium frame by frame, piped into ffmpeg.
#include <fcntl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/record/recording.hpp"
#include "impulse/world/world_file.hpp"

#if IMPULSE_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace impulse::cli {

namespace {

struct ViewOptions {
  std::string target;
  int port = 8080;
  double speed = 1.0;
  std::string mp4;
  int fps = 30;
  int width = 1280, height = 720;
  std::string chromium = "chromium";
  bool paused = false;
};

#if IMPULSE_HAVE_HTTPLIB

// Appends the values as little-endian binary (the machines we build for are little-endian, as the
// recording format is).
template <typename T>
void append_floats(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Sends `bytes` (which must outlive the response) as they are. cpp-httplib compresses a text or
// JSON body with brotli at its highest quality whenever the browser accepts brotli (Debian builds
// it with brotli): the 590 kB viewer.js took 1.0 s to reach Chromium instead of 4 ms, and the page
// took 1.3 s to start. A response from a content provider of known length is not compressed.
// `keep` holds the bytes alive until the response is sent, when they are made for it.
void send(httplib::Response& res, std::string_view bytes, const char* type, std::shared_ptr<const void> keep = nullptr) {
  res.set_content_provider(bytes.size(), type,
                           [bytes, keep](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             return sink.write(bytes.data() + offset, std::min<std::size_t>(length, std::size_t{1} << 20));
                           });
}
// The same for bytes made for this one response.
void send(httplib::Response& res, std::string&& bytes, const char* type) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  send(res, *owned, type, owned);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Where the bundled page is: $IMPULSE_VIEWER_DIR, else the build tree's (set by viewer/CMakeLists.txt).
std::string viewer_dir() {
  if (const char* env = std::getenv("IMPULSE_VIEWER_DIR")) return env;
#ifdef IMPULSE_VIEWER_DIR
  return IMPULSE_VIEWER_DIR;
#else
  return "";
#endif
}

using Clock = std::chrono::steady_clock;

// The live simulation: a World built from a world file, stepped in its own thread at `speed`
// times real time (as fast as it can when the machine is slower). All access under `mutex`.
class LiveSim {
 public:
  LiveSim(const std::string& path, double speed, bool paused)
      : description_(parse_world_file(path)), speed_(speed), paused_(paused) {
    build();
  }
  ~LiveSim() { stop(); }

  void start() { thread_ = std::thread([this] { loop(); }); }
  void stop() {
    quit_ = true;
    if (thread_.joinable()) thread_.join();
  }

  std::string scene() {
    std::lock_guard<std::mutex> lock(mutex_);
    return scene_;
  }
  // The latest frame; its own mutex, so a request never waits for a batch of steps.
  std::string frame() {
    client_ = true;  // the clock starts with the first page, so nobody misses the beginning
    std::lock_guard<std::mutex> lock(frame_mutex_);
    return frame_;
  }
  json status() {
    std::lock_guard<std::mutex> lock(mutex_);
    json j;
    j["mode"] = "live";
    j["time"] = world_->time();
    j["steps"] = steps_;
    j["paused"] = paused_;
    j["speed"] = speed_;
    j["real_time_factor"] = rtf_;
    j["frames_served"] = served_;
    j["error"] = error_;
    return j;
  }
  void count_served() { ++served_; }

  // pause, run, step, reset; speed > 0
  std::string control(const std::string& cmd, double speed) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (speed > 0) speed_ = speed;
    if (cmd == "pause") {
      paused_ = true;
    } else if (cmd == "run") {
      paused_ = false;
      error_.clear();
    } else if (cmd == "step") {
      paused_ = true;
      step_locked();
      publish_locked();
    } else if (cmd == "reset") {
      build();
    } else if (!cmd.empty()) {
      return "unknown command '" + cmd + "' (pause, run, step, reset)";
    }
    return "";
  }

  // A force (world frame, N) at a point of a body given in the body frame, for `seconds`.
  std::string push(int system, int body, const Vec3& force, const Vec3& point_B, double seconds) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (system < 0 || system >= world_->num_systems()) return "no system " + std::to_string(system);
    if (body < 0 || body >= world_->system(system).model().nb) return "no body " + std::to_string(body);
    if (!force.allFinite() || !point_B.allFinite() || !(seconds >= 0) || seconds > 10) return "bad push values";
    const double mg = world_->system(system).model().total_mass() * 9.81;
    push_ = Push{system, body, force.norm() > 5 * mg ? Vec3(force.normalized() * 5 * mg) : force, point_B,
                 world_->time() + seconds};
    return "";
  }

 private:
  struct Push {
    int system = -1, body = -1;
    Vec3 force = Vec3::Zero(), point_B = Vec3::Zero();
    double until = -1;
  };

  void build() {
    world_ = std::make_unique<World>();
    build_world(description_, *world_);
    encoder_ = std::make_unique<FrameEncoder>(*world_);
    scene_ = scene_json(*world_);
    steps_ = 0;
    push_ = Push();
    error_.clear();
    publish_locked();
  }

  // Encodes the current state as the latest frame (once per batch of steps, not per step: the
  // encoder runs kinematics and energies of every system).
  void publish_locked() {
    const auto& f = encoder_->encode(*world_, static_cast<std::uint64_t>(steps_));
    std::lock_guard<std::mutex> lock(frame_mutex_);
    frame_.assign(f.begin(), f.end());
  }

  void step_locked() {
    if (push_.system >= 0 && world_->time() < push_.until) {
      ArticulatedSystem& s = world_->system(push_.system);
      s.set_external_force(push_.body, push_.force, s.body_pose(push_.body).act_point(push_.point_B));
    }
    const StepStatus st = world_->integrate();
    ++steps_;
    if (st == StepStatus::NonFinite) {
      paused_ = true;
      error_ = "the state became non-finite at t = " + std::to_string(world_->time()) + " s; paused (reset to restart)";
    }
  }

  void loop() {
    auto last = Clock::now();
    double budget = 0;  // simulated seconds owed
    double window_wall = 0, window_sim = 0;
    while (!quit_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      const auto now = Clock::now();
      const double wall = std::chrono::duration<double>(now - last).count();
      last = now;
      std::lock_guard<std::mutex> lock(mutex_);
      if (paused_ || !client_) {
        budget = 0;
        continue;
      }
      const double dt = world_->time_step();
      budget += wall * speed_;
      // at most 50 ms of wall time per batch, so the server stays responsive when slower than real time
      const auto t0 = Clock::now();
      double simulated = 0;
      while (budget >= dt && !paused_ && std::chrono::duration<double>(Clock::now() - t0).count() < 0.05) {
        step_locked();
        budget -= dt;
        simulated += dt;
      }
      if (simulated > 0) publish_locked();
      if (budget > 0.1 * speed_) budget = 0;  // behind: drop the debt rather than run ever faster
      window_wall += wall;
      window_sim += simulated;
      if (window_wall > 0.5) {
        rtf_ = window_sim / window_wall;
        window_wall = window_sim = 0;
      }
    }
  }

  WorldDescription description_;
  std::unique_ptr<World> world_;
  std::unique_ptr<FrameEncoder> encoder_;
  std::string scene_;
  std::string frame_;
  std::mutex frame_mutex_;
  long steps_ = 0;
  double speed_ = 1;
  bool paused_ = false;
  double rtf_ = 0;
  long served_ = 0;
  std::string error_;
  Push push_;
  std::mutex mutex_;
  std::thread thread_;
  std::atomic<bool> quit_{false};
  std::atomic<bool> client_{false};
};

json frame_json(const RecordedFrame& f) {
  json j;
  j["step"] = f.step;
  j["time"] = f.time;
  j["iterations"] = f.iterations;
  j["residual"] = f.residual;
  json systems = json::array();
  for (std::size_t s = 0; s < f.poses.size(); ++s) {
    json poses = json::array();
    for (const SE3& X : f.poses[s]) {
      const Quat q(X.R);
      poses.push_back({X.p.x(), X.p.y(), X.p.z(), q.w(), q.x(), q.y(), q.z()});
    }
    systems.push_back({{"poses", poses},
                       {"q", std::vector<double>(f.q[s].data(), f.q[s].data() + f.q[s].size())},
                       {"kinetic", f.kinetic[s]},
                       {"potential", f.potential[s]}});
  }
  j["systems"] = systems;
  json contacts = json::array();
  for (const auto& c : f.contacts) {
    contacts.push_back({{"position", {c.position.x(), c.position.y(), c.position.z()}},
                        {"impulse", {c.impulse.x(), c.impulse.y(), c.impulse.z()}}});
  }
  j["contacts"] = contacts;
  return j;
}

// Headless Chromium on `url` (its own profile directory), as a child process; returns its pid.
pid_t spawn_chromium(const ViewOptions& o, const std::string& url, const std::string& profile) {
  const std::string size = "--window-size=" + std::to_string(o.width) + "," + std::to_string(o.height);
  const std::string user = "--user-data-dir=" + profile;
  std::vector<std::string> args = {o.chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
                                   "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--no-first-run",
                                   "--disable-extensions", "--mute-audio", size, user, url};
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int null = ::open("/dev/null", 0);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    execvp(argv[0], argv.data());
    _exit(127);
  }
  if (pid < 0) throw Error("--mp4: cannot start " + o.chromium);
  return pid;
}

// Renders a recording to an MP4: the page (render mode) draws frame i at time i / fps, posts the
// canvas as PNG to /api/render/frame; the frames go to ffmpeg's stdin; /api/render/done ends.
int render_mp4(const ViewOptions& o, const RecordingReader& rec, httplib::Server& server, int port) {
  const std::string cmd = "ffmpeg -hide_banner -loglevel error -y -f image2pipe -framerate " + std::to_string(o.fps) +
                          " -i - -vf \"scale=trunc(iw/2)*2:trunc(ih/2)*2\" -c:v libx264 -pix_fmt yuv420p -movflags +faststart '" + o.mp4 + "'";
  if (o.mp4.find('\'') != std::string::npos) throw UsageError("--mp4: the file name must not contain a quote");
  std::FILE* ffmpeg = popen(cmd.c_str(), "w");
  if (!ffmpeg) throw Error("--mp4: cannot start ffmpeg (install the Debian package ffmpeg)");
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  long frames = 0, total = -1;
  std::string error;
  auto last = Clock::now();
  server.Post("/api/render/frame", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(m);
    if (std::fwrite(req.body.data(), 1, req.body.size(), ffmpeg) != req.body.size()) error = "ffmpeg stopped";
    ++frames;
    last = Clock::now();
    if (frames % 30 == 0) std::cerr << "\r  rendered " << frames << " frames" << std::flush;
    res.set_content("{}", "application/json");
  });
  server.Post("/api/render/done", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(m);
    if (!req.body.empty()) total = std::atol(req.body.c_str());
    done = true;
    cv.notify_all();
    res.set_content("{}", "application/json");
  });
  server.Post("/api/render/error", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> lock(m);
    error = "the page reported: " + req.body;
    done = true;
    cv.notify_all();
    res.set_content("{}", "application/json");
  });
  std::thread http([&] { server.listen_after_bind(); });
  char profile[] = "/tmp/impulse-chromium-XXXXXX";
  if (!mkdtemp(profile)) throw Error("--mp4: cannot create a temporary directory");
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/?render=1&fps=" + std::to_string(o.fps) +
                          "&width=" + std::to_string(o.width) + "&height=" + std::to_string(o.height);
  std::cerr << "rendering " << rec.num_frames() << " recorded frames to " << o.mp4 << " via " << url << "\n";
  const pid_t chromium = spawn_chromium(o, url, profile);
  {
    std::unique_lock<std::mutex> lock(m);
    while (!done) {
      cv.wait_for(lock, std::chrono::seconds(1));
      if (!done && std::chrono::duration<double>(Clock::now() - last).count() > 60) {
        error = frames == 0 ? "no frame from headless Chromium within 60 s (is WebGL available? try --chromium PATH)"
                            : "headless Chromium stopped sending frames";
        done = true;
      }
      int st = 0;
      if (!done && waitpid(chromium, &st, WNOHANG) == chromium) {
        error = "headless Chromium exited before the video was complete";
        done = true;
      }
    }
  }
  kill(chromium, SIGTERM);
  waitpid(chromium, nullptr, 0);
  server.stop();
  http.join();
  // Chromium's helper processes may still be cleaning the profile after the browser exits, so a
  // file can vanish during the removal (remove_all then threw and failed a finished video): retry
  // without throwing, and leave what remains of a temporary folder rather than fail.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::error_code ec;
    std::filesystem::remove_all(profile, ec);
    if (!ec && !std::filesystem::exists(profile, ec)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int rc = pclose(ffmpeg);
  std::cerr << "\n";
  if (!error.empty()) throw Error("--mp4: " + error);
  if (rc != 0) throw Error("--mp4: ffmpeg failed (exit " + std::to_string(rc) + ")");
  if (total >= 0 && total != frames) throw Error("--mp4: " + std::to_string(frames) + " of " + std::to_string(total) +
                                                 " frames arrived");
  std::cout << o.mp4 << ": " << frames << " frames at " << o.fps << " fps\n";
  return 0;
}

int run_view(const ViewOptions& o) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed browser tab or a dead ffmpeg is an error, not a crash
  const std::string dir = viewer_dir();
  const std::string page = dir.empty() ? "" : read_file(dir + "/index.html");
  const std::string script = dir.empty() ? "" : read_file(dir + "/viewer.js");
  if (page.empty() || script.empty()) {
    throw Error(
        "the viewer page was not built: configure with node, npm and esbuild installed "
        "(scripts/install-deps.sh), or set IMPULSE_VIEWER_DIR to a directory holding index.html and viewer.js");
  }
  if (o.speed <= 0 || o.speed > 1000) throw UsageError("--speed must be in (0, 1000]");
  // a regular file with the recording magic (a FIFO or device is not opened: the world-file loader
  // then rejects it)
  const bool replay = is_recording_file(o.target);
  if (!o.mp4.empty() && !replay) throw UsageError("--mp4 needs a recording (impulse run|demo ... --record FILE)");

  std::unique_ptr<RecordingReader> rec;
  std::unique_ptr<LiveSim> live;
  if (replay) {
    rec = std::make_unique<RecordingReader>(o.target);
    if (rec->dropped_bytes() > 0) std::cerr << "warning: " << rec->dropped_warning() << "\n";
    if (rec->num_frames() == 0) throw Error("recording '" + o.target + "' has no frames");
  } else {
    live = std::make_unique<LiveSim>(o.target, o.speed, o.paused);
  }

  httplib::Server server;
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which lets a second viewer share
  // a busy port (and steal half of its connections) instead of reporting it
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  for (const char* path : {"/", "/index.html"}) {
    server.Get(path, [&page](const httplib::Request&, httplib::Response& res) { send(res, page, "text/html"); });
  }
  server.Get("/viewer.js", [&script](const httplib::Request&, httplib::Response& res) {
    send(res, script, "text/javascript");
  });
  auto reply_error = [](httplib::Response& res, const std::string& e, int status = 400) {
    res.status = status;
    res.set_content(json{{"error", e}}.dump(), "application/json");
  };
  server.Get("/api/info", [&](const httplib::Request&, httplib::Response& res) {
    json j;
    j["mode"] = replay ? "replay" : "live";
    j["source"] = o.target;
    j["speed"] = o.speed;
    if (replay) {
      j["frames"] = rec->num_frames();
      j["bytes"] = rec->bytes().size();
      j["dt"] = rec->dt();
      j["sensor_floats"] = rec->sensor_floats();
    }
    res.set_content(j.dump(), "application/json");
  });
  server.Get("/api/scene", [&](const httplib::Request&, httplib::Response& res) {
    if (replay) return send(res, rec->scene(), "application/json");
    send(res, live->scene(), "application/json");
  });
  server.Get("/api/recording", [&](const httplib::Request&, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode has no recording", 404);
    // from the file's bytes in memory, without a copy (75 MB: 0.03-0.17 s instead of 0.36 s)
    send(res, rec->bytes(), "application/octet-stream");
  });
  // The plot series of every frame, computed once (docs/viewer.md, /api/series): u32 n, u32 0,
  // then time as n float64 and kinetic, potential, contacts, normal force, iterations, residual
  // and penetration as n float32 each (3.6 MB for 100k frames, against 75 MB for the file).
  std::once_flag series_once;
  std::string series_bytes;
  server.Get("/api/series", [&](const httplib::Request&, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode has no series", 404);
    std::call_once(series_once, [&]() {
      const RecordingSeries s = rec->series();
      const std::uint32_t head[2] = {static_cast<std::uint32_t>(s.time.size()), 0};
      series_bytes.append(reinterpret_cast<const char*>(head), sizeof(head));
      append_floats(series_bytes, s.time);
      for (const auto* v : {&s.kinetic, &s.potential, &s.contacts, &s.normal_force, &s.iterations, &s.residual,
                            &s.max_penetration}) {
        append_floats(series_bytes, *v);
      }
    });
    send(res, series_bytes, "application/octet-stream");
  });
  // One dof of one system over every frame: q, u and tau as n float32 each.
  server.Get("/api/dof", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode has no series", 404);
    auto num = [&](const char* k) { return req.has_param(k) ? std::atoi(req.get_param_value(k).c_str()) : -1; };
    try {
      const DofSeries d = rec->dof_series(num("system"), num("iq"), num("iv"));
      std::string out;
      for (const auto* v : {&d.q, &d.u, &d.tau}) append_floats(out, *v);
      send(res, std::move(out), "application/octet-stream");
    } catch (const Error& e) {
      reply_error(res, e.what(), 404);
    }
  });
  // Frames [from, from + count) as stored in the file, one after the other (the page fetches the
  // frames it shows in pieces, instead of the whole file).
  server.Get("/api/frames", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode serves /api/frame", 404);
    const long from = req.has_param("from") ? std::atol(req.get_param_value("from").c_str()) : -1;
    const long count = req.has_param("count") ? std::atol(req.get_param_value("count").c_str()) : 0;
    if (from < 0 || count <= 0) return reply_error(res, "frames need from >= 0 and count > 0", 404);
    try {
      const auto bytes = rec->frames_bytes(static_cast<std::size_t>(from), static_cast<std::size_t>(count));
      send(res, std::string_view(bytes.first, bytes.second), "application/octet-stream");
    } catch (const Error& e) {
      reply_error(res, e.what(), 404);
    }
  });
  server.Get("/api/frame", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) {
      const long k = req.has_param("k") ? std::atol(req.get_param_value("k").c_str()) : 0;
      if (k < 0 || k >= static_cast<long>(rec->num_frames())) return reply_error(res, "frame index out of range", 404);
      send(res, std::string_view(rec->frame_data(static_cast<std::size_t>(k)), rec->frame_size(static_cast<std::size_t>(k))),
           "application/octet-stream");
      return;
    }
    std::string f = live->frame();
    live->count_served();
    res.set_header("Cache-Control", "no-store");
    send(res, std::move(f), "application/octet-stream");
  });
  server.Get("/api/frame.json", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "frame.json is for recordings", 404);
    const long k = req.has_param("k") ? std::atol(req.get_param_value("k").c_str()) : 0;
    if (k < 0 || k >= static_cast<long>(rec->num_frames())) return reply_error(res, "frame index out of range", 404);
    send(res, frame_json(rec->frame(static_cast<std::size_t>(k))).dump(), "application/json");
  });
  server.Get("/api/status", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(replay ? json{{"mode", "replay"}}.dump() : live->status().dump(), "application/json");
  });
  server.Post("/api/control", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) {
      const std::string cmd = req.has_param("cmd") ? req.get_param_value("cmd") : "";
      const double speed = req.has_param("speed") ? std::atof(req.get_param_value("speed").c_str()) : 0;
      if (speed < 0 || speed > 1000) return reply_error(res, "speed must be in (0, 1000]");
      const std::string e = live->control(cmd, speed);
      if (!e.empty()) return reply_error(res, e);
      res.set_content(live->status().dump(), "application/json");
    } else {
      reply_error(res, "replay is controlled by the page", 404);
    }
  });
  server.Post("/api/push", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) return reply_error(res, "pushing needs live mode", 404);
    auto num = [&](const char* k) { return req.has_param(k) ? std::atof(req.get_param_value(k).c_str()) : 0.0; };
    const std::string e = live->push(static_cast<int>(num("system")), static_cast<int>(num("body")),
                                     Vec3(num("fx"), num("fy"), num("fz")), Vec3(num("px"), num("py"), num("pz")),
                                     req.has_param("seconds") ? num("seconds") : 0.1);
    if (!e.empty()) return reply_error(res, e);
    res.set_content("{}", "application/json");
  });

  int port = o.port;
  if (port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
  } else if (!server.bind_to_port("127.0.0.1", port)) {
    port = -1;
  }
  if (port <= 0) {
    throw Error("cannot listen on 127.0.0.1:" + std::to_string(o.port) + " (in use? pass --port 0 for any free port)");
  }
  if (!o.mp4.empty()) return render_mp4(o, *rec, server, port);

  if (live) live->start();
  std::cout << "impulse view: http://127.0.0.1:" << port << "/  (" << (replay ? "replay of " : "live: ") << o.target
            << "; Ctrl-C to stop)" << std::endl;
  server.listen_after_bind();
  if (live) live->stop();
  return 0;
}

#else

int run_view(const ViewOptions&) {
  throw Error("impulse was built without cpp-httplib, so `view` is disabled: install libcpp-httplib-dev "
              "(scripts/install-deps.sh) and reconfigure");
}

#endif

}  // namespace

void add_view_command(CLI::App& app, Runner& run) {
  auto o = std::make_shared<ViewOptions>();
  auto* c = app.add_subcommand("view", "Show a world live, or replay a recording, in the browser (docs/viewer.md)");
  c->add_option("target", o->target, "World file (XML: live simulation) or recording (--record FILE: replay)")
      ->required()
      ->check(CLI::ExistingFile);
  c->add_option("--port", o->port, "TCP port on 127.0.0.1 (default 8080; 0: any free port)")
      ->check(CLI::Range(0, 65535));
  c->add_option("--speed", o->speed, "Live mode: simulated seconds per wall-clock second (default 1)");
  c->add_flag("--paused", o->paused, "Live mode: start paused");
  c->add_option("--mp4", o->mp4, "Render the recording to this MP4 file (headless Chromium + ffmpeg) and exit");
  c->add_option("--fps", o->fps, "--mp4: frames per second (default 30)")->check(CLI::Range(1, 240));
  c->add_option("--width", o->width, "--mp4: video width (default 1280)")->check(CLI::Range(64, 7680));
  c->add_option("--height", o->height, "--mp4: video height (default 720)")->check(CLI::Range(64, 4320));
  c->add_option("--chromium", o->chromium, "--mp4: the Chromium executable (default chromium)");
  c->callback([o, &run]() { run = [o]() { return run_view(*o); }; });
}

}  // namespace impulse::cli
