// Memoized bit-flip reports for repeated collection (RAPPOR's permanent +
// instantaneous randomized response, Erlingsson, Pihur, Korolova 2014), with
// a per-device guarantee.
//
// The noisy bits for (metric configuration, value) are drawn once, from a
// stream derived from the device secret (permanent_stream.h: only the
// secret is stored), flipping each bit with q1 at the longitudinal epsilon
// eps_inf; each report then flips every bit of that permanent response
// again with q2 (fresh DRBG randomness). RAPPOR's cohort is drawn once per
// device and metric (never per value: a cohort that changed with the value
// would show the change).
//
// What a report charges: eta, its loss with respect to the permanent
// response. Two permanent responses may differ in every one of the k bits,
// each flip has likelihood ratio (1 - q2) / q2, so eta = k ln((1 - q2) / q2).
// q2 = m2 / 2^64 with m2 = flip_numerator(eta / k) (dyadic_bernoulli.h), so
// the realized eta is at most the configured report epsilon: the charge.
// Then for any two histories h, h' of the device's values, the reports'
// loss is at most eta * #{t : h_t != h'_t} <= what the ledger spent
// (docs/math.md §5.2): the permanent table is drawn independently of the
// history, and given it each report is an eta-LDP function of its entry.
// eps_inf bounds, in addition, what repeated reports of one unchanging
// value reveal about it (post-processing of its permanent response).
//
// eta grows with the bit count: a useful memoized unary report needs a large
// charge (docs/mechanisms.md); loloha.h is the longitudinal frequency
// mechanism with a small permanent alphabet.
#ifndef BLUR_MEMOIZED_H
#define BLUR_MEMOIZED_H

#include <stddef.h>
#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"
#include "blur/sampling/dyadic_bernoulli.h"

namespace blur {

template <typename Mechanism>  // UnaryEncoding (symmetric) or Rappor
class Memoized : public MemoizedForm<Mechanism> {
  using MemoizedForm<Mechanism>::permanent_;
  using MemoizedForm<Mechanism>::key_;

 public:
  static constexpr PayloadKind kPayload = Mechanism::kPayload;

  // `permanent` is the mechanism at the longitudinal epsilon; each report
  // charges `report_epsilon` (eta). kInvalidArgument for asymmetric flips
  // (OUE) or a report epsilon outside (0, kMaxReportEpsilonMicros].
  static Result<Memoized> create(const Mechanism& permanent, EpsilonMicros report_epsilon,
                                 MemoKey key) {
    if (!permanent.symmetric() || report_epsilon == 0 || report_epsilon > kMaxReportEpsilonMicros) {
      return Status::kInvalidArgument;
    }
    const uint64_t m2 = flip_numerator(report_epsilon, uint64_t{permanent.bit_count()} * kEpsilonMicrosPerNat);
    if (m2 == 0) return Status::kInvalidArgument;
    return Memoized(permanent, report_epsilon, m2, key);
  }

  size_t payload_bytes() const { return permanent_.payload_bytes(); }
  uint64_t instantaneous_numerator() const { return m2_; }

  // The permanent response of `value` (the metric's cohort for RAPPOR),
  // then this report's flips.
  template <typename Random>
  Status randomize(Random& random, const uint8_t* secret, uint32_t value,
                   ReportPayload* out) const {
    if (secret == nullptr || value >= this->domain_size()) return Status::kInvalidArgument;
    if constexpr (kPayload == PayloadKind::kBloom) {
      PermanentStream cohort_random(secret, key_, kCohortStreamValue);
      uint64_t cohort = 0;
      BLUR_TRY(cohort_random.uniform(permanent_.shape().cohort_count, &cohort));
      PermanentStream permanent_random(secret, key_, value);
      BLUR_TRY(permanent_.randomize_in_cohort(permanent_random, static_cast<uint32_t>(cohort),
                                              value, out->bits));
      out->seed = static_cast<uint32_t>(cohort);
    } else {
      PermanentStream permanent_random(secret, key_, value);
      BLUR_TRY(permanent_.randomize(permanent_random, value, out->bits));
    }
    out->bit_count = static_cast<uint16_t>(permanent_.bit_count());
    return flip_bits(random, m2_, out->bits, permanent_.bit_count());
  }

 private:
  Memoized(const Mechanism& permanent, EpsilonMicros report_epsilon, uint64_t m2, MemoKey key)
      : MemoizedForm<Mechanism>(permanent, report_epsilon, key), m2_(m2) {}
  uint64_t m2_;
};

// The memoized form of a symmetric bit-flip mechanism for a builder's
// create_memoized: `permanent` built at config's longitudinal epsilon, each
// report charging config.epsilon_micros (rounding buckets are onebit's).
template <typename Mechanism>
Result<Memoized<Mechanism>> memoize(const Result<Mechanism>& permanent,
                                    const MechanismConfig& config, MemoKey key) {
  if (config.rounding_buckets != 0) return Status::kInvalidArgument;
  if (!permanent.ok()) return permanent.status();
  return Memoized<Mechanism>::create(permanent.value(), config.epsilon_micros, key);
}

}  // namespace blur

#endif  // BLUR_MEMOIZED_H
