// A metric as the collector knows it: the id devices report under, the
// mechanism (the SDK's MechanismId) and epsilon its reports must carry, the
// mechanism's shape, and how the store keeps it (time bucket width, raw
// retention). Reports are validated against this before anything is stored.
#ifndef BLUR_COLLECTOR_MODEL_METRIC_CONFIG_H
#define BLUR_COLLECTOR_MODEL_METRIC_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>

#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/rappor.h"
#include "util/outcome.h"
#include "util/time_text.h"

namespace blur::collector {

using blur::MechanismId;
using blur::PayloadKind;

inline constexpr uint32_t kDefaultBucketSeconds = 3600;
inline constexpr uint32_t kDefaultRetentionDays = 30;
inline constexpr uint32_t kMaxRetentionDays = 3650;
// The longest quarantine of new devices: 30 days.
inline constexpr uint32_t kMaxQuarantineSeconds = 30 * kSecondsPerDay;
// The contribution bound's default allowance: this many reports' epsilon per
// device, metric and bucket (see reports_per_bucket_limit).
inline constexpr uint32_t kDefaultReportsPerBucket = 4;
// The largest settable bound; "unbounded" in practice.
inline constexpr uint32_t kMaxReportsPerBucketLimit = 1000000000;
// The largest settable receive-time allowance: the largest bound over a day
// of one-minute buckets.
inline constexpr uint64_t kMaxReportsPerDayLimit = uint64_t{kMaxReportsPerBucketLimit} * 1440;

struct MetricConfig {
  uint32_t id = 0;
  MechanismId mechanism = MechanismId::kBinaryRandomizedResponse;
  uint32_t epsilon_micros = 0;
  uint32_t domain_size = 2;  // number of possible true values
  // Memoized metrics (loloha requires it; sue, rappor, onebit may have it):
  // the permanent response's epsilon; epsilon_micros is then what each
  // report charges on the device. 0: one-shot reports.
  uint32_t longitudinal_epsilon_micros = 0;
  // rappor only: the filter shape and the hash key (with `id`) devices use.
  // Candidates are the integers 0..domain_size-1, hashed as decimal text.
  blur::RapporShape rappor{};
  uint64_t hash_key = 0;
  // Numeric mechanisms: what the grid 0..domain_size-1 measures. Grid point
  // x stands for range_low + x (range_high - range_low) / (domain_size - 1);
  // both 0: the grid units themselves.
  double range_low = 0;
  double range_high = 0;
  // Reports are aggregated per bucket of this many seconds (a divisor of a
  // day), by the time they were observed.
  uint32_t bucket_seconds = kDefaultBucketSeconds;
  // Raw reports are kept this long (aggregates are kept for good).
  uint32_t retention_days = kDefaultRetentionDays;
  // The contribution bound against poisoning: per device nonce, per bucket,
  // the collector stores at most reports_per_bucket_limit() reports of this
  // metric. 0 means "derive": the allowance defaults to
  // kDefaultReportsPerBucket x epsilon_micros (or max x epsilon_micros when
  // only the max is set), the max to floor(allowance / epsilon), at least 1.
  uint64_t epsilon_allowance_per_bucket_micros = 0;
  uint32_t max_reports_per_bucket = 0;
  // The receive-time allowance: per device nonce, per UTC day of arrival,
  // at most reports_per_day_limit() reports of this metric are stored,
  // whatever buckets their observation times claim (else a device's clock
  // could spread it over every bucket of the retention). 0 means "derive":
  // what an honest device can send at the per-bucket bound in one day.
  uint64_t max_reports_per_day = 0;
  // The quarantine of new devices against fake fleets: a report whose
  // device first enrolled less than this many seconds before it arrived is
  // refused (final, like the contribution bound: the device drops it). 0:
  // off. It costs honest devices their first reports: docs/SECURITY.md.
  uint32_t quarantine_seconds = 0;
};

// "86400", "90s", "30m", "24h" or "7d" as seconds, within
// kMaxQuarantineSeconds; nullopt otherwise.
std::optional<uint32_t> parse_quarantine(const std::string& text);

// The bound in force: the explicit max, else floor(allowance / epsilon)
// clamped to 1..kMaxReportsPerBucketLimit.
uint32_t reports_per_bucket_limit(const MetricConfig& metric);
// The allowance in force (micro-nats per device per bucket).
uint64_t epsilon_allowance_per_bucket(const MetricConfig& metric);
// "metric 7 accepts at most 4 reports per device per 3600-second bucket"
std::string describe_bound(const MetricConfig& metric);
// The receive-time allowance in force: the explicit max, else
// reports_per_bucket_limit() x the buckets of a day (at least the
// per-bucket bound: a day holds one bucket at least).
uint64_t reports_per_day_limit(const MetricConfig& metric);
// "metric 7 accepts at most 96 reports per device per day of arrival (UTC)"
std::string describe_daily_bound(const MetricConfig& metric);

// Parses a decimal epsilon ("1", "0.25"; no exponent) into micro-nats,
// truncating digits past the sixth decimal, as the SDK does. Nothing for
// malformed, zero or over-20-nat values.
std::optional<uint32_t> parse_epsilon_micros(const std::string& text);
// The same rules for any amount of nats up to max_micros (an allowance).
std::optional<uint64_t> parse_nats_micros(const std::string& text, uint64_t max_micros);

// "metric 2 (grr, epsilon 2.000000, domain 16)"; a memoized metric adds
// ", longitudinal epsilon 2.000000".
std::string describe(const MetricConfig& metric);
// What a device's reports of this metric guarantee, in one sentence.
std::string describe_guarantee(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MODEL_METRIC_CONFIG_H
