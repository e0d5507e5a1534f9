// The one estimator core for "pure" frequency oracles (Wang, Blocki, Li,
// Jha, USENIX Security 2017): a report of true value v supports v with
// probability p and any other fixed value with probability q. From the
// number I_v of n reports that support v:
//
//   c_hat   = (I_v - n q) / (p - q)                           (unbiased)
//   Var     = n q (1 - q) / (p - q)^2 + c_v (1 - p - q) / (p - q)
//
// with c_v replaced by c_hat clipped to [0, n] (plug-in). Every oracle with
// this p/q form (rr, grr, sue, oue, hr, olh, blh, rappor) only supplies
// p, q and its support counts.
//
// RAPPOR generalizes "supports" to a weight in 0..h (v's Bloom bits set in
// the report): I_v is the summed weight over h, p and q are per bit, each
// report's variance is a Bernoulli's over h, and reports of one cohort
// share their hash collisions, which adds
//   kappa * sum_{u != v} c_u^2,   kappa = (1-2f)^2 pi (1-pi) / (h C (p-q)^2)
// (f the flip probability, pi the chance a bit of v lies in another value's
// filter, C cohorts; derived in frequency_oracle.cpp).
//
// Several reports per device: the Bernoulli part is a sum of per-report
// terms with variances q(1-q) / ((p-q)^2 h) (other values) and
// p(1-p) / ((p-q)^2 h) (v itself), so DeviceClustering::variance bounds it
// for any correlation within a device (memoized reports repeat their
// permanent response exactly); the collision term is added unchanged.
#ifndef BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H
#define BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H

#include <cstdint>

#include "estimate/device_clustering.h"
#include "metrics/metric_config.h"

namespace blur::collector {

struct OracleParams {
  double p;                          // P(report supports its own true value)
  double q;                          // P(report supports a given other value)
  double weight = 1;                 // RAPPOR: h, the largest support weight of a report
  double collision_coefficient = 0;  // RAPPOR: kappa above
};

// k-ary randomized response (binary: k = 2) at epsilon = epsilon_micros / 10^6:
// p = e^eps / (e^eps + k - 1), q = 1 / (e^eps + k - 1), as the device samples.
OracleParams randomized_response_params(uint32_t epsilon_micros, uint32_t domain_size);

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

// Two-sided 95% standard-normal quantile.
inline constexpr double kZ95 = 1.959963984540054;

struct CountEstimate {
  double count;      // unbiased estimate of how many reports had the value
  double std_error;  // of `count`
  double ci95_low;   // count -+ kZ95 * std_error (normal approximation)
  double ci95_high;
};

// `others_squared`: sum over the other values of their clipped estimates
// squared (only read when params.collision_coefficient is not 0).
// `clustering`: how the reports are spread over devices (its reports() is
// `reports`); without it, each report is taken from a device of its own.
CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params,
                             double others_squared, const DeviceClustering& clustering);
CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params,
                             double others_squared = 0);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_FREQUENCY_ORACLE_H
