// ThreadPool: every item runs exactly once, exceptions reach the caller, the pool stays usable.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "impulse/batch/thread_pool.hpp"
#include "impulse/core/error.hpp"

using namespace impulse;
using impulse::batch::ThreadPool;

TEST_CASE("ThreadPool runs every item exactly once", "[batch]") {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    CHECK(pool.num_threads() == threads);
    for (Index n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      for (auto& h : hits) h = 0;
      pool.parallel_for(n, [&](Index i) { hits[static_cast<std::size_t>(i)]++; });
      for (auto& h : hits) CHECK(h == 1);
    }
  }
}

TEST_CASE("ThreadPool rethrows the first exception and stays usable", "[batch]") {
  ThreadPool pool(2);
  CHECK_THROWS_WITH(pool.parallel_for(100,
                                      [](Index i) {
                                        if (i == 42) throw InvalidArgument("item 42 failed");
                                      }),
                    "item 42 failed");
  std::atomic<long> sum{0};
  pool.parallel_for(100, [&](Index i) { sum += i; });
  CHECK(sum == 4950);
  CHECK_THROWS_AS(ThreadPool(-1), InvalidArgument);
}
