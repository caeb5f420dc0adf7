// ThreadPool: every item runs exactly once, exceptions reach the caller, the pool stays usable.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "impulse/core/thread_pool.hpp"
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

TEST_CASE("ThreadPool with a look-ahead: each thread announces the item it runs next", "[batch]") {
  // one thread: ahead(1) f(0) ahead(2) f(1) ... f(n-1)
  {
    ThreadPool pool(1);
    std::vector<Index> events;  // item for f, -1 - item for ahead
    pool.parallel_for(4, [&](Index i) { events.push_back(i); }, [&](Index j) { events.push_back(-1 - j); });
    CHECK(events == std::vector<Index>{-2, 0, -3, 1, -4, 2, 3});
  }
  // several threads: every item runs exactly once; an announced item is the next one its
  // thread runs, and every item but each thread's first is announced
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (Index n : {0, 1, 7, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n)), announced(static_cast<std::size_t>(n));
      for (auto& h : hits) h = 0;
      for (auto& a : announced) a = 0;
      // the thread that announced an item is the one that runs it
      std::vector<std::thread::id> announcer(static_cast<std::size_t>(n)), runner(static_cast<std::size_t>(n));
      pool.parallel_for(
          n,
          [&](Index i) {
            runner[static_cast<std::size_t>(i)] = std::this_thread::get_id();
            hits[static_cast<std::size_t>(i)]++;
          },
          [&](Index j) {
            announcer[static_cast<std::size_t>(j)] = std::this_thread::get_id();
            announced[static_cast<std::size_t>(j)]++;
          });
      int wrong = 0;
      for (Index i = 0; i < n; ++i)
        wrong += announced[static_cast<std::size_t>(i)] > 0 &&
                 announcer[static_cast<std::size_t>(i)] != runner[static_cast<std::size_t>(i)];
      CHECK(wrong == 0);
      int firsts = 0;
      for (Index i = 0; i < n; ++i) {
        CHECK(hits[static_cast<std::size_t>(i)] == 1);
        CHECK(announced[static_cast<std::size_t>(i)] <= 1);
        firsts += announced[static_cast<std::size_t>(i)] == 0;
      }
      CHECK(firsts <= std::min<Index>(n, threads));
    }
  }
  // an exception in f stops the loop, is rethrown, and the pool stays usable
  ThreadPool pool(2);
  CHECK_THROWS_WITH(pool.parallel_for(
                        100, [](Index i) { if (i == 42) throw InvalidArgument("item 42 failed"); }, [](Index) {}),
                    "item 42 failed");
  std::atomic<long> sum{0};
  pool.parallel_for(100, [&](Index i) { sum += i; }, [](Index) {});
  CHECK(sum == 4950);
}

TEST_CASE("ThreadPool::thread_index names the running thread, one index per thread", "[batch]") {
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    const Index n = 3000;
    std::vector<int> index(static_cast<std::size_t>(n), -1);
    std::vector<std::thread::id> id(static_cast<std::size_t>(n));
    std::atomic<int> ahead_max{0};
    pool.parallel_for(n, [&](Index i) {
      for (volatile int spin = 0; spin < 200; spin = spin + 1) {}  // (give the workers items too)
      index[static_cast<std::size_t>(i)] = ThreadPool::thread_index();
      id[static_cast<std::size_t>(i)] = std::this_thread::get_id();
    }, [&](Index) { ahead_max = std::max<int>(ahead_max, ThreadPool::thread_index()); });
    CHECK(ahead_max < threads);  // (Catch's CHECK only on this thread)
    for (Index i = 0; i < n; ++i) {
      const int t = index[static_cast<std::size_t>(i)];
      REQUIRE(t >= 0);
      REQUIRE(t < threads);
      // the same index always means the same thread, and the caller is 0
      for (Index j = 0; j < i; ++j) {
        if (index[static_cast<std::size_t>(j)] == t) {
          CHECK(id[static_cast<std::size_t>(j)] == id[static_cast<std::size_t>(i)]);
          break;
        }
      }
      if (id[static_cast<std::size_t>(i)] == std::this_thread::get_id()) CHECK(t == 0);
      else CHECK(t != 0);
    }
  }
  // outside a parallel_for the caller reads 0, also after one
  CHECK(ThreadPool::thread_index() == 0);
}
