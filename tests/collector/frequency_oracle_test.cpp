#include "estimate/frequency_oracle.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {

using namespace blur::collector;

TEST(FrequencyOracle, RandomizedResponseParameters) {
  const OracleParams grr = randomized_response_params(2000000, 16);
  EXPECT_NEAR(grr.p, std::exp(2.0) / (std::exp(2.0) + 15), 1e-15);
  EXPECT_NEAR(grr.q, 1 / (std::exp(2.0) + 15), 1e-15);
  // docs/math.md §3.3: GRR at eps = 2, d = 16 has Var*/n = 0.5240 for rare values.
  const CountEstimate rare = estimate_count(1000000, static_cast<uint64_t>(1e6 * grr.q), grr);
  EXPECT_NEAR(rare.std_error * rare.std_error / 1e6, 0.5240, 1e-3);
  const OracleParams params = randomized_response_params(1000000, 2);
  EXPECT_NEAR(params.p, std::exp(1.0) / (1 + std::exp(1.0)), 1e-15);
  EXPECT_NEAR(params.q, 1 / (1 + std::exp(1.0)), 1e-15);
  // Var*/n for GRR with d = 2 at eps = 1 is 0.9207 (docs/math.md §3.2).
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

// Several reports per device (estimate/device_clustering.h): per report
// q(1-q)/(p-q)^2 = 3 (another value) and p(1-p)/(p-q)^2 = 4 (v itself) at
// p = 1/2, q = 1/4. Devices of 1, 1 and 10 reports, I = 8: c = 20, clipped
// to 12 in the variance; V = 12 * 3 + 12 * 1 = 48, S2 = 102, m_max = 10:
// 3 * 102 + min(10 * (48 - 36), 102 * (4 - 3)) = 408. The design effect
// alone would give 102 / 12 * 48 = 408 too here, but 306 + 120 = 426 if the
// ceiling did not cap it: each term matters.
TEST(FrequencyOracle, DeviceClusteredVarianceByHand) {
  DeviceCounts counts;
  counts.reports = 12;
  counts.devices = 3;
  counts.sum_squares = 102;
  counts.max_reports = 10;
  const DeviceClustering clustering = DeviceClustering::from_counts(12, counts, 1);
  const CountEstimate e = estimate_count(12, 8, OracleParams{0.5, 0.25}, 0, clustering);
  EXPECT_DOUBLE_EQ(e.count, 20);
  EXPECT_DOUBLE_EQ(e.std_error * e.std_error, 408);
  // A value nobody holds (I = 3, c = 0): V = 36, all at the floor: 3 * 102.
  const CountEstimate rare = estimate_count(12, 3, OracleParams{0.5, 0.25}, 0, clustering);
  EXPECT_DOUBLE_EQ(rare.std_error * rare.std_error, 306);
  // One report per device: the textbook variance, unchanged.
  const CountEstimate one = estimate_count(12, 8, OracleParams{0.5, 0.25}, 0,
                                           DeviceClustering::one_report_per_device(12));
  EXPECT_DOUBLE_EQ(one.std_error * one.std_error, 48);
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
  const OracleParams params = randomized_response_params(1000000, 2);
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

// k-ary randomized response, simulated directly (std::mt19937_64, fixed
// seed) for small and large domains and eps in {0.5, 1, 2, 4}. Over T = 2000
// trials of n = 2000 reports, for a value held by 30% of devices and for a
// value nobody holds:
//  - mean error within 5 standard errors of zero (false alarm 6e-7);
//  - empirical variance / formula variance within 1 +- 0.16: the ratio has
//    sd sqrt(2/(T-1)) = 0.0316, so 0.16 is 5 sd (false alarm ~1e-6 per check).
TEST(FrequencyOracle, UnbiasedWithTheFormulaVarianceAcrossDomainsAndEpsilons) {
  std::mt19937_64 rng(7);
  const uint64_t n = 2000;
  const int trials = 2000;
  for (uint32_t domain : {2u, 16u, 128u}) {
    for (uint32_t epsilon_micros : {500000u, 1000000u, 2000000u, 4000000u}) {
      const OracleParams params = randomized_response_params(epsilon_micros, domain);
      std::bernoulli_distribution keep(params.p);
      std::uniform_int_distribution<uint32_t> other(1, domain - 1);
      const uint64_t held = 3 * n / 10;  // value 0: 30% of devices; value 1: nobody
      double sum[2] = {}, sum_squares[2] = {};
      for (int t = 0; t < trials; ++t) {
        std::vector<uint64_t> support(domain, 0);
        for (uint64_t i = 0; i < n; ++i) {
          const uint32_t truth = i < held ? 0 : (domain == 2 ? 1 : 2 + i % (domain - 2));
          const uint32_t out = keep(rng) ? truth : (truth + other(rng)) % domain;
          ++support[out];
        }
        for (uint32_t v = 0; v < 2; ++v) {
          const double e = estimate_count(n, support[v], params).count;
          sum[v] += e;
          sum_squares[v] += e * e;
        }
      }
      const double truth[2] = {static_cast<double>(held), domain == 2 ? n - held * 1.0 : 0.0};
      for (uint32_t v = 0; v < 2; ++v) {
        const double gap = params.p - params.q;
        const double formula = n * params.q * (1 - params.q) / (gap * gap) +
                               truth[v] * (1 - params.p - params.q) / gap;
        const double mean = sum[v] / trials;
        const double variance = (sum_squares[v] - trials * mean * mean) / (trials - 1);
        EXPECT_LT(std::fabs(mean - truth[v]), 5 * std::sqrt(formula / trials))
            << "domain " << domain << " eps " << epsilon_micros << " value " << v;
        EXPECT_NEAR(variance / formula, 1.0, 0.16)
            << "domain " << domain << " eps " << epsilon_micros << " value " << v;
      }
    }
  }
}

// Unary encodings: the support count of a value held by c of n devices is
// Binomial(c, p) + Binomial(n - c, q), simulated directly. Same checks and
// false-alarm rates as above, over T = 2000 trials of n = 2000.
TEST(FrequencyOracle, UnaryEncodingsUnbiasedWithTheFormulaVariance) {
  std::mt19937_64 rng(11);
  const uint64_t n = 2000;
  const int trials = 2000;
  for (uint32_t epsilon_micros : {500000u, 1000000u, 2000000u, 4000000u}) {
    for (const OracleParams params :
         {symmetric_unary_params(epsilon_micros), optimized_unary_params(epsilon_micros)}) {
      for (const uint64_t held : {uint64_t{600}, uint64_t{0}}) {
        std::binomial_distribution<uint64_t> from_holders(held, params.p);
        std::binomial_distribution<uint64_t> from_others(n - held, params.q);
        double sum = 0, sum_squares = 0;
        for (int t = 0; t < trials; ++t) {
          const double e = estimate_count(n, from_holders(rng) + from_others(rng), params).count;
          sum += e;
          sum_squares += e * e;
        }
        const double gap = params.p - params.q;
        const double formula =
            n * params.q * (1 - params.q) / (gap * gap) + held * (1 - params.p - params.q) / gap;
        const double mean = sum / trials;
        const double variance = (sum_squares - trials * mean * mean) / (trials - 1);
        EXPECT_LT(std::fabs(mean - held), 5 * std::sqrt(formula / trials))
            << "eps " << epsilon_micros << " p " << params.p << " held " << held;
        EXPECT_NEAR(variance / formula, 1.0, 0.16)
            << "eps " << epsilon_micros << " p " << params.p << " held " << held;
      }
    }
  }
  // docs/math.md §3.4 reference values of Var*/n for rare values: OUE 3.6827 and SUE
  // 3.9177 at eps = 1; OUE 0.0760 and SUE 0.1810 at eps = 4.
  const struct {
    OracleParams params;
    double expected;
  } references[] = {{optimized_unary_params(1000000), 3.6827},
                    {symmetric_unary_params(1000000), 3.9177},
                    {optimized_unary_params(4000000), 0.0760},
                    {symmetric_unary_params(4000000), 0.1810}};
  for (const auto& r : references) {
    const double gap = r.params.p - r.params.q;
    EXPECT_NEAR(r.params.q * (1 - r.params.q) / (gap * gap), r.expected, 1e-4);
  }
}

}  // namespace
