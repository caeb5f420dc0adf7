// The instruction set of the step's hot kernels, chosen at run time (module core/).
//
// The library is compiled for the portable x86-64 baseline (SSE2). The kernels that make up most
// of a robot's step (the fused RNEA + CRBA + Jacobians, the tree-sparse L^T D L factor and its
// solves, the stepper's stages, the Delassus assembly, the bisection sweeps; the list is in
// docs/dynamics.md, "Kernels for x86-64-v3") are compiled a second time for x86-64-v3 (AVX2,
// BMI2, VEX encodings) in the same binary, and a process-wide switch picks the copy. Both copies
// are compiled without FMA contraction, so they round every product and sum alike and give the
// same bits, equal to the SIMD lanes of the batched step (dynamics/lanes.hpp): the choice changes
// the speed only, and by default the CPU makes it. Each copy is deterministic and thread-count
// independent. docs/benchmarks.md has what the v3 copy gains.
#pragma once

#include <string>

namespace impulse {

enum class KernelIsa {
  Baseline,  // x86-64 (SSE2)
  X86_64_V3  // AVX2 + FMA (+ BMI1/2, LZCNT, MOVBE, F16C): CPUs since about 2015; the default where the CPU has it
};

// "baseline" or "x86-64-v3".
const char* to_string(KernelIsa isa);

// Parses "baseline" or "x86-64-v3"; throws InvalidArgument naming `what` (the caller: an
// option or variable name) for anything else.
KernelIsa parse_kernel_isa(const std::string& s, const char* what);

// Whether this CPU (and its operating system) runs the kernels of `isa`; always true for the
// baseline, false for x86-64-v3 on other architectures or compilers.
bool kernel_isa_supported(KernelIsa isa);

// The kernels in use: IMPULSE_ISA from the environment ("baseline" or "x86-64-v3") when the
// library is loaded, else x86-64-v3 where kernel_isa_supported says so and the baseline elsewhere;
// then whatever set_kernel_isa chose. A process-wide setting, read by each kernel call: switch it
// between steps.
KernelIsa kernel_isa();

// Throws InvalidArgument if !kernel_isa_supported(isa); nothing changes then.
void set_kernel_isa(KernelIsa isa);

}  // namespace impulse
