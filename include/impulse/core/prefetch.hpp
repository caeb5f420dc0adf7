// Software prefetch of a buffer's cache lines (a hint: no effect on results).
//
// Batched simulation steps many independent Worlds one after the other, each too large to stay
// in the core's cache until its next turn: every control step starts with the World's memory
// cold, which makes the steps of 256 ANYmal environments about 25 % slower than those of 16
// (docs/benchmarks.md, "Python and batched environments"). A thread that knows which World it steps next asks for its
// memory (World::prefetch) while it computes the current one, so the misses overlap the work.
#pragma once

#include <algorithm>
#include <cstddef>

namespace impulse {

// Requests the lines of [p, p + bytes) for writing (the step rewrites most of its buffers).
inline void prefetch_bytes(const void* p, std::size_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
  const char* c = static_cast<const char*>(p);
  for (std::size_t k = 0; k < bytes; k += 64) __builtin_prefetch(c + k, 1, 3);
#else
  (void)p;
  (void)bytes;
#endif
}

// The elements of a contiguous container (std::vector, Eigen dense objects).
template <class C>
inline void prefetch_data(const C& c) {
  if (c.size() > 0) prefetch_bytes(c.data(), static_cast<std::size_t>(c.size()) * sizeof(*c.data()));
}

// Its first `count` elements (at most all of them): the part of a grown buffer a step used.
template <class C, class N>
inline void prefetch_head(const C& c, N count) {
  const std::size_t m = std::min(static_cast<std::size_t>(c.size()), static_cast<std::size_t>(std::max<N>(count, 0)));
  if (m > 0) prefetch_bytes(c.data(), m * sizeof(*c.data()));
}

}  // namespace impulse
