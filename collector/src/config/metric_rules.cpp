#include "config/metric_rules.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

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
  if (mechanism_spec(m.mechanism).bloom_filter) {
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
    if (mechanism_spec(m.mechanism).bloom_filter) {
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
  if (m.epsilon_micros == 0 || m.epsilon_micros > blur::kMaxReportEpsilonMicros) {
    return "epsilon must be in (0, 20]";
  }
  if (m.domain_size < 2 || m.domain_size > spec.max_domain) {
    return std::string(name) + " needs a domain size in 2.." + std::to_string(spec.max_domain);
  }
  if (m.longitudinal_epsilon_micros > blur::kMaxReportEpsilonMicros) {
    return "longitudinal epsilon must be in (0, 20]";
  }
  if (m.longitudinal_epsilon_micros != 0 && !spec.memoizable) {
    return std::string(name) + " has no memoized form (longitudinal: " +
           mechanism_names([](const MechanismSpec& s) { return s.memoizable; }) + ")";
  }
  if (spec.check != nullptr) {
    if (std::string problem = spec.check(m); !problem.empty()) return problem;
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
  const MechanismSpec& rules = mechanism_spec(metric.mechanism);
  if (rules.fixed_domain != 0) {
    const std::string fixed = std::to_string(rules.fixed_domain);
    if (parts.size() == 4 && parts[3] != fixed) return error(parts[1] + " has domain " + fixed);
    metric.domain_size = rules.fixed_domain;
  } else {
    const uint32_t domain = parts.size() == 4 ? parse_uint32(parts[3]).value_or(0) : 0;
    if (domain < 2 || domain > rules.max_domain) {
      return error(parts[1] + " needs a domain size in 2.." + std::to_string(rules.max_domain));
    }
    metric.domain_size = domain;
  }
  const std::string problem = check_metric(metric);
  if (!problem.empty()) return error(problem);
  return metric;
}

}  // namespace blur::collector
