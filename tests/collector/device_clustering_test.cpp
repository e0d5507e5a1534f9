#include "estimate/device_clustering.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace blur::collector;

DeviceCounts counts_of(std::initializer_list<uint64_t> per_device) {
  DeviceCounts c;
  for (uint64_t m : per_device) {
    c.reports += m;
    c.devices += 1;
    c.sum_squares += static_cast<double>(m * m);
    c.max_reports = std::max(c.max_reports, m);
  }
  return c;
}

TEST(DeviceClustering, OneReportPerDeviceKeepsTheTextbookVariance) {
  const DeviceClustering one = DeviceClustering::one_report_per_device(1000);
  EXPECT_DOUBLE_EQ(one.design_effect(), 1.0);
  EXPECT_DOUBLE_EQ(one.variance(123.5, 0.1, 0.2), 123.5);
  EXPECT_EQ(describe_variance(one), "independent reports (one per device)");
  // The same from the store's counts.
  const DeviceClustering counted = DeviceClustering::from_counts(3, counts_of({1, 1, 1}), 4);
  EXPECT_DOUBLE_EQ(counted.variance(7.0, 2.0, 3.0), 7.0);
  EXPECT_EQ(describe_variance(counted), "independent reports (one per device)");
}

// Equal counts and equal per-report variances: the design effect S2 / n
// (= m) times the independent variance, the Cauchy-Schwarz bound.
TEST(DeviceClustering, EqualCountsMultiplyByTheDesignEffect) {
  const DeviceClustering c = DeviceClustering::from_counts(90, counts_of({30, 30, 30}), 1);
  EXPECT_DOUBLE_EQ(c.design_effect(), 30.0);
  EXPECT_DOUBLE_EQ(c.variance(90 * 2.5, 2.5, 2.5), 30 * 90 * 2.5);
  EXPECT_EQ(describe_variance(c), "device-clustered (design effect 30.0 over 3 devices)");
}

// Devices with more reports may have the larger per-report variance (a
// frequency oracle's p(1-p) > q(1-q) for the devices that hold v): the
// bound is sum_d m_d V_d, which the design effect times V understates.
TEST(DeviceClustering, UnequalCountsBoundTheWorstDevice) {
  const double f = 1.0, c = 3.0;  // per-report variances: floor, ceiling
  const DeviceClustering k = DeviceClustering::from_counts(12, counts_of({1, 1, 10}), 1);
  const double independent = 2 * f + 10 * c;         // the 10-report device at the ceiling
  const double worst = 1 * f + 1 * f + 10 * 10 * c;  // sum_d m_d V_d
  EXPECT_DOUBLE_EQ(k.variance(independent, f, c), worst);
  EXPECT_LT(k.design_effect() * independent, worst);
  // Never above the all-ceiling bound S2 c, never below the independent V.
  EXPECT_LE(k.variance(12 * c, f, c), 102 * c + 1e-9);
  EXPECT_GE(k.variance(independent, f, c), independent);
  // No ceiling (word discovery): m_max times V.
  EXPECT_DOUBLE_EQ(k.variance(5.0, 0.0, INFINITY), 50.0);
}

// Reports whose counts were pruned: each of their devices sent at most the
// cap; S2 <= (sqrt(S2 counted) + sqrt(cap u))^2 and m_max <= counted + cap.
TEST(DeviceClustering, UncountedReportsAreBoundedByTheCap) {
  const DeviceCounts counted = counts_of({2, 2, 2, 2, 2});  // 10 of the 1,210 reports
  const DeviceClustering c = DeviceClustering::from_counts(1210, counted, 96);
  EXPECT_EQ(c.uncounted_reports(), 1200u);
  EXPECT_EQ(c.uncounted_cap(), 96u);
  const double root = std::sqrt(20.0) + std::sqrt(96.0 * 1200);
  EXPECT_DOUBLE_EQ(c.sum_squares(), root * root);
  EXPECT_DOUBLE_EQ(c.max_reports(), 98.0);
  EXPECT_EQ(describe_variance(c),
            "device-clustered (design effect 97.7 over 5 devices; 1,200 reports without device "
            "counts (pruned), up to 96 per device)");
  // The cap never exceeds the uncounted reports themselves.
  const DeviceClustering few = DeviceClustering::from_counts(11, counted, 96);
  EXPECT_EQ(few.uncounted_cap(), 1u);
  // Counts above the estimate's reports (a commit between the two reads)
  // only overstate: S2 stays within [n, m_max n].
  const DeviceClustering more = DeviceClustering::from_counts(4, counted, 96);
  EXPECT_EQ(more.uncounted_reports(), 0u);
  EXPECT_LE(more.sum_squares(), more.max_reports() * 4);
  EXPECT_GE(more.sum_squares(), 4.0);
}

TEST(DeviceClustering, MetricBoundTimesBucketsCapsUncountedDevices) {
  MetricConfig metric{1, MechanismId::kSymmetricUnaryEncoding, 1000000, 2};
  metric.longitudinal_epsilon_micros = 2000000;
  metric.max_reports_per_bucket = 3;
  const DeviceClustering c = metric_clustering(metric, 100, DeviceCounts{}, 5);
  EXPECT_EQ(c.uncounted_reports(), 100u);
  EXPECT_EQ(c.uncounted_cap(), 15u);
  EXPECT_DOUBLE_EQ(c.sum_squares(), 1500.0);
  EXPECT_DOUBLE_EQ(c.max_reports(), 15.0);
}

// One-shot reports are independent given the devices' values: the textbook
// variance, whatever the counts, and no counts are needed.
TEST(DeviceClustering, OneShotMetricsKeepTheTextbookVariance) {
  const MetricConfig metric{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
  EXPECT_FALSE(needs_device_clustering(metric));
  DeviceCounts skewed;
  skewed.reports = skewed.max_reports = 100;
  skewed.devices = 1;
  skewed.sum_squares = 10000;
  const DeviceClustering c = metric_clustering(metric, 100, skewed, 5);
  EXPECT_DOUBLE_EQ(c.variance(7.0, 0.0, 1.0), 7.0);
  EXPECT_DOUBLE_EQ(c.design_effect(), 1.0);
  EXPECT_EQ(describe_variance(c), "independent given the devices' values (one-shot reports)");
}

TEST(DeviceClustering, DescriptionGroupsThousands) {
  DeviceCounts many;
  many.reports = 3612;
  many.devices = 1204;
  many.sum_squares = 1204 * 9.0;
  many.max_reports = 3;
  EXPECT_EQ(describe_variance(DeviceClustering::from_counts(3612, many, 1)),
            "device-clustered (design effect 3.0 over 1,204 devices)");
}

}  // namespace
