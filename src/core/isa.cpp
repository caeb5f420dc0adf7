// The process-wide choice of kernel instruction set. See core/isa.hpp and isa_dispatch.hpp.
#include "impulse/core/isa.hpp"

#include <cstdlib>
#include <mutex>

#include "impulse/core/error.hpp"
#include "isa_dispatch.hpp"

namespace impulse {

namespace detail {
std::atomic<int> kernel_isa_v3{0};
}  // namespace detail

namespace {

std::once_flag env_read;

void read_environment() {
  std::call_once(env_read, [] {
    const char* env = std::getenv("IMPULSE_ISA");
    if (!env || !*env) {
      // the CPU's choice: both copies give the same bits (no FMA contraction, CMakeLists.txt), so
      // the faster one runs wherever the CPU has it
      detail::kernel_isa_v3.store(kernel_isa_supported(KernelIsa::X86_64_V3) ? 1 : 0, std::memory_order_relaxed);
      return;
    }
    const KernelIsa isa = parse_kernel_isa(env, "IMPULSE_ISA");
    if (!kernel_isa_supported(isa)) {
      throw InvalidArgument(std::string("IMPULSE_ISA=") + env + ": this CPU does not run " + to_string(isa) +
                            " (it needs AVX2 and FMA)");
    }
    detail::kernel_isa_v3.store(isa == KernelIsa::X86_64_V3 ? 1 : 0, std::memory_order_relaxed);
  });
}

// IMPULSE_ISA (or, without it, the CPU) takes effect when the library is loaded, so that a program
// that never asks still runs the kernels it names. A bad value cannot throw from a static
// initializer: it is reported by the first kernel_isa() call instead, and the baseline runs until
// then.
const bool env_at_load = [] {
  try {
    read_environment();
  } catch (const Error&) {
    return false;
  }
  return true;
}();

}  // namespace

const char* to_string(KernelIsa isa) { return isa == KernelIsa::X86_64_V3 ? "x86-64-v3" : "baseline"; }

KernelIsa parse_kernel_isa(const std::string& s, const char* what) {
  if (s == "baseline") return KernelIsa::Baseline;
  if (s == "x86-64-v3") return KernelIsa::X86_64_V3;
  throw InvalidArgument(std::string(what) + ": '" + s + "' is not an instruction set (expected baseline or x86-64-v3)");
}

bool kernel_isa_supported(KernelIsa isa) {
  if (isa == KernelIsa::Baseline) return true;
#if IMPULSE_HAS_ISA_V3
  __builtin_cpu_init();  // (this may run in a static initializer, before the CPU model's own)
  // (GCC's and Clang's checks include the operating system's support for the wide registers)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2") &&
         __builtin_cpu_supports("avx");
#else
  return false;
#endif
}

KernelIsa kernel_isa() {
  if (!env_at_load) read_environment();  // (throws the environment's error, as documented)
  return detail::kernel_isa_v3.load(std::memory_order_relaxed) != 0 ? KernelIsa::X86_64_V3 : KernelIsa::Baseline;
}

void set_kernel_isa(KernelIsa isa) {
  if (!kernel_isa_supported(isa)) {
    throw InvalidArgument(std::string("set_kernel_isa: this CPU does not run ") + to_string(isa) +
                          " (it needs AVX2 and FMA)");
  }
  detail::kernel_isa_v3.store(isa == KernelIsa::X86_64_V3 ? 1 : 0, std::memory_order_relaxed);
}

}  // namespace impulse
