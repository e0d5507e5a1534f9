// A randomized report, and the one way to make one: charge the ledger
// (durably), then randomize. A report never exists before its epsilon is
// spent; a failure after the charge loses the epsilon, never the privacy.
#ifndef BLUR_REPORT_H
#define BLUR_REPORT_H

#include <stdint.h>

#include "blur/discovery/word.h"
#include "blur/epsilon.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/report/report_payload.h"
#include "blur/sampling/rng.h"
#include "blur/status.h"

namespace blur {

struct Report {
  uint64_t report_id;  // unique per device (ledger sequence)
  uint32_t metric_id;
  MechanismId mechanism;
  EpsilonMicros epsilon_micros;  // realized epsilon, as charged
  // Memoized mechanisms: the permanent response's epsilon; 0 for one-shot
  // reports (make_report).
  EpsilonMicros longitudinal_epsilon_micros;
  uint32_t domain_size;
  ReportPayload payload;  // the randomized output
  uint32_t observed_minute;  // the port clock's minutes when recorded; 0: no clock
};

// Whether `value` is one the mechanism randomizes: an index below the
// domain size, or a word no longer than the discovery domain's longest.
template <typename Mechanism>
constexpr bool in_domain(const Mechanism& mechanism, uint32_t value) {
  return value < mechanism.domain_size();
}
template <typename Mechanism>
constexpr bool in_domain(const Mechanism& mechanism, const Word& word) {
  return word.length != 0 && word.length <= mechanism.domain_size();
}

// One randomization of `value` laid into a payload, without a ledger: the
// one place a one-shot mechanism's output meets ReportPayload's fields
// (those it does not fill are left as they were).
//
// Mechanism: domain_size(), kPayload and randomize(random, value,
// &scalar | bits | &number | &seed, ...) to match.
template <typename Mechanism, typename Random>
Status randomize_payload(const Mechanism& mechanism, Random& random,
                         const MechanismValueT<Mechanism>& value, ReportPayload* out) {
  if constexpr (Mechanism::kPayload == PayloadKind::kBits) {
    out->bit_count = static_cast<uint16_t>(mechanism.domain_size());
    return mechanism.randomize(random, value, out->bits);
  } else if constexpr (Mechanism::kPayload == PayloadKind::kBloom) {
    out->bit_count = static_cast<uint16_t>(mechanism.shape().bloom_bits);
    return mechanism.randomize(random, value, &out->seed, out->bits);
  } else if constexpr (Mechanism::kPayload == PayloadKind::kLocalHash) {
    return mechanism.randomize(random, value, &out->seed, &out->value);
  } else if constexpr (Mechanism::kPayload == PayloadKind::kNumber) {
    return mechanism.randomize(random, value, &out->number);
  } else {
    return mechanism.randomize(random, value, &out->value);
  }
}

// A report to make, its mechanism's type erased: what it charges and the
// one typed step, the randomization (randomize_drawn<Mechanism>). Lets the
// charge-then-randomize sequence below exist once per kind (one-shot or
// memoized) rather than once per mechanism in firmware.
struct ReportDraw {
  const void* mechanism;
  const void* value;  // a MechanismValueT<Mechanism>
  // Memoized mechanisms also take the device secret.
  Status (*randomize)(const void* mechanism, Rng& rng, const uint8_t* secret, const void* value,
                      ReportPayload* out);
  uint32_t metric_id;
  MechanismId id;
  uint32_t domain_size;
  EpsilonMicros epsilon;       // charged per report
  EpsilonMicros longitudinal;  // memoized: the permanent response's epsilon; else 0
  uint32_t key_metric_id;      // memoized: the metric its streams are keyed to
  uint32_t config_digest;      // memoized: the configuration its streams are keyed to
};

template <typename Mechanism>
Status randomize_drawn(const void* mechanism, Rng& rng, const uint8_t* secret, const void* value,
                       ReportPayload* out) {
  const Mechanism& m = *static_cast<const Mechanism*>(mechanism);
  const auto& v = *static_cast<const MechanismValueT<Mechanism>*>(value);
  if constexpr (IsMemoized<Mechanism>::value) {
    return m.randomize(rng, secret, v, out);
  } else {
    static_cast<void>(secret);
    return randomize_payload(m, rng, v, out);
  }
}

template <typename Mechanism>
ReportDraw report_draw(const Mechanism& mechanism, uint32_t metric_id,
                       const MechanismValueT<Mechanism>& value) {
  ReportDraw draw{&mechanism, &value, &randomize_drawn<Mechanism>, metric_id, mechanism.id(),
                  mechanism.domain_size(), mechanism.epsilon_charged(), 0, 0, 0};
  if constexpr (IsMemoized<Mechanism>::value) {
    draw.longitudinal = mechanism.longitudinal_epsilon();
    draw.key_metric_id = mechanism.key().metric_id;
    draw.config_digest = mechanism.key().config_digest;
  }
  return draw;
}

// make_report's sequence for a drawn report of either kind.
template <bool kMemoized>
Status make_drawn_report(Ledger& ledger, Rng& rng, const ReportDraw& draw, Report* out) {
  if (!rng.seeded()) return Status::kEntropyFailure;  // before spending anything
  Report report{};
  if constexpr (kMemoized) {
    if (ledger.secret() == nullptr || draw.metric_id != draw.key_metric_id) {
      return Status::kInvalidArgument;
    }
    BLUR_TRY(ledger.charge_memoized(draw.epsilon, draw.metric_id, draw.config_digest,
                                    &report.report_id));
  } else {
    BLUR_TRY(ledger.charge(draw.epsilon, draw.metric_id, &report.report_id));
  }
  BLUR_TRY(draw.randomize(draw.mechanism, rng, kMemoized ? ledger.secret() : nullptr, draw.value,
                          &report.payload));
  report.longitudinal_epsilon_micros = draw.longitudinal;
  report.metric_id = draw.metric_id;
  report.mechanism = draw.id;
  report.epsilon_micros = draw.epsilon;
  report.domain_size = draw.domain_size;
  *out = report;
  return Status::kOk;
}

// Charges mechanism.epsilon_charged() to `ledger`, then randomizes `value`
// (which must be in the mechanism's domain: checked before any charge).
// On any failure `*out` is untouched and no report exists.
//
// A memoized mechanism (memoized.h, memoized_mean.h, loloha.h: IsMemoized)
// charges the same for every value (the metric's first report also pins
// its configuration digest in the ledger, Ledger::charge_memoized), then
// draws the permanent response from the device secret and this report's
// fresh randomization: randomize(rng, secret, value, &payload).
template <typename Mechanism>
Status make_report(Ledger& ledger, Rng& rng, const Mechanism& mechanism, uint32_t metric_id,
                   const MechanismValueT<Mechanism>& value, Report* out) {
  if (out == nullptr || !in_domain(mechanism, value)) return Status::kInvalidArgument;
  return make_drawn_report<IsMemoized<Mechanism>::value>(
      ledger, rng, report_draw(mechanism, metric_id, value), out);
}

}  // namespace blur

#endif  // BLUR_REPORT_H
