// Memoized metrics on the collector: the estimators of loloha, memoized
// sue and memoized onebit, fed one report per device from the real SDK
// randomizers (each device its own secret, CTR_DRBG on the sim port), and
// the metric configuration's longitudinal epsilon.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "aggregate/aggregate.h"
#include "api/numeric_estimate_json.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/memoized.h"
#include "blur/mechanisms/memoized_mean.h"
#include "blur/mechanisms/unary_encoding.h"
#include "blur/sampling/rng.h"
#include "config/metric_rules.h"
#include "estimate/frequency_oracle.h"
#include "estimate/post_processing.h"
#include "ingest/batch_validator.h"
#include "mechanisms/mechanism_spec.h"
#include "random_reports.h"
#include "sim_port.h"

namespace {

using namespace blur::collector;
constexpr uint32_t kNat = 1000000;

void device_secret(uint64_t device, uint8_t secret[32]) {
  std::memset(secret, 0, 32);
  std::memcpy(secret, &device, sizeof device);
  secret[31] = 0x77;
}

// The true value of device i: 0 for 40% of devices, 1 for none, the rest
// spread over 2..d-1.
uint32_t truth(uint64_t device, uint32_t domain) {
  return device % 5 < 2 ? 0 : 2 + static_cast<uint32_t>(device % (domain - 2));
}

IncomingReport incoming(const MetricConfig& metric, const blur::ReportPayload& payload) {
  IncomingReport r = blur_test::report_of(metric);
  r.value = payload.value;
  if (r.payload == blur::PayloadKind::kLocalHash) {
    r.hash_a = payload.seed >> 16;
    r.hash_b = payload.seed & 0xFFFF;
  } else if (r.payload == blur::PayloadKind::kBits) {
    r.bits.assign(reinterpret_cast<const char*>(payload.bits), (payload.bit_count + 7) / 8);
  }
  return r;
}

// Every value's estimate within 5 of its standard errors of the truth
// (false alarm 6e-7 each); a wrong p (the one-shot mechanism's at eta)
// misses the 40% value by far more.
template <typename Randomize>
void expect_unbiased(const MetricConfig& metric, uint64_t devices, Randomize randomize,
                     const OracleParams& wrong) {
  blur::sim::SimPort port(metric.id);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
  Aggregate aggregate(metric);
  std::vector<double> truths(metric.domain_size, 0);
  static blur::ReportPayload payload;
  for (uint64_t device = 0; device < devices; ++device) {
    uint8_t secret[32];
    device_secret(device, secret);
    const uint32_t value = truth(device, metric.domain_size);
    truths[value] += 1;
    ASSERT_EQ(randomize(rng, secret, value, &payload), blur::Status::kOk);
    const IncomingReport report = incoming(metric, payload);
    ASSERT_EQ(payload_shape_error(metric, report), "");
    aggregate.add(report);
  }
  const std::vector<uint64_t> support = aggregate.support_counts();
  const OracleParams params = oracle_params(metric);
  for (uint32_t v = 0; v < metric.domain_size; ++v) {
    const CountEstimate e = estimate_count(devices, support[v], params);
    EXPECT_LT(std::fabs(e.count - truths[v]), 5 * e.std_error)
        << describe(metric) << " value " << v << ": " << e.count << " vs " << truths[v];
  }
  const CountEstimate biased = estimate_count(devices, support[0], wrong);
  EXPECT_GT(std::fabs(biased.count - truths[0]), 5 * biased.std_error) << describe(metric);
}

TEST(MemoizedEstimate, LolohaIsUnbiased) {
  for (const auto& [eta, longitudinal] : {std::pair{kNat / 2, 2 * kNat}, std::pair{2 * kNat, kNat}}) {
    MetricConfig metric{3, MechanismId::kLoloha, eta, 16};
    metric.longitudinal_epsilon_micros = longitudinal;
    ASSERT_EQ(check_metric(metric), "");
    const auto loloha = blur::Loloha::create(eta, longitudinal, 16, {3, 1});
    ASSERT_TRUE(loloha.ok());
    const uint32_t g = 1u << loloha.value().shape().bucket_bits;
    expect_unbiased(
        metric, 40000,
        [&](blur::Rng& rng, const uint8_t* secret, uint32_t value, blur::ReportPayload* out) {
          return loloha.value().randomize(rng, secret, value, out);
        },
        OracleParams{randomized_response_params(eta, g).p, 1.0 / g});
  }
}

TEST(MemoizedEstimate, MemoizedSueIsUnbiased) {
  MetricConfig metric{4, MechanismId::kSymmetricUnaryEncoding, 16 * kNat, 16};
  metric.longitudinal_epsilon_micros = 4 * kNat;
  ASSERT_EQ(check_metric(metric), "");
  const auto permanent =
      blur::UnaryEncoding::create(blur::UnaryEncoding::Kind::kSymmetric, 4 * kNat, 16);
  const auto memo = blur::Memoized<blur::UnaryEncoding>::create(permanent.value(), 16 * kNat, {4, 1});
  ASSERT_TRUE(memo.ok());
  expect_unbiased(
      metric, 40000,
      [&](blur::Rng& rng, const uint8_t* secret, uint32_t value, blur::ReportPayload* out) {
        return memo.value().randomize(rng, secret, value, out);
      },
      symmetric_unary_params(4 * kNat));
}

// Memoized 1BitMean: the mean through both stages (alpha rounding, the
// memoized bit, the per-report flip) within 5 standard errors of the truth;
// read as plain onebit at the bit's epsilon it is biased far beyond that.
TEST(MemoizedEstimate, MemoizedMeanIsUnbiased) {
  MetricConfig metric{5, MechanismId::kOneBitMean, kNat, 101};
  metric.longitudinal_epsilon_micros = 2 * kNat;
  ASSERT_EQ(check_metric(metric), "");
  const auto mean = blur::MemoizedMean::create(kNat, 2 * kNat, 101, 4, {5, 1});
  ASSERT_TRUE(mean.ok());
  blur::sim::SimPort port(5);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
  Aggregate aggregate(metric);
  const uint64_t devices = 40000;
  double total = 0;
  static blur::ReportPayload payload;
  for (uint64_t device = 0; device < devices; ++device) {
    uint8_t secret[32];
    device_secret(device, secret);
    const uint32_t value = static_cast<uint32_t>((device * 37) % 31);  // mean 15, off-centre
    total += value;
    ASSERT_EQ(mean.value().randomize(rng, secret, value, &payload), blur::Status::kOk);
    aggregate.add(incoming(metric, payload));
  }
  const nlohmann::json out = numeric_estimate_json(metric, aggregate.summary(), PostProcessing::kNone);
  const double estimate = out["estimates"][0]["estimate"].get<double>();
  const double stderr_mean = out["estimates"][0]["stderr"].get<double>();
  EXPECT_LT(std::fabs(estimate - total / devices), 5 * stderr_mean) << estimate;
  MetricConfig plain = metric;
  plain.epsilon_micros = 2 * kNat;
  plain.longitudinal_epsilon_micros = 0;
  const nlohmann::json wrong = numeric_estimate_json(plain, aggregate.summary(), PostProcessing::kNone);
  EXPECT_GT(std::fabs(wrong["estimates"][0]["estimate"].get<double>() - total / devices),
            5 * stderr_mean);
}

TEST(MemoizedMetricConfig, LongitudinalEpsilonIsPartOfTheMetric) {
  const auto loloha = parse_metric_spec("4:loloha:0.5:64:longitudinal=2");
  ASSERT_TRUE(loloha);
  EXPECT_EQ(loloha->longitudinal_epsilon_micros, 2 * kNat);
  EXPECT_EQ(describe(*loloha), "metric 4 (loloha, epsilon 0.500000, domain 64, longitudinal epsilon 2.000000)");
  const auto round_trip = config_from_text(config_to_text(*loloha));
  ASSERT_TRUE(round_trip);
  EXPECT_EQ(*round_trip, *loloha);
  EXPECT_NE(first_difference(*loloha, *parse_metric_spec("4:loloha:0.5:64:longitudinal=3")), "");
  const auto both = parse_metric_spec("5:sue:1:16:max_reports_per_bucket=8:longitudinal=4");
  ASSERT_TRUE(both);
  EXPECT_EQ(both->max_reports_per_bucket, 8u);
  EXPECT_EQ(both->longitudinal_epsilon_micros, 4 * kNat);
  EXPECT_FALSE(parse_metric_spec("4:loloha:0.5:64"));                  // needs it
  EXPECT_FALSE(parse_metric_spec("4:grr:0.5:64:longitudinal=2"));      // no memoized form
  EXPECT_FALSE(parse_metric_spec("4:loloha:0.5:64:longitudinal=21"));  // past 20 nats
  EXPECT_FALSE(parse_metric_spec("4:loloha:0.5:64:unknown=2"));
  // A report must carry the metric's longitudinal epsilon (one-shot: none).
  IncomingReport report;
  report.metric_id = 4;
  report.mechanism = static_cast<uint32_t>(MechanismId::kLoloha);
  report.epsilon_micros = kNat / 2;
  report.domain_size = 64;
  report.has_payload = true;
  report.payload = blur::PayloadKind::kLocalHash;
  Batch batch;
  batch.reports.push_back(report);
  const MetricLookup lookup = [&](uint32_t) { return std::optional<MetricConfig>(*loloha); };
  EXPECT_NE(validate_batch(batch, lookup).find("longitudinal_epsilon_micros 0"), std::string::npos);
  batch.reports[0].longitudinal_epsilon_micros = 2 * kNat;
  EXPECT_EQ(validate_batch(batch, lookup), "");
}

}  // namespace
