// tests/support/random_reports.h follows the mechanism table: a metric per
// table line, each valid for the collector, and random reports of each that
// the collector's payload check accepts (the aggregate and store tests that
// use them then cover every mechanism, including one added later).
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "ingest/batch_validator.h"
#include "config/metric_rules.h"
#include "random_reports.h"

using blur::collector::MetricConfig;

TEST(RandomReports, OneValidMetricPerTableLine) {
  const std::vector<MetricConfig> metrics = blur_test::one_metric_per_mechanism();
  ASSERT_EQ(metrics.size(), blur::kMechanismCount);
  std::set<uint32_t> mechanisms;
  for (const MetricConfig& metric : metrics) {
    SCOPED_TRACE(blur::mechanism_name(metric.mechanism));
    EXPECT_TRUE(blur::is_mechanism(static_cast<uint32_t>(metric.mechanism)));
    EXPECT_EQ(blur::collector::check_metric(metric), "");
    mechanisms.insert(static_cast<uint32_t>(metric.mechanism));
  }
  EXPECT_EQ(mechanisms.size(), blur::kMechanismCount);  // each line once
}

TEST(RandomReports, EveryMechanismsReportsPassThePayloadCheck) {
  std::mt19937_64 rng(27);
  for (const MetricConfig& metric : blur_test::one_metric_per_mechanism()) {
    SCOPED_TRACE(blur::mechanism_name(metric.mechanism));
    for (int i = 0; i < 500; ++i) {
      const auto report = blur_test::random_report(metric, rng);
      ASSERT_EQ(blur::collector::payload_shape_error(metric, report), "") << "report " << i;
    }
  }
}
