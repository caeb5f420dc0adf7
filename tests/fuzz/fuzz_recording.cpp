// libFuzzer target: the recording reader (RecordingReader, docs/recording.md "Validation") on
// arbitrary bytes. Any input must either be rejected with impulse::Error or read back: its frames
// decode, its plot and dof series compute, without a crash, a read past the file, a leak or a
// sanitizer report. The reader takes a path: each input is an in-memory file (memfd) opened as
// /proc/self/fd/N. Seed corpus (.ci/run): tests/record/corpus and recordings written by the CLI.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "impulse/core/error.hpp"
#include "impulse/record/recording.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("fuzz_recording", MFD_CLOEXEC);
  if (fd < 0) return 0;
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  try {
    const impulse::RecordingReader r("/proc/self/fd/" + std::to_string(fd));
    const std::size_t n = r.num_frames();
    for (std::size_t k = 0; k < std::min<std::size_t>(n, 4); ++k) r.frame(k);
    if (n > 0) {
      r.frame(n - 1);
      r.frames_bytes(0, n);
    }
    r.series();
    for (std::size_t s = 0; s < r.systems().size(); ++s) {
      const auto& z = r.systems()[s];
      if (z.nq > 0 && z.nv > 0) r.dof_series(static_cast<int>(s), z.nq - 1, z.nv - 1);
    }
  } catch (const impulse::Error&) {
  }
  return 0;
}
