// A randomized report, and the one way to make one: charge the ledger
// (durably), then randomize. A report never exists before its epsilon is
// spent; a failure after the charge loses the epsilon, never the privacy.
#ifndef BLUR_REPORT_H
#define BLUR_REPORT_H

#include <stdint.h>

#include "blur/binary_randomized_response.h"
#include "blur/epsilon.h"
#include "blur/ledger.h"
#include "blur/mechanism.h"
#include "blur/rng.h"
#include "blur/status.h"

namespace blur {

struct Report {
  uint64_t report_id;  // unique per device (ledger sequence)
  uint32_t metric_id;
  MechanismId mechanism;
  EpsilonMicros epsilon_micros;  // realized epsilon, as charged
  uint32_t domain_size;
  bool bit;  // binary randomized response payload
};

// Charges mechanism.epsilon_charged() to `ledger`, then randomizes `value`.
// On any failure `*out` is untouched and no report exists.
Status report_binary(Ledger& ledger, Rng& rng, const BinaryRandomizedResponse& mechanism,
                     uint32_t metric_id, bool value, Report* out);

}  // namespace blur

#endif  // BLUR_REPORT_H
