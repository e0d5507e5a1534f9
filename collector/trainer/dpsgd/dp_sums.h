// Sums of bounded per-unit values, released with exact discrete Gaussian
// noise: the trainer's DP count of its units and its DP validation
// (trainer.h), so neither the exact N nor accuracy on private text leaves
// the trainer.
//
// Each unit contributes a vector c in [0, 1]^m (m values); adding or
// removing one unit moves the sums by at most sqrt(m) in L2. In fixed
// point: each value is rounded to an integer in [0, D] with
// D = floor(2^20 / (sigma sqrt(m))) >= 1, the integer sums get
// N_Z(0, 4^20) each (discrete_gaussian.h), and are divided by D. The
// integer sensitivity is D sqrt(m), so the release is the Gaussian
// mechanism with noise multiplier sigma_eff = 2^20 / (D sqrt(m)) >= sigma
// (one step at q = 1 for the accountants; the discrete Gaussian's RDP is at
// most the continuous one's, Canonne, Kamath, Steinke 2020).
#ifndef BLUR_TRAINER_DPSGD_DP_SUMS_H
#define BLUR_TRAINER_DPSGD_DP_SUMS_H

#include <string_view>
#include <vector>

#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

struct DpSums {
  std::vector<double> sums;      // noisy, in value units (may be negative)
  double noise_multiplier = 0;   // sigma_eff: what the accountants charge
};

// sigma_eff for m values per unit at noise multiplier sigma (> 0).
double dp_sums_noise_multiplier(double noise_multiplier, size_t values_per_unit);

// per_unit[u] holds unit u's m values, each clamped to [0, 1]. The noise is
// the stream (seed, label, 0). Throws std::invalid_argument unless sigma > 0
// and every unit has m >= 1 values (m taken from `values_per_unit`).
DpSums dp_sums(const std::vector<std::vector<double>>& per_unit, size_t values_per_unit,
               double noise_multiplier, const TrainSeed& seed, std::string_view label);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DPSGD_DP_SUMS_H
