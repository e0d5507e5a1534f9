#include "model/metric_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "blur/mechanisms/mechanism.h"

namespace blur::collector {

namespace {
constexpr uint64_t kMicrosPerNat = 1000000;
}  // namespace

uint32_t reports_per_bucket_limit(const MetricConfig& metric) {
  if (metric.max_reports_per_bucket != 0) return metric.max_reports_per_bucket;
  if (metric.epsilon_micros == 0) return kDefaultReportsPerBucket;
  const uint64_t derived = epsilon_allowance_per_bucket(metric) / metric.epsilon_micros;
  return static_cast<uint32_t>(
      std::clamp<uint64_t>(derived, 1, uint64_t{kMaxReportsPerBucketLimit}));
}

uint64_t epsilon_allowance_per_bucket(const MetricConfig& metric) {
  if (metric.epsilon_allowance_per_bucket_micros != 0) {
    return metric.epsilon_allowance_per_bucket_micros;
  }
  // An explicit max implies the allowance it spends; else the default.
  const uint64_t reports =
      metric.max_reports_per_bucket != 0 ? metric.max_reports_per_bucket : kDefaultReportsPerBucket;
  return reports * metric.epsilon_micros;
}

std::string describe_bound(const MetricConfig& metric) {
  return "metric " + std::to_string(metric.id) + " accepts at most " +
         std::to_string(reports_per_bucket_limit(metric)) + " reports per device per " +
         std::to_string(metric.bucket_seconds) + "-second bucket";
}

uint64_t reports_per_day_limit(const MetricConfig& metric) {
  if (metric.max_reports_per_day != 0) return metric.max_reports_per_day;
  // An invalid width (caught by check_metric) counts as one bucket a day.
  const uint64_t buckets = metric.bucket_seconds == 0 || metric.bucket_seconds > kSecondsPerDay
                               ? 1
                               : kSecondsPerDay / metric.bucket_seconds;
  return uint64_t{reports_per_bucket_limit(metric)} * buckets;
}

std::string describe_daily_bound(const MetricConfig& metric) {
  return "metric " + std::to_string(metric.id) + " accepts at most " +
         std::to_string(reports_per_day_limit(metric)) +
         " reports per device per day of arrival (UTC)";
}

std::optional<uint32_t> parse_quarantine(const std::string& text) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  uint64_t unit = 1;
  std::string digits = text;
  switch (text.back()) {
    case 's': unit = 1; digits.pop_back(); break;
    case 'm': unit = 60; digits.pop_back(); break;
    case 'h': unit = 3600; digits.pop_back(); break;
    case 'd': unit = 86400; digits.pop_back(); break;
    default: break;
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const uint64_t seconds = std::stoull(digits) * unit;
  if (seconds > kMaxQuarantineSeconds) return std::nullopt;
  return static_cast<uint32_t>(seconds);
}

std::optional<uint64_t> parse_nats_micros(const std::string& text, uint64_t max_micros) {
  uint64_t whole = 0;
  uint64_t fraction = 0;
  size_t i = 0;
  size_t whole_digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
       ++i, ++whole_digits) {
    whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
    if (whole > max_micros / kMicrosPerNat) return std::nullopt;
  }
  size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (fraction_digits < 6) fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
      ++fraction_digits;
    }
  }
  if (i != text.size() || whole_digits + fraction_digits == 0) return std::nullopt;
  for (size_t d = fraction_digits; d < 6; ++d) fraction *= 10;
  const uint64_t micros = whole * kMicrosPerNat + fraction;
  if (micros == 0 || micros > max_micros) return std::nullopt;
  return micros;
}

std::optional<uint32_t> parse_epsilon_micros(const std::string& text) {
  const auto micros = parse_nats_micros(text, blur::kMaxReportEpsilonMicros);
  if (!micros) return std::nullopt;
  return static_cast<uint32_t>(*micros);
}

std::string describe(const MetricConfig& metric) {
  char text[160];
  std::snprintf(text, sizeof text, "metric %u (%s, epsilon %u.%06u, domain %u", metric.id,
                blur::mechanism_name(metric.mechanism), metric.epsilon_micros / 1000000,
                metric.epsilon_micros % 1000000, metric.domain_size);
  std::string out = text;
  if (metric.longitudinal_epsilon_micros != 0) {
    std::snprintf(text, sizeof text, ", longitudinal epsilon %u.%06u",
                  metric.longitudinal_epsilon_micros / 1000000,
                  metric.longitudinal_epsilon_micros % 1000000);
    out += text;
  }
  if (metric.quarantine_seconds != 0) {
    out += ", devices quarantined for " + std::to_string(metric.quarantine_seconds) + " s";
  }
  return out + ")";
}

std::string describe_guarantee(const MetricConfig& metric) {
  char text[320];
  const uint32_t e = metric.epsilon_micros;
  if (metric.longitudinal_epsilon_micros == 0) {
    std::snprintf(text, sizeof text,
                  "each report is %u.%06u-LDP; a device's reports compose: for any two histories "
                  "of its values their loss is at most %u.%06u per report (the ledger's charge)",
                  e / 1000000, e % 1000000, e / 1000000, e % 1000000);
  } else {
    const uint32_t l = metric.longitudinal_epsilon_micros;
    std::snprintf(text, sizeof text,
                  "memoized: for any two histories of a device's values the reports' loss is at "
                  "most %u.%06u per report whose value differs (the ledger's charge per report); "
                  "repeated reports of an unchanged value reveal at most %u.%06u about it",
                  e / 1000000, e % 1000000, l / 1000000, l % 1000000);
  }
  return text;
}

}  // namespace blur::collector
