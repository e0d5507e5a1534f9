// RAPPOR (rappor): (cohort c, filter r) supports v with weight
// sum_j r[position_j(v, c)] (0..h); tally = count per (cohort, bit), and
// v's positions are hashed once per cohort with reports.
#include <algorithm>
#include <cmath>

#include "blur/mechanisms/bloom_hash.h"
#include "blur/mechanisms/rappor.h"
#include "mechanisms/counted_values.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

// Derivation of kappa. Fix v and a cohort c. A report of u != v in c has
// weight X = sum_j r[pos_j(v, c)]; O = #{j : pos_j(v, c) in B_{u,c}} of
// v's positions fall in u's filter, each with probability pi, so each bit's
// marginal is q = f + (1 - 2f) pi (counted in the Bernoulli term). But all
// n_{u,c} reports of u in cohort c share O: the covariance adds
// (1-2f)^2 Var[O] (n_{u,c}^2 - n_{u,c}) to Var[sum X], with Var[O] ~ h pi
// (1 - pi) and E[n_{u,c}^2 - n_{u,c}] = n_u (n_u - 1) / C^2 per cohort for
// uniform cohorts. Summed over cohorts and scaled by 1/(h (p - q))^2:
// kappa * sum_u n_u (n_u - 1), estimated with the plug-in c_u^2.
OracleParams rappor_params(const MetricConfig& metric) {
  const blur::RapporShape& shape = metric.rappor;
  const double f =
      metric.longitudinal_epsilon_micros == 0
          ? dyadic(blur::Rappor::flip_numerator(metric.epsilon_micros, shape.hash_count))
          : memoized_flip(dyadic(blur::Rappor::flip_numerator(metric.longitudinal_epsilon_micros,
                                                              shape.hash_count)),
                          metric.epsilon_micros, shape.bloom_bits);
  const double h = shape.hash_count;
  const double pi = 1.0 - std::pow(1.0 - 1.0 / shape.bloom_bits, h);
  const double p = 1.0 - f, q = f + (1.0 - 2.0 * f) * pi;
  const double kappa =
      (1 - 2 * f) * (1 - 2 * f) * pi * (1 - pi) / (h * shape.cohort_count * (p - q) * (p - q));
  return OracleParams{p, q, h, kappa};
}

namespace {

// The most candidates an estimate hashes (once per cohort each): below the
// device's limit.
constexpr uint32_t kMaxRapporCandidates = 1u << 16;

std::string rappor_check(const MetricConfig& m) {
  if (!blur::Rappor::create(m.epsilon_micros, m.domain_size, m.rappor,
                            blur::BloomHashKey{m.id, m.hash_key})
           .ok()) {
    return "invalid RAPPOR shape (see blur/mechanisms/rappor.h: bloom_bits a power of two, 8..4096; "
           "hash_count 1..16; cohort_count 1..65536)";
  }
  return {};
}

std::string bloom_error(const MetricConfig& metric, const IncomingReport& r) {
  if (r.bits.size() != metric.rappor.bloom_bits / 8) {
    return "Bloom filter of " + std::to_string(r.bits.size()) + " bytes, expected " +
           std::to_string(metric.rappor.bloom_bits / 8) + " for " + describe(metric);
  }
  if (r.value >= metric.rappor.cohort_count) {
    return "cohort " + std::to_string(r.value) + " is outside the " +
           std::to_string(metric.rappor.cohort_count) + " cohorts of " + describe(metric);
  }
  return {};
}

size_t bloom_tally_size(const MetricConfig& metric) {
  return size_t{metric.rappor.cohort_count} * metric.rappor.bloom_bits;
}

void tally_bloom(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                 uint64_t* tally) {
  tally_set_bits(report.bits, metric.rappor.bloom_bits, multiplicity,
                 tally + size_t{report.value} * metric.rappor.bloom_bits);
}

void bloom_support(const MetricConfig& metric, const uint64_t* tally, uint64_t, uint64_t* support) {
  const blur::RapporShape& shape = metric.rappor;
  std::fill(support, support + metric.domain_size, 0);
  for (uint32_t cohort = 0; cohort < shape.cohort_count; ++cohort) {
    const uint64_t* bit_counts = tally + size_t{cohort} * shape.bloom_bits;
    if (std::all_of(bit_counts, bit_counts + shape.bloom_bits, [](uint64_t c) { return c == 0; })) {
      continue;  // no reports in this cohort
    }
    for (uint32_t v = 0; v < metric.domain_size; ++v) {
      char text[10];
      const size_t length = blur::decimal_text(v, text);
      uint16_t positions[blur::kMaxBloomHashes];
      if (blur::bloom_positions(blur::BloomHashKey{metric.id, metric.hash_key}, cohort,
                                reinterpret_cast<const uint8_t*>(text), length, shape.bloom_bits,
                                shape.hash_count, positions) != blur::Status::kOk) {
        continue;  // unreachable: the shape was validated and SHA-256 does not fail
      }
      for (uint32_t j = 0; j < shape.hash_count; ++j) support[v] += bit_counts[positions[j]];
    }
  }
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kRappor>() {
  MechanismSpec spec;
  spec.id = MechanismId::kRappor;
  spec.max_domain = std::min(kMaxRapporCandidates, mechanism_max_domain(MechanismId::kRappor));
  spec.memoizable = true;
  spec.bloom_filter = true;
  spec.check = rappor_check;
  spec.payload_error = bloom_error;
  spec.tally_size = bloom_tally_size;
  spec.tally = tally_bloom;
  spec.support = bloom_support;
  spec.params = rappor_params;
  return spec;
}

}  // namespace blur::collector
