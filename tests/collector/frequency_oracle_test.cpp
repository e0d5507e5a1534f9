#include "estimate/frequency_oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace blur::collector;

TEST(FrequencyOracle, BinaryRandomizedResponseParameters) {
  const OracleParams params = binary_rr_params(1000000);
  EXPECT_NEAR(params.p, std::exp(1.0) / (1 + std::exp(1.0)), 1e-15);
  EXPECT_NEAR(params.q, 1 / (1 + std::exp(1.0)), 1e-15);
  // Var*/n for GRR with d = 2 at eps = 1 is 0.9207 (MATH.md, Wang et al. Table).
  const CountEstimate e = estimate_count(1000000, 500000, params);
  EXPECT_NEAR(e.std_error * e.std_error / 1e6, 0.9207, 1e-4);
}

TEST(FrequencyOracle, HandComputedEstimate) {
  // n = 1000, I = 400, p = 0.75, q = 0.25: c = (400 - 250) / 0.5 = 300,
  // Var = 1000 * 0.25 * 0.75 / 0.25 + 300 * 0 / 0.5 = 750.
  const CountEstimate e = estimate_count(1000, 400, OracleParams{0.75, 0.25});
  EXPECT_DOUBLE_EQ(e.count, 300);
  EXPECT_DOUBLE_EQ(e.std_error, std::sqrt(750.0));
  EXPECT_DOUBLE_EQ(e.ci95_low, 300 - kZ95 * std::sqrt(750.0));
  // A p/q oracle with 1 - p - q != 0 (e.g. OUE, p = 1/2) adds c (1-p-q)/(p-q).
  const CountEstimate oue = estimate_count(1000, 400, OracleParams{0.5, 0.25});
  EXPECT_DOUBLE_EQ(oue.count, 600);
  EXPECT_DOUBLE_EQ(oue.std_error * oue.std_error, 1000 * 0.25 * 0.75 / 0.0625 + 600 * 0.25 / 0.25);
}

// Simulate binary RR directly (std::mt19937_64, fixed seed) and check
// (a) the estimator is unbiased: the mean over T trials is within 5 standard
//     errors of the truth (false alarm 6e-7), and a "forgot to debias"
//     estimator (I itself) is not;
// (b) the 95% interval covers the truth in 95% of trials: coverage count is
//     Binomial(T, 0.95), accepted within +-4.89 sd (false alarm 1e-6).
TEST(FrequencyOracle, UnbiasedWithNominalCoverage) {
  std::mt19937_64 rng(20261122);
  const uint64_t n = 2000;
  const uint64_t truth_ones = 600;
  const int trials = 4000;
  const OracleParams params = binary_rr_params(1000000);
  std::bernoulli_distribution keep(params.p);
  double sum = 0;
  double sum_raw = 0;
  int covered = 0;
  double se = 0;
  for (int t = 0; t < trials; ++t) {
    uint64_t ones = 0;
    for (uint64_t i = 0; i < n; ++i) {
      const bool truth = i < truth_ones;
      ones += keep(rng) ? truth : !truth;
    }
    const CountEstimate e = estimate_count(n, ones, params);
    sum += e.count;
    sum_raw += static_cast<double>(ones);
    se = e.std_error;
    covered += e.ci95_low <= truth_ones && truth_ones <= e.ci95_high;
  }
  const double mean_se = se / std::sqrt(static_cast<double>(trials));
  EXPECT_LT(std::fabs(sum / trials - truth_ones), 5 * mean_se);
  EXPECT_GT(std::fabs(sum_raw / trials - truth_ones), 5 * mean_se);
  const double coverage_sd = std::sqrt(trials * 0.95 * 0.05);
  EXPECT_LT(std::fabs(covered - 0.95 * trials), 4.89 * coverage_sd) << covered << " of " << trials;
}

}  // namespace
