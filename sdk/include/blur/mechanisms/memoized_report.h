// make_report for the memoized mechanisms (memoized.h, memoized_mean.h,
// loloha.h): the durable charge of the report epsilon, the same for every
// value (the metric's first report also pins its configuration digest in
// the ledger), then the permanent response from the device secret and this
// report's fresh randomization.
#ifndef BLUR_MEMOIZED_REPORT_H
#define BLUR_MEMOIZED_REPORT_H

#include <stdint.h>

#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report.h"
#include "blur/sampling/rng.h"
#include "blur/storage/ledger.h"

namespace blur {

// Memo: epsilon_charged(), longitudinal_epsilon(), key(), id(),
// domain_size() and randomize(rng, secret, value, &payload).
template <typename Memo>
Status make_memoized_report(Ledger& ledger, Rng& rng, const Memo& mechanism, uint32_t value,
                            Report* out) {
  if (out == nullptr || value >= mechanism.domain_size()) return Status::kInvalidArgument;
  if (!rng.seeded()) return Status::kEntropyFailure;  // before spending anything
  if (ledger.secret() == nullptr) return Status::kInvalidArgument;
  const MemoKey key = mechanism.key();
  Report report{};
  BLUR_TRY(ledger.charge_memoized(mechanism.epsilon_charged(), key.metric_id, key.config_digest,
                                  &report.report_id));
  BLUR_TRY(mechanism.randomize(rng, ledger.secret(), value, &report.payload));
  report.metric_id = key.metric_id;
  report.mechanism = mechanism.id();
  report.epsilon_micros = mechanism.epsilon_charged();
  report.longitudinal_epsilon_micros = mechanism.longitudinal_epsilon();
  report.domain_size = mechanism.domain_size();
  *out = report;
  return Status::kOk;
}

}  // namespace blur

#endif  // BLUR_MEMOIZED_REPORT_H
