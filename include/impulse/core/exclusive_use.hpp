// One thread at a time: an object that a step changes (a World, a VecWorld, a batched task) may
// be used by one thread at a time. UseMarker detects a second thread that calls into the object
// while a first one is stepping or changing it, and refuses the call with ConcurrentUseError
// instead of letting both race on the same memory (docs/threading.md).
//
// A call that changes the object holds a UseMarker::Scope for its duration: the first thread to
// take it owns the object until the scope ends; the same thread may take it again inside (a
// Python binding takes it before it releases the GIL, then calls the C++ step, which takes it
// again). A call that only reads checks that no other thread holds it (check()).
//
// Cost: one compare-and-swap and one store per scope (a few nanoseconds, against microseconds
// for a step). Detection is of overlapping calls that go through a scope or a check: a thread
// that reads a reference it obtained earlier (World::contacts()) while another thread steps is a
// data race that no marker can see; the threading rules say what may be shared.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "impulse/core/error.hpp"

namespace impulse {

// A call refused because another thread is using the same object at the same time.
class ConcurrentUseError : public Error {
 public:
  using Error::Error;
};

class UseMarker {
 public:
  UseMarker() = default;
  // A marker belongs to its object: copies and moves of the object start free.
  UseMarker(const UseMarker&) noexcept {}
  UseMarker& operator=(const UseMarker&) noexcept { return *this; }

  class Scope {
   public:
    // `object` and `call` name the refused call in the error ("World", "integrate").
    Scope(const UseMarker& marker, const char* object, const char* call) : marker_(&marker) {
      const std::thread::id me = std::this_thread::get_id();
      std::thread::id expected{};
      if (marker.owner_.compare_exchange_strong(expected, me, std::memory_order_acquire)) {
        outer_ = true;
      } else if (expected != me) {
        refuse(object, call);
      }
    }
    ~Scope() {
      if (outer_) marker_->owner_.store(std::thread::id{}, std::memory_order_release);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    const UseMarker* marker_;
    bool outer_ = false;  // false when nested in a scope of the same thread
  };

  // Throws ConcurrentUseError when another thread holds a scope now.
  void check(const char* object, const char* call) const {
    const std::thread::id owner = owner_.load(std::memory_order_acquire);
    if (owner != std::thread::id{} && owner != std::this_thread::get_id()) refuse(object, call);
  }
  // Whether some thread (this one included) holds a scope now.
  bool busy() const { return owner_.load(std::memory_order_acquire) != std::thread::id{}; }

 private:
  [[noreturn]] static void refuse(const char* object, const char* call) {
    throw ConcurrentUseError(std::string(object) + "." + call + ": refused, another thread is stepping or changing this " +
                             object + " now (use one " + object +
                             " per thread, or serialize the calls: docs/threading.md)");
  }
  mutable std::atomic<std::thread::id> owner_{};
};

}  // namespace impulse
