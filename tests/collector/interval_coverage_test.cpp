// Coverage of the collector's 95% intervals when every device sends 30
// reports to one estimate, with memoized mechanisms (the reports of a
// device repeat its permanent response): the device-clustered variance
// (estimate/device_clustering.h) must cover, the textbook one does not.
//
// R = 4,000 repetitions per case, fixed seeds (std::mt19937_64), the
// devices' true values fixed (the estimand is conditional on them, as the
// collector's is). Thresholds: coverage >= 0.94. If the true coverage were
// exactly 0.95, the binomial SD of the observed one is
// sqrt(0.95 * 0.05 / 4000) = 0.0034 and 0.94 lies 2.9 SD below: a false
// alarm rate of 0.2% per case; the clustered bound is conservative
// (coverage above 0.95), so the rate is smaller still. Power: the same
// test asserts the textbook variance covers below 0.8 (measured far below,
// see the printed figures), so a wrong variance fails it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "api/numeric_estimate_json.h"
#include "blur/mechanisms/unary_encoding.h"
#include "estimate/device_clustering.h"
#include "estimate/frequency_oracle.h"

namespace {

using namespace blur::collector;

constexpr int kRepetitions = 4000;
constexpr uint64_t kDevices = 300;
constexpr uint64_t kReportsPerDevice = 30;

// kDevices devices with kReportsPerDevice reports each, as the store's
// counts would say.
DeviceClustering thirty_each() {
  DeviceCounts counts;
  counts.reports = kDevices * kReportsPerDevice;
  counts.devices = kDevices;
  counts.sum_squares = static_cast<double>(kDevices * kReportsPerDevice * kReportsPerDevice);
  counts.max_reports = kReportsPerDevice;
  return DeviceClustering::from_counts(counts.reports, counts, 1);
}

struct Coverage {
  double clustered;
  double independent;
};

// Memoized SUE for one value v (RAPPOR's permanent + instantaneous
// response, sdk memoized.h): each device's bit of v is flipped once with q1
// (the permanent response, SUE at eps_L), then every report flips that
// permanent bit again with q2, chosen so that one report is SUE at eps_r:
// q1 + q2 (1 - 2 q1) = q_t. The collector estimates SUE at eps_r.
Coverage memoized_sue_coverage(uint32_t longitudinal_micros, uint32_t report_micros,
                               uint64_t seed) {
  using blur::UnaryEncoding;
  const double q1 = std::ldexp(
      static_cast<double>(
          UnaryEncoding::flip_numerator(UnaryEncoding::Kind::kSymmetric, longitudinal_micros)),
      -64);
  const double qt = std::ldexp(
      static_cast<double>(
          UnaryEncoding::flip_numerator(UnaryEncoding::Kind::kSymmetric, report_micros)),
      -64);
  const double q2 = (qt - q1) / (1 - 2 * q1);
  const OracleParams params = symmetric_unary_params(report_micros);
  const DeviceClustering clustered = thirty_each();
  const uint64_t n = kDevices * kReportsPerDevice;
  const DeviceClustering independent = DeviceClustering::one_report_per_device(n);
  const uint64_t holders = kDevices * 3 / 10;  // 30% of the devices have v
  const double truth = static_cast<double>(holders * kReportsPerDevice);

  std::mt19937_64 rng(seed);
  std::bernoulli_distribution permanent_flip(q1);
  std::binomial_distribution<uint64_t> report_flips(kReportsPerDevice, q2);
  int covered[2] = {0, 0};
  for (int r = 0; r < kRepetitions; ++r) {
    uint64_t support = 0;
    for (uint64_t d = 0; d < kDevices; ++d) {
      const bool permanent = (d < holders) != permanent_flip(rng);
      const uint64_t flipped = report_flips(rng);
      support += permanent ? kReportsPerDevice - flipped : flipped;
    }
    const CountEstimate with = estimate_count(n, support, params, 0, clustered);
    const CountEstimate without = estimate_count(n, support, params, 0, independent);
    covered[0] += with.ci95_low <= truth && truth <= with.ci95_high;
    covered[1] += without.ci95_low <= truth && truth <= without.ci95_high;
  }
  return {covered[0] / static_cast<double>(kRepetitions),
          covered[1] / static_cast<double>(kRepetitions)};
}

TEST(IntervalCoverage, MemoizedUnaryEncodingThirtyReportsPerDevice) {
  struct Case {
    uint32_t longitudinal, report;
  };
  for (const Case c : {Case{1000000, 250000}, Case{2000000, 1800000}}) {
    const Coverage coverage = memoized_sue_coverage(c.longitudinal, c.report, 20261125 + c.report);
    std::printf(
        "memoized SUE eps_L %.2f eps_r %.2f, %d devices x %d reports: coverage %.4f "
        "(device-clustered), %.4f (independent reports)\n",
        c.longitudinal / 1e6, c.report / 1e6, static_cast<int>(kDevices),
        static_cast<int>(kReportsPerDevice), coverage.clustered, coverage.independent);
    EXPECT_GE(coverage.clustered, 0.94) << c.longitudinal << " " << c.report;
    EXPECT_LT(coverage.independent, 0.8) << c.longitudinal << " " << c.report;
  }
}

// Memoized 1BitMean (sdk memoized_mean.h) at eps = 1 on 0..100: each
// device draws its bit once and repeats it in all its reports.
TEST(IntervalCoverage, MemoizedOneBitMeanThirtyReportsPerDevice) {
  MetricConfig metric;
  metric.id = 1;
  metric.mechanism = MechanismId::kOneBitMean;
  metric.epsilon_micros = 1000000;
  metric.domain_size = 101;
  const double M = metric.domain_size - 1.0, e = std::exp(1.0);
  std::vector<double> values(kDevices), p(kDevices);
  double truth = 0;
  for (uint64_t d = 0; d < kDevices; ++d) {
    values[d] = static_cast<double>((d * 37) % metric.domain_size);  // spread over the range
    p[d] = 1 / (e + 1) + (values[d] / M) * (e - 1) / (e + 1);
    truth += values[d] / kDevices;
  }
  const uint64_t n = kDevices * kReportsPerDevice;
  const DeviceClustering clustered = thirty_each();
  const DeviceClustering independent = DeviceClustering::one_report_per_device(n);
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  int covered[2] = {0, 0};
  for (int r = 0; r < kRepetitions; ++r) {
    uint64_t ones = 0;
    for (uint64_t d = 0; d < kDevices; ++d) ones += uniform(rng) < p[d] ? kReportsPerDevice : 0;
    NumericSummary summary;
    summary.add(1, ones);
    summary.add(0, n - ones);
    int which = 0;
    for (const DeviceClustering* c : {&clustered, &independent}) {
      const auto interval = numeric_estimate_json(metric, summary, *c)["estimates"][0]["ci95"];
      covered[which++] += interval[0].get<double>() <= truth && truth <= interval[1].get<double>();
    }
  }
  const double with = covered[0] / static_cast<double>(kRepetitions);
  const double without = covered[1] / static_cast<double>(kRepetitions);
  std::printf(
      "memoized 1BitMean eps 1, %d devices x %d reports: coverage %.4f "
      "(device-clustered), %.4f (independent reports)\n",
      static_cast<int>(kDevices), static_cast<int>(kReportsPerDevice), with, without);
  EXPECT_GE(with, 0.94);
  EXPECT_LT(without, 0.8);
}

}  // namespace
