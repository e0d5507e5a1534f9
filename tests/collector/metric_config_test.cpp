#include "config/metric_rules.h"

#include <gtest/gtest.h>

#include "config/metrics_file.h"
#include "mechanisms/mechanism_spec.h"

namespace {

using namespace blur::collector;

// Each line of the SDK's table has its own spec (built in its family's
// file under collector/src/mechanisms/), complete for its kind: a
// frequency oracle tallies, supports or discovers words, and has p and q;
// a numeric mechanism says how its mean is estimated.
TEST(MechanismSpec, EveryTableLineHasItsOwnCompleteSpec) {
  size_t specs = 0;
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, device_max)     \
  {                                                                  \
    const MechanismSpec& spec = mechanism_spec(MechanismId::k##Cpp); \
    SCOPED_TRACE(#name);                                             \
    EXPECT_EQ(spec.id, MechanismId::k##Cpp);                         \
    EXPECT_GE(spec.max_domain, 2u);                                  \
    EXPECT_LE(spec.max_domain, device_max);                          \
    EXPECT_TRUE(mechanism_from_name(#name) == MechanismId::k##Cpp);  \
    if (spec.numeric) {                                              \
      EXPECT_TRUE(spec.numeric_mean != nullptr);                     \
      EXPECT_TRUE(spec.tally == nullptr);                            \
    } else {                                                         \
      EXPECT_TRUE(spec.tally_size != nullptr);                       \
      EXPECT_TRUE(spec.tally != nullptr);                            \
      EXPECT_TRUE(spec.params != nullptr);                           \
      EXPECT_EQ(spec.support == nullptr, spec.discovers_words);      \
    }                                                                \
    EXPECT_TRUE(!spec.joins_fragments || spec.discovers_words);      \
    ++specs;                                                         \
  }
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  EXPECT_GT(specs, 0u);
}

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

// The contribution bound: 4 reports' epsilon per device and bucket unless
// set, as a max or as an allowance; stored configurations from before the
// bound load as the defaults.
TEST(MetricConfig, ContributionBoundDefaultsAndSettings) {
  const MetricConfig plain{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
  EXPECT_EQ(reports_per_bucket_limit(plain), 4u);
  EXPECT_EQ(epsilon_allowance_per_bucket(plain), 4000000u);
  EXPECT_EQ(describe_bound(plain),
            "metric 1 accepts at most 4 reports per device per 3600-second bucket");
  MetricConfig allowance = plain;
  allowance.epsilon_allowance_per_bucket_micros = 2500000;  // 2.5 reports' worth: floor
  EXPECT_EQ(reports_per_bucket_limit(allowance), 2u);
  allowance.epsilon_allowance_per_bucket_micros = 1;  // below one report: still 1
  EXPECT_EQ(reports_per_bucket_limit(allowance), 1u);
  MetricConfig max = plain;
  max.max_reports_per_bucket = 64;
  EXPECT_EQ(epsilon_allowance_per_bucket(max), 64000000u);

  // Stored before the bound: no fields, the defaults.
  const std::string old_text = R"({"bucket_seconds":3600,"domain_size":2,"epsilon_micros":1000000,)"
                               R"("mechanism":"rr","metric_id":1,"retention_days":30})";
  auto old = config_from_text(old_text);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old.value() == plain);
  EXPECT_EQ(reports_per_bucket_limit(old.value()), 4u);
  auto back = config_from_text(config_to_text(max));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back.value() == max);
  EXPECT_EQ(reports_per_bucket_limit(back.value()), 64u);
  EXPECT_EQ(first_difference(plain, max), "max_reports_per_bucket: 4 -> 64");
  // A changed epsilon moves the default allowance too: epsilon is named.
  MetricConfig stronger = plain;
  stronger.epsilon_micros = 500000;
  EXPECT_EQ(first_difference(plain, stronger), "epsilon_micros: 1000000 -> 500000");

  const auto spec = parse_metric_spec("3:rr:1:max_reports_per_bucket=64");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(spec->domain_size, 2u);
  EXPECT_EQ(reports_per_bucket_limit(spec.value()), 64u);
  const auto grr = parse_metric_spec("4:grr:2:16:max_reports_per_bucket=1");
  ASSERT_TRUE(grr) << grr.error().message;
  EXPECT_EQ(grr->domain_size, 16u);
  EXPECT_EQ(reports_per_bucket_limit(grr.value()), 1u);
  for (const char* bad : {"3:rr:1:max_reports_per_bucket=0", "3:rr:1:max_reports_per_bucket=x",
                          "3:rr:1:max_reports_per_bucket=1000000001"}) {
    const auto refused = parse_metric_spec(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("max_reports_per_bucket must be"), std::string::npos)
        << refused.error().message;
  }
}

// The receive-time allowance: by default what a device can send at the
// per-bucket bound in one day; set on --metric or in TOML; part of the
// canonical text, and a configuration stored before it (no key) equals
// today's default, so existing metrics keep matching on restart.
TEST(MetricConfig, ReceiveTimeAllowanceDefaultsAndSettings) {
  const MetricConfig plain{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
  EXPECT_EQ(reports_per_day_limit(plain), 96u);  // 4 per bucket x 24 hourly buckets
  EXPECT_EQ(describe_daily_bound(plain),
            "metric 1 accepts at most 96 reports per device per day of arrival (UTC)");
  MetricConfig daily = plain;
  daily.bucket_seconds = 86400;
  EXPECT_EQ(reports_per_day_limit(daily), 4u);  // one bucket a day: the bucket's bound
  MetricConfig minutes = plain;
  minutes.bucket_seconds = 60;
  minutes.max_reports_per_bucket = kMaxReportsPerBucketLimit;
  EXPECT_EQ(reports_per_day_limit(minutes), kMaxReportsPerDayLimit);  // the largest, valid
  EXPECT_EQ(check_metric(minutes), "");
  MetricConfig allowance = plain;
  allowance.epsilon_allowance_per_bucket_micros = 2500000;  // 2 per bucket
  EXPECT_EQ(reports_per_day_limit(allowance), 48u);
  MetricConfig set = plain;
  set.max_reports_per_day = 10;
  EXPECT_EQ(reports_per_day_limit(set), 10u);

  // Stored before the allowance (schema 2's text): the default, equal.
  const std::string old_text = R"({"bucket_seconds":3600,"domain_size":2,"epsilon_micros":1000000,)"
                               R"("epsilon_allowance_per_bucket_micros":4000000,)"
                               R"("max_reports_per_bucket":4,)"
                               R"("mechanism":"rr","metric_id":1,"retention_days":30})";
  auto old = config_from_text(old_text);
  ASSERT_TRUE(old) << old.error().message;
  EXPECT_TRUE(old.value() == plain);
  EXPECT_EQ(reports_per_day_limit(old.value()), 96u);
  EXPECT_NE(config_to_text(plain).find("\"max_reports_per_day\":96"), std::string::npos);
  auto back = config_from_text(config_to_text(set));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_TRUE(back.value() == set);
  EXPECT_EQ(first_difference(plain, set), "max_reports_per_day: 96 -> 10");
  // A changed per-bucket bound moves the default allowance: the bound is named.
  MetricConfig eight = plain;
  eight.max_reports_per_bucket = 8;
  EXPECT_EQ(first_difference(plain, eight), "max_reports_per_bucket: 4 -> 8");
  MetricConfig half_hours = plain;
  half_hours.bucket_seconds = 1800;
  EXPECT_EQ(first_difference(plain, half_hours), "bucket_seconds: 3600 -> 1800");
  MetricConfig too_many = plain;
  too_many.max_reports_per_day = kMaxReportsPerDayLimit + 1;
  EXPECT_NE(check_metric(too_many).find("max_reports_per_day must be"), std::string::npos);

  const auto spec =
      parse_metric_spec("3:rr:1:max_reports_per_day=5000000000:max_reports_per_bucket=2");
  ASSERT_TRUE(spec) << spec.error().message;
  EXPECT_EQ(reports_per_day_limit(spec.value()), 5000000000u);
  EXPECT_EQ(reports_per_bucket_limit(spec.value()), 2u);
  for (const char* bad : {"3:rr:1:max_reports_per_day=0", "3:rr:1:max_reports_per_day=-1",
                          "3:rr:1:max_reports_per_day=1440000000001",
                          "3:rr:1:max_reports_per_day=99999999999999999999"}) {
    const auto refused = parse_metric_spec(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("max_reports_per_day must be"), std::string::npos)
        << refused.error().message;
  }

  auto metrics = parse_metrics_toml(
      "[[metric]]\nid = 1\nmechanism = \"rr\"\nepsilon = 1\nmax_reports_per_day = 12\n",
      "daily.toml");
  ASSERT_TRUE(metrics) << metrics.error().message;
  EXPECT_EQ(reports_per_day_limit((*metrics)[0]), 12u);
  for (const char* body : {"max_reports_per_day = 0", "max_reports_per_day = -2",
                           "max_reports_per_day = 1440000000001", "max_reports_per_day = 2.0"}) {
    const auto refused = parse_metrics_toml(
        std::string("[[metric]]\nid = 1\nmechanism = \"rr\"\nepsilon = 1\n") + body, "bad.toml");
    ASSERT_FALSE(refused) << body;
    EXPECT_NE(refused.error().message.find("max_reports_per_day"), std::string::npos)
        << refused.error().message;
  }
}

// Found by tests/fuzz/metrics_file_fuzz (UBSan): an integer key given a
// float went through toml++'s unchecked float-to-int64 cast ("domain =
// 1e21"); a float is now refused where an integer is due, even a whole one.
TEST(MetricsFile, FloatsAreNotIntegers) {
  for (const char* body : {"domain = 1e21", "domain = -1e300", "domain = 4.0", "id = 1.0",
                           "bucket = 3600.0", "retention_days = nan"}) {
    const std::string text = std::string("[[metric]]\nmechanism = \"grr\"\nepsilon = 1\n") +
                             (std::string(body).rfind("id", 0) == 0 ? "" : "id = 1\n") +
                             (std::string(body).rfind("domain", 0) == 0 ? "" : "domain = 4\n") +
                             body;
    const auto refused = parse_metrics_toml(text, "float.toml");
    ASSERT_FALSE(refused) << body;
    EXPECT_NE(refused.error().message.find("must be"), std::string::npos)
        << body << ": " << refused.error().message;
  }
}

TEST(MetricsFile, ContributionBoundKeys) {
  auto metrics = parse_metrics_toml(R"(
[[metric]]
id = 1
mechanism = "rr"
epsilon = "0.5"
[[metric]]
id = 2
mechanism = "rr"
epsilon = "0.5"
max_reports_per_bucket = 24
[[metric]]
id = 3
mechanism = "rr"
epsilon = 0.5
epsilon_allowance_per_bucket = "1.75"
)",
                                    "test.toml");
  ASSERT_TRUE(metrics) << metrics.error().message;
  ASSERT_EQ(metrics->size(), 3u);
  EXPECT_EQ(reports_per_bucket_limit((*metrics)[0]), 4u);
  EXPECT_EQ(reports_per_bucket_limit((*metrics)[1]), 24u);
  EXPECT_EQ(reports_per_bucket_limit((*metrics)[2]), 3u);  // floor(1.75 / 0.5)
  EXPECT_EQ(epsilon_allowance_per_bucket((*metrics)[2]), 1750000u);
  const struct {
    const char* body;
    const char* message;
  } bad[] = {{"max_reports_per_bucket = 0", "at least 1"},
             {"max_reports_per_bucket = -3", "'max_reports_per_bucket' must be an integer"},
             {"epsilon_allowance_per_bucket = \"0\"", "'epsilon_allowance_per_bucket' must be"},
             {"max_reports_per_bucket = 2\nepsilon_allowance_per_bucket = 2", "not both"}};
  for (const auto& b : bad) {
    const auto refused = parse_metrics_toml(
        std::string("[[metric]]\nid = 1\nmechanism = \"rr\"\nepsilon = 1\n") + b.body, "bad.toml");
    ASSERT_FALSE(refused) << b.body;
    EXPECT_NE(refused.error().message.find(b.message), std::string::npos)
        << refused.error().message;
  }
}

}  // namespace
