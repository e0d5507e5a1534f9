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
  // reports (memoized_report.h).
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

// Charges mechanism.epsilon_charged() to `ledger`, then randomizes `value`
// (which must be in the mechanism's domain: checked before any charge).
// On any failure `*out` is untouched and no report exists.
//
// Mechanism: id(), domain_size(), epsilon_charged(), kPayload and
// randomize(rng, value, &scalar | bits | &number) to match.
template <typename Mechanism>
Status make_report(Ledger& ledger, Rng& rng, const Mechanism& mechanism, uint32_t metric_id,
                   const MechanismValueT<Mechanism>& value, Report* out) {
  if (out == nullptr || !in_domain(mechanism, value)) return Status::kInvalidArgument;
  if (!rng.seeded()) return Status::kEntropyFailure;  // before spending anything
  Report report{};
  BLUR_TRY(ledger.charge(mechanism.epsilon_charged(), metric_id, &report.report_id));
  if constexpr (Mechanism::kPayload == PayloadKind::kBits) {
    BLUR_TRY(mechanism.randomize(rng, value, report.payload.bits));
    report.payload.bit_count = static_cast<uint16_t>(mechanism.domain_size());
  } else if constexpr (Mechanism::kPayload == PayloadKind::kBloom) {
    BLUR_TRY(mechanism.randomize(rng, value, &report.payload.seed, report.payload.bits));
    report.payload.bit_count = static_cast<uint16_t>(mechanism.shape().bloom_bits);
  } else if constexpr (Mechanism::kPayload == PayloadKind::kLocalHash) {
    BLUR_TRY(mechanism.randomize(rng, value, &report.payload.seed, &report.payload.value));
  } else if constexpr (Mechanism::kPayload == PayloadKind::kNumber) {
    BLUR_TRY(mechanism.randomize(rng, value, &report.payload.number));
  } else {
    BLUR_TRY(mechanism.randomize(rng, value, &report.payload.value));
  }
  report.metric_id = metric_id;
  report.mechanism = mechanism.id();
  report.epsilon_micros = mechanism.epsilon_charged();
  report.domain_size = mechanism.domain_size();
  *out = report;
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_REPORT_H
