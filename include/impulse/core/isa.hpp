// The instruction set of the step's hot kernels, chosen at run time (module core/).
//
// The library is compiled for the portable x86-64 baseline (SSE2). The kernels that make up most
// of a robot's step (the fused RNEA + CRBA + Jacobians, the tree-sparse L^T D L factor and its
// solves, the stepper's stages, the Delassus assembly, the bisection sweeps; the list is in
// docs/dynamics.md, "Kernels for x86-64-v3") are compiled a second time for x86-64-v3 (AVX2, FMA,
// BMI2) in the same binary, and a process-wide switch picks the copy. The baseline is the
// default: its bits are the same on every x86-64 machine and equal to the SIMD lanes of the
// batched step (dynamics/lanes.hpp). The v3 copy differs from it in the last bits (fused
// multiply-adds round once); each copy is deterministic and thread-count independent.
// docs/benchmarks.md has what each gains.
#pragma once

#include <string>

namespace impulse {

enum class KernelIsa {
  Baseline,  // x86-64 (SSE2): the default
  X86_64_V3  // AVX2 + FMA (+ BMI1/2, LZCNT, MOVBE, F16C): CPUs since about 2015
};

// "baseline" or "x86-64-v3".
const char* to_string(KernelIsa isa);

// Parses "baseline" or "x86-64-v3"; throws InvalidArgument naming `what` (the caller: an
// option or variable name) for anything else.
KernelIsa parse_kernel_isa(const std::string& s, const char* what);

// Whether this CPU (and its operating system) runs the kernels of `isa`; always true for the
// baseline, false for x86-64-v3 on other architectures or compilers.
bool kernel_isa_supported(KernelIsa isa);

// The kernels in use: IMPULSE_ISA from the environment ("baseline" or "x86-64-v3") at the first
// call, else the baseline; then whatever set_kernel_isa chose. A process-wide setting: switch it
// between steps, not while another thread steps (a step mixing both copies is valid but has
// neither copy's bits).
KernelIsa kernel_isa();

// Throws InvalidArgument if !kernel_isa_supported(isa); nothing changes then.
void set_kernel_isa(KernelIsa isa);

}  // namespace impulse
