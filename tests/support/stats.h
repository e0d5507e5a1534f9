// Statistical test helpers. Every check uses a fixed seed and a threshold
// chosen for a stated false-alarm rate.
#ifndef BLUR_TESTS_STATS_H
#define BLUR_TESTS_STATS_H

#include <math.h>
#include <stdint.h>

namespace blur_test {

// Two-sided standard-normal quantile for a false-alarm rate of 1e-6 per
// check: P(|Z| > 4.8916) = 1e-6.
constexpr double kZ1e6 = 4.891638;

// z-score of k successes in n Bernoulli(p) trials.
inline double binomial_z(uint64_t k, uint64_t n, double p) {
  const double nd = static_cast<double>(n);
  return (static_cast<double>(k) - nd * p) / sqrt(nd * p * (1.0 - p));
}

}  // namespace blur_test

#endif  // BLUR_TESTS_STATS_H
