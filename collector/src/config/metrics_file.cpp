#include "config/metrics_file.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "config/metric_tables.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

namespace {

// Integers are read with value_exact: value<int64_t>() also converts a
// float, and toml++ 3.3 casts it to int64 unchecked (undefined behaviour
// for "domain = 1e21", found by metrics_file_fuzz). A float where the file
// takes an integer is refused like any other wrong type.
std::optional<uint32_t> bucket_seconds(const toml::node& node) {
  if (auto seconds = node.value_exact<int64_t>()) {
    if (*seconds <= 0 || *seconds > 86400) return std::nullopt;
    return static_cast<uint32_t>(*seconds);
  }
  const auto text = node.value<std::string>();
  if (!text) return std::nullopt;
  static const std::pair<const char*, uint32_t> kNames[] = {
      {"1m", 60}, {"5m", 300}, {"15m", 900}, {"30m", 1800}, {"1h", 3600}, {"1d", 86400}};
  for (const auto& [name, seconds] : kNames) {
    if (*text == name) return seconds;
  }
  return std::nullopt;
}

// Nats as decimal text (exact) or a TOML float naming a whole micro-nat
// (0.3 is 0.29999...); nothing if out of (0, max_micros].
std::optional<uint64_t> nats_micros(const toml::node_view<const toml::node>& node,
                                    uint64_t max_micros) {
  if (auto text = node.value<std::string>()) return parse_nats_micros(*text, max_micros);
  if (auto number = node.value<double>()) {
    const double micros = *number * 1e6;
    if (std::isfinite(micros) && micros > 0 && micros <= static_cast<double>(max_micros) &&
        std::fabs(micros - std::round(micros)) < 1e-3) {
      return static_cast<uint64_t>(std::llround(micros));
    }
  }
  return std::nullopt;
}

// A generous ceiling for an allowance: a million nats per device and bucket.
constexpr uint64_t kMaxAllowanceMicros = uint64_t{1000000} * 1000000;

Outcome<MetricConfig> parse_metric(const toml::table& table, const std::string& where) {
  static const std::set<std::string> kKeys = {"id",
                                              "mechanism",
                                              "epsilon",
                                              "domain",
                                              "bucket",
                                              "retention_days",
                                              "bloom_bits",
                                              "hash_count",
                                              "cohort_count",
                                              "hash_key",
                                              "range",
                                              "max_reports_per_bucket",
                                              "epsilon_allowance_per_bucket",
                                              "max_reports_per_day",
                                              "longitudinal_epsilon",
                                              "quarantine"};
  for (const auto& [key, value] : table) {
    if (!kKeys.count(std::string(key.str()))) {
      return invalid(where + ": unknown key '" + std::string(key.str()) + "'");
    }
  }
  auto need = [&](const char* key) -> Outcome<const toml::node*> {
    const toml::node* node = table.get(key);
    if (!node) return invalid(where + ": missing '" + key + "'");
    return node;
  };
  auto uint_of = [&](const char* key, uint64_t max) -> Outcome<uint64_t> {
    const auto v = table[key].value_exact<int64_t>();
    if (!v || *v < 0 || static_cast<uint64_t>(*v) > max) {
      return invalid(where + ": '" + key + "' must be an integer in 0.." + std::to_string(max));
    }
    return static_cast<uint64_t>(*v);
  };
  MetricConfig m;
  if (auto n = need("id"); !n) return n.error();
  auto id = uint_of("id", UINT32_MAX);
  if (!id) return id.error();
  m.id = static_cast<uint32_t>(id.value());
  if (auto n = need("mechanism"); !n) return n.error();
  const auto mechanism_text = table["mechanism"].value<std::string>();
  const auto mechanism = mechanism_text ? mechanism_from_name(*mechanism_text) : std::nullopt;
  if (!mechanism) {
    return invalid(where + ": 'mechanism' must be one of " + mechanism_names());
  }
  m.mechanism = *mechanism;
  if (auto n = need("epsilon"); !n) return n.error();
  const std::optional<uint64_t> epsilon =
      nats_micros(table["epsilon"], blur::kMaxReportEpsilonMicros);
  if (!epsilon) return invalid(where + ": 'epsilon' must be a number in (0, 20] (at most 6 decimals)");
  m.epsilon_micros = static_cast<uint32_t>(*epsilon);
  if (table.contains("longitudinal_epsilon")) {
    const auto longitudinal =
        nats_micros(table["longitudinal_epsilon"], blur::kMaxReportEpsilonMicros);
    if (!longitudinal) {
      return invalid(where + ": 'longitudinal_epsilon' must be a number in (0, 20] (at most 6 decimals)");
    }
    m.longitudinal_epsilon_micros = static_cast<uint32_t>(*longitudinal);
  }
  if (table.contains("domain")) {
    auto domain = uint_of("domain", UINT32_MAX);
    if (!domain) return domain.error();
    m.domain_size = static_cast<uint32_t>(domain.value());
  } else if (mechanism_spec(m.mechanism).fixed_domain == 0) {
    return invalid(where + ": missing 'domain'");
  }
  if (table.contains("bucket")) {
    const auto seconds = bucket_seconds(*table.get("bucket"));
    if (!seconds) {
      return invalid(where + ": 'bucket' must be \"1m\", \"5m\", \"15m\", \"30m\", \"1h\", \"1d\" " +
                     "or seconds dividing a day");
    }
    m.bucket_seconds = *seconds;
  }
  if (table.contains("quarantine")) {
    const auto text = table["quarantine"].value<std::string>();
    const auto seconds = text ? parse_quarantine(*text) : std::nullopt;
    if (!seconds) {
      return invalid(where + ": 'quarantine' must be a duration like \"24h\", \"30m\" or \"7d\", " +
                     "at most 30 days");
    }
    m.quarantine_seconds = *seconds;
  }
  if (table.contains("retention_days")) {
    auto days = uint_of("retention_days", kMaxRetentionDays);
    if (!days) return days.error();
    m.retention_days = static_cast<uint32_t>(days.value());
  }
  // The contribution bound: one of the two (the max is derived from the
  // allowance, so both at once could disagree).
  if (table.contains("max_reports_per_bucket") && table.contains("epsilon_allowance_per_bucket")) {
    return invalid(where + ": give 'max_reports_per_bucket' or 'epsilon_allowance_per_bucket', " +
                   "not both (the max is derived from the allowance)");
  }
  if (table.contains("max_reports_per_bucket")) {
    auto max = uint_of("max_reports_per_bucket", kMaxReportsPerBucketLimit);
    if (!max) return max.error();
    if (max.value() == 0) return invalid(where + ": 'max_reports_per_bucket' must be at least 1");
    m.max_reports_per_bucket = static_cast<uint32_t>(max.value());
  }
  if (table.contains("epsilon_allowance_per_bucket")) {
    const auto allowance = nats_micros(table["epsilon_allowance_per_bucket"], kMaxAllowanceMicros);
    if (!allowance) {
      return invalid(where + ": 'epsilon_allowance_per_bucket' must be a number of nats in " +
                     "(0, 1000000] (at most 6 decimals)");
    }
    m.epsilon_allowance_per_bucket_micros = *allowance;
  }
  if (table.contains("max_reports_per_day")) {
    auto max = uint_of("max_reports_per_day", kMaxReportsPerDayLimit);
    if (!max) return max.error();
    if (max.value() == 0) return invalid(where + ": 'max_reports_per_day' must be at least 1");
    m.max_reports_per_day = max.value();
  }
  const bool rappor = mechanism_spec(m.mechanism).bloom_filter;
  for (const char* key : {"bloom_bits", "hash_count", "cohort_count", "hash_key"}) {
    if (table.contains(key) && !rappor) return invalid(where + ": '" + key + "' is for rappor only");
  }
  struct RapporField {
    const char* key;
    uint32_t* value;
  };
  for (const RapporField& field : {RapporField{"bloom_bits", &m.rappor.bloom_bits},
                                   RapporField{"hash_count", &m.rappor.hash_count},
                                   RapporField{"cohort_count", &m.rappor.cohort_count}}) {
    if (!table.contains(field.key)) continue;
    auto v = uint_of(field.key, 65536);
    if (!v) return v.error();
    *field.value = static_cast<uint32_t>(v.value());
  }
  if (table.contains("hash_key")) {
    auto key = uint_of("hash_key", INT64_MAX);
    if (!key) return key.error();
    m.hash_key = key.value();
  }
  if (table.contains("range")) {
    if (!is_numeric(m.mechanism)) return invalid(where + ": 'range' is for numeric mechanisms only");
    const toml::array* range = table["range"].as_array();
    const auto low = range && range->size() == 2 ? (*range)[0].value<double>() : std::nullopt;
    const auto high = range && range->size() == 2 ? (*range)[1].value<double>() : std::nullopt;
    if (!low || !high) return invalid(where + ": 'range' must be [low, high]");
    m.range_low = *low;
    m.range_high = *high;
  }
  const std::string problem = check_metric(m);
  if (!problem.empty()) return invalid(where + " (" + describe(m) + "): " + problem);
  return m;
}

}  // namespace

