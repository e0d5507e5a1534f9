#include "estimate/frequency_oracle.h"

#include <algorithm>
#include <cmath>

namespace blur::collector {

OracleParams binary_rr_params(uint32_t epsilon_micros) {
  const double epsilon = epsilon_micros / 1e6;
  // 1 / (1 + e^-eps) is the stable form of e^eps / (1 + e^eps).
  const double p = 1.0 / (1.0 + std::exp(-epsilon));
  return OracleParams{p, 1.0 - p};
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
