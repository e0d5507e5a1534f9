// Repeated collection of a numeric value: alpha-point rounding, a memoized
// 1BitMean bit and per-report output perturbation (Ding, Kulkarni,
// Yekhanin, "Collecting Telemetry Data Privately", NeurIPS 2017, §3).
//
// [0, M] (values 0..k-1, M = k - 1) is cut into s buckets of width
// w = M / s (s must divide M). Each device draws alpha uniform in
// {0, ..., w-1} once per metric, from its secret (kAlphaStreamValue), and
// rounds x = L + r (L a multiple of w, 0 <= r < w) up to L + w when
// r + alpha >= w, else down to L. So P(up) = r / w exactly, and over
// devices E[rounded] = x (the variance grows by at most w^2 / 4).
//
// The bit of a rounding point p is 1BitMean(p) at the longitudinal epsilon
// eps_inf, drawn once from PermanentStream(secret, metric, p). Each report
// sends that bit through binary randomized response at the report epsilon
// eta (keep it with probability e^eta / (1 + e^eta), exactly): without that
// flip two different bits would prove the rounding point changed. eta is
// the report's loss with respect to the memoized bit, and what it charges:
// for any two histories the loss is at most eta * #{t : h_t != h'_t}
// (docs/math.md §5.2). The collector debiases both stages.
#ifndef BLUR_MEMOIZED_MEAN_H
#define BLUR_MEMOIZED_MEAN_H

#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"
#include "blur/sampling/exact_sampling.h"

namespace blur {

class MemoizedMean : public MemoizedForm<OneBitMean> {
 public:
  static constexpr PayloadKind kPayload = PayloadKind::kBit;

  // kInvalidArgument unless 1BitMean accepts (longitudinal_epsilon,
  // domain_size), 0 < report_epsilon <= kMaxReportEpsilonMicros and
  // 1 <= buckets divides domain_size - 1.
  static Result<MemoizedMean> create(EpsilonMicros report_epsilon,
                                     EpsilonMicros longitudinal_epsilon, uint32_t domain_size,
                                     uint32_t buckets, MemoKey key) {
    const auto bit = OneBitMean::create(longitudinal_epsilon, domain_size);
    if (!bit.ok()) return bit.status();
    if (report_epsilon == 0 || report_epsilon > kMaxReportEpsilonMicros) {
      return Status::kInvalidArgument;
    }
    const uint32_t top = domain_size - 1;
    if (buckets == 0 || buckets > top || top % buckets != 0) return Status::kInvalidArgument;
    return MemoizedMean(bit.value(), report_epsilon, top / buckets, key);
  }

  uint32_t bucket_width() const { return width_; }

  // This device's rounding point for `value` (a multiple of the bucket width).
  Status round(const uint8_t* secret, uint32_t value, uint32_t* point) const {
    if (secret == nullptr || point == nullptr || value >= domain_size()) {
      return Status::kInvalidArgument;
    }
    PermanentStream stream(secret, key_, kAlphaStreamValue);
    uint64_t alpha = 0;
    BLUR_TRY(stream.uniform(width_, &alpha));
    const uint32_t remainder = value % width_;
    *point = value - remainder + (remainder + alpha >= width_ ? width_ : 0);
    return Status::kOk;
  }

  // The memoized bit of a rounding point.
  Status memoized_bit(const uint8_t* secret, uint32_t point, uint32_t* bit) const {
    if (secret == nullptr || point % width_ != 0) return Status::kInvalidArgument;
    PermanentStream stream(secret, key_, point);
    return permanent_.randomize(stream, point, bit);
  }

  // Round, look up the memoized bit, flip it for this report.
  template <typename Random>
  Status randomize(Random& random, const uint8_t* secret, uint32_t value,
                   ReportPayload* out) const {
    uint32_t point = 0, bit = 0;
    BLUR_TRY(round(secret, value, &point));
    BLUR_TRY(memoized_bit(secret, point, &bit));
    return sample_randomized_response(random, report_epsilon_, kEpsilonMicrosPerNat, 2, bit,
                                      &out->value);
  }

 private:
  MemoizedMean(const OneBitMean& bit, EpsilonMicros report_epsilon, uint32_t width, MemoKey key)
      : MemoizedForm(bit, report_epsilon, key), width_(width) {}
  uint32_t width_;
};

// onebit's builder: here, beside its memoized form.
template <>
struct MechanismBuilder<MechanismId::kOneBitMean> : DomainBuilder<OneBitMean> {
  static Result<MemoizedMean> create_memoized(const MechanismConfig& config, MemoKey key) {
    return MemoizedMean::create(config.epsilon_micros, config.longitudinal_epsilon,
                                config.domain_size, config.rounding_buckets, key);
  }
};

}  // namespace blur

#endif  // BLUR_MEMOIZED_MEAN_H
