// Version string and the search for the shipped models (version.hpp).
#include "impulse/core/version.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "impulse/core/error.hpp"

#ifndef IMPULSE_VERSION
#define IMPULSE_VERSION "unknown"
#endif
#ifndef IMPULSE_SOURCE_MODELS_DIR
#define IMPULSE_SOURCE_MODELS_DIR ""
#endif

namespace impulse {

namespace {

bool is_dir(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool is_file(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}
std::string parent(const std::string& p) {
  const std::size_t s = p.find_last_of('/');
  return s == std::string::npos ? std::string(".") : (s == 0 ? std::string("/") : p.substr(0, s));
}

// <prefix>/share/impulse/models for the prefix above the directory holding `file`.
std::string share_of(const std::string& file) { return parent(parent(file)) + "/share/impulse/models"; }

std::string executable_path() {
  std::vector<char> buf(4096);
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

std::string library_path() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&models_dir), &info) && info.dli_fname) return info.dli_fname;
  return std::string();
}

}  // namespace

const char* version_string() { return IMPULSE_VERSION; }

std::string models_dir() {
  std::vector<std::string> tried;
  if (const char* env = std::getenv("IMPULSE_MODELS_DIR")) {
    if (is_dir(env)) return env;
    throw Error(std::string("IMPULSE_MODELS_DIR='") + env + "' is not a directory");
  }
  // installed: next to the executable, then next to the shared library (a static library's
  // "library path" is the executable itself)
  for (const std::string& f : {executable_path(), library_path()}) {
    if (f.empty()) continue;
    const std::string d = share_of(f);
    if (is_dir(d)) return d;
    tried.push_back(d);
  }
  // a build tree used in place
  const std::string src = IMPULSE_SOURCE_MODELS_DIR;
  if (is_dir(src)) return src;
  if (!src.empty()) tried.push_back(src);
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  throw Error("cannot find the Impulse models (set IMPULSE_MODELS_DIR; tried " + list + ")");
}

std::string find_model(const std::string& relative) {
  if (!relative.empty() && relative[0] == '/') return relative;
  const std::string p = models_dir() + "/" + relative;
  if (!is_file(p)) throw Error("model '" + relative + "' not found (looked for " + p + ")");
  return p;
}

}  // namespace impulse
