#include "estimate/frequency_oracle.h"

#include <algorithm>
#include <cmath>

namespace blur::collector {

OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size) {
  // Divided through by e^eps, the stable form for large epsilon.
  const double others = (domain_size - 1.0) * std::exp(-(epsilon_micros / 1e6));
  const double p = 1.0 / (1.0 + others);
  return OracleParams{p, p * std::exp(-(epsilon_micros / 1e6))};
}

OracleParams symmetric_unary_params(uint32_t epsilon_micros) {
  const double p = 1.0 / (1.0 + std::exp(-(epsilon_micros / 2e6)));
  return OracleParams{p, 1.0 - p};
}

OracleParams optimized_unary_params(uint32_t epsilon_micros) {
  return OracleParams{0.5, 1.0 / (std::exp(epsilon_micros / 1e6) + 1.0)};
}

OracleParams oracle_params(const MetricConfig& metric) {
  switch (metric.mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
    case Mechanism::kGeneralizedRandomizedResponse:
      return randomized_response_params(metric.epsilon_micros, metric.domain_size);
    case Mechanism::kSymmetricUnaryEncoding:
      return symmetric_unary_params(metric.epsilon_micros);
    case Mechanism::kOptimizedUnaryEncoding:
      return optimized_unary_params(metric.epsilon_micros);
    case Mechanism::kOptimizedLocalHashing:
    case Mechanism::kBinaryLocalHashing: {
      // Randomized response over g buckets; another value shares the bucket
      // with probability 1/g exactly (pairwise-independent family).
      const double g = static_cast<double>(1u << local_hash_shape(metric).bucket_bits);
      return OracleParams{
          randomized_response_params(metric.epsilon_micros, static_cast<uint32_t>(g)).p, 1.0 / g};
    }
    case Mechanism::kHadamardResponse:
      // Own value: randomized response into its half; others: exactly 1/2.
      return OracleParams{1.0 / (1.0 + std::exp(-(metric.epsilon_micros / 1e6))), 0.5};
    case Mechanism::kDiscreteLaplace:
    case Mechanism::kOneBitMean:
      break;  // not frequency oracles: see numeric_summary.h
  }
  return OracleParams{0.5, 0.5};
}

CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params) {
  const double n = static_cast<double>(reports);
  const double gap = params.p - params.q;
  const double count = (static_cast<double>(support) - n * params.q) / gap;
  const double plug_in = std::clamp(count, 0.0, n);
  const double variance =
      n * params.q * (1 - params.q) / (gap * gap) + plug_in * (1 - params.p - params.q) / gap;
  const double std_error = std::sqrt(std::max(variance, 0.0));
  return CountEstimate{count, std_error, count - kZ95 * std_error, count + kZ95 * std_error};
}

}  // namespace blur::collector