Outcome<std::vector<MetricConfig>> parse_metric_tables(const toml::node* list_node,
                                                       const std::string& name) {
  const toml::array* list = list_node ? list_node->as_array() : nullptr;
  if (!list || list->empty()) return invalid(name + ": no [[metric]] tables");
  std::vector<MetricConfig> metrics;
  std::set<uint32_t> ids;
  for (size_t i = 0; i < list->size(); ++i) {
    const toml::table* table = (*list)[i].as_table();
    const std::string where = name + ": metric " + std::to_string(i + 1);
    if (!table) return invalid(where + " is not a table");
    auto metric = parse_metric(*table, where);
    if (!metric) return metric.error();
    if (!ids.insert(metric->id).second) {
      return invalid(where + ": id " + std::to_string(metric->id) + " appears twice");
    }
    metrics.push_back(metric.value());
  }
  return metrics;
}

Outcome<toml::table> parse_toml_text(const std::string& text, const std::string& name) {
  try {
    return toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return invalid(name + ": " + std::string(e.description()) + " at " + where.str());
  }
}

Outcome<std::vector<MetricConfig>> parse_metrics_toml(const std::string& text,
                                                      const std::string& name) {
  auto root = parse_toml_text(text, name);
  if (!root) return root.error();
  for (const auto& [key, value] : root.value()) {
    if (key.str() != "metric") {
      return invalid(name + ": unknown top-level key '" + std::string(key.str()) +
                     "' (metrics are [[metric]] tables)");
    }
  }
  return parse_metric_tables(root->get("metric"), name);
}

