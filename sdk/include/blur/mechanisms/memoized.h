// Memoized randomized response for repeated collection (RAPPOR's permanent
// + instantaneous randomized response, Erlingsson, Pihur, Korolova 2014).
//
// A device that reports the same value every day must not let the
// collector average the noise away. So the noisy bits for (metric, value)
// are drawn once, from a stream derived from the device secret
// (permanent_stream.h: only the secret is stored), flipping each bit with
// q1 at the longitudinal epsilon; each report then flips every bit of that
// permanent response again with q2 (fresh DRBG randomness).
//
// For the bit-flip mechanisms with symmetric flips (SUE, RAPPOR): one
// report flips each bit with q* = q1 (1 - q2) + q2 (1 - q1) = q1 + q2 (1 - 2 q1),
// so it is the same mechanism at a smaller epsilon. q2 = m2 / 2^64 is the
// smallest dyadic value with q* >= the mechanism's q at the report epsilon,
// decided exactly in 128-bit integers: the one-report loss is at most the
// report epsilon (and within 1e-9 nats of it), however many reports of the
// value are sent the loss is at most the longitudinal epsilon (post-
// processing of the permanent response), and the collector estimates the
// reports exactly as it does the plain mechanism at the report epsilon.
//
// Charges (Ledger::charge_memoized): the report epsilon every report, and
// the longitudinal epsilon the first time each (metric, value) is reported.
// Numeric values: alpha-point rounding + a memoized 1BitMean bit
// (memoized_mean.h).
#ifndef BLUR_MEMOIZED_H
#define BLUR_MEMOIZED_H

#include <stddef.h>
#include <stdint.h>

#include "blur/sampling/dyadic_bernoulli.h"
#include "blur/epsilon.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report.h"
#include "blur/result.h"

namespace blur {

// The smallest m2 in [0, 2^63] with q1 + q2 (1 - 2 q1) >= m_target / 2^64,
// i.e. m2 (2^64 - 2 m1) >= (m_target - m1) 2^64 (0 when m_target <= m1).
inline constexpr uint64_t instantaneous_flip_numerator(uint64_t m1, uint64_t m_target) {
  using namespace dyadic_detail;
  if (m_target <= m1) return 0;
  const uint64_t keep = (0 - m1) - m1;  // 2^64 - 2 m1 (m1 < 2^63 here)
  const U128 need{m_target - m1, 0};
  uint64_t low = 1, high = uint64_t{1} << 63;
  while (low < high) {
    const uint64_t middle = low + (high - low) / 2;
    if (at_least(multiply(middle, keep), need)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

template <typename Mechanism>  // UnaryEncoding (symmetric) or Rappor
class Memoized {
 public:
  static constexpr PayloadKind kPayload = Mechanism::kPayload;

  // `permanent` is the mechanism at the longitudinal epsilon; each report
  // realizes `report_epsilon` (<= the longitudinal one). kInvalidArgument
  // for asymmetric flips (OUE) or a report epsilon above the longitudinal.
  static Result<Memoized> create(const Mechanism& permanent, EpsilonMicros report_epsilon) {
    if (!permanent.symmetric() || report_epsilon == 0 ||
        report_epsilon > permanent.epsilon_charged()) {
      return Status::kInvalidArgument;
    }
    const uint64_t m1 = permanent.flip_numerator_at(permanent.epsilon_charged());
    const uint64_t m2 =
        instantaneous_flip_numerator(m1, permanent.flip_numerator_at(report_epsilon));
    return Memoized(permanent, report_epsilon, m2);
  }

  MechanismId id() const { return permanent_.id(); }
  uint32_t domain_size() const { return permanent_.domain_size(); }
  size_t payload_bytes() const { return permanent_.payload_bytes(); }
  EpsilonMicros epsilon_charged() const { return report_epsilon_; }
  EpsilonMicros longitudinal_epsilon() const { return permanent_.epsilon_charged(); }
  uint64_t instantaneous_numerator() const { return m2_; }
  const Mechanism& permanent() const { return permanent_; }

  // The permanent response for (secret, metric_id, value), then this
  // report's flips. `cohort` is written for RAPPOR and may be null for SUE.
  template <typename Random>
  Status randomize(Random& random, const uint8_t* secret, uint32_t metric_id, uint32_t value,
                   uint32_t* cohort, uint8_t* bits) const {
    if (secret == nullptr) return Status::kInvalidArgument;
    PermanentStream permanent_random(secret, metric_id, value);
    if constexpr (kPayload == PayloadKind::kBloom) {
      if (cohort == nullptr) return Status::kInvalidArgument;
      BLUR_TRY(permanent_.randomize(permanent_random, value, cohort, bits));
    } else {
      BLUR_TRY(permanent_.randomize(permanent_random, value, bits));
    }
    return flip_bits(random, m2_, bits, permanent_.bit_count());
  }

 private:
  Memoized(const Mechanism& permanent, EpsilonMicros report_epsilon, uint64_t m2)
      : permanent_(permanent), report_epsilon_(report_epsilon), m2_(m2) {}
  Mechanism permanent_;
  EpsilonMicros report_epsilon_;
  uint64_t m2_;
};

// make_report for memoized mechanisms: the memoized charge (durable), then
// the permanent response and this report's flips.
template <typename Mechanism>
Status make_memoized_report(Ledger& ledger, Rng& rng, const Memoized<Mechanism>& mechanism,
                            uint32_t metric_id, uint32_t value, Report* out) {
  if (out == nullptr || value >= mechanism.domain_size()) return Status::kInvalidArgument;
  if (!rng.seeded()) return Status::kEntropyFailure;
  Report report{};
  BLUR_TRY(ledger.charge_memoized(mechanism.epsilon_charged(), mechanism.longitudinal_epsilon(),
                                  metric_id, value, &report.report_id));
  uint32_t cohort = 0;
  BLUR_TRY(
      mechanism.randomize(rng, ledger.secret(), metric_id, value, &cohort, report.payload.bits));
  report.payload.seed = cohort;
  report.payload.bit_count = static_cast<uint16_t>(mechanism.permanent().bit_count());
  report.metric_id = metric_id;
  report.mechanism = mechanism.id();
  report.epsilon_micros = mechanism.epsilon_charged();
  report.domain_size = mechanism.domain_size();
  *out = report;
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_MEMOIZED_H
