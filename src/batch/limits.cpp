// Limits of a batch (see the header).
#include "impulse/batch/limits.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "impulse/core/error.hpp"

namespace impulse::batch {

std::size_t heap_bytes_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;  // in use from the arena, and in separate mappings
#else
  return 0;
#endif
}

std::size_t physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) : 0;
}

namespace {
std::string gib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  return b;
}
}  // namespace

void check_batch_memory(const char* who, Index count, std::size_t bytes_each) {
  // Where the heap cannot be measured (another allocator, a sanitizer's) the measured size is 0 or
  // too small: no World takes less than kMinEnvironmentBytes.
  bytes_each = std::max(bytes_each, kMinEnvironmentBytes);
  const std::size_t memory = physical_memory_bytes();
  if (memory == 0) return;  // unknown: nothing to compare with
  const double need = static_cast<double>(count) * static_cast<double>(bytes_each);
  if (need > static_cast<double>(memory)) {
    throw InvalidArgument(std::string(who) + ": " + std::to_string(count) + " environments need about " + gib(need) +
                          " (" + std::to_string(bytes_each / 1024) + " KiB each), more than this machine's " +
                          gib(static_cast<double>(memory)) + " of memory; at most " +
                          std::to_string(memory / bytes_each) + " fit");
  }
}

}  // namespace impulse::batch
