// Two copies of a kernel in one function: the baseline one and an x86-64-v3 one (core/isa.hpp).
//
// Use (inside a .cpp only, never in a header that other files include):
//
//   Result kernel(args) {
//     auto kernel_body = [&]() IMPULSE_KERNEL_BODY { ... the kernel ... };
//     return detail::run_kernel(kernel_body);
//   }
//
// run_kernel calls the lambda through run_baseline, or through run_v3, a function compiled for
// AVX2 + FMA: both are `flatten`, so the (always-inline) lambda and every call the compiler can
// see in that file are inlined into each, and the two copies differ by their instruction set
// only (the same inlining). The baseline copy keeps the bits of the code as written. Why a lambda: its closure type belongs to one translation
// unit, so run_v3<closure> has internal linkage and its v3 code can never be the copy that the
// linker picks for a baseline caller (the trap of compiling shared inline code, an Eigen template
// say, twice with different flags). Out-of-line calls from the v3 copy go to the ordinary
// (baseline) functions. GCC and Clang inline a function without a target attribute into one
// whose instruction set is a superset; no `arch=` in the attribute, which would forbid it.
#pragma once

#include <atomic>

#include "impulse/core/isa.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define IMPULSE_HAS_ISA_V3 1
#define IMPULSE_TARGET_V3 __attribute__((target("avx,avx2,fma,bmi,bmi2,lzcnt,movbe,f16c,popcnt")))
#else
#define IMPULSE_HAS_ISA_V3 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define IMPULSE_KERNEL_BODY __attribute__((always_inline))
#else
#define IMPULSE_KERNEL_BODY
#endif

namespace impulse::detail {

// 1 while x86-64-v3 kernels are selected (src/core/isa.cpp; read relaxed: a switch between steps)
extern std::atomic<int> kernel_isa_v3;

#if IMPULSE_HAS_ISA_V3
template <class F>
IMPULSE_TARGET_V3 __attribute__((noinline, flatten)) auto run_v3(F& f) -> decltype(f()) {
  return f();
}
#endif

template <class F>
__attribute__((noinline, flatten)) auto run_baseline(F& f) -> decltype(f()) {
  return f();
}

template <class F>
inline auto run_kernel(F& f) -> decltype(f()) {
#if IMPULSE_HAS_ISA_V3
  if (kernel_isa_v3.load(std::memory_order_relaxed) != 0) return run_v3(f);
#endif
  return run_baseline(f);
}

}  // namespace impulse::detail
