// How many new devices POST /v1/enroll admits, so that whoever holds the
// app's enrollment secret (every copy of the app does) cannot spend it for
// everyone else. Renewals of enrolled devices never come here
// (Authenticator::enroll).
//
// Three token buckets (RateLimiter: bursts of the hourly figure, refilled at
// that rate), all of which a new device takes from:
//   its source          per_address_per_hour  (default 10,000: fleets behind NAT)
//   the secret          per_secret_per_hour   (default 100,000)
//   its source's reserve share, only below the line: kReservePerSource an hour
// The lower half of the secret's bucket is a reserve. An enrollment that
// would leave the secret fewer than half its capacity also takes one of
// its source's 10 reserve tokens an hour: big sources (a fleet behind one
// NAT address, or an attacker) share the upper half, and below it every
// source gets at most 10 an hour.
//
// Worst case, C = per_secret_per_hour, m = kReservePerSource: any number
// of sources empties the upper half C/2 at once, but the reserve takes
// C/(2m) sources (5,000 at the default C) that each spend their m; a
// source with reserve tokens left is refused by the secret's ceiling only
// after that. To hold the reserve down, sources must take its refill C/h,
// so C/m of them (10,000). An attacker with fewer sources makes honest big
// sources wait (they get 10 an hour each) but locks no source out.
//
// A source is an IPv4 address or an IPv6 /64 (what one subscriber gets:
// counting IPv6 addresses one by one would give an attacker 2^64 sources).
// Sources live in memory only and are forgotten once their buckets refill.
#ifndef BLUR_COLLECTOR_AUTH_ENROLLMENT_ALLOWANCE_H
#define BLUR_COLLECTOR_AUTH_ENROLLMENT_ALLOWANCE_H

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "auth/rate_limiter.h"
#include "util/outcome.h"

namespace blur::collector::auth {

struct EnrollmentLimits {
  uint32_t per_address_per_hour = 10000;
  uint32_t per_secret_per_hour = 100000;
  // Renewals (a known device with its key): per device nonce, enough for
  // any honest device (it renews every token lifetime, or after a 401), a
  // bound on the work of a renewal loop.
  uint32_t renewals_per_device_per_hour = 12;
};

inline constexpr uint32_t kReservePerSource = 10;

// The source an address counts as: an IPv6 address's /64 ("2001:db8:0:1::/64"),
// an IPv4 address (also when IPv4-mapped) as itself.
std::string enrollment_source(std::string_view address);

class EnrollmentAllowance {
 public:
  explicit EnrollmentAllowance(const EnrollmentLimits& limits);

  // Takes a new device's enrollment for `secret_key` (the secret's digest)
  // from `address`, or refuses with kTooManyRequests naming the limit,
  // with the seconds until it would pass; a refusal takes nothing.
  Fallible take(std::string_view secret_key, std::string_view address,
                RateLimiter::Clock::time_point now);

 private:
  std::mutex mutex_;  // one decision over the three buckets at a time
  RateLimiter per_source_;
  RateLimiter per_secret_;
  RateLimiter reserve_;
};

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_ENROLLMENT_ALLOWANCE_H
