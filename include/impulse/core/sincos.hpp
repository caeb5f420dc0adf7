// sincos: sin and cos of one angle, inline (module core/).
//
// Every revolute joint needs cos(q) and sin(q) once per step (the joint's rotation). Through libm
// the pair took about 110 instructions and a call (12 joints: 2.6 % of an ANYmal step's 55k
// instructions, by callgrind). This is the textbook method written out, so the compiler
// inlines it (about 85 instructions, no branch in the common case; on this machine's Zen 4 the
// latency of libm's pair, 17 ns in a dependent chain, and 1.4x its throughput):
//   1. Cody-Waite reduction: k = round(x 2/pi), r = x - k pi/2 with pi/2 split in three parts
//      (P1, P2: 33 significant bits each, so k P1 and k P2 are exact for |k| < 2^20; P3 the next
//      53 bits), |r| <= pi/4 up to rounding. x - k P1 is exact (Sterbenz); subtracting k P2 and
//      k P3 after it rounds at about ulp(r), so r keeps its relative accuracy even where r itself
//      is tiny (x near a multiple of pi/2: the test checks there up to k = 6.7e5).
//   2. Taylor polynomials on [-pi/4, pi/4]: sin to r^17, cos to r^18 (truncation below 1e-19,
//      so the error is the arithmetic's: within 1 ulp of libm for |x| <= 100 rad, 2 ulp up to
//      1.6e6, checked in tests/spatial/test_spatial.cpp). Evaluated by Estrin's scheme (pairs,
//      then pairs of pairs: a chain of four multiply-adds instead of Horner's eight), since a
//      joint's pose waits for it.
//   3. The quadrant k mod 4 swaps and negates the pair.
// |x| >= 2^20 pi/2 (1.6e6 rad), and non-finite x, go to std::sin and std::cos (NaN for inf and
// NaN, as libm). The constants were derived for this file from pi to 260 bits (Machin's formula)
// and the exact factorials. The results are the same on every IEEE-754 platform when the compiler
// neither reassociates nor contracts (GCC contracts a * b + c into an FMA only where the target
// has one, e.g. with -march=native: such a build differs by rounding, not in accuracy).
// With -ffast-math (which defines __FAST_MATH__; see the rounding of k below) the three-part
// reduction and the cos compensation may be reassociated: errors about 1e-16 |x|, measured.
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
  // k = round(x 2/pi) without a libm call (or SSE4.1's roundsd): by the 1.5 * 2^52 shift, whose
  // addition rounds to an integer. -ffast-math (a user's code that includes this header) may fold
  // the shift away (every result was wrong: sin(1e-8) = 0), so there the integer conversion does
  // it, which costs latency (CRBA's benchmark 864 ns against 839 with the shift).
  const Scalar t = x * kTwoOverPi;
#ifdef __FAST_MATH__
  const Scalar kd = static_cast<Scalar>(static_cast<long long>(t < 0 ? t - 0.5 : t + 0.5));
#else
  constexpr Scalar kShift = 0x1.8p52;
  const Scalar kd = (t + kShift) - kShift;
#endif
  const long long k = static_cast<long long>(kd);
  const Scalar r = ((x - kd * kP1) - kd * kP2) - kd * kP3;  // (the first difference is exact)
  const Scalar z = r * r, z2 = z * z, z4 = z2 * z2;
  // sin r = r + r^3 ps(z), cos r = 1 - z/2 + z^2 pc(z), with the Taylor coefficients 1/n!
  // (alternating). Estrin's scheme (pairs, then pairs of pairs): a dependency chain of four
  // multiply-adds instead of Horner's eight, for the latency of a joint's pose.
  const Scalar ps = ((-0x1.5555555555555p-3 + z * 0x1.1111111111111p-7) +
                     z2 * (-0x1.a01a01a01a01ap-13 + z * 0x1.71de3a556c734p-19)) +
                    z4 * ((-0x1.ae64567f544e4p-26 + z * 0x1.6124613a86d09p-33) +
                          z2 * (-0x1.ae7f3e733b81fp-41 + z * 0x1.952c77030ad4ap-49));
  const Scalar pc = ((0x1.5555555555555p-5 - z * 0x1.6c16c16c16c17p-10) +
                     z2 * (0x1.a01a01a01a01ap-16 - z * 0x1.27e4fb7789f5cp-22)) +
                    z4 * ((0x1.1eed8eff8d898p-29 - z * 0x1.93974a8c07c9dp-37) +
                          z2 * (0x1.ae7f3e733b81fp-45 - z * 0x1.6827863b97d97p-53));
  const Scalar sr = r + r * z * ps;
  // cos: 1 - z/2 rounds, and its rounding error ((1 - w) - hz, exact) is added back with the tail
  const Scalar hz = 0.5 * z, w = 1 - hz;
  const Scalar cr = w + (((1 - w) - hz) + z2 * pc);
  switch (k & 3) {  // x = k pi/2 + r
    case 0: s = sr; c = cr; break;
    case 1: s = cr; c = -sr; break;
    case 2: s = -sr; c = -cr; break;
    default: s = -cr; c = sr; break;
  }
}

}  // namespace impulse
