// RAPPOR on the collector: the Bloom support rule and the estimator, with
// reports from the real SDK randomizer (CTR_DRBG on the sim port).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "aggregate/aggregate.h"
#include "blur/mechanisms/rappor.h"
#include "blur/sampling/rng.h"
#include "estimate/frequency_oracle.h"
#include "mechanisms/mechanism_spec.h"
#include "sim_port.h"

namespace {

using namespace blur::collector;

IncomingReport bloom_report(uint32_t cohort, const std::string& bits) {
  IncomingReport r;
  r.has_payload = true;
  r.payload = blur::PayloadKind::kBloom;
  r.value = cohort;
  r.bits = bits;
  return r;
}

MetricConfig rappor_metric(uint32_t epsilon_micros, uint32_t domain, blur::RapporShape shape,
                           uint64_t hash_key) {
  MetricConfig metric{7, MechanismId::kRappor, epsilon_micros, domain};
  metric.rappor = shape;
  metric.hash_key = hash_key;
  return metric;
}

// The per-cohort byte tally counts exactly the definition: report (c, r)
// supports v with weight sum_j r[position_j(v, c)].
TEST(RapporSupport, AggregationEqualsTheDefinition) {
  const MetricConfig metric = rappor_metric(1000000, 37, blur::RapporShape{64, 3, 5}, 11);
  Aggregate counter(metric);
  std::vector<uint64_t> expected(37, 0);
  std::mt19937 rng(3);
  for (int i = 0; i < 3000; ++i) {
    const uint32_t cohort = rng() % 5;
    std::string bits(8, '\0');
    for (char& b : bits) b = static_cast<char>(rng());
    const uint64_t multiplicity = 1 + rng() % 3;
    counter.add(bloom_report(cohort, bits), multiplicity);
    for (uint32_t v = 0; v < 37; ++v) {
      const std::string text = std::to_string(v);
      uint16_t positions[3];
      ASSERT_EQ(
          blur::bloom_positions({7, 11}, cohort, reinterpret_cast<const uint8_t*>(text.data()),
                                text.size(), 64, 3, positions),
          blur::Status::kOk);
      for (uint16_t position : positions) {
        expected[v] +=
            multiplicity * ((static_cast<uint8_t>(bits[position / 8]) >> (position % 8)) & 1);
      }
    }
  }
  EXPECT_EQ(counter.support_counts(), expected);
  EXPECT_GT(counter.reports(), 3000u);  // multiplicities counted
}

// The estimator over T trials, each with a fresh hash key (the estimate is
// unbiased over the keyed hash family, not for one key's collisions) and n
// reports from the real SDK: value 0 held by 40% of devices, value 1 by
// none, the rest spread over 2..d-1. Checks per value:
//  - mean error within 5 standard errors of zero (false alarm 6e-7);
//  - empirical variance / formula variance within 1 +- 5 sqrt(2/(T-1))
//    (false alarm ~1e-6 per check; the formula includes the shared-cohort
//    collision term);
//  - power: the uncorrected q (collisions ignored) is biased by more than
//    5 standard errors for the unheld value in the small-filter case.
TEST(RapporEstimate, UnbiasedOverHashKeysWithTheFormulaVariance) {
  struct Case {
    uint32_t epsilon_micros, domain;
    blur::RapporShape shape;
  } cases[] = {{500000, 16, {256, 1, 64}},  {1000000, 16, {256, 1, 64}},
               {2000000, 16, {256, 1, 64}}, {4000000, 16, {256, 1, 64}},
               {1000000, 16, {32, 2, 8}},   {2000000, 128, {256, 1, 64}}};
  const uint64_t n = 1000;
#if defined(__SANITIZE_ADDRESS__)
  const int trials = 120;  // the sanitizer build checks memory, at a quarter of the power
#else
  const int trials = 600;
#endif
  for (const Case& c : cases) {
    double sum[2] = {}, sum_squares[2] = {}, sum_naive[2] = {};
    OracleParams params{};
    for (int t = 0; t < trials; ++t) {
      const MetricConfig metric = rappor_metric(c.epsilon_micros, c.domain, c.shape, 1000 + t);
      params = oracle_params(metric);
      const auto rappor = blur::Rappor::create(c.epsilon_micros, c.domain, c.shape,
                                               blur::BloomHashKey{metric.id, metric.hash_key});
      ASSERT_TRUE(rappor.ok());
      blur::sim::SimPort port(500 + t);
      blur::Rng rng;
      ASSERT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
      Aggregate counter(metric);
      uint8_t bits[32];
      for (uint64_t i = 0; i < n; ++i) {
        const uint32_t truth = i < 4 * n / 10 ? 0 : 2 + static_cast<uint32_t>(i % (c.domain - 2));
        uint32_t cohort = 0;
        ASSERT_EQ(rappor.value().randomize(rng, truth, &cohort, bits), blur::Status::kOk);
        counter.add(bloom_report(cohort, std::string(reinterpret_cast<char*>(bits), c.shape.bloom_bits / 8)));
      }
      const std::vector<uint64_t> support = counter.support_counts();
      OracleParams naive = params;
      naive.q = 1 - params.p;  // the bit flip alone, collisions ignored
      for (uint32_t v = 0; v < 2; ++v) {
        const double e = estimate_count(n, support[v], params).count;
        sum[v] += e;
        sum_squares[v] += e * e;
        sum_naive[v] += estimate_count(n, support[v], naive).count;
      }
    }
    // The true counts and the formula variance, with the exact sum over the
    // other values of c_u (c_u - 1).
    std::vector<double> counts(c.domain, 0.0);
    for (uint64_t i = 0; i < n; ++i) {
      counts[i < 4 * n / 10 ? 0 : 2 + i % (c.domain - 2)] += 1;
    }
    for (uint32_t v = 0; v < 2; ++v) {
      double others = 0;
      for (uint32_t u = 0; u < c.domain; ++u) {
        if (u != v) others += counts[u] * (counts[u] - 1);
      }
      const double gap = params.p - params.q;
      const double formula = (n * params.q * (1 - params.q) / (gap * gap) +
                              counts[v] * (1 - params.p - params.q) / gap) /
                                 params.weight +
                             params.collision_coefficient * others;
      const double mean = sum[v] / trials;
      const double variance = (sum_squares[v] - trials * mean * mean) / (trials - 1);
      const double se = std::sqrt(formula / trials);
      EXPECT_LT(std::fabs(mean - counts[v]), 5 * se)
          << "eps " << c.epsilon_micros << " d " << c.domain << " value " << v;
      EXPECT_NEAR(variance / formula, 1.0, 5 * std::sqrt(2.0 / (trials - 1)))
          << "eps " << c.epsilon_micros << " d " << c.domain << " value " << v;
      if (c.shape.bloom_bits == 32 && v == 1 && trials >= 600) {
        EXPECT_GT(std::fabs(sum_naive[v] / trials - counts[v]), 5 * se);
      }
    }
  }
}

}  // namespace
