#include "api/numeric_estimate_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>

namespace {

using namespace blur::collector;

TEST(NumericSummary, ExactMomentsAndHistogram) {
  NumericSummary summary;
  summary.add(-3);
  summary.add(5, 2);
  summary.add(1000000000000LL);  // sums stay exact (128-bit)
  EXPECT_EQ(summary.reports(), 4u);
  EXPECT_DOUBLE_EQ(summary.mean(), (1000000000000.0 + 7) / 4);
  const double values[] = {-3, 5, 5, 1e12};
  double mean = 0, sq = 0;
  for (double v : values) mean += v / 4;
  for (double v : values) sq += (v - mean) * (v - mean);
  EXPECT_NEAR(summary.sample_variance() / (sq / 3), 1.0, 1e-12);
  EXPECT_EQ(summary.histogram().at(5), 2u);
  EXPECT_EQ(summary.histogram().at(-3), 1u);
}

// Found by tests/fuzz/stored_data_fuzz (UBSan): value^2 * multiplicity,
// and the sums, overflowed signed 128 bits. A device's sint64 report value
// is not bounded (two reports near INT64_MAX did it), nor is a stored
// multiplicity. Exact while the sums fit, then from the histogram.
TEST(NumericSummary, ExtremeValuesAndMultiplicitiesNeverOverflow) {
  NumericSummary two;
  two.add(INT64_MIN);
  two.add(INT64_MIN);
  EXPECT_EQ(two.mean(), -9223372036854775808.0);
  EXPECT_EQ(two.sample_variance(), 0.0);

  NumericSummary ends;
  ends.add(INT64_MAX);
  ends.add(INT64_MIN);
  EXPECT_EQ(ends.mean(), -0.5);
  // (INT64_MAX - INT64_MIN)^2 / 2 = (2^64 - 1)^2 / 2
  EXPECT_NEAR(ends.sample_variance() / std::ldexp(1.0, 127), 1.0, 1e-12);

  NumericSummary near_limit;  // the largest sum of values n can carry: still exact
  near_limit.add(INT64_MAX, UINT64_MAX / 2);
  near_limit.add(INT64_MAX, UINT64_MAX / 2);
  EXPECT_EQ(near_limit.reports(), UINT64_MAX - 1);
  EXPECT_DOUBLE_EQ(near_limit.mean(), 9223372036854775807.0);
  EXPECT_LE(near_limit.sample_variance(), 1.0);  // 0, within long double's 64 bits at 2^63

  // Stored multiplicities that wrap n around (a corrupt row): meaningless
  // but finite answers (under UBSan, host-asan: no overflow).
  NumericSummary corrupt;
  corrupt.add(INT64_MAX, UINT64_MAX);
  corrupt.add(INT64_MIN + 1, UINT64_MAX);
  corrupt.add(INT64_MAX, UINT64_MAX);
  EXPECT_TRUE(std::isfinite(corrupt.mean()));
  EXPECT_TRUE(std::isfinite(corrupt.sample_variance()));
}

TEST(NumericSummary, NoiseVarianceOfTheDiscreteLaplace) {
  const MetricConfig metric{9, MechanismId::kDiscreteLaplace, 1000000, 101};
  const double r = std::exp(-1.0 / 100);
  EXPECT_NEAR(discrete_laplace_noise_variance(metric), 2 * r / ((1 - r) * (1 - r)), 1e-9);
  // For large scales it approaches the continuous Laplace's 2 b^2, b = 100.
  EXPECT_NEAR(discrete_laplace_noise_variance(metric) / (2 * 100.0 * 100.0), 1.0, 1e-3);
}

// The interval of the mean covers the truth at the nominal rate: T = 2000
// simulated fleets (true values uniform on 0..100 plus exact-in-law discrete
// Laplace noise built from two geometric draws), coverage count within
// 4.89 sd of Binomial(T, 0.95) (false alarm 1e-6).
TEST(NumericSummary, MeanIntervalHasNominalCoverage) {
  std::mt19937_64 rng(3);
  const MetricConfig metric{9, MechanismId::kDiscreteLaplace, 1000000, 101};
  const double r = std::exp(-1.0 / 100);
  std::geometric_distribution<int64_t> geometric(1 - r);
  std::uniform_int_distribution<int64_t> value(0, 100);
  const int trials = 2000;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    NumericSummary summary;
    double truth = 0;
    for (int i = 0; i < 500; ++i) {
      const int64_t x = value(rng);
      truth += static_cast<double>(x) / 500;
      summary.add(x + geometric(rng) - geometric(rng));  // difference of geometrics = DLap
    }
    const auto json = numeric_estimate_json(
        metric, summary, DeviceClustering::one_report_per_device(summary.reports()));
    const double low = json["estimates"][0]["ci95"][0], high = json["estimates"][0]["ci95"][1];
    covered += low <= truth && truth <= high;
  }
  EXPECT_LT(std::fabs(covered - 0.95 * trials), 4.89 * std::sqrt(trials * 0.95 * 0.05)) << covered;
}

