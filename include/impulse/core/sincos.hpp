// sincos: sin and cos of one angle, inline (module core/).
//
// Every revolute joint needs cos(q) and sin(q) once per step (the joint's rotation), and through
// libm that pair cost about 190 instructions and a call each: 2.6 % of an ANYmal step (12 joints,
// about 55k instructions; docs/benchmarks.md). This is the textbook method, written out so the
// compiler can inline it (about 45 instructions, no branch in the common case):
//   1. Cody-Waite reduction: k = round(x 2/pi), r = x - k pi/2 with pi/2 split in three parts
//      (P1, P2: 33 significant bits each, so k P1 and k P2 are exact for |k| < 2^20; P3 the next
//      53 bits), |r| <= pi/4 up to rounding; r's error is below 2^-100 |k| + ulp(r)/2.
//   2. Taylor polynomials on [-pi/4, pi/4]: sin to r^17, cos to r^18 (truncation below 1e-19,
//      so the error is Horner's rounding: within 1 ulp of the true value, checked against libm
//      in tests/core/test_sincos.cpp).
//   3. The quadrant k mod 4 swaps and negates the pair.
// |x| >= 2^20 pi/2 (1.6e6 rad), and non-finite x, go to std::sin and std::cos (same results as
// libm there: NaN for inf and NaN). The constants were derived for this file from pi to 260 bits
// (Machin's formula) and the exact factorials; the results do not depend on the compiler or the
// platform as long as IEEE double arithmetic is not contracted or reassociated (GCC's default
// -ffp-contract=fast only contracts where the target has FMA, e.g. -march=native: then the
// results differ from a build without FMA by rounding, not in accuracy).
#pragma once

#include <cmath>

#include "impulse/core/types.hpp"

namespace impulse {

inline void sincos(Scalar x, Scalar& s, Scalar& c) {
  constexpr Scalar kTwoOverPi = 0x1.45f306dc9c883p-1;
  constexpr Scalar kP1 = 0x1.921fb544p+0;     // pi/2, first 33 bits
  constexpr Scalar kP2 = 0x1.0b4611a6p-34;    // next 33 bits
  constexpr Scalar kP3 = 0x1.3198a2e037073p-69;  // the rest, rounded to 53 bits
  constexpr Scalar kLimit = 0x1p20 * 1.5707963267948966;
  if (!(std::abs(x) < kLimit)) {  // also NaN and inf
    s = std::sin(x);
    c = std::cos(x);
    return;
  }
  // round to nearest by the 1.5 * 2^52 shift (|x 2/pi| < 2^20): no libm call, no SSE4.1 needed
  constexpr Scalar kShift = 0x1.8p52;
  const Scalar kd = (x * kTwoOverPi + kShift) - kShift;
  const long long k = static_cast<long long>(kd);
  const Scalar r = ((x - kd * kP1) - kd * kP2) - kd * kP3;
  const Scalar z = r * r;
  // sin r = r + r^3 (S3 + z (S5 + ...)); cos r = 1 - z/2 + z^2 (C4 + z (C6 + ...)): 1/n! alternating
  const Scalar ps =
      -0x1.5555555555555p-3 +
      z * (0x1.1111111111111p-7 +
           z * (-0x1.a01a01a01a01ap-13 +
                z * (0x1.71de3a556c734p-19 +
                     z * (-0x1.ae64567f544e4p-26 +
                          z * (0x1.6124613a86d09p-33 + z * (-0x1.ae7f3e733b81fp-41 + z * 0x1.952c77030ad4ap-49))))));
  const Scalar pc =
      0x1.5555555555555p-5 +
      z * (-0x1.6c16c16c16c17p-10 +
           z * (0x1.a01a01a01a01ap-16 +
                z * (-0x1.27e4fb7789f5cp-22 +
                     z * (0x1.1eed8eff8d898p-29 +
                          z * (-0x1.93974a8c07c9dp-37 + z * (0x1.ae7f3e733b81fp-45 - z * 0x1.6827863b97d97p-53))))));
  const Scalar sr = r + r * z * ps;
  // cos: 1 - z/2 rounds, and its rounding error ((1 - w) - hz, exact) is added back with the tail
  const Scalar hz = 0.5 * z, w = 1 - hz;
  const Scalar cr = w + (((1 - w) - hz) + z * z * pc);
  switch (k & 3) {  // x = k pi/2 + r
    case 0: s = sr; c = cr; break;
    case 1: s = cr; c = -sr; break;
    case 2: s = -sr; c = -cr; break;
    default: s = -cr; c = sr; break;
  }
}

}  // namespace impulse
