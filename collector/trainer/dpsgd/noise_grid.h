// The fixed-point grid on which DP-SGD adds its discrete Gaussian noise
// (docs/math.md §6.8), so no floating-point noise ever meets the data
// (Mironov 2012: float noise added to a float value leaks low bits).
//
// With noise multiplier sigma, clip norm C and P parameters: the noise is
// N_Z(0, t^2) with t = 2^j, on the grid step s = sigma C / t, and the
// clipped sum S is rounded to it coordinate-wise, r(S) = round(S / s).
// Adding or removing one unit changes S by g with ||g|| <= C', and each
// coordinate's rounding moves by at most 1 (plus double rounding), so
//   ||r(S') - r(S)||_2 <= C'/s + sqrt(P) (1 + 2^-20)   (grid units).
// Clipping each example at C' = C - sqrt(P) s (1 + 2^-20) makes that at
// most C / s = t / sigma: exactly the sensitivity sigma's noise is
// calibrated to, so the accountants apply with sigma unchanged (the
// discrete Gaussian's RDP is at most the continuous one's: Canonne,
// Kamath, Steinke 2020, Thm 14, up to a term below 1e-100 at these t).
//
// j is the smallest exponent >= 20 with sqrt(P) sigma / 2^j <= 2^-10 (the
// clip loses at most 0.1%), at most 30.
#ifndef BLUR_TRAINER_DPSGD_NOISE_GRID_H
#define BLUR_TRAINER_DPSGD_NOISE_GRID_H

#include <cstddef>

namespace blur::trainer {

struct NoiseGrid {
  unsigned log2_sigma = 0;  // j: the noise is N_Z(0, 4^j) in grid units
  double step = 0;          // s = sigma C / 2^j
  double clip_for_sum = 0;  // C': each example's clip norm
};

// Throws std::invalid_argument unless sigma > 0, C > 0 finite, P > 0, and
// the margin sqrt(P) s stays below C / 2.
NoiseGrid noise_grid(double noise_multiplier, double clip_norm, size_t parameters);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DPSGD_NOISE_GRID_H
