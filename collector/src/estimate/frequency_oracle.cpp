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
