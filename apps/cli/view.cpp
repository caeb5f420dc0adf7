// `impulse view WORLD.xml | RECORDING [--port N] [--speed S] [--mp4 OUT.mp4]`: a local web server
// (cpp-httplib, 127.0.0.1 only) serving the viewer page (viewer/, bundled at build time) and
// the data it draws. docs/viewer.md describes the page and the HTTP interface:
//   live mode (a world file): the simulation runs in a thread at `speed` x real time; the page
//     polls the latest frame (the recording's frame layout, docs/recording.md) and sends
//     pause / run / step / reset / speed and mouse pushes (an external force on a body);
//   replay mode (a recording): the page fetches the plot series and the frames it shows, in
//     pieces, and scrubs them itself;
//   --mp4: replay rendered by headless Chromium frame by frame, piped into ffmpeg.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>
#include <type_traits>

#include "cli/commands.hpp"
#include "cli/json_util.hpp"
#include "impulse/core/file.hpp"
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

using Clock = std::chrono::steady_clock;

// Appends the values as little-endian binary (the machines we build for are little-endian, as the
// recording format is).
template <typename T>
void append_floats(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// ---------------------------------------------------------------------------- HTTP limits
// docs/viewer.md ("Limits and security") lists these. Every connection gets its own thread (up to
// kMaxConnections), and every wait of a connection is bounded, so slow or idle clients cost a
// thread each for a bounded time and never starve the page.
constexpr std::size_t kMaxConnections = 128;
constexpr int kSilenceSeconds = 5;         // longest silence inside a request or a response
constexpr int kKeepAliveSeconds = 5;       // longest wait for the next request on a connection
constexpr int kRequestSeconds = 10;        // a request's head and body arrive within this
constexpr int kResponseSeconds = 60;       // a response is written within this
constexpr std::size_t kKeepAliveRequests = 1000;  // requests per connection
constexpr std::size_t kHeadBytes = 64 << 10;      // request line and headers
constexpr std::size_t kBodyBytes = 64 << 10;      // a POST body (except --mp4's video frames)
// The header a POST must carry: the page's fetch() sends it; a page from another origin cannot
// send it without a CORS preflight, which this server never grants.
constexpr const char* kPostHeader = "X-Impulse-Request";

// Text from a request, made printable and short for a one-line error message (and valid UTF-8
// for the JSON reply).
std::string printable(const std::string& s) {
  std::string out;
  for (const char c : s.substr(0, 60)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  if (s.size() > 60) out += "...";
  return out;
}

void reply_error(httplib::Response& res, const std::string& e, int status = 400) {
  res.status = status;
  res.set_content(json{{"error", e}}.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The part of a resource of `size` bytes that a Range header asks for (RFC 9110 14.1.2). Forms this
// server does not serve (other units, several ranges, last < first) ask for the whole resource,
// as the RFC lets a server ignore them.
struct ByteRange {
  enum Kind { Whole, Part, Unsatisfiable } kind = Whole;
  std::size_t offset = 0, length = 0;
};

ByteRange byte_range(const std::string& header, std::size_t size) {
  const std::string unit = "bytes=";
  if (header.compare(0, unit.size(), unit) != 0) return {};
  const std::string spec = header.substr(unit.size());
  const std::size_t dash = spec.find('-');
  if (spec.find(',') != std::string::npos || dash == std::string::npos) return {};
  // a number too large for 64 bits is larger than any resource
  auto number = [](const std::string& digits, std::uint64_t& out) {
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), out);
    if (r.ec == std::errc::result_out_of_range) out = std::numeric_limits<std::uint64_t>::max();
    return true;
  };
  std::uint64_t first = 0, last = 0;
  const bool has_first = number(spec.substr(0, dash), first);
  const bool has_last = number(spec.substr(dash + 1), last);
  if ((!has_first && dash != 0) || (!has_last && dash + 1 != spec.size())) return {};
  if (!has_first) {  // bytes=-N: the last N bytes
    if (!has_last || last == 0 || size == 0) return {ByteRange::Unsatisfiable};
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(last, size));
    return {ByteRange::Part, size - n, n};
  }
  if (first >= size) return {ByteRange::Unsatisfiable};
  if (has_last && last < first) return {};
  const std::uint64_t end = has_last ? std::min<std::uint64_t>(last, size - 1) : size - 1;
  return {ByteRange::Part, static_cast<std::size_t>(first), static_cast<std::size_t>(end - first + 1)};
}

// Sends `bytes` (which must outlive the response) as they are, or the part a Range header asks
// for. cpp-httplib compresses a text or JSON body with brotli at its highest quality whenever the
// browser accepts brotli (Debian builds it with brotli): the 590 kB viewer.js took 1.0 s to reach
// Chromium instead of 4 ms, and the page took 1.3 s to start. A response from a content provider
// of known length is not compressed. The Range header is handled here, not by cpp-httplib: its
// version in Debian 12 asks a content provider for the bytes up to the range's end even when
// that lies past the resource's end. `keep` holds the bytes alive until the response is sent,
// when they are made for it.
void send(const httplib::Request& req, httplib::Response& res, std::string_view bytes, const char* type,
          std::shared_ptr<const void> keep = nullptr) {
  res.set_header("Accept-Ranges", "bytes");
  if (req.has_header("Range")) {
    const std::string header = req.get_header_value("Range");
    const ByteRange r = byte_range(header, bytes.size());
    if (r.kind == ByteRange::Unsatisfiable) {
      res.set_header("Content-Range", "bytes */" + std::to_string(bytes.size()));
      return reply_error(res, "Range '" + printable(header) + "' is outside the " + std::to_string(bytes.size()) +
                                  " bytes of " + printable(req.path), 416);
    }
    if (r.kind == ByteRange::Part) {
      res.status = 206;
      res.set_header("Content-Range", "bytes " + std::to_string(r.offset) + "-" +
                                          std::to_string(r.offset + r.length - 1) + "/" + std::to_string(bytes.size()));
      bytes = bytes.substr(r.offset, r.length);
    }
  }
  res.set_content_provider(bytes.size(), type,
                           [bytes, keep](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             if (offset >= bytes.size()) return false;
                             const std::size_t n = std::min({length, bytes.size() - offset, std::size_t{1} << 20});
                             return sink.write(bytes.data() + offset, n);
                           });
}
// The same for bytes made for this one response.
void send(const httplib::Request& req, httplib::Response& res, std::string&& bytes, const char* type) {
  auto owned = std::make_shared<const std::string>(std::move(bytes));
  send(req, res, *owned, type, owned);
}

// A request parameter that is not a number, or out of range: a 400 naming it.
struct BadParameter : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The parameter `name` as a number of type T (whole for an integer type, finite for a floating
// one) in [lo, hi], parsed whole; `fallback` when absent.
template <class T>
T number_param(const httplib::Request& req, const char* name, T lo, T hi, std::optional<T> fallback) {
  if (!req.has_param(name)) {
    if (fallback) return *fallback;
    throw BadParameter(std::string("parameter '") + name + "' is missing");
  }
  if (req.get_param_value_count(name) > 1) throw BadParameter(std::string("parameter '") + name + "' is given twice");
  const std::string v = req.get_param_value(name);
  T x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(static_cast<double>(x)) ||
      x < lo || x > hi) {
    std::ostringstream range;
    range << "[" << lo << ", " << hi << "]";
    throw BadParameter(std::string("parameter '") + name + "' = '" + printable(v) + "' is not a " +
                       (std::is_integral_v<T> ? "whole" : "finite") + " number in " + range.str());
  }
  return x;
}

long long int_param(const httplib::Request& req, const char* name, long long lo, long long hi,
                    std::optional<long long> fallback = std::nullopt) {
  return number_param(req, name, lo, hi, fallback);
}

double real_param(const httplib::Request& req, const char* name, double lo, double hi,
                  std::optional<double> fallback = std::nullopt) {
  return number_param(req, name, lo, hi, fallback);
}

// ---------------------------------------------------------------------------- connections
// One connection's socket with every wait bounded: a read waits at most kSilenceSeconds for data
// and never past the request's deadline, nor past its byte budget; a write waits at most
// kSilenceSeconds for room and never past the response's deadline.
class ConnectionStream final : public httplib::Stream {
 public:
  explicit ConnectionStream(socket_t sock) : sock_(sock) {}

  // Starts a request: its head and body must arrive within kRequestSeconds and `max_bytes`.
  void start_request(std::size_t max_bytes) {
    read_deadline_ = Clock::now() + std::chrono::seconds(kRequestSeconds);
    read_budget_ = max_bytes;
    writing_ = false;
  }
  // Waits for the next request's first byte (or the peer closing); false after `seconds`, or
  // when `stop` says the server is stopping (checked every 100 ms).
  bool wait_for_request(int seconds, const std::function<bool()>& stop) const {
    if (consumed_ < buffered_) return true;
    const auto end = Clock::now() + std::chrono::seconds(seconds);
    while (!stop()) {
      if (poll_for(POLLIN, std::chrono::milliseconds(100))) return true;
      if (Clock::now() >= end) return false;
    }
    return false;
  }

  // Whether the request ran out of time or bytes.
  bool cut() const { return read_budget_ == 0 || Clock::now() >= read_deadline_; }

  bool is_readable() const override { return consumed_ < buffered_ || poll_until(POLLIN, read_deadline_); }
  bool is_writable() const override { return poll_until(POLLOUT, writing_ ? write_deadline_ : far_deadline()); }

  // Buffered: cpp-httplib reads a request's head a byte at a time.
  ssize_t read(char* ptr, std::size_t size) override {
    if (read_budget_ == 0) return -1;
    if (consumed_ == buffered_) {
      if (!is_readable()) return -1;
      const ssize_t got = ::recv(sock_, buffer_, sizeof(buffer_), 0);
      if (got <= 0) return got;
      buffered_ = static_cast<std::size_t>(got);
      consumed_ = 0;
    }
    const std::size_t n = std::min({size, read_budget_, buffered_ - consumed_});
    std::memcpy(ptr, buffer_ + consumed_, n);
    consumed_ += n;
    read_budget_ -= n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + std::chrono::seconds(kResponseSeconds);
    }
    if (!is_writable()) return -1;
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(&getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(&getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  static Clock::time_point far_deadline() { return Clock::now() + std::chrono::seconds(kSilenceSeconds); }

  bool poll_for(short events, std::chrono::milliseconds wait) const {
    pollfd p{sock_, events, 0};
    int r;
    do {
      r = ::poll(&p, 1, static_cast<int>(wait.count()));
    } while (r < 0 && errno == EINTR);
    return r > 0;
  }
  bool poll_until(short events, Clock::time_point deadline) const {
    const auto now = Clock::now();
    if (now >= deadline) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    return poll_for(events, std::min<std::chrono::milliseconds>(left + std::chrono::milliseconds(1),
                                                                std::chrono::seconds(kSilenceSeconds)));
  }
  void address(int (*get)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof(a);
    char text[INET6_ADDRSTRLEN] = "";
    port = -1;
    ip.clear();
    if (get(sock_, reinterpret_cast<sockaddr*>(&a), &len) != 0) return;
    if (a.ss_family == AF_INET) {
      const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
      inet_ntop(AF_INET, &v4->sin_addr, text, sizeof(text));
      port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
      inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof(text));
      port = ntohs(v6->sin6_port);
    }
    ip = text;
  }

  socket_t sock_;
  Clock::time_point read_deadline_ = Clock::now();
  Clock::time_point write_deadline_ = Clock::now();
  std::size_t read_budget_ = 0;
  bool writing_ = false;
  char buffer_[4096];
  std::size_t buffered_ = 0, consumed_ = 0;
};

// Set on the thread that runs a connection the server has no room for.
thread_local bool t_no_room = false;
// Set for a reply after which the connection closes: a request answered before its body was
// read, or a malformed one, leaves bytes that cannot be told from a next request.
thread_local bool t_close_connection = false;
void close_after(httplib::Response& res) {
  t_close_connection = true;
  res.set_header("Connection", "close");
}

// cpp-httplib's task queue is a fixed pool of 8 threads (Debian 12), each held by a connection for
// as long as the client keeps it: 12 clients sending a header line every 2 s kept the page from
// being answered. This queue runs each connection on a thread of its own, up to kMaxConnections;
// a connection beyond that is answered 503 at once on the accepting thread (a few bytes into an
// empty socket buffer, which does not block).
class ConnectionThreads final : public httplib::TaskQueue {
 public:
  ~ConnectionThreads() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mutex_);
    reap_locked();
    if (running_ < kMaxConnections) {
      workers_.emplace_back();
      Worker& w = workers_.back();
      try {
        w.thread = std::thread([this, &w, fn]() {
          fn();
          std::lock_guard<std::mutex> done(mutex_);
          w.done = true;
          --running_;
          idle_.notify_all();
        });
        ++running_;
        return;
      } catch (const std::system_error&) {  // no thread to be had: as when full
        workers_.pop_back();
      }
    }
    lock.unlock();
    t_no_room = true;
    fn();
    t_no_room = false;
  }
  void shutdown() override {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return running_ == 0; });
    reap_locked();
  }

 private:
  struct Worker {
    std::thread thread;
    bool done = false;
  };
  void reap_locked() {
    for (auto it = workers_.begin(); it != workers_.end();) {
      if (it->done) {
        it->thread.join();  // the thread only returns after setting done
        it = workers_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable idle_;
  std::list<Worker> workers_;
  std::size_t running_ = 0;
};

// cpp-httplib's server with the connection loop above: the library's own waits only bound each
// read (5 s), so a client sending a byte every few seconds held its thread forever.
class ViewServer final : public httplib::Server {
 public:
  ViewServer() {
    new_task_queue = [] { return new ConnectionThreads(); };
  }
  // cpp-httplib listens with a backlog of 5 (Debian 12): a burst of connections beyond that (a
  // browser opens 6 at once) waited for the client's SYN retransmission, 1 s and more. Linux takes
  // a new backlog from a second listen() on the bound socket.
  void widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }

 private:
  bool process_and_close_socket(socket_t sock) override {
    ConnectionStream strm(sock);
    bool ok = false;
    if (t_no_room) {
      const std::string body =
          json{{"error", "the viewer serves " + std::to_string(kMaxConnections) + " connections at most"}}.dump();
      const std::string busy = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
      ::send(sock, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    } else {
      const auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
      for (std::size_t n = 1; n <= kKeepAliveRequests && strm.wait_for_request(kKeepAliveSeconds, stopping); ++n) {
        strm.start_request(kHeadBytes + payload_max_length_);
        bool closed = false;
        t_close_connection = false;
        ok = process_request(strm, n == kKeepAliveRequests, closed, nullptr);
        // a request cut short (too slow, too large) leaves the rest of it unread: no next request
        if (!ok || closed || strm.cut() || t_close_connection) break;
      }
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }
};

// Why a request is refused before it reaches a handler ("" when it is not). The server answers
// only requests addressed to itself by name (Host), from its own pages (Origin, Sec-Fetch-Site),
// and changes state only on a POST carrying kPostHeader: so another site's page, or one reached
// through a DNS name rebound to 127.0.0.1, can neither read nor drive it.
std::string refusal(const httplib::Request& req, int port) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const std::string p = ":" + std::to_string(port);
  if (req.get_header_value_count("Host") != 1) return "the request needs one Host header";
  const std::string host = lower(req.get_header_value("Host"));
  if (host != "127.0.0.1" + p && host != "localhost" + p && host != "[::1]" + p) {
    return "Host '" + printable(host) + "' is not this server (127.0.0.1" + p + ", localhost" + p + " or [::1]" + p + ")";
  }
  if (req.has_header("Origin")) {
    const std::string origin = lower(req.get_header_value("Origin"));
    if (req.get_header_value_count("Origin") != 1 || origin != "http://" + host) {
      return "Origin '" + printable(origin) + "' is not this server's (http://" + host + ")";
    }
  }
  if (req.has_header("Sec-Fetch-Site")) {
    const std::string site = lower(req.get_header_value("Sec-Fetch-Site"));
    if (site != "same-origin" && site != "none") return "Sec-Fetch-Site '" + printable(site) + "': only this server's pages";
  }
  if (req.method == "POST" && req.get_header_value(kPostHeader) != "1") {
    return std::string("a POST needs the header ") + kPostHeader + ": 1 (the viewer page sends it)";
  }
  return "";
}

// A file of the bundled page: empty when it does not exist (the page was not built); anything but
// a regular file is an error (a FIFO is not opened, so it cannot block the server's start).
std::string read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  return read_regular_file<Error>(path, kMaxDescriptionBytes, "viewer page file");
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
    // The page pushes at a point of the body's shapes: a point further than 1 m beyond them (their
    // placement plus size) is no grab of this body, and a lever long enough to spin it beyond
    // what the integrator resolves.
    const Model& model = world_->system(system).model();
    double reach = 1.0;
    for (const CollisionShape& c : model.collision) {
      if (c.body == body) reach = std::max(reach, 1.0 + c.X_BS.p.norm() + c.size.norm());
    }
    if (!(point_B.norm() <= reach)) {
      return "the push point is " + std::to_string(point_B.norm()) + " m from body " + std::to_string(body) +
             "'s origin; at most " + std::to_string(reach) + " m (1 m beyond its shapes)";
    }
    // at most 5 m g (stableNorm: components near the largest double have a finite norm)
    const double cap = 5 * model.total_mass() * 9.81;
    const double f = force.stableNorm();
    push_ = Push{system, body, f > cap ? Vec3(force * (cap / f)) : force, point_B, world_->time() + seconds};
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
    long long n = -1;
    const auto r = std::from_chars(req.body.data(), req.body.data() + req.body.size(), n);
    if (!req.body.empty() && (r.ec != std::errc() || r.ptr != req.body.data() + req.body.size() || n < 0)) {
      return reply_error(res, "the frame count '" + printable(req.body) + "' is not a whole number");
    }
    if (!req.body.empty()) total = static_cast<long>(n);
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

  ViewServer server;
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which lets a second viewer share
  // a busy port (and steal half of its connections) instead of reporting it
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });
  // POST bodies are small (a reason line from the page), except --mp4's PNG frames: at most 4
  // bytes a pixel plus PNG's own overhead.
  const std::size_t body_limit =
      o.mp4.empty() ? kBodyBytes : std::size_t(o.width) * std::size_t(o.height) * 5 + (std::size_t{1} << 20);
  server.set_payload_max_length(body_limit);
  // ViewServer's loop keeps these limits; cpp-httplib announces them in Keep-Alive headers
  server.set_keep_alive_max_count(kKeepAliveRequests);
  server.set_keep_alive_timeout(kKeepAliveSeconds);

  int port = 0;  // known once bound; requests come after
  server.set_pre_routing_handler([&port, body_limit](const httplib::Request& req, httplib::Response& res) {
    // send() answers Range headers itself; cpp-httplib would apply them once more to its reply
    // (the request is the library's own non-const object, handed to handlers as const)
    const_cast<httplib::Request&>(req).ranges.clear();
    const std::string why = refusal(req, port);
    if (!why.empty()) {
      reply_error(res, why, 403);
      close_after(res);  // its body, if any, is not read
      return httplib::Server::HandlerResponse::Handled;
    }
    // cpp-httplib reads a body for these methods only; another's body would be taken for the
    // next request
    const bool with_body = req.has_header("Transfer-Encoding") ||
                           (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0");
    if (with_body && req.method != "POST" && req.method != "PUT" && req.method != "PATCH" && req.method != "DELETE") {
      reply_error(res, "a " + printable(req.method) + " request has no body");
      close_after(res);
      return httplib::Server::HandlerResponse::Handled;
    }
    // A body announced larger than the limit is refused before it is read (cpp-httplib would read
    // and discard all of it first).
    if (req.has_header("Content-Length")) {
      const std::string v = req.get_header_value("Content-Length");
      std::uint64_t n = 0;
      const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
      if (r.ec == std::errc::result_out_of_range || (r.ec == std::errc() && n > body_limit)) {
        reply_error(res, "the request body is larger than " + std::to_string(body_limit) + " bytes", 413);
        close_after(res);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // The replies cpp-httplib makes itself (no such path, a malformed request, a body too large)
  // get a reason line too.
  server.set_error_handler([body_limit](const httplib::Request& req, httplib::Response& res) {
    const_cast<httplib::Request&>(req).ranges.clear();
    if (!res.body.empty() || res.has_header("Content-Range")) return;
    close_after(res);  // cpp-httplib refused it, perhaps before reading all of it
    switch (res.status) {
      case 404: return reply_error(res, "no such resource: " + printable(req.path), 404);
      case 413: return reply_error(res, "the request body is larger than " + std::to_string(body_limit) + " bytes", 413);
      case 414: return reply_error(res, "the request target is too long", 414);
      case 416: return reply_error(res, "malformed Range header", 416);
      default: return reply_error(res, "malformed or incomplete request", res.status);
    }
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const BadParameter& e) {
      return reply_error(res, e.what(), 400);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply_error(res, "internal error: " + printable(what), 500);
  });

  for (const char* path : {"/", "/index.html"}) {
    server.Get(path, [&page](const httplib::Request& req, httplib::Response& res) { send(req, res, page, "text/html"); });
  }
  server.Get("/viewer.js", [&script](const httplib::Request& req, httplib::Response& res) {
    send(req, res, script, "text/javascript");
  });
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
    res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  });
  server.Get("/api/scene", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) return send(req, res, rec->scene(), "application/json");
    send(req, res, live->scene(), "application/json");
  });
  server.Get("/api/recording", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode has no recording", 404);
    // from the file's bytes in memory, without a copy (75 MB: 0.03-0.17 s instead of 0.36 s)
    send(req, res, rec->bytes(), "application/octet-stream");
  });
  // The plot series of every frame, computed once (docs/viewer.md, /api/series): u32 n, u32 0,
  // then time as n float64 and kinetic, potential, contacts, normal force, iterations, residual
  // and penetration as n float32 each (3.6 MB for 100k frames, against 75 MB for the file).
  std::once_flag series_once;
  std::string series_bytes;
  server.Get("/api/series", [&](const httplib::Request& req, httplib::Response& res) {
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
    send(req, res, series_bytes, "application/octet-stream");
  });
  const long long max_int = std::numeric_limits<int>::max();
  // One dof of one system over every frame: q, u and tau as n float32 each.
  server.Get("/api/dof", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode has no series", 404);
    const auto system = static_cast<int>(int_param(req, "system", 0, max_int));
    const auto iq = static_cast<int>(int_param(req, "iq", 0, max_int));
    const auto iv = static_cast<int>(int_param(req, "iv", 0, max_int));
    try {
      const DofSeries d = rec->dof_series(system, iq, iv);
      std::string out;
      for (const auto* v : {&d.q, &d.u, &d.tau}) append_floats(out, *v);
      send(req, res, std::move(out), "application/octet-stream");
    } catch (const Error& e) {
      reply_error(res, e.what(), 400);
    }
  });
  // Frames [from, from + count) as stored in the file, one after the other (the page fetches the
  // frames it shows in pieces, instead of the whole file).
  server.Get("/api/frames", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "live mode serves /api/frame", 404);
    const auto n = static_cast<long long>(rec->num_frames());
    const long long from = int_param(req, "from", 0, n - 1);
    const long long count = int_param(req, "count", 1, n - from);
    const auto bytes = rec->frames_bytes(static_cast<std::size_t>(from), static_cast<std::size_t>(count));
    send(req, res, std::string_view(bytes.first, bytes.second), "application/octet-stream");
  });
  server.Get("/api/frame", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) {
      const auto k = static_cast<std::size_t>(int_param(req, "k", 0, static_cast<long long>(rec->num_frames()) - 1, 0));
      send(req, res, std::string_view(rec->frame_data(k), rec->frame_size(k)), "application/octet-stream");
      return;
    }
    std::string f = live->frame();
    live->count_served();
    res.set_header("Cache-Control", "no-store");
    send(req, res, std::move(f), "application/octet-stream");
  });
  server.Get("/api/frame.json", [&](const httplib::Request& req, httplib::Response& res) {
    if (!replay) return reply_error(res, "frame.json is for recordings", 404);
    const auto k = static_cast<std::size_t>(int_param(req, "k", 0, static_cast<long long>(rec->num_frames()) - 1, 0));
    send(req, res, frame_json(rec->frame(k)).dump(), "application/json");
  });
  server.Get("/api/status", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(replay ? json{{"mode", "replay"}}.dump() : live->status().dump(), "application/json");
  });
  server.Post("/api/control", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) return reply_error(res, "replay is controlled by the page", 404);
    const std::string cmd = req.has_param("cmd") ? req.get_param_value("cmd") : "";
    if (req.get_param_value_count("cmd") > 1) return reply_error(res, "parameter 'cmd' is given twice");
    if (cmd != "" && cmd != "pause" && cmd != "run" && cmd != "step" && cmd != "reset") {
      return reply_error(res, "parameter 'cmd' = '" + printable(cmd) + "' is not pause, run, step or reset");
    }
    const double speed = real_param(req, "speed", 0, 1000, 0.0);
    if (req.has_param("speed") && !(speed > 0)) return reply_error(res, "parameter 'speed' must be in (0, 1000]");
    live->control(cmd, speed);
    res.set_content(live->status().dump(), "application/json");
  });
  server.Post("/api/push", [&](const httplib::Request& req, httplib::Response& res) {
    if (replay) return reply_error(res, "pushing needs live mode", 404);
    const double big = std::numeric_limits<double>::max();
    auto real = [&](const char* k) { return real_param(req, k, -big, big, 0.0); };
    const std::string e = live->push(static_cast<int>(int_param(req, "system", 0, max_int)),
                                     static_cast<int>(int_param(req, "body", 0, max_int)),
                                     Vec3(real("fx"), real("fy"), real("fz")), Vec3(real("px"), real("py"), real("pz")),
                                     real_param(req, "seconds", 0, 10, 0.1));
    if (!e.empty()) return reply_error(res, e);
    res.set_content("{}", "application/json");
  });

  if (o.port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
  } else if (server.bind_to_port("127.0.0.1", o.port)) {
    port = o.port;
  } else {
    port = -1;
  }
  if (port > 0) server.widen_backlog();
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
