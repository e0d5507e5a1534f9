// Exact samplers from integer arithmetic only (Canonne, Kamath, Steinke,
// "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Alg. 1-2).
// No floating point, no modulo bias; every loop is capped and fails closed.
//
// `Random` is any type with `Status uniform(uint64_t bound, uint64_t* out)`:
// blur::Rng in production, a scripted source in fault-injection tests.
#ifndef BLUR_EXACT_SAMPLING_H
#define BLUR_EXACT_SAMPLING_H

#include <stdint.h>

#include "blur/status.h"

namespace blur {

// Caps: exceeding one has probability below 2^-60 for valid parameters.
inline constexpr uint32_t kMaxBernoulliExpTerms = 64;

// Bern(numerator / denominator) = [Unif(denominator) < numerator].
// Requires numerator <= denominator, denominator > 0.
template <typename Random>
Status sample_bernoulli(Random& random, uint64_t numerator, uint64_t denominator, bool* out) {
  if (denominator == 0 || numerator > denominator) return Status::kInvalidArgument;
  uint64_t u = 0;
  BLUR_TRY(random.uniform(denominator, &u));
  *out = u < numerator;
  return Status::kOk;
}

// Bern(exp(-n/d)) for 0 <= n <= d (CKS20 Algorithm 1, first part):
// k = 1; while Bern(n / (d k)) do k++; return k odd.
// P(k odd) = sum_j (-1)^j (n/d)^j / j! = exp(-n/d).
// The loop stops after kMaxBernoulliExpTerms successes (probability
// (n/d)^64 / 64! <= 1/64!) and then returns true: P(true) is exp(-n/d)
// plus at most 1/64!, never less, so a coin that accepts another value
// with "probability exp(-eps)" accepts it at least that often and the
// randomized response race realizes at most eps (docs/math.md §2.3).
// Requires d * kMaxBernoulliExpTerms to fit in 64 bits.
template <typename Random>
Status sample_bernoulli_exp_at_most_one(Random& random, uint64_t n, uint64_t d, bool* out) {
  if (d == 0 || n > d || d > (UINT64_MAX / kMaxBernoulliExpTerms)) {
    return Status::kInvalidArgument;
  }
  // 32-bit counters where the range allows (no 64-bit increments on
  // Cortex-M); the products stay 64-bit.
  for (uint32_t k = 1; k <= kMaxBernoulliExpTerms; ++k) {
    bool next = false;
    BLUR_TRY(sample_bernoulli(random, n, d * k, &next));
    if (!next) {
      *out = (k % 2) == 1;
      return Status::kOk;
    }
  }
  *out = true;  // the series' tail, counted on the side that keeps the charge
  return Status::kOk;
}

// Bern(exp(-n/d)) for any n >= 0 (CKS20 Algorithm 1): exp(-n/d) is
// exp(-1)^floor(n/d) * exp(-(n mod d)/d), each factor an independent coin.
// The loop runs at most floor(n/d) times: callers bound n/d.
template <typename Random>
Status sample_bernoulli_exp(Random& random, uint64_t n, uint64_t d, bool* out) {
  if (d == 0) return Status::kInvalidArgument;
  while (n >= d) {
    bool factor = false;
    BLUR_TRY(sample_bernoulli_exp_at_most_one(random, 1, 1, &factor));
    if (!factor) {
      *out = false;
      return Status::kOk;
    }
    n -= d;
  }
  return sample_bernoulli_exp_at_most_one(random, n, d, out);
}

// Discrete Laplace with P(z) proportional to exp(-|z| s / t), t, s > 0
// (CKS20 Algorithm 2). Geometric part: U uniform in [0, t) accepted with
// probability exp(-U/t), V counts Bernoulli(exp(-1)) successes before the
// first failure, and floor((U + t V) / s) is geometric with continuation
// probability exp(-s/t); a fair sign, rejecting "negative zero".
// Caps (each failing closed with probability below 2^-60): 64 proposals of
// U, 64 sign rounds, V < 128. V's cap truncates the noise at
// |Z| < 128 t / s, so two inputs s/t apart (a mechanism's sensitivity
// over its epsilon) have outputs one of them cannot give: the mechanism is
// (eps, delta)-DP with delta <= P(V >= 128 - eps) = e^(eps - 128), below
// 2^-155 for every eps <= 20 (docs/math.md §2.4), not pure eps. Running
// time depends on the noise magnitude only, never on the value the noise
// is added to. Requires t * kMaxGeometricCount * 2 to fit in 64 bits.
inline constexpr uint32_t kMaxDiscreteLaplaceRounds = 64;
inline constexpr uint32_t kMaxGeometricCount = 128;

template <typename Random>
Status sample_discrete_laplace(Random& random, uint64_t t, uint64_t s, int64_t* out) {
  if (t == 0 || s == 0 || t > (UINT64_MAX / kMaxBernoulliExpTerms) / (2 * kMaxGeometricCount)) {
    return Status::kInvalidArgument;
  }
  for (uint32_t sign_round = 0; sign_round < kMaxDiscreteLaplaceRounds; ++sign_round) {
    uint64_t u = 0;
    bool accepted = false;
    for (uint32_t proposal = 0; proposal < kMaxDiscreteLaplaceRounds && !accepted; ++proposal) {
      BLUR_TRY(random.uniform(t, &u));
      BLUR_TRY(sample_bernoulli_exp_at_most_one(random, u, t, &accepted));
    }
    if (!accepted) return Status::kIterationCap;
    uint32_t v = 0;
    for (;;) {
      bool success = false;
      BLUR_TRY(sample_bernoulli_exp_at_most_one(random, 1, 1, &success));
      if (!success) break;
      if (++v >= kMaxGeometricCount) return Status::kIterationCap;
    }
    const uint64_t magnitude = (u + t * v) / s;
    bool negative = false;
    BLUR_TRY(sample_bernoulli(random, 1, 2, &negative));
    if (negative && magnitude == 0) continue;
    if (magnitude > static_cast<uint64_t>(INT64_MAX)) return Status::kIterationCap;
    *out = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return Status::kOk;
  }
  return Status::kIterationCap;
}

// k-ary randomized response (Warner 1965; GRR / direct encoding in Wang et
// al. 2017) with epsilon = n/d rational:
//   P(out = truth) = e^eps / (e^eps + k - 1),  P(out = w) = 1 / (e^eps + k - 1), w != truth.
// Each round proposes a uniform value in [0, k); the truth is accepted, any
// other value with probability exp(-n/d) (exact Bernoulli); otherwise a new
// round. So P(truth) : P(w) = 1 : exp(-eps) for every w != truth.
// A round ends with probability >= 1/k whatever the truth, so neither the
// output's distribution of running time nor the draw count depend on it;
// the cap of 45 k rounds fails closed with probability < e^-45 < 2^-64.
inline constexpr uint32_t kRandomizedResponseRoundsPerValue = 45;

template <typename Random>
Status sample_randomized_response(Random& random, uint64_t n, uint64_t d, uint32_t domain,
                                  uint32_t truth, uint32_t* out) {
  if (domain < 2 || truth >= domain || d == 0) return Status::kInvalidArgument;
  // The 45 k rounds as 45 passes of k: 32-bit counters (45 k may not fit).
  for (uint32_t pass = 0; pass < kRandomizedResponseRoundsPerValue; ++pass) {
    for (uint32_t round = 0; round < domain; ++round) {
      uint64_t proposal = 0;
      BLUR_TRY(random.uniform(domain, &proposal));
      if (proposal == truth) {
        *out = truth;
        return Status::kOk;
      }
      bool accept = false;
      BLUR_TRY(sample_bernoulli_exp(random, n, d, &accept));
      if (accept) {
        *out = static_cast<uint32_t>(proposal);
        return Status::kOk;
      }
    }
  }
  return Status::kIterationCap;
}

}  // namespace blur

#endif  // BLUR_EXACT_SAMPLING_H