namespace {

// Micro-nats as the decimal text the file takes ("1.250000").
std::string nats(uint64_t micros) {
  char text[40];
  std::snprintf(text, sizeof text, "\"%llu.%06llu\"",
                static_cast<unsigned long long>(micros / 1000000),
                static_cast<unsigned long long>(micros % 1000000));
  return text;
}

// A finite double as a TOML float that reads back as the same double.
std::string toml_float(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

}  // namespace

std::string metrics_toml(const std::vector<MetricConfig>& metrics) {
  std::string out;
  for (const MetricConfig& m : metrics) {
    out += "[[metric]]\nid = " + std::to_string(m.id) + "\nmechanism = \"" +
           blur::mechanism_name(m.mechanism) + "\"\nepsilon = " + nats(m.epsilon_micros) +
           "\ndomain = " + std::to_string(m.domain_size) +
           "\nbucket = " + std::to_string(m.bucket_seconds) +
           "\nretention_days = " + std::to_string(m.retention_days) + "\n";
    if (m.max_reports_per_bucket != 0) {
      out += "max_reports_per_bucket = " + std::to_string(m.max_reports_per_bucket) + "\n";
    }
    if (m.max_reports_per_day != 0) {
      out += "max_reports_per_day = " + std::to_string(m.max_reports_per_day) + "\n";
    }
    if (m.longitudinal_epsilon_micros != 0) {
      out += "longitudinal_epsilon = " + nats(m.longitudinal_epsilon_micros) + "\n";
    }
    if (m.epsilon_allowance_per_bucket_micros != 0) {
      out += "epsilon_allowance_per_bucket = " + nats(m.epsilon_allowance_per_bucket_micros) + "\n";
    }
    if (m.quarantine_seconds != 0) {
      out += "quarantine = \"" + std::to_string(m.quarantine_seconds) + "s\"\n";
    }
    if (m.mechanism == MechanismId::kRappor) {
      out += "bloom_bits = " + std::to_string(m.rappor.bloom_bits) +
             "\nhash_count = " + std::to_string(m.rappor.hash_count) +
             "\ncohort_count = " + std::to_string(m.rappor.cohort_count) +
             "\nhash_key = " + std::to_string(m.hash_key) + "\n";
    }
    if (is_numeric(m.mechanism)) {
      out += "range = [" + toml_float(m.range_low) + ", " + toml_float(m.range_high) + "]\n";
    }
  }
  return out;
}

Outcome<std::vector<MetricConfig>> load_metrics_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return invalid("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_metrics_toml(text.str(), path);
}

}  // namespace blur::collector
