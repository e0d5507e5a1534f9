#include "metrics/metric_config.h"

#include <gtest/gtest.h>

namespace {

using namespace blur::collector;

TEST(MetricConfig, ParsesEpsilonExactlyInMicroNats) {
  EXPECT_EQ(parse_epsilon_micros("1"), 1000000u);
  EXPECT_EQ(parse_epsilon_micros("1.0"), 1000000u);
  EXPECT_EQ(parse_epsilon_micros("0.25"), 250000u);
  EXPECT_EQ(parse_epsilon_micros(".5"), 500000u);
  EXPECT_EQ(parse_epsilon_micros("0.1234569"), 123456u);  // truncated, never rounded up
  EXPECT_EQ(parse_epsilon_micros("20"), 20000000u);
  for (const char* bad :
       {"", ".", "0", "0.0000001", "20.000001", "-1", "1e0", "1,5", "abc", "99999999999"}) {
    EXPECT_FALSE(parse_epsilon_micros(bad).has_value()) << bad;
  }
}

TEST(MetricConfig, ParsesSpecsAndExplainsErrors) {
  const auto metric = parse_metric_spec("7:rr:0.5");
  ASSERT_TRUE(metric) << metric.error().message;
  EXPECT_EQ(metric->id, 7u);
  EXPECT_EQ(metric->mechanism, MechanismId::kBinaryRandomizedResponse);
  EXPECT_EQ(metric->epsilon_micros, 500000u);
  EXPECT_EQ(metric->domain_size, 2u);
  EXPECT_EQ(describe(*metric), "metric 7 (rr, epsilon 0.500000, domain 2)");
  const auto grr = parse_metric_spec("8:grr:2:16");
  ASSERT_TRUE(grr) << grr.error().message;
  EXPECT_EQ(grr->mechanism, MechanismId::kGeneralizedRandomizedResponse);
  EXPECT_EQ(grr->domain_size, 16u);
  const auto laplace = parse_metric_spec("9:laplace:0.5:1000001");
  ASSERT_TRUE(laplace) << laplace.error().message;
  EXPECT_EQ(laplace->mechanism, MechanismId::kDiscreteLaplace);
  EXPECT_EQ(blur::mechanism_payload(laplace->mechanism), blur::PayloadKind::kNumber);
  EXPECT_TRUE(is_numeric(laplace->mechanism));
  const auto onebit = parse_metric_spec("10:onebit:1:101");
  ASSERT_TRUE(onebit) << onebit.error().message;
  EXPECT_EQ(blur::mechanism_payload(onebit->mechanism), blur::PayloadKind::kBit);
  EXPECT_TRUE(is_numeric(onebit->mechanism));
  EXPECT_FALSE(is_numeric(grr->mechanism));

  const struct {
    const char* spec;
    const char* message;
  } bad[] = {{"7:rr", "expected ID:MECHANISM:EPSILON"},
             {"7:rr:1:2:3", "expected ID:MECHANISM:EPSILON"},
             {"7:rr:1:3", "rr has domain 2"},
             {"7:grr:1", "grr needs a domain size in 2..65536"},
             {"7:grr:1:1", "grr needs a domain size"},
             {"7:grr:1:65537", "grr needs a domain size"},
             {"7:oue:1:4097", "oue needs a domain size in 2..4096"},
             {"7:laplace:1:16777217", "laplace needs a domain size in 2..16777216"},
             {"x:rr:1", "id must be an integer"},
             {"4294967296:rr:1", "id must be an integer"},
             {"1:laplace9:1", "unknown mechanism 'laplace9'"},
             {"1:rr:0", "epsilon must be"}};
  for (const auto& b : bad) {
    const auto refused = parse_metric_spec(b.spec);
    ASSERT_FALSE(refused) << b.spec;
    EXPECT_NE(refused.error().message.find(b.message), std::string::npos)
        << refused.error().message;
  }
}

// The whole configuration round-trips through its stored text, and the
// first difference names the field.
TEST(MetricConfig, CanonicalTextRoundTripsAndDifferencesNameTheField) {
  MetricConfig m{3, MechanismId::kRappor, 1500000, 40};
  m.rappor = {64, 2, 8};
  m.hash_key = 12345678901234ull;
  m.bucket_seconds = 300;
  m.retention_days = 90;
  auto back = config_from_text(config_to_text(m));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back.value() == m);
  MetricConfig other = m;
  other.retention_days = 30;
  EXPECT_EQ(first_difference(m, other), "retention_days: 90 -> 30");
  EXPECT_EQ(first_difference(m, m), "");
  EXPECT_FALSE(config_from_text("{\"metric_id\": 1}"));
  EXPECT_FALSE(config_from_text("not json"));
  MetricConfig bad_bucket = m;
  bad_bucket.bucket_seconds = 7;
  EXPECT_NE(check_metric(bad_bucket).find("does not divide a day"), std::string::npos);
}

}  // namespace
