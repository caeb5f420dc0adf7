// Timing for the benchmarks (`impulse bench`, the scenario demos, impulse_peers, the [.bench]
// tests): a stopwatch on the wall clock or on the thread's CPU time, the median of repeated
// measurements, and the median time per call of a function called in timed batches. Medians, not
// means: on a shared machine a few slow repetitions (another process's burst, a preemption) would
// pull a mean up. (The stepper's per-stage times are the engine's own: StepStats::times.)
//
//   const bench::Stopwatch<> watch;
//   ...;
//   std::cout << watch.seconds();
//   const double us = bench::median_us_per_call(100000, 100, 100, [&] { world.collision().detect(contacts); });
#pragma once

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <utility>
#include <vector>

namespace impulse::bench {

// Median of `v`: the middle value, or the mean of the two middle values for an even count; 0 for
// no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

// The CPU time of the calling thread, as a std::chrono clock: on a loaded machine the wall clock
// also counts the time the thread waits for a core.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec));
  }
};

// Time since construction (or the last restart()) on `Clock` (steady_clock: wall time).
template <class Clock = std::chrono::steady_clock>
class Stopwatch {
 public:
  Stopwatch() : start_(Clock::now()) {}
  void restart() { start_ = Clock::now(); }
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double us() const { return std::chrono::duration<double, std::micro>(Clock::now() - start_).count(); }

 private:
  typename Clock::time_point start_;
};

// Median over batches of the wall time per call of `call()`, in microseconds: `warmup` untimed
// calls, then max(1, calls / batch) batches of `batch` calls, each batch timed as a whole (so the
// clock's own cost, ~20 ns a read, is spread over the batch).
template <class Call>
double median_us_per_call(long calls, long batch, long warmup, Call&& call) {
  const long batches = std::max(1L, calls / batch);
  std::vector<double> per_call(static_cast<std::size_t>(batches));
  for (long k = 0; k < warmup; ++k) call();
  for (long b = 0; b < batches; ++b) {
    const Stopwatch<> watch;
    for (long k = 0; k < batch; ++k) call();
    per_call[static_cast<std::size_t>(b)] = watch.us() / static_cast<double>(batch);
  }
  return median(std::move(per_call));
}

}  // namespace impulse::bench
