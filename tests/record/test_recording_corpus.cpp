// The C++ reader (RecordingReader) against the validation rules of docs/recording.md: the corpus
// of tests/record/corpus gets the verdicts of its manifest (as the Python and JavaScript readers
// do: test_recording_corpus.py, .mjs), paths that are not regular files are rejected without
// blocking, and a large file is mapped, not read into memory.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "impulse/core/error.hpp"
#include "impulse/record/recording.hpp"
#include "support/matchers.hpp"

using namespace impulse;

namespace {

std::string corpus(const std::string& name) { return impulse_test::source_path("tests/record/corpus/" + name); }

// Peak resident memory of this process (kB) since the last reset_peak_memory(), or -1.
long peak_memory_kb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}
bool reset_peak_memory() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"); }

}  // namespace

TEST_CASE("every recording of the corpus gets the verdict of its manifest", "[record]") {
  std::ifstream in(corpus("manifest.json"));
  REQUIRE(in);
  const nlohmann::json manifest = nlohmann::json::parse(in);
  REQUIRE(manifest.size() > 40);
  for (const auto& [name, want] : manifest.items()) {
    INFO(name);
    const std::string path = corpus(name);
    if (want["verdict"] == "valid") {
      RecordingReader r(path);
      CHECK(r.num_frames() == want["frames"].get<std::size_t>());
      CHECK(r.dropped_bytes() == want["dropped_bytes"].get<std::uint64_t>());
      if (r.dropped_bytes() > 0) {
        CHECK_THAT(r.dropped_warning(), Catch::Contains(path) && Catch::Contains(std::to_string(r.dropped_bytes()) + " bytes"));
      }
      // what the reader accepts, it can decode
      for (std::size_t k = 0; k < r.num_frames(); ++k) CHECK(r.frame(k).contacts.size() < 1000);
      CHECK(r.series().time.size() == r.num_frames());
    } else {
      std::string message;
      try {
        RecordingReader r(path);
      } catch (const Error& e) {
        message = e.what();
      }
      CHECK_THAT(message, Catch::Contains(path) &&
                              Catch::EndsWith("(rule " + std::to_string(want["rule"].get<int>()) + ")"));
      CHECK(message.find('\n') == std::string::npos);
    }
  }
}

TEST_CASE("a recording path that is not a regular file is rejected without blocking", "[record]") {
  const std::string fifo = "impulse_test_recording.fifo";
  std::remove(fifo.c_str());
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // opening a FIFO for reading waits for a writer: without O_NONBLOCK this test hangs until the
  // alarm ends it
  ::alarm(30);
  CHECK_FALSE(is_recording_file(fifo));
  CHECK_THROWS_WITH(RecordingReader(fifo), Catch::Contains(fifo) && Catch::Contains("not a regular file"));
  ::alarm(0);
  std::remove(fifo.c_str());
  CHECK_THROWS_WITH(RecordingReader("/dev/zero"), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(RecordingReader(impulse_test::source_path("tests/record/corpus")), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(RecordingReader("no/such/recording.imprec"), Catch::Contains("file not found"));
  CHECK(is_recording_file(corpus("good.imprec")));
  CHECK_FALSE(is_recording_file(impulse_test::source_path("models/worlds/box_on_ground.xml")));
}

TEST_CASE("a large recording is mapped, not read into memory", "[record]") {
  // the good recording followed by 512 MiB of (sparse) zeros: rule 9 at the first zero frame, found
  // without the file's bytes in memory
  const std::string path = "impulse_test_large.imprec";
  std::string good;
  {
    std::ifstream in(corpus("good.imprec"), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    good = s.str();
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << good;
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(good.size() + (std::size_t(512) << 20))) == 0);
  if (!reset_peak_memory()) WARN("cannot reset the peak memory (/proc/self/clear_refs): the memory is not measured");
  const long before = peak_memory_kb();
  CHECK_THROWS_WITH(RecordingReader(path), Catch::Contains("at byte " + std::to_string(good.size()) + " (rule 9)"));
  const long after = peak_memory_kb();
  std::remove(path.c_str());
  if (before > 0 && after > 0) CHECK(after - before < 64 * 1024);
}
