// ThreadPool: a fixed set of std::thread workers (module core/: batch/VecWorld, the step
// Jacobians' columns and the tasks run their items on it). parallel_for(n, f) calls f(i) once for every i in [0, n), on the caller and the
// workers; items are handed out one at a time through an atomic counter (dynamic scheduling:
// worlds with more contacts take longer). Which thread runs which item varies from call to call,
// so f(i) must touch only the data of item i: then the results do not depend on the thread count.
//
// parallel_for allocates nothing (the callable is passed by address) and is not reentrant: one
// parallel_for at a time per pool.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "impulse/core/types.hpp"

namespace impulse {

// Threads of a ThreadPool at most (a pool of more threads than cores only adds switches).
inline constexpr int kMaxThreads = 256;

class ThreadPool {
 public:
  // num_threads >= 1 threads in total (the caller counts as one); 0 picks
  // std::thread::hardware_concurrency(). Throws InvalidArgument for a negative count.
  explicit ThreadPool(int num_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  // Inside f (or ahead) of a parallel_for: the index of the thread running it, in
  // [0, num_threads()) (0: the caller), e.g. to pick that thread's scratch memory.
  static int thread_index();

  // Runs f(i) for i in [0, n). The first exception thrown by f is rethrown here after every
  // thread has stopped taking items.
  template <class F>
  void parallel_for(Index n, F&& f) {
    using Fn = std::remove_reference_t<F>;
    run(n, const_cast<void*>(static_cast<const void*>(&f)), [](void* c, Index i) { (*static_cast<Fn*>(c))(i); },
        nullptr, nullptr);
  }
  // The same, and each thread claims its next item before it runs the current one and calls
  // ahead(next) first, so that ahead can prefetch the next item's memory (World::prefetch) while
  // f(current) computes. ahead must not change anything f reads.
  template <class F, class A>
  void parallel_for(Index n, F&& f, A&& ahead) {
    using Fn = std::remove_reference_t<F>;
    using An = std::remove_reference_t<A>;
    run(n, const_cast<void*>(static_cast<const void*>(&f)), [](void* c, Index i) { (*static_cast<Fn*>(c))(i); },
        const_cast<void*>(static_cast<const void*>(&ahead)), [](void* c, Index i) { (*static_cast<An*>(c))(i); });
  }

 private:
  using Invoke = void (*)(void*, Index);
  void run(Index n, void* callable, Invoke invoke, void* ahead_callable, Invoke ahead);
  void work();          // takes items until none is left
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  std::uint64_t generation_ = 0;  // incremented per parallel_for
  int busy_ = 0;                  // workers still inside the current generation
  bool stop_ = false;

  // the current job
  void* callable_ = nullptr;
  Invoke invoke_ = nullptr;
  void* ahead_callable_ = nullptr;
  Invoke ahead_ = nullptr;
  Index n_ = 0;
  std::atomic<Index> next_{0};
  std::exception_ptr error_;
  std::mutex error_mutex_;
};

}  // namespace impulse

// the batched layer's name for it (VecWorld, the tasks)
namespace impulse::batch {
using impulse::ThreadPool;
}  // namespace impulse::batch