// 1BitMean: the affine estimate M (b_bar (e^eps + 1) - 1) / (e^eps - 1) is
// unbiased and its interval covers at the nominal rate (simulated bits,
// T = 2000 fleets of 500, same thresholds as above).
TEST(NumericSummary, OneBitMeanUnbiasedWithNominalCoverage) {
  std::mt19937_64 rng(4);
  const MetricConfig metric{10, MechanismId::kOneBitMean, 1000000, 101};
  const double e = std::exp(1.0);
  std::uniform_int_distribution<int64_t> value(0, 100);
  std::uniform_real_distribution<double> unit(0, 1);
  const int trials = 2000;
  int covered = 0;
  double sum_error = 0;
  for (int t = 0; t < trials; ++t) {
    NumericSummary summary;
    double truth = 0;
    for (int i = 0; i < 500; ++i) {
      const int64_t x = value(rng);
      truth += static_cast<double>(x) / 500;
      const double p_one = 1 / (e + 1) + (x / 100.0) * (e - 1) / (e + 1);
      summary.add(unit(rng) < p_one ? 1 : 0);
    }
    const auto json = numeric_estimate_json(
        metric, summary, DeviceClustering::one_report_per_device(summary.reports()));
    const auto& mean = json["estimates"][0];
    sum_error += mean["estimate"].get<double>() - truth;
    covered += mean["ci95"][0].get<double>() <= truth && truth <= mean["ci95"][1].get<double>();
  }
  // Per-fleet standard error is about 100 * 2.16 * sqrt(0.25 / 500) = 4.8.
  EXPECT_LT(std::fabs(sum_error / trials), 5 * 4.9 / std::sqrt(trials));
  EXPECT_LT(std::fabs(covered - 0.95 * trials), 4.89 * std::sqrt(trials * 0.95 * 0.05)) << covered;
}

// Several reports per device: 100 devices x 30 reports (S2 / n = 30).
// Discrete Laplace's noise has one variance, so the error grows by exactly
// sqrt(30); 1BitMean's bits have variances between e^eps/(e^eps+1)^2 =
// 0.197 and 1/4, and with the sample variance inside that range (a third
// of the bits set: 0.222) the bound is 30 times the textbook variance too.
// With half of them set the sample variance, n/(n-1) 1/4, passes the
// ceiling, which then caps the bound at S2 / 4.
TEST(NumericSummary, DeviceClusteredErrorsGrowWithTheDesignEffect) {
  DeviceCounts counts;
  counts.reports = 3000;
  counts.devices = 100;
  counts.sum_squares = 100 * 900;
  counts.max_reports = 30;
  const DeviceClustering thirty = DeviceClustering::from_counts(3000, counts, 1);
  const DeviceClustering one = DeviceClustering::one_report_per_device(3000);
  for (const MechanismId mechanism : {MechanismId::kDiscreteLaplace, MechanismId::kOneBitMean}) {
    const MetricConfig metric{10, mechanism, 1000000, 101};
    NumericSummary summary;
    summary.add(1, 1000);
    summary.add(0, 2000);
    const double clustered =
        numeric_estimate_json(metric, summary, thirty)["estimates"][0]["stderr"].get<double>();
    const double textbook =
        numeric_estimate_json(metric, summary, one)["estimates"][0]["stderr"].get<double>();
    EXPECT_NEAR(clustered / textbook, std::sqrt(30.0), 1e-9) << static_cast<int>(mechanism);
  }
  const MetricConfig onebit{10, MechanismId::kOneBitMean, 1000000, 101};
  NumericSummary half;
  half.add(1, 1500);
  half.add(0, 1500);
  const double scale = 100 * (std::exp(1.0) + 1) / (std::exp(1.0) - 1);
  EXPECT_NEAR(numeric_estimate_json(onebit, half, thirty)["estimates"][0]["stderr"].get<double>(),
              scale * std::sqrt(100 * 900 * 0.25) / 3000, 1e-9);
}

}  // namespace
