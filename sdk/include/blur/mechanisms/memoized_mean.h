// Repeated collection of a numeric value: alpha-point rounding and a
// memoized 1BitMean bit (Ding, Kulkarni, Yekhanin, "Collecting Telemetry
// Data Privately", NeurIPS 2017, section 3).
//
// [0, M] (values 0..k-1, M = k - 1) is cut into s buckets of width
// w = M / s (s must divide M). Each device draws alpha uniform in
// {0, ..., w-1} once per metric, from its secret (PermanentStream with the
// reserved value kAlphaStreamValue), and rounds x = L + r (L a multiple of
// w, 0 <= r < w) up to L + w when r + alpha >= w, else down to L. So
// P(up) = r / w exactly, and over devices E[rounded] = x: the collector's
// 1BitMean estimator is unchanged (its variance grows by at most w^2 / 4).
//
// The bit for a rounding point p is 1BitMean(p) drawn once from
// PermanentStream(secret, metric, p): a device whose value stays in one
// rounding outcome sends the same bit every time. One bit is an epsilon-LDP
// report of p and repeating it reveals nothing new, so the ledger charges
// epsilon the first time each point is reported and nothing afterwards
// (Ledger::charge_memoized with a report epsilon of 0): at most
// (s + 1) * epsilon per metric over the device's life.
//
// Left out: the paper's output perturbation (a per-device coin that hides
// the moment the rounded value changes); with it the bit for p is no longer
// a 1BitMean report of p alone.
#ifndef BLUR_MEMOIZED_MEAN_H
#define BLUR_MEMOIZED_MEAN_H

#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report.h"
#include "blur/result.h"

namespace blur {

class MemoizedMean {
 public:
  static constexpr PayloadKind kPayload = PayloadKind::kBit;
  // The permanent stream of alpha: a "value" no domain reaches (< 2^24).
  static constexpr uint32_t kAlphaStreamValue = 0xFFFFFFFFu;

  // kInvalidArgument unless 1BitMean accepts (epsilon, domain_size) and
  // 1 <= buckets divides domain_size - 1.
  static Result<MemoizedMean> create(EpsilonMicros epsilon_micros, uint32_t domain_size,
                                     uint32_t buckets) {
    const auto bit = OneBitMean::create(epsilon_micros, domain_size);
    if (!bit.ok()) return bit.status();
    const uint32_t top = domain_size - 1;
    if (buckets == 0 || buckets > top || top % buckets != 0) return Status::kInvalidArgument;
    return MemoizedMean(bit.value(), top / buckets);
  }

  MechanismId id() const { return bit_.id(); }
  uint32_t domain_size() const { return bit_.domain_size(); }
  uint32_t bucket_width() const { return width_; }
  // Nothing is charged per report; the bit's epsilon once per point.
  EpsilonMicros epsilon_charged() const { return 0; }
  EpsilonMicros longitudinal_epsilon() const { return bit_.epsilon_charged(); }
  const OneBitMean& bit_mechanism() const { return bit_; }

  // This device's rounding point for `value` (a multiple of the bucket width).
  Status round(const uint8_t* secret, uint32_t metric_id, uint32_t value, uint32_t* point) const {
    if (secret == nullptr || point == nullptr || value >= domain_size()) {
      return Status::kInvalidArgument;
    }
    PermanentStream stream(secret, metric_id, kAlphaStreamValue);
    uint64_t alpha = 0;
    BLUR_TRY(stream.uniform(width_, &alpha));
    const uint32_t remainder = value % width_;
    *point = value - remainder + (remainder + alpha >= width_ ? width_ : 0);
    return Status::kOk;
  }

  // The memoized bit of a rounding point.
  Status randomize(const uint8_t* secret, uint32_t metric_id, uint32_t point, uint32_t* bit) const {
    if (secret == nullptr || point % width_ != 0) return Status::kInvalidArgument;
    PermanentStream stream(secret, metric_id, point);
    return bit_.randomize(stream, point, bit);
  }

 private:
  MemoizedMean(const OneBitMean& bit, uint32_t width) : bit_(bit), width_(width) {}
  OneBitMean bit_;
  uint32_t width_;
};

// make_report for MemoizedMean: round, charge the point (durable; epsilon
// only the first time), then its memoized bit. The report carries the bit's
// epsilon, which the collector debiases with.
inline Status make_memoized_mean_report(Ledger& ledger, const MemoizedMean& mechanism,
                                        uint32_t metric_id, uint32_t value, Report* out) {
  if (out == nullptr || value >= mechanism.domain_size()) return Status::kInvalidArgument;
  uint32_t point = 0;
  BLUR_TRY(mechanism.round(ledger.secret(), metric_id, value, &point));
  Report report{};
  BLUR_TRY(ledger.charge_memoized(mechanism.epsilon_charged(), mechanism.longitudinal_epsilon(),
                                  metric_id, point, &report.report_id));
  BLUR_TRY(mechanism.randomize(ledger.secret(), metric_id, point, &report.payload.value));
  report.metric_id = metric_id;
  report.mechanism = mechanism.id();
  report.epsilon_micros = mechanism.longitudinal_epsilon();
  report.domain_size = mechanism.domain_size();
  *out = report;
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_MEMOIZED_MEAN_H
