#include "auth/enrollment_allowance.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdio>

namespace blur::collector::auth {

namespace {

Error too_many(std::string message, uint32_t retry_after) {
  return {Error::Kind::kTooManyRequests, std::move(message), std::max<uint32_t>(retry_after, 1)};
}

}  // namespace

std::string enrollment_source(std::string_view address) {
  const std::string text(address);
  unsigned char bytes[16];
  if (inet_pton(AF_INET6, text.c_str(), bytes) != 1) return text;
  static constexpr unsigned char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(kMapped, kMapped + 12, bytes)) {
    char v4[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, bytes + 12, v4, sizeof v4) != nullptr) return v4;
  }
  unsigned char prefix[16] = {};
  std::copy(bytes, bytes + 8, prefix);
  char v6[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, prefix, v6, sizeof v6) == nullptr) return text;
  return std::string(v6) + "/64";
}

EnrollmentAllowance::EnrollmentAllowance(const EnrollmentLimits& limits)
    : per_source_(limits.per_address_per_hour),
      per_secret_(limits.per_secret_per_hour),
      reserve_(kReservePerSource) {}

Fallible EnrollmentAllowance::take(std::string_view secret_key, std::string_view address,
                                   RateLimiter::Clock::time_point now) {
  const std::string source = enrollment_source(address);
  std::lock_guard lock(mutex_);
  const double from_source = per_source_.available(source, now);
  if (from_source < 1) {
    return too_many("too many new devices from this address; retry later",
                    per_source_.seconds_until(from_source, 1));
  }
  const double from_secret = per_secret_.available(secret_key, now);
  if (from_secret < 1) {
    return too_many("too many new devices with this enrollment secret; retry later",
                    per_secret_.seconds_until(from_secret, 1));
  }
  // Below the line: the reserve, at most kReservePerSource an hour per source.
  const bool in_reserve = from_secret - 1 < per_secret_.capacity() / 2;
  if (in_reserve) {
    const double reserved = reserve_.available(source, now);
    if (reserved < 1) {
      return too_many(
          "this enrollment secret's hourly allowance is nearly spent: what is left admits at "
          "most " + std::to_string(kReservePerSource) +
              " new devices per address and hour; retry later",
          std::min(reserve_.seconds_until(reserved, 1),
                   per_secret_.seconds_until(from_secret, per_secret_.capacity() / 2 + 1)));
    }
    if (!reserve_.take(source, now)) return too_many("too many sources; retry later", 60);
  }
  // available() > 0 above: the keys fit, so these takes succeed.
  (void)per_source_.take(source, now);
  (void)per_secret_.take(secret_key, now);
  return done();
}

}  // namespace blur::collector::auth
