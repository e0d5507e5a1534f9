// An oracle's estimator parameters (frequency_oracle.h's p and q, with
// RAPPOR's weight and collision coefficient): what each mechanism's spec
// (mechanism_spec.h) gives the one estimator core, as the device samples.
#ifndef BLUR_COLLECTOR_MECHANISMS_ORACLE_PARAMS_H
#define BLUR_COLLECTOR_MECHANISMS_ORACLE_PARAMS_H

#include <cstdint>

#include "model/metric_config.h"

namespace blur::collector {

struct OracleParams {
  double p;                          // P(report supports its own true value)
  double q;                          // P(report supports a given other value)
  double weight = 1;                 // RAPPOR: h, the largest support weight of a report
  double collision_coefficient = 0;  // RAPPOR: kappa (frequency_oracle.h)
};

// k-ary randomized response (binary: k = 2) at epsilon = epsilon_micros / 10^6:
// p = e^eps / (e^eps + k - 1), q = 1 / (e^eps + k - 1), as the device samples.
OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size);

// q = m / 2^64 exactly as the device flips (dyadic_bernoulli.h).
double dyadic(uint64_t m);
// A bit flipped with q1 (the permanent response) and again with the
// memoized report's q2 (memoized.h): ln((1 - q2) / q2) <= eta / bits.
double memoized_flip(double q1, uint32_t report_epsilon_micros, uint32_t bits);

// Each family's own, defined in its file:
// Symmetric unary encoding: binary randomized response at eps/2 per bit.
// Memoized (longitudinal_epsilon_micros != 0, memoized.h): the permanent
// bits at the longitudinal epsilon, then every bit flipped again with
// q2 = flip_numerator(eta / d): one flip of q1 + q2 (1 - 2 q1).
OracleParams symmetric_unary_params(uint32_t epsilon_micros, uint32_t longitudinal_epsilon_micros = 0,
                                    uint32_t domain_size = 0);
// Optimized unary encoding: p = 1/2, q = 1 / (e^eps + 1).
OracleParams optimized_unary_params(uint32_t epsilon_micros);
// RAPPOR with the metric's shape: p = 1 - f, q = f + (1 - 2f) pi with
// pi = 1 - (1 - 1/k)^h, f = Rappor::flip_numerator / 2^64 (memoized: the
// two flips composed, as for sue).
OracleParams rappor_params(const MetricConfig& metric);
// LOLOHA (loloha.h): two g-ary randomized responses, p = p1 p2 + (1 - p1) q2,
// q = 1/g.
OracleParams loloha_params(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_ORACLE_PARAMS_H
