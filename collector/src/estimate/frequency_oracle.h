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
// filter, C cohorts; derived in mechanisms/rappor.cpp).
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
#include "mechanisms/oracle_params.h"

namespace blur::collector {

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
