#include "metrics/metric_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "blur/mechanisms/hadamard_response.h"
#include "registry/mechanism_spec.h"

namespace blur::collector {

namespace {
constexpr uint64_t kMicrosPerNat = 1000000;
constexpr uint64_t kMaxEpsilonMicros = blur::kMaxReportEpsilonMicros;
constexpr uint32_t kSecondsPerDay = 86400;
}  // namespace

std::optional<MechanismId> mechanism_from_name(const std::string& name) {
#define BLUR_X(id, Cpp, short_name, C, PROTO, Payload, max_domain) \
  if (name == #short_name) return MechanismId::k##Cpp;
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return std::nullopt;
}

std::string mechanism_names() {
  std::string names;
#define BLUR_X(id, Cpp, short_name, C, PROTO, Payload, max_domain) \
  names += names.empty() ? #short_name : ", " #short_name;
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return names;
}

bool is_numeric(MechanismId mechanism) { return mechanism_spec(mechanism).numeric; }

uint32_t report_value_limit(const MetricConfig& metric) {
  return metric.mechanism == MechanismId::kHadamardResponse ? blur::hadamard_size(metric.domain_size)
                                                            : metric.domain_size;
}

blur::LocalHashShape local_hash_shape(const MetricConfig& metric) {
  return blur::LocalHashing::shape(metric.mechanism == MechanismId::kBinaryLocalHashing
                                       ? blur::LocalHashing::Kind::kBinary
                                       : blur::LocalHashing::Kind::kOptimized,
                                   metric.epsilon_micros, metric.domain_size);
}

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

namespace {

// The configuration as (field, value text) pairs: one list for equality,
// the first difference and the canonical text.
nlohmann::json fields(const MetricConfig& m) {
  nlohmann::json j;
  j["metric_id"] = m.id;
  j["mechanism"] = blur::mechanism_name(m.mechanism);
  j["epsilon_micros"] = m.epsilon_micros;
  j["domain_size"] = m.domain_size;
  if (m.longitudinal_epsilon_micros != 0) {
    j["longitudinal_epsilon_micros"] = m.longitudinal_epsilon_micros;
  }
  j["bucket_seconds"] = m.bucket_seconds;
  j["retention_days"] = m.retention_days;
  // The values in force, so that a default and the same value written out
  // are one configuration.
  j["max_reports_per_bucket"] = reports_per_bucket_limit(m);
  j["epsilon_allowance_per_bucket_micros"] = epsilon_allowance_per_bucket(m);
  if (m.quarantine_seconds != 0) j["quarantine_seconds"] = m.quarantine_seconds;
  // Derived from the two above by default: a configuration stored before
  // the allowance existed (no key: 0, derive) equals today's default.
  j["max_reports_per_day"] = reports_per_day_limit(m);
  if (m.mechanism == MechanismId::kRappor) {
    j["rappor_bloom_bits"] = m.rappor.bloom_bits;
    j["rappor_hash_count"] = m.rappor.hash_count;
    j["rappor_cohort_count"] = m.rappor.cohort_count;
    j["rappor_hash_key"] = m.hash_key;
  }
  if (is_numeric(m.mechanism)) {
    j["range_low"] = m.range_low;
    j["range_high"] = m.range_high;
  }
  return j;
}

}  // namespace

bool operator==(const MetricConfig& a, const MetricConfig& b) { return fields(a) == fields(b); }

std::string first_difference(const MetricConfig& stored, const MetricConfig& wanted) {
  const nlohmann::json a = fields(stored), b = fields(wanted);
  // The allowances follow epsilon, the bucket width and the per-bucket max
  // by default: name a changed source first.
  auto is_derived = [](const std::string& key) {
    return key == "epsilon_allowance_per_bucket_micros" || key == "max_reports_per_day";
  };
  for (const bool derived : {false, true}) {
    for (const auto& [key, value] : a.items()) {
      if (is_derived(key) != derived) continue;
      const auto other = b.find(key);
      if (other == b.end()) return key + ": " + value.dump() + " -> (none)";
      if (*other != value) return key + ": " + value.dump() + " -> " + other->dump();
    }
  }
  for (const auto& [key, value] : b.items()) {
    if (!a.contains(key)) return key + ": (none) -> " + value.dump();
  }
  return {};
}

std::string config_to_text(const MetricConfig& metric) { return fields(metric).dump(); }

Outcome<MetricConfig> config_from_text(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return invalid("stored metric configuration is not JSON");
  MetricConfig m;
  try {
    m.id = j.at("metric_id").get<uint32_t>();
    const auto mechanism = mechanism_from_name(j.at("mechanism").get<std::string>());
    if (!mechanism) return invalid("stored metric configuration names an unknown mechanism");
    m.mechanism = *mechanism;
    m.epsilon_micros = j.at("epsilon_micros").get<uint32_t>();
    m.domain_size = j.at("domain_size").get<uint32_t>();
    if (j.contains("longitudinal_epsilon_micros")) {
      m.longitudinal_epsilon_micros = j.at("longitudinal_epsilon_micros").get<uint32_t>();
    }
    m.bucket_seconds = j.at("bucket_seconds").get<uint32_t>();
    m.retention_days = j.at("retention_days").get<uint32_t>();
    // Absent from configurations stored before the contribution bound:
    // those metrics get the default bound (0 = derive).
    if (j.contains("max_reports_per_bucket")) {
      m.max_reports_per_bucket = j.at("max_reports_per_bucket").get<uint32_t>();
    }
    if (j.contains("epsilon_allowance_per_bucket_micros")) {
      m.epsilon_allowance_per_bucket_micros =
          j.at("epsilon_allowance_per_bucket_micros").get<uint64_t>();
    }
    // Absent before the receive-time allowance (schema 3): the default.
    if (j.contains("max_reports_per_day")) {
      m.max_reports_per_day = j.at("max_reports_per_day").get<uint64_t>();
    }
    if (j.contains("quarantine_seconds")) {
      m.quarantine_seconds = j.at("quarantine_seconds").get<uint32_t>();
    }
    if (m.mechanism == MechanismId::kRappor) {
      m.rappor.bloom_bits = j.at("rappor_bloom_bits").get<uint32_t>();
      m.rappor.hash_count = j.at("rappor_hash_count").get<uint32_t>();
      m.rappor.cohort_count = j.at("rappor_cohort_count").get<uint32_t>();
      m.hash_key = j.at("rappor_hash_key").get<uint64_t>();
    }
    if (is_numeric(m.mechanism)) {
      m.range_low = j.at("range_low").get<double>();
      m.range_high = j.at("range_high").get<double>();
    }
  } catch (const nlohmann::json::exception& e) {
    return invalid(std::string("stored metric configuration is incomplete: ") + e.what());
  }
  const std::string problem = check_metric(m);
  if (!problem.empty()) return invalid("stored metric configuration is invalid: " + problem);
  return m;
}

std::string check_metric(const MetricConfig& m) {
  const MechanismSpec& spec = mechanism_spec(m.mechanism);
  const char* name = blur::mechanism_name(m.mechanism);
  if (m.epsilon_micros == 0 || m.epsilon_micros > kMaxEpsilonMicros) {
    return "epsilon must be in (0, 20]";
  }
  if (m.domain_size < 2 || m.domain_size > spec.max_domain) {
    return std::string(name) + " needs a domain size in 2.." + std::to_string(spec.max_domain);
  }
  if (m.longitudinal_epsilon_micros > kMaxEpsilonMicros) {
    return "longitudinal epsilon must be in (0, 20]";
  }
  const bool memoizable = m.mechanism == MechanismId::kLoloha ||
                          m.mechanism == MechanismId::kSymmetricUnaryEncoding ||
                          m.mechanism == MechanismId::kRappor ||
                          m.mechanism == MechanismId::kOneBitMean;
  if (m.longitudinal_epsilon_micros != 0 && !memoizable) {
    return std::string(name) + " has no memoized form (longitudinal: loloha, sue, rappor, onebit)";
  }
  if (m.mechanism == MechanismId::kLoloha && m.longitudinal_epsilon_micros == 0) {
    return "loloha needs a longitudinal epsilon (longitudinal=E)";
  }
  if (m.mechanism == MechanismId::kRappor &&
      !blur::Rappor::create(m.epsilon_micros, m.domain_size, m.rappor,
                            blur::BloomHashKey{m.id, m.hash_key})
           .ok()) {
    return "invalid RAPPOR shape (see blur/mechanisms/rappor.h: bloom_bits a power of two, 8..4096; "
           "hash_count 1..16; cohort_count 1..65536)";
  }
  if (m.bucket_seconds == 0 || kSecondsPerDay % m.bucket_seconds != 0) {
    return "bucket width of " + std::to_string(m.bucket_seconds) +
           " s does not divide a day (e.g. 60, 300, 3600, 86400)";
  }
  if (m.retention_days == 0 || m.retention_days > kMaxRetentionDays) {
    return "retention must be 1.." + std::to_string(kMaxRetentionDays) + " days";
  }
  if (is_numeric(m.mechanism) && (!std::isfinite(m.range_low) || !std::isfinite(m.range_high) ||
                                  m.range_low > m.range_high)) {
    return "numeric range must be finite with low <= high";
  }
  if (m.max_reports_per_bucket > kMaxReportsPerBucketLimit) {
    return "max_reports_per_bucket must be 1.." + std::to_string(kMaxReportsPerBucketLimit);
  }
  if (m.max_reports_per_day > kMaxReportsPerDayLimit) {
    return "max_reports_per_day must be 1.." + std::to_string(kMaxReportsPerDayLimit);
  }
  if (m.quarantine_seconds > kMaxQuarantineSeconds) {
    return "quarantine must be at most " + std::to_string(kMaxQuarantineSeconds) + " s (30 days)";
  }
  return {};
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
  const auto micros = parse_nats_micros(text, kMaxEpsilonMicros);
  if (!micros) return std::nullopt;
  return static_cast<uint32_t>(*micros);
}

namespace {

std::optional<uint64_t> parse_uint(const std::string& text, uint64_t max) {
  if (text.empty() || text.size() > 19 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoull(text) > max) {
    return std::nullopt;
  }
  return std::stoull(text);
}

std::optional<uint32_t> parse_uint32(const std::string& text) {
  const auto value = parse_uint(text, UINT32_MAX);
  if (!value) return std::nullopt;
  return static_cast<uint32_t>(*value);
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos;
       at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

Outcome<MetricConfig> parse_metric_spec(const std::string& spec) {
  std::vector<std::string> parts = split(spec, ':');
  auto error = [&](const std::string& what) { return invalid("metric '" + spec + "': " + what); };
  MetricConfig metric;
  // Named options come last (a bare number would read as a domain).
  static const std::string kBound = "max_reports_per_bucket=";
  static const std::string kDailyBound = "max_reports_per_day=";
  static const std::string kLongitudinal = "longitudinal=";
  static const std::string kQuarantine = "quarantine=";
  while (parts.size() > 3 && parts.back().find('=') != std::string::npos) {
    const std::string& option = parts.back();
    if (option.compare(0, kBound.size(), kBound) == 0) {
      const auto max = parse_uint32(option.substr(kBound.size()));
      if (!max || *max == 0 || *max > kMaxReportsPerBucketLimit) {
        return error("max_reports_per_bucket must be an integer in 1.." +
                     std::to_string(kMaxReportsPerBucketLimit));
      }
      metric.max_reports_per_bucket = *max;
    } else if (option.compare(0, kDailyBound.size(), kDailyBound) == 0) {
      const auto max = parse_uint(option.substr(kDailyBound.size()), kMaxReportsPerDayLimit);
      if (!max || *max == 0) {
        return error("max_reports_per_day must be an integer in 1.." +
                     std::to_string(kMaxReportsPerDayLimit));
      }
      metric.max_reports_per_day = *max;
    } else if (option.compare(0, kLongitudinal.size(), kLongitudinal) == 0) {
      const auto longitudinal = parse_epsilon_micros(option.substr(kLongitudinal.size()));
      if (!longitudinal) return error("longitudinal epsilon must be a decimal number in (0, 20]");
      metric.longitudinal_epsilon_micros = *longitudinal;
    } else if (option.compare(0, kQuarantine.size(), kQuarantine) == 0) {
      const auto seconds = parse_quarantine(option.substr(kQuarantine.size()));
      if (!seconds) {
        return error("quarantine must be a duration like 86400, 90s, 30m, 24h or 7d, at most 30 days");
      }
      metric.quarantine_seconds = *seconds;
    } else {
      return error(
          "unknown option (known: longitudinal=E, max_reports_per_bucket=N, "
          "max_reports_per_day=N, quarantine=DURATION)");
    }
    parts.pop_back();
  }
  if (parts.size() < 3 || parts.size() > 4) {
    return error(
        "expected ID:MECHANISM:EPSILON[:DOMAIN][:longitudinal=E][:max_reports_per_bucket=N]"
        "[:max_reports_per_day=N][:quarantine=DURATION], e.g. 1:rr:1.0, 2:grr:2:16 or "
        "3:loloha:0.5:64:longitudinal=2");
  }
  const auto id = parse_uint32(parts[0]);
  if (!id) return error("id must be an integer in 0..4294967295");
  metric.id = *id;
  const auto mechanism = mechanism_from_name(parts[1]);
  if (!mechanism) {
    return error("unknown mechanism '" + parts[1] + "' (known: " + mechanism_names() + ")");
  }
  metric.mechanism = *mechanism;
  const auto epsilon = parse_epsilon_micros(parts[2]);
  if (!epsilon) return error("epsilon must be a decimal number in (0, 20]");
  metric.epsilon_micros = *epsilon;
  if (metric.mechanism == MechanismId::kBinaryRandomizedResponse) {
    if (parts.size() == 4 && parts[3] != "2") return error("rr has domain 2");
    metric.domain_size = 2;
  } else {
    const uint32_t domain = parts.size() == 4 ? parse_uint32(parts[3]).value_or(0) : 0;
    const uint32_t max_domain = mechanism_spec(metric.mechanism).max_domain;
    if (domain < 2 || domain > max_domain) {
      return error(parts[1] + " needs a domain size in 2.." + std::to_string(max_domain));
    }
    metric.domain_size = domain;
  }
  const std::string problem = check_metric(metric);
  if (!problem.empty()) return error(problem);
  return metric;
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
