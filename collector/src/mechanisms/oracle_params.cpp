#include "mechanisms/oracle_params.h"

#include <cmath>

#include "blur/sampling/dyadic_bernoulli.h"

namespace blur::collector {

OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size) {
  // Divided through by e^eps, the stable form for large epsilon.
  const double others = (domain_size - 1.0) * std::exp(-(epsilon_micros / 1e6));
  const double p = 1.0 / (1.0 + others);
  return OracleParams{p, p * std::exp(-(epsilon_micros / 1e6))};
}

double dyadic(uint64_t m) { return std::ldexp(static_cast<double>(m), -64); }

double memoized_flip(double q1, uint32_t report_epsilon_micros, uint32_t bits) {
  const double q2 =
      dyadic(blur::flip_numerator(report_epsilon_micros, uint64_t{bits} * 1000000u));
  return q1 + q2 * (1.0 - 2.0 * q1);
}

}  // namespace blur::collector
