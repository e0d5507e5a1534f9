// Privacy loss in fixed point: millionths of a nat.
//
// Every mechanism samples with the exact rational epsilon_micros / 10^6
// (see exact_sampling.h), so the epsilon a report realizes is this integer,
// exactly; the ledger charges it. Converting a user's decimal epsilon to this
// unit truncates (never more privacy loss than asked for).
#ifndef BLUR_EPSILON_H
#define BLUR_EPSILON_H

#include <stdint.h>

namespace blur {

using EpsilonMicros = uint32_t;

inline constexpr EpsilonMicros kEpsilonMicrosPerNat = 1000000;

// The largest epsilon one report may use (20 nats): bounds sampler loops.
inline constexpr EpsilonMicros kMaxReportEpsilonMicros = 20 * kEpsilonMicrosPerNat;

}  // namespace blur

#endif  // BLUR_EPSILON_H
