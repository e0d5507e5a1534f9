#include "mechanisms/oracle_params.h"

#include <cmath>

#include "blur/mechanisms/rappor.h"
#include "blur/mechanisms/unary_encoding.h"
#include "mechanisms/local_hashing.h"

namespace blur::collector {

OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size) {
  // Divided through by e^eps, the stable form for large epsilon.
  const double others = (domain_size - 1.0) * std::exp(-(epsilon_micros / 1e6));
  const double p = 1.0 / (1.0 + others);
  return OracleParams{p, p * std::exp(-(epsilon_micros / 1e6))};
}

namespace {
// q = m / 2^64 exactly as the device flips (dyadic_bernoulli.h).
double dyadic(uint64_t m) { return std::ldexp(static_cast<double>(m), -64); }
}  // namespace

namespace {
// A bit flipped with q1 (the permanent response) and again with the
// memoized report's q2 (memoized.h): ln((1 - q2) / q2) <= eta / bits.
double memoized_flip(double q1, uint32_t report_epsilon_micros, uint32_t bits) {
  const double q2 =
      dyadic(blur::flip_numerator(report_epsilon_micros, uint64_t{bits} * 1000000u));
  return q1 + q2 * (1.0 - 2.0 * q1);
}
}  // namespace

OracleParams symmetric_unary_params(uint32_t epsilon_micros, uint32_t longitudinal_epsilon_micros,
                                    uint32_t domain_size) {
  using blur::UnaryEncoding;
  constexpr auto kSymmetric = UnaryEncoding::Kind::kSymmetric;
  const double q =
      longitudinal_epsilon_micros == 0
          ? dyadic(UnaryEncoding::flip_numerator(kSymmetric, epsilon_micros))
          : memoized_flip(dyadic(UnaryEncoding::flip_numerator(kSymmetric,
                                                               longitudinal_epsilon_micros)),
                          epsilon_micros, domain_size);
  return OracleParams{1.0 - q, q};
}

OracleParams optimized_unary_params(uint32_t epsilon_micros) {
  using blur::UnaryEncoding;
  return OracleParams{
      0.5, dyadic(UnaryEncoding::flip_numerator(UnaryEncoding::Kind::kOptimized, epsilon_micros))};
}

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

OracleParams loloha_params(const MetricConfig& metric) {
  const uint32_t g = 1u << local_hash_shape(metric).bucket_bits;
  const double p1 = randomized_response_params(metric.longitudinal_epsilon_micros, g).p;
  const OracleParams report = randomized_response_params(metric.epsilon_micros, g);
  return OracleParams{p1 * report.p + (1.0 - p1) * report.q, 1.0 / g};
}

}  // namespace blur::collector
