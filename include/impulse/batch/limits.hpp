// Limits of a batch (VecWorld, LocomotionTask), checked before anything large is made: a thread
// count or an environment count far beyond the machine is refused with an error that says the
// limit, instead of starting tens of thousands of threads or allocating until the process dies.
#pragma once

#include <cstddef>

#include "impulse/core/thread_pool.hpp"
#include "impulse/core/types.hpp"

namespace impulse::batch {

using impulse::kMaxThreads;  // core/thread_pool.hpp

// Bytes of the heap in use by this process now (glibc's allocator statistics; 0 where unknown).
std::size_t heap_bytes_in_use();
// Bytes of physical memory of this machine (0 where unknown).
std::size_t physical_memory_bytes();

// The least heap one environment takes (an empty World takes more), assumed where the heap of the
// first one cannot be measured.
inline constexpr std::size_t kMinEnvironmentBytes = std::size_t(2) << 10;

// Throws InvalidArgument naming `who` when `count` items of `bytes_each` (the measured heap of the
// first one, at least kMinEnvironmentBytes) need more than this machine's physical memory.
void check_batch_memory(const char* who, Index count, std::size_t bytes_each);

// Runs `make_first` (which builds the first of `count` environments) and measures the heap it
// takes, then check_batch_memory: a count beyond the machine is refused before the others (or
// the arrays of all) are made.
template <class MakeFirst>
void make_first_within_memory(const char* who, Index count, MakeFirst&& make_first) {
  const std::size_t before = heap_bytes_in_use();
  make_first();
  const std::size_t after = heap_bytes_in_use();
  check_batch_memory(who, count, after > before ? after - before : 0);
}

}  // namespace impulse::batch
