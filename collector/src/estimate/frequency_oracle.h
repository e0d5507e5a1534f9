// The one estimator core for "pure" frequency oracles (Wang, Blocki, Li,
// Jha, USENIX Security 2017): a report of true value v supports v with
// probability p and any other fixed value with probability q. From the
// number I_v of n reports that support v:
//
//   c_hat   = (I_v - n q) / (p - q)                           (unbiased)
//   Var     = n q (1 - q) / (p - q)^2 + c_v (1 - p - q) / (p - q)
//
// with c_v replaced by c_hat clipped to [0, n] (plug-in). Every oracle with
// this p/q form (binary RR now; GRR, unary encodings, local hashing later)
// only supplies p, q and its support counts.
#ifndef BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H
#define BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H

#include <cstdint>

#include "metrics/metric_config.h"

namespace blur::collector {

struct OracleParams {
  double p;  // P(report supports its own true value)
  double q;  // P(report supports a given other value)
};

// k-ary randomized response (binary: k = 2) at epsilon = epsilon_micros / 10^6:
// p = e^eps / (e^eps + k - 1), q = 1 / (e^eps + k - 1), as the device samples.
OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size);

// Symmetric unary encoding: binary randomized response at eps/2 per bit.
OracleParams symmetric_unary_params(uint32_t epsilon_micros);
// Optimized unary encoding: p = 1/2, q = 1 / (e^eps + 1).
OracleParams optimized_unary_params(uint32_t epsilon_micros);
// The parameters of a metric's mechanism.
OracleParams oracle_params(const MetricConfig& metric);

// Two-sided 95% standard-normal quantile.
inline constexpr double kZ95 = 1.959963984540054;

struct CountEstimate {
  double count;      // unbiased estimate of how many reports had the value
  double std_error;  // of `count`
  double ci95_low;   // count -+ kZ95 * std_error (normal approximation)
  double ci95_high;
};

CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H
