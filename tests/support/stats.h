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

// Upper tail P(chi2_k > x) (regularized upper incomplete gamma Q(k/2, x/2),
// Lentz continued fraction; accurate for the x > k + 2 used here).
inline double chi_square_upper_tail(double x, int k) {
  const double a = k / 2.0;
  const double z = x / 2.0;
  double b = z + 1 - a, c = 1e300, d = 1 / b, h = d;
  for (int i = 1; i < 1000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = 1 / (an * d + b);
    c = b + an / c;
    h *= d * c;
  }
  return exp(-z + a * log(z) - lgamma(a)) * h;
}

// The chi-square statistic above which a correct sampler lands with
// probability 1e-6 (k degrees of freedom).
inline double chi_square_critical_1e6(int k) {
  double low = k + 2.0, high = 100.0 + 10.0 * k;
  for (int i = 0; i < 100; ++i) {
    const double mid = (low + high) / 2;
    (chi_square_upper_tail(mid, k) > 1e-6 ? low : high) = mid;
  }
  return high;
}

// Pearson's statistic of observed counts against expected probabilities.
inline double chi_square(const uint64_t* counts, const double* probabilities, int bins,
                         uint64_t n) {
  double statistic = 0;
  for (int i = 0; i < bins; ++i) {
    const double expected = probabilities[i] * static_cast<double>(n);
    const double diff = static_cast<double>(counts[i]) - expected;
    statistic += diff * diff / expected;
  }
  return statistic;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_STATS_H
