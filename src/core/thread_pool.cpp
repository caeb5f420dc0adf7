// ThreadPool (see the header): workers sleep on a condition variable until a generation starts,
// take items from an atomic counter, and report when done.
#include "impulse/core/thread_pool.hpp"

#include <algorithm>
#include <string>

#include "impulse/core/error.hpp"

namespace impulse {

namespace {
thread_local int tls_thread_index = 0;  // see ThreadPool::thread_index
}  // namespace

int ThreadPool::thread_index() { return tls_thread_index; }

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 0) throw InvalidArgument("ThreadPool: num_threads must be >= 0, got " + std::to_string(num_threads));
  if (num_threads > kMaxThreads) {
    throw InvalidArgument("ThreadPool: num_threads " + std::to_string(num_threads) + " exceeds the limit of " +
                          std::to_string(kMaxThreads) + " (this machine has " +
                          std::to_string(std::thread::hardware_concurrency()) + " hardware threads)");
  }
  if (num_threads == 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<std::size_t>(num_threads - 1));
  for (int t = 1; t < num_threads; ++t) workers_.emplace_back([this, t] {
    tls_thread_index = t;
    worker_loop();
  });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::work() {
  Index i = next_.fetch_add(1, std::memory_order_relaxed);
  while (i < n_) {
    // with a look-ahead, the next item is claimed now, so that its memory can be requested
    // while this one computes
    const Index next = ahead_ ? next_.fetch_add(1, std::memory_order_relaxed) : 0;
    try {
      if (ahead_ && next < n_) ahead_(ahead_callable_, next);
      invoke_(callable_, i);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(n_, std::memory_order_relaxed);  // stop handing out items
      return;
    }
    i = ahead_ ? next : next_.fetch_add(1, std::memory_order_relaxed);
  }
}

void ThreadPool::worker_loop() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
    }
    work();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::run(Index n, void* callable, Invoke invoke, void* ahead_callable, Invoke ahead) {
  if (n <= 0) return;
  // the caller is thread 0 of this pool while it runs items (also when it is a worker of another)
  struct Index0 {
    int saved = tls_thread_index;
    Index0() { tls_thread_index = 0; }
    ~Index0() { tls_thread_index = saved; }
  } index0;
  callable_ = callable;
  invoke_ = invoke;
  ahead_callable_ = ahead_callable;
  ahead_ = ahead;
  n_ = n;
  error_ = nullptr;
  next_.store(0, std::memory_order_relaxed);
  if (!workers_.empty() && n > 1) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    start_cv_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, [&] { return busy_ == 0; });
  } else {
    work();
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace impulse
